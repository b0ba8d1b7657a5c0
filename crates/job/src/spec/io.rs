//! How a job issues its I/O: the engine, the queue depth and its batches,
//! the HIOPS path, offload and command priorities.

use crate::range::QueueDepth;
use hiops_hal::{EngineKind, EngineOptions};
use std::time::Duration;

/// fio's cmdprio, per direction (read, write): the rules that give a share
/// of the I/Os a priority of their own (see `hiops_hal::ioprio_value`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CmdPrio {
    pub rules: [Vec<PrioRule>; 2],
}

/// One rule of [`CmdPrio`]: for I/Os of `bs` bytes (`None`: every I/O,
/// fio's cmdprio_percentage), `(percent, ioprio)` choices whose percents add
/// up to at most 100; the rest of the I/Os keep the thread's priority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrioRule {
    pub bs: Option<u32>,
    pub choices: Vec<(u32, u16)>,
}

/// fio's latency_target, latency_window, latency_percentile, latency_run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    /// An I/O's lat (creation to completion) meets the target at or below this.
    pub target: Duration,
    /// Each depth is judged over windows this long.
    pub window: Duration,
    /// The share of a window's I/Os that must meet the target, in percent.
    pub percentile: f64,
    /// Keep adjusting the depth for the whole run instead of ending the job
    /// once the depth is found.
    pub run: bool,
}

/// How `hiops run` drives the HIOPS path (crates/path) in synchronous-thread
/// mode.
#[derive(Clone, Debug)]
pub struct PathSpec {
    pub strategy: hiops_path::Strategy,
    /// coop/poll/hybrid: spin this long before sleeping (hiops' spin).
    pub spin: Duration,
    /// poll/hybrid: the time between two polls (hiops' poll_interval).
    pub poll_interval: Duration,
    pub coop_peeks: bool,
    /// coop: which of its parts are on (the Fig 8 ablation).
    pub coop_parts: hiops_path::CoopParts,
    /// coop on io_uring: how waiting threads sleep.
    pub coop_wait: hiops_path::CoopWait,
    pub rings: u32,
    pub hybrid: hiops_path::HybridConfig,
    /// The task path: this many application tasks, shared out over the
    /// job's threads (one per allowed CPU), each with its own ring of
    /// `iodepth` tags (`--tasks`). `None`: one application thread per clone.
    pub tasks: Option<u32>,
    /// The task path's driver busy-peeks from this depth (`--hybrid_depth`
    /// with `--tasks`); `None`: it always sleeps.
    pub task_poll_depth: Option<u32>,
}

/// The engine and the queue a job's threads drive.
#[derive(Clone, Debug)]
pub struct IoSpec {
    /// Synchronous-thread mode: each of `numjobs` threads does one blocking
    /// I/O at a time through a shared HIOPS path (`--strategy`); `iodepth`
    /// is then the path queue's depth. `None`: the asynchronous engine mode.
    pub path: Option<PathSpec>,
    pub iodepth: QueueDepth,
    /// Stage this many commands before issuing (0: a quarter of the depth,
    /// or all that fit where commands complete inside the call). A plain
    /// count, not a [`QueueDepth`]: 0 has that meaning of its own.
    pub iodepth_batch_submit: u32,
    /// Wait for at least this many completions per reap (fio's 0, a poll
    /// that waits for none, is taken as 1: a reap waits for one at least).
    pub iodepth_batch_complete_min: QueueDepth,
    /// Take at most this many completions per reap (0: a quarter of the
    /// depth, the rest left in the ring for the next turn; every one there
    /// is where commands complete inside the call). fio's default is
    /// `iodepth_batch_complete_min` (one), which leaves completions in the
    /// ring, counted in flight, while the next command is issued. A plain
    /// count: 0 has the meaning above.
    pub iodepth_batch_complete_max: u32,
    /// fio's iodepth_low: once the queue has filled to the depth, reap
    /// until at most this many are in flight before issuing again (0, or
    /// the depth or more: refill as completions come, fio's default). A
    /// plain count: 0 has that meaning.
    pub iodepth_low: u32,
    pub engine: EngineKind,
    pub engine_opts: EngineOptions,
    /// fio's `ioengine=filecreate`: a file's first I/O in a loop creates
    /// it (opens with O_CREAT), its other I/Os are counted untimed, and it
    /// is closed after its last; no data moves (see the `filecreate`
    /// module). `engine` is then psync's, whose one-at-a-time
    /// shape fio gives it (FIO_SYNCIO).
    pub filecreate: bool,
    /// fio's `ioengine=filestat` and `filedelete` (fio 3.33
    /// engines/fileoperations.c): as filecreate, but on files laid out
    /// before the job, each pass's first I/O of a file stats or deletes it
    /// (timed) instead of creating it.
    pub file_op: Option<FileOp>,
    /// fio 3.37's dircreate, dirstat and dirdelete (filecreate, filestat
    /// and filedelete on directories): mkdir (0700), stat or rmdir, timed;
    /// dirstat and dirdelete make the directories first (fio's setup_dirs).
    pub dirs: bool,
    /// fio's prio and prioclass: the I/O priority each thread of the job
    /// sets for itself (ioprio_set) before its engine opens (None: the
    /// process's own).
    pub ioprio: Option<u16>,
    /// fio's `ioengine=cpuio` (engines/cpu.c): each I/O burns the CPU
    /// instead of moving data; `engine` is then null's.
    pub cpuio: Option<CpuBurn>,
    /// fio's `ioengine=exec` (engines/exec.c): the job runs a program for
    /// its runtime instead of moving data; `engine` is then null's.
    pub exec: Option<ExecSpec>,
    /// fio's search for the deepest queue that meets a latency target.
    pub latency_target: Option<LatencyTarget>,
    /// fio's max_latency of reads and of writes: a completion whose
    /// latency (creation to completion) exceeds it fails the job with
    /// ETIMEDOUT (io_u.c, account_io_completion; fio 3.33 checks no trim).
    pub max_latency: [Option<Duration>; 2],
    /// fio's io_submit_mode=offload: `iodepth` worker threads, each doing
    /// one I/O at a time, fed by the job thread.
    pub offload: bool,
    /// fio's serialize_overlap: an I/O that overlaps one in flight on the
    /// same target waits for it to complete.
    pub serialize_overlap: bool,
    /// fio's cmdprio: I/Os at a priority of their own (io_uring, libaio).
    pub cmdprio: Option<CmdPrio>,
    /// fio's mem=mmap:FILE or mmapshared:FILE: each thread's queue buffers
    /// mapped from this file.
    pub buffer_file: Option<BufferFile>,
}

