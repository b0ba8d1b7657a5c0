//! fio's job-file format: an INI file of `[global]` and job sections, `;`
//! and `#` comments (whole lines, and as fio 3.x reads them, the rest of any
//! line from its first `;` or `#`), `key=value` or bare `key` (a boolean set to true),
//! `include FILE` (read in place, relative to the including file), and
//! `${VAR}` environment expansion plus fio's `$ncpus`, `$pagesize` and
//! `$mb_memory`. The command-line form (`--name=x --rw=read ...`) produces
//! the same sections.
//!
//! Whatever it is given, a parse ends, in bounded memory: a job file is a
//! regular file or a pipe of at most 16 MiB (an included one, a regular
//! file), 64 MiB with its includes, 4096 sections, 16384 options; an
//! include loop is named once. Errors show a value once, cut to 64
//! characters ([`crate::value::shown`]).

use crate::value::{quoted, shown};
use std::fmt;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where an option was written, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file (as given), or `None` for the command line.
    pub file: Option<Arc<str>>,
    /// 1-based line number in the file, or argument position.
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{file}:{}", self.line),
            None => write!(f, "command line argument {}", self.line),
        }
    }
}

/// One `key=value` (or bare `key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOption {
    pub key: String,
    pub value: Option<String>,
    pub origin: Origin,
}

/// A `[name]` section and its options in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub origin: Origin,
    pub options: Vec<RawOption>,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Nested includes deeper than this are refused.
const MAX_INCLUDE_DEPTH: usize = 16;
/// The most bytes a job file, and each file it includes, may hold: real job
/// files hold a few KiB; a device or an endless file stops here.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// The most bytes a job file and the files it includes hold together (a
/// file included many times counts each time).
const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// The most sections a job file makes: fio's most jobs (REAL_MAX_JOBS).
const MAX_SECTIONS: usize = 4096;
/// The most options a job file and its includes hold together.
const MAX_OPTIONS: usize = 16384;

/// Reads a job file (a regular file, or a pipe such as `<(...)`; see
/// [`MAX_FILE_BYTES`]) and the files it includes (regular files only).
pub fn parse_file(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    let mut p = Parser::new(env);
    p.read_file(path, None)?;
    Ok(p.out)
}

/// Parses job-file text; `name` labels messages and `dir` resolves includes.
pub fn parse_text(
    text: &str,
    name: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    parse_bytes(text.as_bytes(), name, dir, env)
}

/// Parses a job file's bytes, as fio reads them: any bytes in comments, UTF-8
/// elsewhere (see `line_text`). The entry point for any input (fuzzing
/// too): sections or one error line, never a panic; only its `include`
/// lines read files, under `dir`.
pub fn parse_bytes(
    bytes: &[u8],
    name: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_long(name));
    }
    let mut p = Parser::new(env);
    p.bytes = bytes.len() as u64;
    p.parse(bytes, name, dir)?;
    Ok(p.out)
}

/// Reads a job file's bytes from `reader` (standard input, a pipe), at most
/// [`MAX_FILE_BYTES`]; `name` labels the message.
pub fn read_bounded(reader: impl Read, name: &str) -> Result<Vec<u8>, String> {
    read_limited(reader, 0, MAX_FILE_BYTES, name)
}

fn too_long(name: &str) -> String {
    format!(
        "{} holds more than {} MiB, more than a job file would: give the right file",
        shown(name),
        MAX_FILE_BYTES >> 20
    )
}

/// Up to `limit` bytes of `reader`; more is an error, so a file that claims
/// a small size and goes on (a /proc file, a pipe) stops there too.
fn read_limited(reader: impl Read, hint: u64, limit: u64, name: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(hint.min(limit) as usize);
    reader
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read job file {}: {e}", shown(name)))?;
    if bytes.len() as u64 > limit {
        return Err(match limit {
            MAX_FILE_BYTES => too_long(name),
            _ => format!(
                "{} brings the job file and its includes past {} MiB together: include less",
                shown(name),
                MAX_TOTAL_BYTES >> 20
            ),
        });
    }
    Ok(bytes)
}

