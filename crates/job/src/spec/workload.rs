//! What a job's threads issue: directions, block sizes, offsets, rates
//! and the syncs and pauses between I/Os.

use super::block_sizes::BlockSizes;
use super::rw::RwMode;
use crate::distribution::Distribution;
use crate::range::Percent;
use std::time::Duration;

/// A minimum rate (fio's rate_min in bytes/s, rate_iops_min in I/Os per second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateMin {
    Bytes(u64),
    Iops(u64),
}

/// fio's flow control: jobs of one flow id keep their I/O in proportion to
/// their weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub id: u32,
    pub weight: u32,
    /// How long a thread held back waits before it asks again.
    pub sleep: Duration,
}

/// fio's sync_file_range=FLAGS:N: after every N writes, writeback of the
/// range the file's writes covered since the last one, with
/// sync_file_range(2)'s flags (wait_before 1, write 2, wait_after 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncRange {
    pub flags: u32,
    /// 0: never.
    pub every: u32,
}

/// When a job thinks and how (fio's thinktime_* options, HOWTO "I/O rate"
/// and backend.c's handle_thinktime); read only where thinktime is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThinkRules {
    /// Of each think, this long is a busy wait, the rest a sleep (fio's
    /// thinktime_spin; at most the thinktime, as init.c clamps it).
    pub spin: Duration,
    /// Think after this many I/Os since the last think (fio's
    /// thinktime_blocks; None: not given, fio's default 1, which
    /// thinktime_iotime then leaves out).
    pub blocks: Option<u64>,
    /// Count issued I/Os, not completed ones (thinktime_blocks_type=issue).
    pub on_issue: bool,
    /// Think once this much time has passed since the last think began,
    /// the think included (fio's thinktime_iotime; zero: not given).
    pub iotime: Duration,
    /// fio's rate_ignore_thinktime: after a think, a rate limit goes on
    /// from where it was, not catching up the time thought.
    pub rate_ignore: bool,
}

impl Default for ThinkRules {
    /// fio's defaults: no spin, a think after every completed I/O.
    fn default() -> Self {
        ThinkRules {
            spin: Duration::ZERO,
            blocks: None,
            on_issue: false,
            iotime: Duration::ZERO,
            rate_ignore: false,
        }
    }
}

/// fio's `rw=randread:N`: a random job draws a new random offset for
/// every Nth I/O only; the ones between go on sequentially after the last
/// I/O (fio's rw_sequencer=sequential) or repeat its offset (identical).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RwSequencer {
    /// N (0, fio's reading of `:0`: never a new random offset).
    pub every: u32,
    pub identical: bool,
}

/// How written buffers are filled, as fio's options of buffer contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferContent {
    /// fio's buffer_compress_percentage: the share (0..=100) of each chunk
    /// that compresses away (zeros, or buffer_pattern); the rest is random.
    pub compress_percentage: Percent,
    /// fio's buffer_compress_chunk: bytes per chunk (never 0).
    pub compress_chunk: u32,
    /// fio's dedupe_percentage (dedupe_mode=repeat): the share (0..=100)
    /// of writes that repeat the previous unique write's content.
    pub dedupe_percentage: Percent,
    /// fio's dedupe_mode=working_set: a repeat copies one of the first
    /// this many unique writes' contents, drawn at random, instead of the
    /// previous one's (0: dedupe_mode=repeat).
    pub dedupe_working_set: u64,
    /// fio's dedupe_global: the working set is shared by the run's threads,
    /// each thread's set spread over every thread's first unique writes.
    /// `Some(threads)`: on, with the run's thread count (the plan sets it).
    pub dedupe_global: Option<u32>,
    /// fio's refill_buffers: fresh random data for every write.
    pub refill: bool,
    /// fio's scramble_buffers: vary the filled-once buffer on each write
    /// (8 bytes per 512).
    pub scramble: bool,
}

impl Default for BufferContent {
    /// fio's defaults: incompressible, no repeats, scrambled.
    fn default() -> Self {
        BufferContent {
            compress_percentage: Percent::NONE,
            compress_chunk: 512,
            dedupe_percentage: Percent::NONE,
            dedupe_working_set: 0,
            dedupe_global: None,
            refill: false,
            scramble: true,
        }
    }
}

impl BufferContent {
    /// Every write is generated afresh (from a seed of its own or, for a
    /// repeat, the previous one's).
    pub fn generated(&self) -> bool {
        self.refill
            || self.compress_percentage > Percent::NONE
            || self.dedupe_percentage > Percent::NONE
    }
}