/// fio's mem=mmap:FILE (private: the file only gives the pages) and
/// mmapshared:FILE (shared: the buffers are the file's bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferFile {
    pub path: std::path::PathBuf,
    pub shared: bool,
}

/// fio's cpuio engine: each I/O keeps a CPU busy for `cycle` (cpuchunks),
/// then the job thinks for cycle x (100 - load) / load, so the thread
/// keeps `load_pct` of a CPU busy (cpuload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuBurn {
    /// cpuload: 1 to 100.
    pub load_pct: u32,
    /// cpuchunks: how long each I/O burns.
    pub cycle: std::time::Duration,
    /// cpumode=qsort: sort data (fio's four qsorts of 256 Ki integers)
    /// instead of spinning; the burn is then as long as the sorts take.
    pub qsort: bool,
    /// exit_on_io_done: the job ends once the threads beside it that move
    /// data have ended (the plan clears it where fio's would not end so:
    /// I/O jobs in a later phase, or none in the run).
    pub exit_on_io_done: bool,
}

impl CpuBurn {
    /// fio's thinktime after a burn of `burn` (engines/cpu.c).
    pub fn think_after(&self, burn: std::time::Duration) -> std::time::Duration {
        assert!((1..=100).contains(&self.load_pct), "cpuload is 1 to 100");
        burn * (100 - self.load_pct) / self.load_pct
    }
}

/// fio's exec engine: the program a job runs beside the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecSpec {
    /// The program and its arguments, split at spaces, with fio's `%r`
    /// (the runtime in whole seconds) and `%n` (the job's name) put in.
    pub argv: Vec<String>,
    /// grace_time: how long the program has to end after SIGTERM before
    /// SIGKILL.
    pub grace: std::time::Duration,
    /// std_redirect: its stdout and stderr go to `NAME.stdout` and
    /// `NAME.stderr` (else to hiops' own).
    pub redirect: bool,
}

/// What fio's filestat and filedelete engines do to a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// filestat, with its stat_type.
    Stat(StatCall),
    /// filedelete: unlink.
    Delete,
}

/// filestat's `stat_type`: the call that looks the file up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatCall {
    Stat,
    Lstat,
    Statx,
}

impl FileOp {
    /// fio's engine name.
    pub fn engine(self) -> &'static str {
        match self {
            FileOp::Stat(_) => "filestat",
            FileOp::Delete => "filedelete",
        }
    }
}

impl Default for IoSpec {
    /// The default job's engine: io_uring at queue depth 32.
    fn default() -> Self {
        IoSpec {
            path: None,
            iodepth: QueueDepth::DEFAULT,
            iodepth_batch_submit: 0,
            iodepth_batch_complete_min: QueueDepth::ONE,
            iodepth_batch_complete_max: 0,
            iodepth_low: 0,
            engine: EngineKind::IoUring,
            engine_opts: EngineOptions::default(),
            filecreate: false,
            file_op: None,
            dirs: false,
            ioprio: None,
            cpuio: None,
            exec: None,
            latency_target: None,
            max_latency: [None; 2],
            offload: false,
            serialize_overlap: false,
            cmdprio: None,
            buffer_file: None,
        }
    }
}
