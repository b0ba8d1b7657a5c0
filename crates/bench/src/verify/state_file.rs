//! fio's verify state files (verify-state.h): where a thread's file is,
//! what a writing thread keeps for it, and reading one back.

use super::checksum::fio_crc32c;
use crate::thread_plan::WorkerPlan;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

/// fio's thread_number of a plan's thread (from 1, across the run).
pub(crate) fn thread_number(plan: &WorkerPlan<'_>) -> u32 {
    plan.spec.logs.first_thread + plan.clone
}

/// fio's verify state file of a thread (verify-state.h,
/// verify_state_gen_name): `local-NAME-INDEX-verify.state`, '/' in the
/// name as '.', INDEX the thread's number from 0; in fio's --aux-path
/// when given, else the current directory.
pub(crate) fn state_path(aux: Option<&Path>, name: &str, thread_number: u32) -> PathBuf {
    let name = name.replace('/', ".");
    let file = format!("local-{name}-{}-verify.state", thread_number - 1);
    match aux {
        Some(dir) => dir.join(file),
        None => PathBuf::from(file),
    }
}

/// Where a state file is written before it is renamed over the last one.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    path.with_extension("state.tmp")
}

/// The state files a job's threads write with verify_state_save, and the
/// files each is written to first.
pub(crate) fn save_paths(spec: &crate::spec::JobSpec) -> Vec<PathBuf> {
    let v = &spec.verify;
    let saves = v.mode != crate::spec::VerifyMode::Off
        && v.state_save
        && spec.workload.rw.writes()
        && !v.only;
    if !saves {
        return Vec::new();
    }
    let aux = spec.verify.aux_path.as_deref();
    (0..spec.numjobs.max(1))
        .map(|clone| state_path(aux, &spec.name, spec.logs.first_thread + clone))
        .flat_map(|p| [tmp_path(&p), p])
        .collect()
}

/// The state file a thread's verify_state_load reads, read.
pub(crate) fn load_for(plan: &WorkerPlan<'_>) -> Result<Saved, StateError> {
    let spec = plan.spec;
    load(&state_path(
        spec.verify.aux_path.as_deref(),
        &spec.name,
        thread_number(plan),
    ))
}

/// What a writing thread keeps for its state file: its last writes, and
/// those still in flight.
pub(crate) struct StateLog {
    path: PathBuf,
    name: String,
    index: u32,
    files: u32,
    /// The last claimed writes: (number from 1, target, offset, done).
    ring: VecDeque<(u64, u32, u64, bool)>,
    cap: usize,
    in_flight: Vec<(u64, u32, u64)>,
    saved_ns: u64,
}

impl StateLog {
    pub(crate) fn new(plan: &WorkerPlan<'_>, depth: u32) -> StateLog {
        let cap = (4 * depth as usize).max(16);
        StateLog {
            path: state_path(
                plan.spec.verify.aux_path.as_deref(),
                &plan.spec.name,
                thread_number(plan),
            ),
            name: plan.spec.name.clone(),
            index: thread_number(plan) - 1,
            files: plan.regions.len() as u32,
            ring: VecDeque::with_capacity(cap + 1),
            cap,
            in_flight: Vec::with_capacity(depth as usize),
            saved_ns: 0,
        }
    }

    pub(crate) fn claimed(&mut self, n: u64, target: u32, offset: u64) {
        self.ring.push_back((n, target, offset, false));
        if self.ring.len() > self.cap {
            self.ring.pop_front();
        }
        self.in_flight.push((n, target, offset));
    }

    pub(crate) fn completed(&mut self, target: u32, offset: u64, moved: bool) {
        let Some(i) = self
            .in_flight
            .iter()
            .position(|w| (w.1, w.2) == (target, offset))
        else {
            return;
        };
        let (n, ..) = self.in_flight.swap_remove(i);
        if let Some(w) = self.ring.iter_mut().find(|w| w.0 == n) {
            w.3 = moved;
        }
    }