/// The I/O a job's threads issue.
#[derive(Clone, Debug)]
pub struct Workload {
    pub rw: RwMode,
    pub rwmixread: Percent,
    /// Block sizes of reads, and of writes unless `bs_write` is given
    /// (fio's `bs=READ,WRITE`).
    pub bs: BlockSizes,
    pub bs_write: Option<BlockSizes>,
    /// Block sizes of trims, unless they take the write sizes (fio's
    /// `bs=READ,WRITE,TRIM`). A trimwrite's write takes its trim's size.
    pub bs_trim: Option<BlockSizes>,
    pub distribution: Distribution,
    pub randseed: u64,
    /// Per-thread target rate of reads and of writes, in I/Os per second
    /// (fractions below 1 space I/Os more than a second apart); latency is
    /// counted from each I/O's intended issue time.
    pub rate_iops: [Option<f64>; 2],
    /// fio's rate_process=poisson: exponential gaps of the rate's mean
    /// between due times, instead of fixed ones (linear).
    pub rate_poisson: bool,
    /// The least each direction must keep up over each second (fio's
    /// rate_min, rate_iops_min): below it the job fails.
    pub rate_min: [Option<RateMin>; 2],
    /// The window rate_min is judged over (fio's rate_cycle); never 0.
    pub rate_cycle: Duration,
    /// Sequential jobs add this many bytes after each I/O (fio's
    /// `rw=read:4k`): holes, or with a negative gap a backwards walk
    /// (`rw=read:-8k`).
    pub rw_gap: i64,
    /// A random job's `:N` (None: every I/O at a new random offset).
    pub rw_sequencer: Option<RwSequencer>,
    /// fio's bs_is_seq_rand: `bs=A,B` gives sequential I/Os A and random
    /// ones B, whatever their direction.
    pub bs_is_seq_rand: bool,
    /// fio's buffer_pattern: the payload of every write that verify does
    /// not stamp (None: hiops' incompressible data).
    pub buffer_pattern: Option<Vec<u8>>,
    /// What else shapes a write's payload when verify does not stamp it
    /// (fio's buffer_compress_*, dedupe_percentage, refill_buffers and
    /// scramble_buffers).
    pub buffers: BufferContent,
    /// Random offsets are multiples of this (fio's blockalign; default: the
    /// smallest block size).
    pub block_align: Option<u32>,
    /// Uniform random size-based jobs touch every block once per pass
    /// (fio's random map; `norandommap` turns it off).
    pub random_map: bool,
    /// Share of random offsets in a random job, the rest sequential.
    pub percentage_random: Percent,
    /// Issue an fsync / fdatasync after this many writes (0: never).
    pub fsync_every: u32,
    pub fdatasync_every: u32,
    pub sync_range: SyncRange,
    /// fsync each file when the job's I/O is done.
    pub end_fsync: bool,
    /// Pause after each I/O completes (fio's thinktime), or as `think` says.
    pub thinktime: Duration,
    /// When the job thinks and how much of a think is spent spinning.
    pub think: ThinkRules,
    /// Each thread stops after this many I/Os (fio's number_ios).
    pub number_ios: Option<u64>,
    /// fio's flow control: (flow id, weight, flow_sleep).
    pub flow: Option<FlowSpec>,
}

impl Default for Workload {
    /// The default job's workload: uniform 4 KiB random reads, unpaced.
    fn default() -> Self {
        Workload {
            rw: RwMode::RandRead,
            rwmixread: Percent::HALF,
            bs: BlockSizes::fixed(4096),
            bs_write: None,
            bs_trim: None,
            distribution: Distribution::Uniform,
            randseed: 0x005E_ED0F_1105,
            rate_iops: [None; 2],
            rate_poisson: false,
            rate_min: [None; 2],
            rate_cycle: Duration::from_secs(1),
            rw_gap: 0,
            rw_sequencer: None,
            bs_is_seq_rand: false,
            buffer_pattern: None,
            buffers: BufferContent::default(),
            block_align: None,
            random_map: false,
            percentage_random: Percent::ALL,
            fsync_every: 0,
            fdatasync_every: 0,
            sync_range: SyncRange::default(),
            end_fsync: false,
            thinktime: Duration::ZERO,
            think: ThinkRules::default(),
            number_ios: None,
            flow: None,
        }
    }
}
