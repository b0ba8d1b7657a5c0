//! What the fuzz targets share: fio's environment and option table as a
//! job plan applies them, a POSIX shell's reading of a quoted word, and a
//! trace file held in memory.

pub mod known;

use hiops_fio::jobfile::{RawOption, Section};
use hiops_fio::options::{lookup, Draft, Lookup};
use hiops_fio::Defaults;

/// `${VAR}` for every name: one plain letter, so an expanded value holds
/// nothing a second expansion (a command line read back) would change.
pub fn env(_var: &str) -> Option<String> {
    Some("v".into())
}

/// A job's options applied to a draft as the planner does (`kb_base`
/// first: it decides how every size reads); options hiops does not know
/// are skipped. `None` when an option is refused.
pub fn draft(globals: &[RawOption], job: &Section) -> Option<Draft> {
    let mut d = Draft::default();
    let all: Vec<&RawOption> = globals.iter().chain(&job.options).collect();
    let kb_first = all.iter().filter(|o| o.key == "kb_base");
    for o in kb_first.chain(all.iter().filter(|o| o.key != "kb_base")) {
        if let Lookup::Known(def) = lookup(&o.key) {
            (def.apply)(&mut d, o.value.as_deref()).ok()?;
        }
    }
    if d.name.is_none() {
        d.name = Some(job.name.clone());
    }
    Some(d)
}

/// Every job of `sections` planned as far as a job's spec, without the
/// parts that read files (a trace to replay, fill_device's free space):
/// each spec is checked, or refused with a message.
pub fn plan_jobs(sections: &[Section], defaults: Defaults) {
    let mut globals: Vec<RawOption> = Vec::new();
    for s in sections {
        if s.is_global() {
            globals.extend(s.options.iter().cloned());
            continue;
        }
        let Some(mut d) = draft(&globals, s) else {
            continue;
        };
        d.read_iolog = None;
        d.fill_device = false;
        if let Ok((spec, _)) = d.into_spec(defaults) {
            assert!(spec.numjobs >= 1, "a job of no threads: {spec:?}");
            assert!(spec.workload.bs.max() >= 1, "a block size of 0: {spec:?}");
        }
    }
}

/// Whether every key names an option (hiops' own, or fio's that hiops
/// refuses by name). An unknown key makes the plan search every name for
/// the one it misspells: fio_value fuzzes that search, on its own.
pub fn all_keys_known(sections: &[Section]) -> bool {
    let known = |o: &RawOption| !matches!(lookup(&o.key), Lookup::Unknown);
    sections.iter().all(|s| s.options.iter().all(known))
}

/// One option as written: its key and value.
pub type KeyValue = (String, Option<String>);

/// The sections' options without where they were written: what must
/// survive a round trip.
pub fn options_of(sections: &[Section]) -> Vec<(String, Vec<KeyValue>)> {
    sections
        .iter()
        .map(|s| {
            let opts = s
                .options
                .iter()
                .map(|o| (o.key.clone(), o.value.clone()))
                .collect();
            (s.name.clone(), opts)
        })
        .collect()
}

/// Splits a line as a POSIX shell does for the words `showcmd` writes:
/// blanks separate words, `'...'` quotes anything, `\'` outside quotes is
/// a quote. `None` for an unterminated quote.
pub fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        q => w.push(q),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// A file that lives in memory (memfd), for parsers that take a path: one
/// per process, rewritten for each input and read back through
/// `/proc/self/fd/N`, so nothing is left on disk.
pub struct MemFile {
    fd: libc::c_int,
    pub path: std::path::PathBuf,
}

impl MemFile {
    pub fn new() -> MemFile {
        // SAFETY: the name is a NUL-terminated literal.
        let fd = unsafe { libc::memfd_create(c"hiops-fuzz".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
        MemFile {
            fd,
            path: format!("/proc/self/fd/{fd}").into(),
        }
    }

    /// The file's contents become `data`.
    pub fn set(&self, data: &[u8]) {
        // SAFETY: fd is ours and open; the buffer outlives the call.
        unsafe {
            assert_eq!(libc::ftruncate(self.fd, 0), 0);
            let mut at = 0;
            while at < data.len() {
                let n = libc::pwrite(
                    self.fd,
                    data[at..].as_ptr().cast(),
                    data.len() - at,
                    at as libc::off_t,
                );
                assert!(n > 0, "pwrite: {}", std::io::Error::last_os_error());
                at += n as usize;
            }
        }
    }
}

impl Default for MemFile {
    fn default() -> MemFile {
        MemFile::new()
    }
}