    /// Saves at most every 250 ms (a killed run leaves the last one).
    pub(crate) fn tick(&mut self, writes: u64, now_ns: u64) {
        if now_ns.saturating_sub(self.saved_ns) >= 250_000_000 {
            self.save(writes, now_ns);
        }
    }

    /// Writes the file in fio's format (a new file renamed over the old,
    /// so a kill leaves a whole one). fio's rule on reading it
    /// (verify.c, verify_state_should_stop): the first `numberio - depth`
    /// writes are done, later ones up to `numberio` when listed. hiops
    /// lists the done writes among its last ones as `depth`; when an older
    /// write is still in flight, only the writes before it count.
    pub(crate) fn save(&mut self, writes: u64, now_ns: u64) {
        self.saved_ns = now_ns;
        let oldest = self.in_flight.iter().map(|w| w.0).min();
        let first_in_ring = self.ring.front().map_or(writes + 1, |w| w.0);
        let (numberio, depth, comps): (u64, u32, Vec<(u64, u64)>) = match oldest {
            Some(o) if o < first_in_ring => (o - 1, 0, Vec::new()),
            _ => {
                let done = self.ring.iter().filter(|w| w.3);
                let comps = done.map(|w| (w.1 as u64, w.2)).collect();
                (writes, (writes + 1 - first_in_ring) as u32, comps)
            }
        };
        let bytes = encode(&self.name, self.index, self.files, numberio, depth, &comps);
        let tmp = tmp_path(&self.path);
        // A state file is a file: no grant lets it go to a device or FIFO.
        let mode = hiops_safety::OutputMode::Truncate;
        let r = hiops_safety::create_output(&tmp, &Default::default(), mode)
            .map_err(std::io::Error::other)
            .and_then(|mut f| f.write_all(&bytes))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(e) = r {
            eprintln!("hiops: verify_state_save: {}: {e}", self.path.display());
        }
    }
}

/// verify-state.h: struct verify_state_hdr, then struct thread_io_list
/// with `depth * nofiles` file_comp entries, little-endian; the header's
/// crc is fio's crc32c of the list.
fn encode(
    name: &str,
    index: u32,
    files: u32,
    numberio: u64,
    depth: u32,
    comps: &[(u64, u64)],
) -> Vec<u8> {
    let slots = (depth as usize * files as usize).max(comps.len());
    let mut list = Vec::with_capacity(152 + slots * 16);
    list.extend_from_slice(&(comps.len() as u64).to_le_bytes());
    list.extend_from_slice(&(slots as u32 / files.max(1)).to_le_bytes());
    list.extend_from_slice(&files.to_le_bytes());
    list.extend_from_slice(&numberio.to_le_bytes());
    list.extend_from_slice(&(index as u64).to_le_bytes());
    // thread_rand_state: fio's offset generator, which its loader ignores.
    list.extend_from_slice(&[0u8; 56]);
    let mut n = [0u8; 64];
    let b = name.as_bytes();
    n[..b.len().min(63)].copy_from_slice(&b[..b.len().min(63)]);
    list.extend_from_slice(&n);
    for i in 0..slots {
        let (f, o) = comps.get(i).copied().unwrap_or((0, 0));
        list.extend_from_slice(&f.to_le_bytes());
        list.extend_from_slice(&o.to_le_bytes());
    }
    let mut out = Vec::with_capacity(24 + list.len());
    out.extend_from_slice(&3u64.to_le_bytes());
    out.extend_from_slice(&(list.len() as u64).to_le_bytes());
    out.extend_from_slice(&(fio_crc32c(&list) as u64).to_le_bytes());
    out.extend_from_slice(&list);
    out
}

/// A state file as read: which writes were done.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Saved {
    pub(crate) numberio: u64,
    pub(crate) depth: u64,
    pub(crate) comps: Vec<(u64, u64)>,
}

