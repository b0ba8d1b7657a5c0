//! Tracepoints read through a tracefs instance's per-CPU ring buffers
//! (`per_cpu/cpuN/trace_pipe_raw`) instead of perf.
//!
//! Why: on this kernel (6.18) a sampled perf tracepoint event drops most
//! records whose CPU was running its idle task. block:block_rq_complete
//! fires in the disk's completion softirq, which an interrupt often runs
//! on an idle CPU. Measured with the disk at 20k reads/s: `perf record -e
//! block:block_rq_complete -a` kept 125-2,558 of 40,000 completions, while
//! `perf stat` counted them all, ftrace recorded them all, and a CPU kept
//! busy by a spinning task gave perf every one (BENCHMARKS.md, "Completions
//! the perf rings never saw"). So the events that fire in interrupt
//! context are read here.
//!
//! The page layout is the kernel's ring buffer's, as tracefs describes it
//! in `events/header_page` and `events/header_event`: a page is { u64
//! timestamp; u64 commit; data } and each event in the data starts with a
//! 32-bit word { type_len: 5 bits, time_delta: 27 bits }
//! (kernel/trace/ring_buffer.c, include/linux/ring_buffer.h). A record's
//! payload is the same raw record a perf sample carries: common fields,
//! `common_type` first, then the event's own.

use crate::ProfileError;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// type_len values with a meaning of their own; 1..=28 are data of
/// type_len x 4 bytes, 0 is data whose length is in the next word.
const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;
/// Bits of `commit` that are flags, not the data's length.
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
/// time_delta's width: a TIME_EXTEND carries the bits above it.
const TS_SHIFT: u32 = 27;
/// Per-CPU buffer: ~48-byte records, a few per I/O, drained every 10 ms.
const BUFFER_KB: u32 = 4096;

/// Hands each record in one page to `each` (time in the trace clock's
/// ns, payload), and returns how many records the kernel dropped before
/// this page (0 when it says none; u64::MAX when it dropped some but
/// could not say how many).
pub(crate) fn parse_page(page: &[u8], mut each: impl FnMut(u64, &[u8])) -> u64 {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(page.get(at..at + 4)?.try_into().ok()?))
    };
    let (Some(ts), Some(commit)) = (u64_at(page, 0), u64_at(page, 8)) else {
        return 0;
    };
    let len = (commit & !(MISSED_EVENTS | MISSED_STORED)) as usize;
    let end = (16 + len).min(page.len());
    let missed = match (commit & MISSED_EVENTS != 0, commit & MISSED_STORED != 0) {
        (false, _) => 0,
        (true, true) => u64_at(page, end).unwrap_or(u64::MAX),
        (true, false) => u64::MAX,
    };
    let (mut at, mut time) = (16, ts);
    while at + 4 <= end {
        let Some(head) = word(at) else { break };
        let (kind, delta) = (head & 0x1f, u64::from(head >> 5));
        let (data, size) = match kind {
            PADDING if delta == 0 => break,
            PADDING => (None, 4 + word(at + 4).unwrap_or(0) as usize),
            TIME_EXTEND => {
                time += (u64::from(word(at + 4).unwrap_or(0)) << TS_SHIFT) + delta;
                (None, 8)
            }
            TIME_STAMP => {
                // An absolute stamp keeps the low 59 bits; the page's
                // stamp gives the rest.
                let low = (u64::from(word(at + 4).unwrap_or(0)) << TS_SHIFT) | delta;
                time = (ts & !((1 << 59) - 1)) | low;
                (None, 8)
            }
            0 => {
                time += delta;
                let n = word(at + 4).unwrap_or(0) as usize;
                (Some(at + 8..at + 4 + n), 4 + n)
            }
            n => {
                time += delta;
                let n = n as usize * 4;
                (Some(at + 4..at + 4 + n), 4 + n)
            }
        };
        if let Some(r) = data {
            match page.get(r) {
                Some(payload) => each(time, payload),
                None => break,
            }
        }
        at += size.max(4);
    }
    missed
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A tracefs instance of this process's own, with some events on, its
/// clock CLOCK_MONOTONIC (the "mono" trace clock: the perf events' and the
/// application's clock), removed when dropped.
pub(crate) struct Instance {
    dir: PathBuf,
    pipes: Vec<File>,
    page: Vec<u8>,
}

impl Instance {
    /// Creates the instance with `events` ((group, name, filter)) enabled
    /// and tracing off; `cpus` are the CPUs whose buffers are read.
    pub(crate) fn create(
        root: &Path,
        events: &[(&str, &str, Option<String>)],
        cpus: &[usize],
    ) -> Result<Instance, ProfileError> {
        Self::create_tagged(root, "timeline", events, cpus)
    }