/// Opens a job file that can be read to its end: a regular file, or (given
/// by the user, not by `include`) a pipe. Devices, directories and sockets
/// are refused before they are opened, and again once open (it may have
/// changed between), so opening never blocks nor acts on a device.
fn open_job_file(path: &Path, pipes: bool) -> Result<(File, Metadata), String> {
    let name = shown(&path.display().to_string());
    let cannot = |e: std::io::Error| format!("cannot read job file {name}: {e}");
    let kind = |meta: &Metadata| {
        let t = meta.file_type();
        let what = match () {
            _ if t.is_file() || (pipes && t.is_fifo()) => return Ok(()),
            _ if t.is_dir() => "a directory",
            _ if t.is_char_device() => "a character device",
            _ if t.is_block_device() => "a block device",
            _ if t.is_fifo() => "a fifo",
            _ => "a socket",
        };
        Err(format!(
            "{name} is {what}, not a job file: give a regular file{}",
            if pipes { " (or a pipe)" } else { "" }
        ))
    };
    kind(&std::fs::metadata(path).map_err(cannot)?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    kind(&meta)?;
    // Reads block again (a pipe waits for its writer, as standard input does).
    // SAFETY: fcntl on a descriptor this function owns, no pointers.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, 0) };
    Ok((file, meta))
}

/// One parse of a job file and its includes, within the bounds above.
struct Parser<'e> {
    env: &'e dyn Fn(&str) -> Option<String>,
    /// The files being read, outermost first: (device, inode) and name.
    stack: Vec<((u64, u64), String)>,
    /// Bytes read so far, options kept so far.
    bytes: u64,
    options: usize,
    out: Vec<Section>,
}

impl<'e> Parser<'e> {
    fn new(env: &'e dyn Fn(&str) -> Option<String>) -> Self {
        Parser {
            env,
            stack: Vec::new(),
            bytes: 0,
            options: 0,
            out: Vec::new(),
        }
    }

    /// Reads and parses a file: the job file (`from` is `None`) or one an
    /// include line (`from`) names. Errors name that line.
    fn read_file(&mut self, path: &Path, from: Option<&Origin>) -> Result<(), String> {
        let at = from.map_or(String::new(), |o| format!("{o}: "));
        let name = path.display().to_string();
        let (file, meta) = open_job_file(path, from.is_none()).map_err(|e| format!("{at}{e}"))?;
        let id = (meta.dev(), meta.ino());
        if let Some(first) = self.stack.iter().position(|(s, _)| *s == id) {
            return Err(format!("{at}{}", self.cycle(first)));
        }
        let limit = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES - self.bytes);
        let bytes = read_limited(file, meta.len(), limit, &name).map_err(|e| format!("{at}{e}"))?;
        self.bytes += bytes.len() as u64;
        self.stack.push((id, name.clone()));
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.parse(&bytes, &name, &dir)?;
        self.stack.pop();
        Ok(())
    }

    /// The include loop closed by including `stack[first]` again, named once.
    fn cycle(&self, first: usize) -> String {
        let names: Vec<&str> = self.stack[first..]
            .iter()
            .map(|(_, n)| n.as_str())
            .collect();
        if names.len() == 1 {
            return "the file includes itself: remove this include line".into();
        }
        format!(
            "{} includes itself ({} -> {}): remove one of these include lines",
            names[0],
            names.join(" -> "),
            names[0]
        )
    }

    fn parse(&mut self, bytes: &[u8], name: &str, dir: &Path) -> Result<(), String> {
        let file: Arc<str> = Arc::from(name);
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let origin = Origin {
                file: Some(file.clone()),
                line: i + 1,
            };
            let line = line_text(raw, &origin)?;
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                self.section(rest, line, origin)?;
            } else if let Some(target) = line
                .strip_prefix("include ")
                .or_else(|| line.strip_prefix("include\t"))
            {
                self.include(target, dir, &origin)?;
            } else {
                self.option(line, origin)?;
            }
        }
        Ok(())
    }

    fn section(&mut self, rest: &str, line: &str, origin: Origin) -> Result<(), String> {
        let Some(section) = rest.strip_suffix(']') else {
            return Err(format!(
                "{origin}: a section header needs a closing ']': {}",
                shown(line)
            ));
        };
        let section = section.trim();
        if section.is_empty() {
            return Err(format!("{origin}: empty section name"));
        }
        if self.out.len() == MAX_SECTIONS {
            return Err(format!(
                "{origin}: more than {MAX_SECTIONS} sections (fio runs at most {MAX_SECTIONS} jobs): split the job file"
            ));
        }
        self.out.push(Section {
            name: section.to_string(),
            origin,
            options: Vec::new(),
        });
        Ok(())
    }

    fn include(&mut self, target: &str, dir: &Path, origin: &Origin) -> Result<(), String> {
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(format!(
                "{origin}: includes nest deeper than {MAX_INCLUDE_DEPTH}: include the files from fewer levels"
            ));
        }
        let target = expand(target.trim(), self.env, origin)?;
        let path = if Path::new(&target).is_absolute() {
            PathBuf::from(&target)
        } else {
            dir.join(&target)
        };
        self.read_file(&path, Some(origin))
    }

    fn option(&mut self, line: &str, origin: Origin) -> Result<(), String> {
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(expand(v.trim(), self.env, &origin)?)),
            None => (line, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!(
                "{origin}: {} is not an option: write key=value",
                quoted(line)
            ));
        }
        let Some(section) = self.out.last_mut() else {
            return Err(format!(
                "{origin}: option {} comes before any section: put it under [global] or a [job]",
                quoted(key)
            ));
        };
        if self.options == MAX_OPTIONS {
            return Err(format!(
                "{origin}: more than {MAX_OPTIONS} options: split the job file"
            ));
        }
        self.options += 1;
        section.options.push(RawOption {
            key: key.to_string(),
            value,
            origin,
        });
        Ok(())
    }
}

