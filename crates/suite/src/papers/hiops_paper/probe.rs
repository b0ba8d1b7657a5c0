//! Short measurements of the HIOPS design on the path itself, beside the
//! sweeps: what the path's and the HAL's counters show of non-blocking
//! issue, the HAL's operations per I/O and the hybrid's switch (HIOPS
//! §3.1-§3.3), and how a small direct read's latency depends on the
//! distance between blocks (the slides' kernel-stack point). Each round
//! takes about a second on the experiment's first target; the rounds are
//! kept in `probe.json` beside the sweeps and read by [`super::design`].

use hiops_path::{AlignedBuf, CoopWait, IoPath, PathConfig, Strategy};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Seek;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// The file the rounds are kept in, in the experiment's directory.
pub const FILE: &str = "probe.json";

/// Threads and tags of the non-blocking run: more threads than tags, so
/// commands find the device busy.
pub const NONBLOCKING_THREADS: u32 = 8;
pub const NONBLOCKING_TAGS: u32 = 2;
const NONBLOCKING_READS: u32 = 250;
/// Threads of the hybrid's light and heavy loads, and how long each runs.
pub const HYBRID_LIGHT: u32 = 1;
pub const HYBRID_HEAVY: u32 = 32;
const HYBRID_FOR: Duration = Duration::from_millis(400);
/// Reads of each latency run (sequential, then random).
const LATENCY_READS: usize = 1000;
const BLOCK: usize = 4096;

/// Why a probe could not run, in one line.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("probing {path}: {source} (the probe reads the experiment's first target with O_DIRECT: give a file on a disk)")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("probing {path}: it holds fewer than 16 blocks of 4 KiB: give a larger target")]
    Small { path: String },
    #[error("probing {path}: the I/O path: {source}")]
    Path {
        path: String,
        source: hiops_path::PathError,
    },
    #[error("probing {path}: a read failed: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

/// The path's and the HAL's counts over one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PathCounts {
    /// Completions reaped through the shared queue.
    pub ios: u64,
    /// Commands that found no free tag and waited in the FIFO.
    pub fifo_queued: u64,
    pub issued_for_others: u64,
    pub get_free_tags: u64,
    pub busy: u64,
    pub binds: u64,
    pub issue_calls: u64,
    pub issued: u64,
    pub check_events: u64,
    pub fetched: u64,
    pub detached: u64,
    pub released: u64,
}

impl PathCounts {
    pub fn of(c: &hiops_path::PathCounters) -> PathCounts {
        let h = &c.hal;
        PathCounts {
            ios: c.reaped - c.solo,
            fifo_queued: c.fifo_queued,
            issued_for_others: c.issued_for_others,
            get_free_tags: h.get_free_tags,
            busy: h.busy,
            binds: h.binds,
            issue_calls: h.issue_calls,
            issued: h.issued,
            check_events: h.check_events,
            fetched: h.fetched,
            detached: h.detached,
            released: h.released,
        }
    }
}

/// One load on the hybrid strategy: its I/O rate and its switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HybridRun {
    pub threads: u32,
    pub iops: f64,
    /// Switches to polling, and back to the doorbell.
    pub to_poll: u32,
    pub to_coop: u32,
    /// The indicator at the first switch to polling: mean occupied queue
    /// depth and IOPS over the window that decided.
    pub switch_depth: Option<f64>,
    pub switch_iops: Option<f64>,
}

/// Median latency of 4 KiB direct reads at one outstanding read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub sequential_p50_us: f64,
    pub random_p50_us: f64,
}

/// One round of every probe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub round: u32,
    pub nonblocking: PathCounts,
    pub light: HybridRun,
    pub heavy: HybridRun,
    pub latency: Latency,
}

/// What the probes read, and the target's block-layer settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The target's label and path.
    pub label: String,
    pub path: String,
    /// The disk under it, its driver, I/O scheduler and read-ahead, as
    /// sysfs named them (empty where it names none).
    pub disk: String,
    pub driver: String,
    pub scheduler: String,
    pub read_ahead_kb: String,
    pub rounds: Vec<Round>,
    /// Why the probes did not run, where they did not.
    #[serde(default)]
    pub failed: Option<String>,
}