    /// [`Instance::create`] under `hiops-TAG-PID`: tracers of one process
    /// with instances of their own (the timeline's, the interrupts').
    pub(crate) fn create_tagged(
        root: &Path,
        tag: &str,
        events: &[(&str, &str, Option<String>)],
        cpus: &[usize],
    ) -> Result<Instance, ProfileError> {
        let instances = root.join("instances");
        remove_orphans(&instances);
        let dir = instances.join(format!("hiops-{tag}-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|source| ProfileError::Instance {
            dir: dir.clone(),
            source,
        })?;
        let mut me = Instance {
            dir,
            pipes: Vec::new(),
            page: vec![0; hiops_os::page_size()],
        };
        me.write("tracing_on", "0")?;
        me.write("trace_clock", "mono")?;
        me.write("buffer_size_kb", &BUFFER_KB.to_string())?;
        for (group, name, filter) in events {
            let ev = format!("events/{group}/{name}");
            if let Some(f) = filter {
                // The user-space filter stays in force if the kernel's fails.
                let _ = me.write(&format!("{ev}/filter"), f);
            }
            me.write(&format!("{ev}/enable"), "1")?;
        }
        for cpu in cpus {
            let p = me.dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&p)
                .map_err(|source| ProfileError::OpenPipe { path: p, source })?;
            me.pipes.push(f);
        }
        Ok(me)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), ProfileError> {
        let path = self.dir.join(file);
        std::fs::write(&path, value).map_err(|source| ProfileError::Write {
            value: value.into(),
            path,
            source,
        })
    }

    pub(crate) fn set_on(&self, on: bool) -> Result<(), ProfileError> {
        self.write("tracing_on", if on { "1" } else { "0" })
    }

    /// Reads every page there is now; returns records the kernel dropped
    /// (at least one for a page that does not say how many).
    pub(crate) fn drain(&mut self, mut each: impl FnMut(u64, &[u8])) -> u64 {
        self.drain_by_cpu(|_, t, raw| each(t, raw))
    }

    /// [`Instance::drain`] telling each record's CPU: its index in the
    /// `cpus` the instance was created with (records of one CPU come in
    /// their order).
    pub(crate) fn drain_by_cpu(&mut self, mut each: impl FnMut(usize, u64, &[u8])) -> u64 {
        let mut missed = 0u64;
        for (cpu, pipe) in self.pipes.iter_mut().enumerate() {
            // Each read gives one page (a partial one when the writer is
            // on it); EAGAIN or 0 once the buffer is empty.
            while let Ok(n) = pipe.read(&mut self.page) {
                if n == 0 {
                    break;
                }
                // A page that says records were dropped but not how many: one.
                missed += match parse_page(&self.page[..n], |t, raw| each(cpu, t, raw)) {
                    u64::MAX => 1,
                    m => m,
                };
            }
        }
        missed
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.set_on(false);
        self.pipes.clear();
        // rmdir removes an instance with everything in it.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Removes the instances of hiops runs that were killed before their
/// clean-up (each holds a buffer per CPU): those whose process is gone.
fn remove_orphans(instances: &Path) {
    let Ok(entries) = std::fs::read_dir(instances) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        // hiops-TAG-PID: the pid after the last dash.
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("hiops-"))
            .and_then(|n| n.rsplit('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page as the kernel lays it out, from (header word, payload words).
    fn page(ts: u64, commit_flags: u64, events: &[(u32, &[u32])], missed: Option<u64>) -> Vec<u8> {
        let mut data = Vec::new();
        for (head, words) in events {
            data.extend_from_slice(&head.to_ne_bytes());
            for w in *words {
                data.extend_from_slice(&w.to_ne_bytes());
            }
        }
        let mut p = Vec::new();
        p.extend_from_slice(&ts.to_ne_bytes());
        p.extend_from_slice(&(data.len() as u64 | commit_flags).to_ne_bytes());
        p.extend_from_slice(&data);
        if let Some(m) = missed {
            p.extend_from_slice(&m.to_ne_bytes());
        }
        p.resize(4096, 0);
        p
    }

    fn head(kind: u32, delta: u32) -> u32 {
        kind | (delta << 5)
    }

    #[test]
    fn records_get_their_times_and_payloads() {
        let p = page(
            1_000,
            0,
            &[
                // 8 bytes of data, 5 ns after the page's stamp.
                (head(2, 5), &[0xaa, 0xbb]),
                // A time extend of (1 << 27) + 7.
                (head(TIME_EXTEND, 7), &[1]),
                // Long form: length word 12 (itself and 8 bytes), +3 ns.
                (head(0, 3), &[12, 0xcc, 0xdd]),
                // A discarded record (padding whose length word counts
                // what follows the header): skipped, its time not added.
                (head(PADDING, 1), &[8, 0]),
                (head(1, 2), &[0xee]),
            ],
            None,
        );
        let mut got = Vec::new();
        let missed = parse_page(&p, |t, raw| got.push((t, raw.to_vec())));
        assert_eq!(missed, 0);
        let w = |xs: &[u32]| xs.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let extended = 1_005 + (1 << 27) + 7;
        assert_eq!(
            got,
            vec![
                (1_005, w(&[0xaa, 0xbb])),
                (extended + 3, w(&[0xcc, 0xdd])),
                (extended + 3 + 2, w(&[0xee])),
            ]
        );
    }

    #[test]
    fn a_page_says_how_many_records_were_dropped_before_it() {
        let ev: &[(u32, &[u32])] = &[(head(1, 1), &[1])];
        let stored = page(0, MISSED_EVENTS | MISSED_STORED, ev, Some(42));
        assert_eq!(parse_page(&stored, |_, _| {}), 42);
        let unsaid = page(0, MISSED_EVENTS, ev, None);
        assert_eq!(parse_page(&unsaid, |_, _| {}), u64::MAX);
        // The flags are not part of the length: the record is still read.
        let mut n = 0;
        parse_page(&unsaid, |_, _| n += 1);
        assert_eq!(n, 1);
    }

    #[test]
    fn an_absolute_stamp_replaces_the_running_time() {
        let low: u64 = 123_456_789;
        let p = page(
            5 << 59,
            0,
            &[
                (
                    head(TIME_STAMP, (low & ((1 << 27) - 1)) as u32),
                    &[(low >> 27) as u32],
                ),
                (head(1, 10), &[9]),
            ],
            None,
        );
        let mut t = 0;
        parse_page(&p, |at, _| t = at);
        assert_eq!(t, (5 << 59) + low + 10);
    }
}