/// A job-file line's text: without its comment, trimmed, as UTF-8.
///
/// fio reads a job file as bytes (init.c `__parse_jobs_ini`: `fgets` into a
/// `char` buffer, then parse.c `strip_blank_end` cuts the line at its first
/// `;` or `#`), so a comment may hold any bytes and fio never looks at them.
/// The cut is made here on bytes too, before any decoding: `;` and `#` are
/// ASCII, never part of a UTF-8 sequence. What is left goes, in fio, to the
/// options as bytes (a `filename` straight to open(2)); hiops keeps options
/// as UTF-8 text, and reading a stray byte as U+FFFD would silently name
/// another file. So a line whose text outside its comment is not UTF-8 is
/// refused, naming the line and byte, not the whole file; so is a NUL byte
/// (fio's C strings would end the line there, unseen).
fn line_text<'b>(raw: &'b [u8], origin: &Origin) -> Result<&'b str, String> {
    let kept = strip_comment(raw);
    if let Some(at) = kept.iter().position(|&b| b == 0) {
        return Err(format!(
            "{origin}: a NUL byte at byte {} of the line: remove it (fio would end the line there)",
            at + 1
        ));
    }
    std::str::from_utf8(kept).map(str::trim).map_err(|e| {
        let at = e.valid_up_to();
        format!(
            "{origin}: byte {} of the line (0x{:02x}) is not UTF-8, which hiops reads outside comments: save the file as UTF-8 (iconv -t UTF-8) or fix that byte",
            at + 1,
            kept[at]
        )
    })
}

/// A job-file line without its comment. fio (parse.c `strip_blank_end`,
/// applied by init.c to every line of a job file) ends a line at its first
/// `;` and at its first `#` wherever they are, with or without blanks before
/// them: `bs=4k # block` and `bs=4k#block` both read `bs=4k`, and a value
/// cannot hold either character (`${VAR}` can: it is expanded afterwards).
/// The command line keeps them, as fio does.
pub fn strip_comment(line: &[u8]) -> &[u8] {
    match line.iter().position(|&b| b == b';' || b == b'#') {
        Some(at) => &line[..at],
        None => line,
    }
}