/// A small xorshift: offsets spread over the file, no allocation.
fn next(state: &mut u64) -> u64 {
    assert_ne!(*state, 0, "xorshift stays at zero from zero");
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// `path` opened for direct reads, and its size in 4 KiB blocks.
fn open_direct(path: &str) -> Result<(File, u64), ProbeError> {
    let open = |source| ProbeError::Open {
        path: path.into(),
        source,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(open)?;
    // The end of a file or of a block device alike.
    let len = (&f).seek(std::io::SeekFrom::End(0)).map_err(open)?;
    let blocks = len / BLOCK as u64;
    if blocks < 16 {
        return Err(ProbeError::Small { path: path.into() });
    }
    Ok((f, blocks))
}

fn open_path(path: &str, f: &File, config: PathConfig) -> Result<IoPath, ProbeError> {
    IoPath::open(config, vec![hiops_hal::Target::from_file(f)]).map_err(|source| ProbeError::Path {
        path: path.into(),
        source,
    })
}

/// Random 4 KiB reads through `io` by `threads` threads, each until
/// `reads` are done or `until` has passed. Returns the reads done.
fn read_many(
    io: &IoPath,
    blocks: u64,
    threads: u32,
    (reads, until): (u32, Instant),
) -> std::io::Result<u64> {
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || -> std::io::Result<u64> {
                    let mut buf = AlignedBuf::new(BLOCK);
                    let mut state = 0x9e37_79b9_7f4a_7c15 ^ ((u64::from(t) + 1) * 0x2545_f491);
                    let mut done = 0u64;
                    while done < u64::from(reads) && Instant::now() < until {
                        let block = next(&mut state) % blocks;
                        io.read_at(0, &mut buf, block * BLOCK as u64)?;
                        done += 1;
                    }
                    Ok(done)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a probe thread does not panic"))
            .sum()
    })
}

/// Non-blocking issue: coop with its waiters on the doorbell (the FIFO
/// path) on one ring of few tags, more threads than tags.
fn nonblocking(path: &str, f: &File, blocks: u64) -> Result<PathCounts, ProbeError> {
    let config = PathConfig {
        strategy: Strategy::Coop,
        coop_wait: CoopWait::Doorbell,
        depth: NONBLOCKING_TAGS,
        rings: 1,
        ..PathConfig::default()
    };
    let io = open_path(path, f, config)?;
    let before = io.counters();
    let far = Instant::now() + Duration::from_secs(30);
    read_many(&io, blocks, NONBLOCKING_THREADS, (NONBLOCKING_READS, far)).map_err(|source| {
        ProbeError::Read {
            path: path.into(),
            source,
        }
    })?;
    let counts = PathCounts::of(&io.counters().since(&before));
    io.shutdown();
    Ok(counts)
}

/// The hybrid strategy under `threads` threads for [`HYBRID_FOR`].
fn hybrid(path: &str, f: &File, blocks: u64, threads: u32) -> Result<HybridRun, ProbeError> {
    let config = PathConfig {
        strategy: Strategy::Hybrid,
        rings: 1,
        ..PathConfig::default()
    };
    let io = open_path(path, f, config)?;
    let t0 = Instant::now();
    let done = read_many(&io, blocks, threads, (u32::MAX, t0 + HYBRID_FOR)).map_err(|source| {
        ProbeError::Read {
            path: path.into(),
            source,
        }
    })?;
    let secs = t0.elapsed().as_secs_f64();
    let switches = io.switches();
    io.shutdown();
    let to_poll: Vec<_> = (switches.iter())
        .filter(|s| s.to == hiops_path::Mode::Poll)
        .collect();
    Ok(HybridRun {
        threads,
        iops: done as f64 / secs,
        to_poll: to_poll.len() as u32,
        to_coop: (switches.len() - to_poll.len()) as u32,
        switch_depth: to_poll.first().map(|s| s.mean_depth),
        switch_iops: to_poll.first().map(|s| s.iops),
    })
}

/// Median latency of 4 KiB direct reads at one outstanding read, from
/// consecutive blocks and from blocks spread over the file.
fn latency(path: &str, f: &File, blocks: u64, seed: u64) -> Result<Latency, ProbeError> {
    let mut buf = AlignedBuf::new(BLOCK);
    let mut state = seed | 1;
    let start = next(&mut state) % (blocks - (LATENCY_READS as u64 % blocks));
    let mut time = |block: u64| -> Result<u64, ProbeError> {
        let t = Instant::now();
        f.read_at(&mut buf, block * BLOCK as u64)
            .map_err(|source| ProbeError::Read {
                path: path.into(),
                source,
            })?;
        Ok(t.elapsed().as_nanos() as u64)
    };
    let mut seq = Vec::with_capacity(LATENCY_READS);
    for i in 0..LATENCY_READS as u64 {
        seq.push(time((start + i) % blocks)?);
    }
    let mut rand = Vec::with_capacity(LATENCY_READS);
    for _ in 0..LATENCY_READS {
        rand.push(time(next(&mut state) % blocks)?);
    }
    let p50 = |mut v: Vec<u64>| {
        assert!(!v.is_empty(), "a median of some reads");
        v.sort_unstable();
        v[v.len() / 2] as f64 / 1e3
    };
    Ok(Latency {
        sequential_p50_us: p50(seq),
        random_p50_us: p50(rand),
    })
}

/// One round of every probe on `path`.
pub fn round(path: &str, round: u32) -> Result<Round, ProbeError> {
    let (f, blocks) = open_direct(path)?;
    Ok(Round {
        round,
        nonblocking: nonblocking(path, &f, blocks)?,
        light: hybrid(path, &f, blocks, HYBRID_LIGHT)?,
        heavy: hybrid(path, &f, blocks, HYBRID_HEAVY)?,
        latency: latency(path, &f, blocks, u64::from(round) + 7)?,
    })
}

/// A sysfs attribute of `disk`'s queue, trimmed ("" where absent).
fn queue_attr(disk: &str, name: &str) -> String {
    std::fs::read_to_string(format!("/sys/block/{disk}/queue/{name}"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The probe of `label`'s `path` before its rounds: the disk, its driver
/// and its block-layer settings.
pub fn describe(label: &str, path: &str) -> Probe {
    let dev = crate::irq::knobs::device_of(path);
    let disk = dev.as_ref().map(|d| d.disk.clone()).unwrap_or_default();
    Probe {
        label: label.into(),
        path: path.into(),
        driver: (dev.as_ref())
            .and_then(crate::irq::knobs::driver)
            .unwrap_or_default(),
        scheduler: queue_attr(&disk, "scheduler"),
        read_ahead_kb: queue_attr(&disk, "read_ahead_kb"),
        disk,
        rounds: Vec::new(),
        failed: None,
    }
}

/// Runs the rounds `dir`'s probe.json lacks on the plan's first target
/// and keeps them (a resumed experiment runs only the missing ones). A
/// probe that fails is kept with why, for the report to say.
pub fn run(dir: &Path, plan: &super::plan::Plan, restart: bool, who: &str) {
    let Some(t) = plan.targets.first() else {
        return;
    };
    let file = dir.join(FILE);
    let kept: Option<Probe> = (!restart)
        .then(|| crate::sweep::read_json(&file).ok())
        .flatten();
    let mut probe = kept
        .filter(|p: &Probe| p.path == t.path && p.failed.is_none())
        .unwrap_or_else(|| describe(&t.label, &t.path));
    while probe.failed.is_none() && (probe.rounds.len() as u32) < plan.rounds {
        match round(&t.path, probe.rounds.len() as u32) {
            Ok(r) => probe.rounds.push(r),
            Err(e) => {
                eprintln!("{who}: {e}");
                probe.failed = Some(e.to_string());
            }
        }
        if let Err(e) = crate::sweep::write_json_atomic(&file, &probe) {
            eprintln!("{who}: {e}");
            return;
        }
    }
}

/// The probe kept in `dir`, if any.
pub fn load(dir: &Path) -> Option<Probe> {
    crate::sweep::read_json(&dir.join(FILE)).ok()
}