impl Saved {
    /// Whether write `n` (from 1) of `fileno` at `offset` was done.
    pub(crate) fn done(&self, n: u64, fileno: u64, offset: u64) -> bool {
        if n <= self.numberio.saturating_sub(self.depth) {
            return true;
        }
        n <= self.numberio && self.comps.contains(&(fileno, offset))
    }
}

/// Why verify_state_load cannot use a state file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StateError {
    #[error("verify_state_load: {path}: {source} (written by a run with verify_state_save=1 in this directory, or in the --aux-path directory it was given)")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// The file is not what fio writes: `why` says how.
    #[error("verify_state_load: {path}: {why}")]
    Bad { path: String, why: &'static str },
    #[error("verify_state_load: {0}")]
    Input(crate::input::InputError),
}

/// A state file failing to load fails the job.
impl From<StateError> for crate::error::JobError {
    fn from(e: StateError) -> crate::error::JobError {
        crate::error::JobError::Job(e.to_string())
    }
}

/// A state file holds one thread's completions in flight (at most its
/// iodepth, 16 bytes each): 16 MiB is a million of them.
const STATE_FILE: crate::input::Limit = crate::input::Limit {
    bytes: 16 << 20,
    what: "a verify state file",
    todo: "give verify_state_load the state a run with verify_state_save=1 wrote",
};

/// Reads fio's (or hiops') state file (verify.c, verify_load_state).
pub(crate) fn load(path: &Path) -> Result<Saved, StateError> {
    let bytes = match crate::input::read_file(path, &STATE_FILE) {
        Ok(bytes) => bytes,
        Err(crate::input::InputError::Read { source, .. }) => {
            return Err(StateError::Read {
                path: path.display().to_string(),
                source,
            })
        }
        Err(e) => return Err(StateError::Input(e)),
    };
    let bad = |why| StateError::Bad {
        path: path.display().to_string(),
        why,
    };
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    if bytes.len() < 24 + 152 || u64_at(&bytes, 0) != 3 {
        return Err(bad("not a version 3 fio verify state file"));
    }
    let size = u64_at(&bytes, 8) as usize;
    let list = 24usize
        .checked_add(size)
        .and_then(|end| bytes.get(24..end))
        .filter(|list| list.len() >= 152)
        .ok_or_else(|| bad("cut short"))?;
    if fio_crc32c(list) as u64 != u64_at(&bytes, 16) {
        return Err(bad("its crc does not match (the file is corrupt)"));
    }
    let no_comps = u64_at(list, 0) as usize;
    if no_comps > (list.len() - 152) / 16 {
        return Err(bad("lists more completions than it holds"));
    }
    let depth = u32::from_le_bytes(list[8..12].try_into().unwrap()) as u64;
    let comps = (0..no_comps)
        .map(|i| (u64_at(list, 152 + i * 16), u64_at(list, 160 + i * 16)))
        .collect();
    Ok(Saved {
        numberio: u64_at(list, 16),
        depth,
        comps,
    })
}

#[cfg(test)]
mod bounds {
    use super::*;

    /// A state file of `list`, with its header and crc.
    fn file_of(list: &[u8], size: u64) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&3u64.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&(super::fio_crc32c(list) as u64).to_le_bytes());
        out.extend_from_slice(list);
        out
    }

    #[test]
    fn a_state_file_is_read_within_its_bounds() {
        let e = load(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(
            e.starts_with("verify_state_load: /dev/zero holds more than 16 MiB, more than a verify state file would"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("state");
        let mut list = vec![0u8; 152];
        list[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        for (size, says) in [
            (u64::MAX, "cut short"),
            (200, "cut short"),
            (152, "lists more completions than it holds"),
        ] {
            std::fs::write(&f, file_of(&list[..size.min(152) as usize], size)).unwrap();
            let e = load(&f).unwrap_err().to_string();
            assert!(e.ends_with(says), "{size}: {e}");
        }
        list[..8].copy_from_slice(&0u64.to_le_bytes());
        std::fs::write(&f, file_of(&list, 152)).unwrap();
        assert!(load(&f).unwrap().comps.is_empty());
    }
}