/// Expands `${VAR}` from the environment and fio's `$ncpus`, `$pagesize`,
/// `$mb_memory`. An unset variable is an error (fio would keep the text and
/// fail later, less clearly).
pub fn expand(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
    origin: &Origin,
) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(format!(
                    "{origin}: '${{' without a closing '}}' in {}",
                    quoted(value)
                ));
            };
            let var = &body[..end];
            let v = env(var).ok_or_else(|| {
                format!(
                    "{origin}: environment variable {} is not set (used in {}): export it or edit the job file",
                    shown(var),
                    quoted(value)
                )
            })?;
            // A value repeating a long variable must not grow without end.
            if (out.len() + v.len()) as u64 > MAX_FILE_BYTES {
                return Err(format!(
                    "{origin}: {} grows past {} MiB once its variables are expanded: use fewer of them",
                    quoted(value),
                    MAX_FILE_BYTES >> 20
                ));
            }
            out.push_str(&v);
            rest = &body[end + 1..];
        } else if let Some((word, v)) = ["ncpus", "pagesize", "mb_memory"]
            .iter()
            .find(|w| after.starts_with(**w))
            .map(|w| (*w, builtin(w)))
        {
            out.push_str(&v.to_string());
            rest = &after[word.len()..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn builtin(word: &str) -> u64 {
    match word {
        "ncpus" => std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1),
        // SAFETY: sysconf has no memory-safety preconditions.
        "pagesize" => unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64,
        // SAFETY: as above.
        "mb_memory" => unsafe {
            (libc::sysconf(libc::_SC_PHYS_PAGES).max(0) as u64
                * libc::sysconf(libc::_SC_PAGESIZE).max(0) as u64)
                >> 20
        },
        _ => unreachable!("only the words listed above"),
    }
}

/// fio's command-line job form: options before the first `--name` are global;
/// each `--name` starts a job. `takes_value(key)` says whether `--key VALUE`
/// (a separate argument) is the option's value.
pub fn sections_from_args(
    args: &[String],
    takes_value: &dyn Fn(&str) -> bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    let mut sections = vec![Section {
        name: "global".into(),
        origin: Origin {
            file: None,
            line: 0,
        },
        options: Vec::new(),
    }];
    let mut i = 0;
    while i < args.len() {
        let origin = Origin {
            file: None,
            line: i + 1,
        };
        let arg = &args[i];
        let Some(body) = arg.strip_prefix("--") else {
            return Err(format!(
                "{} is not an option: write --key=value",
                quoted(arg)
            ));
        };
        let (key, mut value) = match body.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        if value.is_none() && takes_value(&key) {
            match args.get(i + 1) {
                Some(v) if !v.starts_with("--") => {
                    value = Some(v.clone());
                    i += 1;
                }
                _ => {
                    let key = shown(&key);
                    return Err(format!("--{key} needs a value: --{key}=VALUE"));
                }
            }
        }
        let value = value.map(|v| expand(&v, env, &origin)).transpose()?;
        if key == "name" {
            if sections.len() > MAX_SECTIONS {
                return Err(format!(
                    "more than {MAX_SECTIONS} --name jobs (fio runs at most {MAX_SECTIONS}): give fewer"
                ));
            }
            let name = value
                .clone()
                .filter(|v| !v.is_empty())
                .ok_or("--name needs a job name")?;
            sections.push(Section {
                name,
                origin: origin.clone(),
                options: Vec::new(),
            });
        }
        sections
            .last_mut()
            .unwrap()
            .options
            .push(RawOption { key, value, origin });
        i += 1;
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn sections_comments_bare_booleans_and_lines() {
        let text = "; a comment\n# another\n[global]\nbs = 4k\ntime_based\n\n[job1]\nrw=randread\n";
        let s = parse_text(text, "t.fio", Path::new("."), &no_env).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].is_global());
        assert_eq!(s[0].options[0].key, "bs");
        assert_eq!(s[0].options[0].value.as_deref(), Some("4k"));
        assert_eq!(s[0].options[1].value, None);
        assert_eq!(s[1].options[0].origin.line, 8);
        assert_eq!(s[1].options[0].origin.to_string(), "t.fio:8");
    }

    #[test]
    fn inline_comments_end_the_line_as_in_fio() {
        let text = "[global] ; shared\nnumjobs=4 ; 4 jobs\nbs=4k # block\niodepth=8;tight\n\
                    [j]#job\nrw=randread\t# random\ntime_based ; flag\n\
                    filename=${F}\n";
        let env = |v: &str| (v == "F").then(|| "/tmp/a;b#c".to_string());
        let s = parse_text(text, "t", Path::new("."), &env).unwrap();
        assert_eq!((s[0].name.as_str(), s[1].name.as_str()), ("global", "j"));
        let kv: Vec<(&str, Option<&str>)> = s
            .iter()
            .flat_map(|s| &s.options)
            .map(|o| (o.key.as_str(), o.value.as_deref()))
            .collect();
        assert_eq!(
            kv,
            [
                ("numjobs", Some("4")),
                ("bs", Some("4k")),
                ("iodepth", Some("8")),
                ("rw", Some("randread")),
                ("time_based", None),
                // Expanded after the comment is cut: the value keeps both.
                ("filename", Some("/tmp/a;b#c")),
            ]
        );
        assert_eq!(strip_comment(b"a=b"), b"a=b");
    }

    #[test]
    fn env_expansion_and_unset_variables() {
        let env = |v: &str| (v == "DEV").then(|| "/dev/zram0".to_string());
        let s = parse_text("[j]\nfilename=${DEV}\n", "t", Path::new("."), &env).unwrap();
        assert_eq!(s[0].options[0].value.as_deref(), Some("/dev/zram0"));
        let e = parse_text("[j]\nfilename=${NOPE}\n", "t", Path::new("."), &env).unwrap_err();
        assert!(e.contains("t:2") && e.contains("NOPE is not set"), "{e}");
        let s = parse_text("[j]\nnumjobs=$ncpus\n", "t", Path::new("."), &no_env).unwrap();
        assert!(
            s[0].options[0]
                .value
                .as_deref()
                .unwrap()
                .parse::<u32>()
                .unwrap()
                >= 1
        );
    }

    #[test]
    fn includes_read_in_place_and_cycles_stop() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("common.fio"), "bs=8k\niodepth=4\n").unwrap();
        std::fs::write(
            dir.path().join("main.fio"),
            "[global]\ninclude common.fio\n[j]\nrw=read\n",
        )
        .unwrap();
        let s = parse_file(&dir.path().join("main.fio"), &no_env).unwrap();
        assert_eq!(s[0].options.len(), 2);
        assert!(s[0].options[0].origin.to_string().ends_with("common.fio:1"));
        std::fs::write(dir.path().join("loop.fio"), "[g]\ninclude loop.fio\n").unwrap();
        let e = parse_file(&dir.path().join("loop.fio"), &no_env).unwrap_err();
        assert!(
            e.ends_with("loop.fio:2: the file includes itself: remove this include line"),
            "{e}"
        );
        assert_eq!(e.matches("loop.fio").count(), 1, "{e}");
    }

    #[test]
    fn an_include_loop_is_named_once_with_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.fio"), dir.path().join("b.fio"));
        std::fs::write(&a, "[g]\ninclude b.fio\n").unwrap();
        std::fs::write(&b, "bs=4k\ninclude a.fio\n").unwrap();
        let e = parse_file(&a, &no_env).unwrap_err();
        let (a, b) = (a.display(), b.display());
        assert_eq!(
            e,
            format!(
                "{b}:2: {a} includes itself ({a} -> {b} -> {a}): remove one of these include lines"
            )
        );
        // Deep but finite nesting is still refused, once.
        for i in 0..20 {
            let next = format!("include n{}.fio\n", i + 1);
            std::fs::write(dir.path().join(format!("n{i}.fio")), next).unwrap();
        }
        std::fs::write(dir.path().join("n20.fio"), "").unwrap();
        let e = parse_text("[g]\ninclude n0.fio\n", "t", dir.path(), &no_env).unwrap_err();
        assert!(
            e.contains("nest deeper than 16") && !e.contains('\n'),
            "{e}"
        );
        assert_eq!(e.matches("n1.fio").count(), 0, "{e}");
    }

    #[test]
    fn only_regular_files_are_included() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for (target, what) in [
            ("/dev/zero", "is a character device"),
            (".", "is a directory"),
            ("fifo", "is a fifo"),
            ("missing.fio", "cannot read job file"),
        ] {
            let text = format!("[g]\ninclude {target}\n");
            let e = parse_text(&text, "t", dir.path(), &no_env).unwrap_err();
            assert!(e.starts_with("t:2: ") && e.contains(what), "{target}: {e}");
        }
        // A job file of the command line may be a pipe, not a device.
        let e = parse_file(Path::new("/dev/zero"), &no_env).unwrap_err();
        assert!(
            e.contains("/dev/zero is a character device, not a job file"),
            "{e}"
        );
        let big = dir.path().join("big.fio");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let e = parse_file(&big, &no_env).unwrap_err();
        assert!(e.contains("more than 16 MiB"), "{e}");
        // A reader that never ends (as a /proc file or a pipe can) stops too.
        let e = read_bounded(std::io::repeat(b'#'), "endless").unwrap_err();
        assert!(e.contains("endless holds more than 16 MiB"), "{e}");
    }

    #[test]
    fn comments_may_hold_any_bytes_as_in_fio() {
        let clean: &[u8] = b"[global] ; all\nbs=4k # block\n;\n[j]\nrw=read\n";
        let dirty: &[u8] = b"[global] ; \xff\xfe all\nbs=4k # bl\xe9ck\n;\x80\x00\n[j]\nrw=read\n";
        let parse = |b: &[u8]| parse_bytes(b, "t", Path::new("."), &no_env);
        assert_eq!(parse(dirty).unwrap(), parse(clean).unwrap());
        let e = parse(b"[j]\nfilename=/tmp/caf\xe9\n").unwrap_err();
        assert!(
            e.starts_with("t:2: byte 18 of the line (0xe9) is not UTF-8"),
            "{e}"
        );
        let e = parse(b"[j]\nbs=4k\x00\n").unwrap_err();
        assert!(e.starts_with("t:2: a NUL byte at byte 6"), "{e}");
        // Windows line ends read as lines.
        let s = parse(b"[j]\r\nbs=4k\r\n").unwrap();
        assert_eq!(s[0].options[0].value.as_deref(), Some("4k"));
    }

    #[test]
    fn sizes_counts_and_expansions_are_bounded() {
        let many = "[j]\n".repeat(MAX_SECTIONS + 1);
        let e = parse_text(&many, "t", Path::new("."), &no_env).unwrap_err();
        assert!(e.contains("more than 4096 sections"), "{e}");
        let big = |_: &str| Some("x".repeat(1 << 20));
        let e = parse_text(
            &format!("[j]\nf={}\n", "${X}".repeat(20)),
            "t",
            Path::new("."),
            &big,
        )
        .unwrap_err();
        assert!(e.contains("grows past 16 MiB") && e.len() < 300, "{e}");
        let long = format!("[j]\n{}\n", "k ".repeat(60_000));
        let e = parse_text(&long, "t", Path::new("."), &no_env).unwrap_err();
        assert!(e.contains("is not an option") && e.len() < 300, "{e}");
    }

    #[test]
    fn options_before_a_section_are_refused() {
        let e = parse_text("bs=4k\n", "t", Path::new("."), &no_env).unwrap_err();
        assert!(e.contains("t:1") && e.contains("[global]"), "{e}");
        assert!(parse_text("[j\n", "t", Path::new("."), &no_env).is_err());
    }

    #[test]
    fn command_line_jobs_split_at_name() {
        let args: Vec<String> = [
            "--bs=8k",
            "--name=a",
            "--rw",
            "read",
            "--name=b",
            "--time_based",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = sections_from_args(&args, &|k| k == "rw", &no_env).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].options[0].key, "bs");
        assert_eq!(s[1].name, "a");
        assert_eq!(s[1].options[1].value.as_deref(), Some("read"));
        assert_eq!(s[2].options[1].value, None);
    }
}
