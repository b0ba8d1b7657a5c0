//! The validated plan of a job: what the workers do. Built from flags (and
//! later job files) by the front end; every field here has passed validation.

use hiops_hal::{EngineKind, EngineOptions, Op};
use std::path::PathBuf;

/// fio's `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed.
    ReadWrite,
    /// Random mixed.
    RandRw,
    /// Sequential trims (fio's `trim`).
    Trim,
    RandTrim,
    /// Each block trimmed, then written (fio's `trimwrite`).
    TrimWrite,
    RandTrimWrite,
}

impl RwMode {
    pub fn parse(s: &str) -> Option<RwMode> {
        Some(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "readwrite" | "rw" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandRw
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }

    /// Changes the target's contents: writes, and trims too (a trim
    /// destroys data as a write does; the safety gate treats them alike).
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }

    pub fn reads(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw
        )
    }

    /// Issues trims (fio's TD_DDIR_TRIM).
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }

    /// Issues data writes (trim-only modes do not).
    pub fn writes_data(self) -> bool {
        self.writes() && !matches!(self, RwMode::Trim | RwMode::RandTrim)
    }

    /// Percentage of reads: pure modes are 100 or 0; mixed use `rwmixread`.
    pub fn read_pct(self, rwmixread: u32) -> u32 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::ReadWrite | RwMode::RandRw => rwmixread,
            _ => 0,
        }
    }
}

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

/// Block sizes: one size, fio's `bssplit` (size, percent) list, or a
/// `bsrange` (every multiple of the smallest, equally likely).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSizes {
    /// (bytes, weight); for bssplit the weights are percents adding up to 100.
    pub split: Vec<(u32, u32)>,
}

impl BlockSizes {
    pub fn fixed(bs: u32) -> BlockSizes {
        BlockSizes {
            split: vec![(bs, 100)],
        }
    }

    pub fn max(&self) -> u32 {
        self.split.iter().map(|s| s.0).max().unwrap_or(0)
    }

    pub fn min(&self) -> u32 {
        self.split.iter().map(|s| s.0).min().unwrap_or(0)
    }

    pub fn is_fixed(&self) -> bool {
        self.split.len() == 1
    }

    /// Each size equally likely.
    pub fn equal(sizes: &[u32]) -> BlockSizes {
        assert!(!sizes.is_empty() && sizes.iter().all(|&s| s > 0));
        BlockSizes {
            split: sizes.iter().map(|&s| (s, 1)).collect(),
        }
    }

    /// Mean transfer size in bytes.
    pub fn mean(&self) -> f64 {
        let w: u64 = self.split.iter().map(|s| s.1 as u64).sum();
        self.split
            .iter()
            .map(|s| s.0 as f64 * s.1 as f64)
            .sum::<f64>()
            / w.max(1) as f64
    }

    /// Parses `4k` or fio's bssplit `4k/50:64k/50` (an empty percent shares
    /// what is left equally, as in fio).
    pub fn parse(text: &str) -> Result<BlockSizes, String> {
        Self::parse_with(text, &|t| Ok(crate::units::parse_size(t)?))
    }

    /// As `parse`, with the caller's size syntax (fio's kb_base).
    pub fn parse_with(
        text: &str,
        parse_size: &dyn Fn(&str) -> Result<u64, String>,
    ) -> Result<BlockSizes, String> {
        if !text.contains('/') && !text.contains(':') {
            let bs = parse_size(text)?;
            return Ok(BlockSizes::fixed(to_u32(bs, text)?));
        }
        let mut split = Vec::new();
        let mut unspecified = Vec::new();
        for part in text.split(':').filter(|p| !p.is_empty()) {
            let (size, pct) = part.split_once('/').unwrap_or((part, ""));
            let bs = to_u32(parse_size(size)?, size)?;
            if pct.is_empty() {
                unspecified.push(split.len());
                split.push((bs, 0));
            } else {
                let p: u32 = pct.parse().map_err(|_| {
                    format!("'{part}' in bssplit: the percent after '/' must be a whole number")
                })?;
                split.push((bs, p));
            }
        }
        let given: u32 = split.iter().map(|s| s.1).sum();
        if given > 100 {
            return Err(format!(
                "bssplit '{text}' adds up to {given}%: make the percentages add up to 100"
            ));
        }
        if !unspecified.is_empty() {
            let each = (100 - given) / unspecified.len() as u32;
            let mut rest = (100 - given) % unspecified.len() as u32;
            for &i in &unspecified {
                split[i].1 = each + u32::from(rest > 0);
                rest = rest.saturating_sub(1);
            }
        } else if given != 100 {
            return Err(format!(
                "bssplit '{text}' adds up to {given}%: make the percentages add up to 100"
            ));
        }
        split.retain(|s| s.1 > 0);
        Ok(BlockSizes { split })
    }
}

fn to_u32(v: u64, text: &str) -> Result<u32, String> {
    u32::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("block size '{text}' must be between 1 byte and 4GiB"))
}

pub use crate::distribution::Distribution;

/// A minimum rate (fio's rate_min in bytes/s, rate_iops_min in I/Os per second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateMin {
    Bytes(u64),
    Iops(u64),
}

/// fio's latency_target, latency_window, latency_percentile, latency_run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    /// An I/O's lat (creation to completion) meets the target at or below this.
    pub target_ns: u64,
    /// Each depth is judged over windows this long.
    pub window_ns: u64,
    /// The share of a window's I/Os that must meet the target, in percent.
    pub percentile: f64,
    /// Keep adjusting the depth for the whole run instead of ending the job
    /// once the depth is found.
    pub run: bool,
}

/// fio's flow control: jobs of one flow id keep their I/O in proportion to
/// their weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub id: u32,
    pub weight: u32,
    /// How long a thread held back waits before it asks again.
    pub sleep_ns: u64,
}

/// Which jobs fio's exitall stops (its `exit_what`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of the same reporting group (fio's default).
    Group,
    /// Every job running: the phase, up to the next stonewall; later
    /// phases still run.
    Stonewall,
    /// Every job: the phase, and no later phase runs.
    All,
}

/// What to verify: fio's `verify` (verify.h names the kinds). Every kind
/// but the pattern without a header and null writes fio's block layout
/// (crates/bench/src/verify, docs/output.md "Verify").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyMode {
    Off,
    /// fio's `meta`: the header alone (and the pattern, if one is given).
    Meta,
    Md5,
    Crc64,
    Crc32,
    /// crc32c (also fio's crc32c-intel).
    Crc32c,
    Crc16,
    Crc7,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    Sha1,
    /// A header plus `verify_pattern` repeated as the payload, compared byte
    /// by byte (fio's choice for a verify_pattern without verify).
    Pattern,
    /// fio's `verify=pattern`: the whole block is the pattern, no header.
    PatternNoHeader,
    /// fio's `null`: blocks are read back and not checked.
    Null,
}

impl VerifyMode {
    /// fio's name for `verify=` (`crc32c-intel` reads as crc32c, `0` and
    /// `none` as off).
    pub fn parse(name: &str) -> Option<VerifyMode> {
        Some(match name {
            "0" | "none" => VerifyMode::Off,
            "1" | "crc32c" | "crc32c-intel" => VerifyMode::Crc32c,
            "meta" => VerifyMode::Meta,
            "md5" => VerifyMode::Md5,
            "crc64" => VerifyMode::Crc64,
            "crc32" => VerifyMode::Crc32,
            "crc16" => VerifyMode::Crc16,
            "crc7" => VerifyMode::Crc7,
            "sha256" => VerifyMode::Sha256,
            "sha512" => VerifyMode::Sha512,
            "sha3-224" => VerifyMode::Sha3_224,
            "sha3-256" => VerifyMode::Sha3_256,
            "sha3-384" => VerifyMode::Sha3_384,
            "sha3-512" => VerifyMode::Sha3_512,
            "xxhash" => VerifyMode::Xxhash,
            "sha1" => VerifyMode::Sha1,
            "pattern" => VerifyMode::PatternNoHeader,
            "null" => VerifyMode::Null,
            _ => return None,
        })
    }

    /// The names `parse` reads, for messages.
    pub const NAMES: &'static str = "md5, crc64, crc32, crc32c (crc32c-intel), crc16, crc7, sha1, sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, xxhash, meta, pattern, null, 0";
}

/// An access-pattern hint (posix_fadvise): random turns the file's
/// readahead off, sequential doubles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fadvise {
    Sequential,
    Random,
}

/// A byte count, or a share of the target (fio's `offset=10%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Bytes(u64),
    Percent(f64),
}

impl Amount {
    /// The bytes this amounts to on a target of `len` bytes.
    pub fn of(self, len: u64) -> u64 {
        match self {
            Amount::Bytes(b) => b,
            Amount::Percent(p) => (len as f64 * p / 100.0) as u64,
        }
    }

    pub fn is_zero(self) -> bool {
        match self {
            Amount::Bytes(b) => b == 0,
            Amount::Percent(p) => p == 0.0,
        }
    }
}

/// What the report needs to know about how a job was given (job files).
#[derive(Clone, Debug, Default)]
pub struct JobMeta {
    pub description: Option<String>,
    /// The job's own options as written, for fio's `"job options"`.
    pub options: Vec<(String, String)>,
    /// fio's group (stonewall / new_group start a new one).
    pub group: u32,
    /// Report the job's threads merged (fio's group_reporting).
    pub group_reporting: bool,
    /// Completion-latency percentiles to report (fio's percentile_list).
    pub percentiles: Option<Vec<f64>>,
    /// Options that were ignored with --ignore-unsupported.
    pub ignored: Vec<String>,
    /// fio's unified_rw_reporting.
    pub unified_rw: UnifiedRw,
    /// Which latencies the report gives percentiles for.
    pub shown_percentiles: LatPercentiles,
}

/// fio's slat_percentiles, clat_percentiles and lat_percentiles: which
/// latencies get percentiles (and json+ bins) in the report; clat's alone
/// by default, as in fio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatPercentiles {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
}

impl Default for LatPercentiles {
    fn default() -> Self {
        LatPercentiles {
            slat: false,
            clat: true,
            lat: false,
        }
    }
}

/// fio's unified_rw_reporting: reads, writes and trims reported apart (its
/// default), summed into one "mixed" direction, or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnifiedRw {
    #[default]
    Apart,
    Mixed,
    Both,
}

/// fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyState {
    pub metric: SsMetric,
    /// Judge the slope of a least-squares line instead of the spread.
    pub slope: bool,
    /// The limit: a percentage of the mean, or an absolute figure.
    pub limit: f64,
    pub percent: bool,
    pub window_ns: u64,
    pub ramp_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsMetric {
    Iops,
    Bandwidth,
}

/// fio's logs (HOWTO, `write_bw_log` to `log_alternate_epoch_clock_id`):
/// which are written, and how. The files are fio's: `PREFIX_bw.N.log`,
/// `PREFIX_{lat,slat,clat}.N.log`, `PREFIX_iops.N.log`,
/// `PREFIX_clat_hist.N.log`, with N the thread's number in the run.
#[derive(Clone, Debug, PartialEq)]
pub struct LogSpec {
    /// Each log's file name prefix; `None`: not written.
    pub bw: Option<String>,
    /// slat, clat and lat together (fio's write_lat_log).
    pub lat: Option<String>,
    pub iops: Option<String>,
    pub hist: Option<String>,
    /// Average each log over windows of this many ms (0: a line per I/O).
    pub avg_msec: u64,
    /// The histogram log's window (0: its file stays empty, as in fio).
    pub hist_msec: u64,
    /// Histogram bins merged 2^coarseness at a time (0 to 6).
    pub hist_coarseness: u32,
    /// Windows log their largest value instead of the mean.
    pub max_value: bool,
    /// Files per thread (`.N` in the name); false: the job's threads append
    /// to one file.
    pub per_job: bool,
    /// Lines carry the I/O's offset.
    pub offset: bool,
    /// The last column is the priority value (0x0000) instead of 0/1.
    pub prio: bool,
    /// Times count from this clock's reading at the start (ms) instead of
    /// from 0 (fio's log_unix_epoch, log_alternate_epoch).
    pub epoch_clock: Option<i32>,
    /// The run-wide number of the job's first thread (fio's thread_number,
    /// from 1); clone c is number first_thread + c.
    pub first_thread: u32,
    /// fio's log_store_compressed: each log goes to `NAME.fz`, zlib
    /// streams one after another (one per thread), which `--inflate-log`
    /// turns back into text.
    pub store_compressed: bool,
}

impl Default for LogSpec {
    fn default() -> Self {
        LogSpec {
            bw: None,
            lat: None,
            iops: None,
            hist: None,
            avg_msec: 0,
            hist_msec: 0,
            hist_coarseness: 0,
            max_value: false,
            per_job: true,
            offset: false,
            prio: false,
            epoch_clock: None,
            first_thread: 1,
            store_compressed: false,
        }
    }
}

impl LogSpec {
    /// Whether any log is written.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }
}

/// The trace formats fio's read_iolog takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// fio's iolog, version 2 (no times) or 3 (a time in µs per line).
    Text { version: u8 },
    /// blktrace's binary events (one device's file, e.g. `sda.blktrace.0`).
    Blktrace,
}

/// fio's read_iolog and its replay_* options (HOWTO, "I/O replay").
#[derive(Clone, Debug, PartialEq)]
pub struct ReplaySpec {
    pub trace: PathBuf,
    pub format: TraceFormat,
    /// The trace's file names, in the order of the job's targets: an I/O on
    /// `files[i]` goes to target i. Empty: every I/O goes to target 0
    /// (replay_redirect, or a blktrace).
    pub files: Vec<String>,
    /// replay_no_stall: issue as fast as the queue takes them, not at the
    /// trace's times.
    pub no_stall: bool,
    /// replay_time_scale: the trace's clock runs at this percentage (200:
    /// twice as fast).
    pub time_scale_pct: u32,
    /// replay_scale: offsets are divided by this.
    pub offset_divisor: u64,
    /// replay_align: offsets are rounded down to a multiple of this (0: not).
    pub align: u64,
    /// replay_skip: I/Os of these kinds are not replayed.
    pub skip: ReplaySkip,
    /// The trace has trims to replay (after replay_skip): the targets are
    /// opened for writing and must be able to discard, as for rw=trim.
    pub trims: bool,
}

/// fio's trim_percentage, trim_backlog, trim_backlog_batch and
/// trim_verify_zero (io_u.c `check_get_trim`, trim.c, verify.c
/// `verify_trimmed_io_u`): each write a verify job logs is picked for a
/// trim with this percentage's chance; when the logged writes reach a
/// multiple of `every` (and the last I/O was not a read), `batch` of the
/// oldest picked blocks are trimmed. The check then expects zeroes there
/// (`zero`), or leaves them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyTrim {
    pub percentage: u32,
    /// trim_backlog, above 0 (without it fio issues no trim).
    pub every: u64,
    /// trim_backlog_batch; 0: `every`.
    pub batch: u64,
    /// trim_verify_zero (fio's default 1).
    pub zero: bool,
}

/// What replay_skip leaves out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplaySkip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub sync: bool,
}

/// Where a job's I/O goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSpec {
    /// Files or block devices by path; I/O is spread over them round-robin by
    /// block (JBOD-style: each I/O picks one target).
    Paths(Vec<PathBuf>),
    /// A RAM device of `size` bytes (the `mem` and `null` engines).
    Ram,
}

#[derive(Clone, Debug)]
pub struct JobSpec {
    /// Synchronous-thread mode: each of `numjobs` threads does one blocking
    /// I/O at a time through a shared HIOPS path (`--strategy`); `iodepth`
    /// is then the path queue's depth. `None`: the asynchronous engine mode.
    pub path: Option<PathSpec>,
    pub name: String,
    pub targets: TargetSpec,
    /// Bytes of each target to use (from offset 0); `None`: the whole
    /// existing file or device.
    pub size: Option<u64>,
    /// fio's io_size (io_limit): bytes each thread moves, apart from the
    /// region `size` sets (fewer: it stops early; more: it goes round
    /// again). `None`: size (times loops).
    pub io_size: Option<u64>,
    /// fio's zonemode=strided with zonesize, zonerange, zoneskip.
    pub strided: Option<crate::strided::StridedZones>,
    /// Remove files hiops created when the job ends.
    pub unlink: bool,
    pub rw: RwMode,
    pub rwmixread: u32,
    /// Block sizes of reads, and of writes unless `bs_write` is given
    /// (fio's `bs=READ,WRITE`).
    pub bs: BlockSizes,
    pub bs_write: Option<BlockSizes>,
    /// Block sizes of trims, unless they take the write sizes (fio's
    /// `bs=READ,WRITE,TRIM`). A trimwrite's write takes its trim's size.
    pub bs_trim: Option<BlockSizes>,
    pub iodepth: u32,
    /// Stage this many commands before issuing (0: all that fit).
    pub iodepth_batch_submit: u32,
    /// Wait for at least this many completions per reap.
    pub iodepth_batch_complete_min: u32,
    /// Take at most this many completions per reap (0: every one there
    /// is). fio's default is `iodepth_batch_complete_min` (one), which
    /// leaves completions in the ring, counted in flight, while the next
    /// command is issued.
    pub iodepth_batch_complete_max: u32,
    pub engine: EngineKind,
    pub engine_opts: EngineOptions,
    /// fio's `ioengine=filecreate`: a file's first I/O in a loop creates
    /// it (opens with O_CREAT), its other I/Os are counted untimed, and it
    /// is closed after its last; no data moves (see the `filecreate`
    /// module). `engine` is then psync's, whose one-at-a-time
    /// shape fio gives it (FIO_SYNCIO).
    pub filecreate: bool,
    pub numjobs: u32,
    /// CPUs each thread may run on; with `cpus_split`, thread i gets cpus[i % n].
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_split: bool,
    pub direct: bool,
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_ns: u64,
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
    pub verify: VerifyMode,
    /// The payload of stamped blocks (fio's `verify_pattern`); random if None.
    pub verify_pattern: Option<Vec<u8>>,
    /// Where fio's `%o` stands in `verify_pattern`: the block's offset
    /// (8 bytes, little-endian) is written there in each block.
    pub verify_pattern_offsets: Vec<usize>,
    /// Check what was written (fio's `do_verify`); false only stamps.
    pub do_verify: bool,
    /// A header every this many bytes of a block (fio's verify_interval;
    /// `None`: fio's default, the smallest block).
    pub verify_interval: Option<u32>,
    /// fio's verify_offset: the header is swapped with the bytes this far
    /// into each chunk before the write, and back before the check (0: the
    /// header stays at the chunk's start).
    pub verify_offset: u32,
    /// fio's randseed (0x89 unless given), which fio's per-block rand_seed
    /// stream starts from.
    pub verify_seed: u64,
    /// Stop at the first bad block (fio's verify_fatal).
    pub verify_fatal: bool,
    /// Write a bad block as read and as expected to files (fio's verify_dump).
    pub verify_dump: bool,
    /// During the writes, check `verify_backlog_batch` done writes after
    /// every this many writes (fio's verify_backlog; 0: off).
    pub verify_backlog: u64,
    /// 0: verify_backlog's count.
    pub verify_backlog_batch: u64,
    /// fio's verify_async: threads that check read-back blocks (0: the
    /// job's own thread checks them).
    pub verify_async: u32,
    /// fio's trim_percentage family (None: no trims mixed in).
    pub verify_trim: Option<VerifyTrim>,
    /// fio's --debug=io and --debug=verify for this job's threads.
    pub trace: crate::debug_trace::TraceSpec,
    /// Keep fio's verify state file up to date while a writing job runs
    /// (fio's verify_state_save).
    pub verify_state_save: bool,
    /// verify_only checks only the writes the state file names as done
    /// (fio's verify_state_load).
    pub verify_state_load: bool,
    /// Read and check stamps already on the target without writing.
    pub verify_only: bool,
    /// Where verify state files and verify_dump's files go (fio's
    /// --aux-path; None: the current directory).
    pub aux_path: Option<PathBuf>,
    /// Block devices the user named as writable despite the safety checks.
    pub allow_write_devices: Vec<PathBuf>,
    pub meta: JobMeta,
    /// `size` as a share of each existing target (fio's `size=50%`).
    pub size_pct: Option<f64>,
    /// Where the job's range starts in each target, and how much further
    /// each clone starts (fio's offset, offset_increment).
    pub offset: Amount,
    pub offset_increment: Amount,
    /// fio's default layout without `filename`: each clone has its own
    /// `files_per_clone` files; `targets` lists clone 0's, then clone 1's...
    pub files_per_clone: Option<u32>,
    /// fio's file_service_type (None: each file in turn, one I/O each).
    pub file_service: Option<crate::file_service::FileService>,
    /// fio's openfiles when below the job's files: at most this many are
    /// served at a time, each until its range is done.
    pub open_files: Option<u32>,
    /// fio's fill_device: the size is the free space of the file's
    /// filesystem, and a new file is not laid out first (the writes fill it).
    pub fill_device: bool,
    /// Sequential jobs add this many bytes after each I/O (fio's
    /// `rw=read:4k`): holes, or with a negative gap a backwards walk
    /// (`rw=read:-8k`).
    pub rw_gap: i64,
    /// fio's buffer_pattern: the payload of every write that verify does
    /// not stamp (None: hiops' incompressible data).
    pub buffer_pattern: Option<Vec<u8>>,
    /// Random offsets are multiples of this (fio's blockalign; default: the
    /// smallest block size).
    pub block_align: Option<u32>,
    /// Size-based jobs repeat their pass this many times.
    pub loops: u32,
    /// Uniform random size-based jobs touch every block once per pass
    /// (fio's random map; `norandommap` turns it off).
    pub random_map: bool,
    /// Share of random offsets in a random job, the rest sequential.
    pub percentage_random: u32,
    /// hiops: the job's files striped as one RAID0 volume with chunks of
    /// this many bytes (None: files take turns per I/O, JBOD).
    pub raid0_chunk: Option<u64>,
    /// Issue an fsync / fdatasync after this many writes (0: never).
    pub fsync_every: u32,
    pub fdatasync_every: u32,
    /// fsync each file when the job's I/O is done.
    pub end_fsync: bool,
    /// Drop the page cache of files before the job.
    pub invalidate: bool,
    /// The access-pattern hint given to the kernel for each file as a job
    /// thread starts (fio's fadvise_hint; `None`: no hint).
    pub fadvise: Option<Fadvise>,
    /// Pause after each I/O completes (fio's thinktime).
    pub thinktime_ns: u64,
    /// How I/O is timed (fio's clocksource; `None`: the time-stamp counter
    /// where reliable). One clock serves the whole process.
    pub clocksource: Option<hiops_hal::clock::ClockSource>,
    /// fio's gtod_reduce: no clock read per I/O. No latency is recorded,
    /// the job's queue stamps nothing ([`hiops_hal::Queue::untimed`]) and
    /// the loop keeps the runtime with the tick-grained clock.
    pub gtod_reduce: bool,
    /// Each thread stops after this many I/Os (fio's number_ios).
    pub number_ios: Option<u64>,
    /// When one of this job's threads is done, other jobs stop (fio's
    /// exitall): which, `exit_what` says.
    pub exitall: bool,
    pub exit_what: ExitWhat,
    /// Delay before the job starts, in the measured run (fio's startdelay).
    pub startdelay_ns: u64,
    pub steady_state: Option<SteadyState>,
    /// fio's logs.
    pub logs: LogSpec,
    /// fio's write_iolog: each thread records the I/Os it issues in fio's
    /// iolog v3 text format (crate::iolog names a thread's file).
    pub write_iolog: Option<PathBuf>,
    /// fio's read_iolog: the job replays this trace instead of its workload.
    pub replay: Option<ReplaySpec>,
    /// fio's flow control: (flow id, weight, flow_sleep in ns).
    pub flow: Option<FlowSpec>,
    /// fio's search for the deepest queue that meets a latency target.
    pub latency_target: Option<LatencyTarget>,
    /// fio's io_submit_mode=offload: `iodepth` worker threads, each doing
    /// one I/O at a time, fed by the job thread.
    pub offload: bool,
    /// fio's serialize_overlap: an I/O that overlaps one in flight on the
    /// same target waits for it to complete.
    pub serialize_overlap: bool,
    /// fio's cmdprio: I/Os at a priority of their own (io_uring, libaio).
    pub cmdprio: Option<CmdPrio>,
}

/// How `hiops run` drives the HIOPS path (crates/path) in synchronous-thread
/// mode.
#[derive(Clone, Debug)]
pub struct PathSpec {
    pub strategy: hiops_path::Strategy,
    pub spin_ns: u64,
    pub poll_interval_ns: u64,
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

impl JobSpec {
    /// The no-argument job: 4 KiB random reads at queue depth 32 with io_uring
    /// for about 10 seconds, on a temporary file.
    pub fn default_for(target: PathBuf) -> JobSpec {
        JobSpec {
            path: None,
            name: "hiops-default".into(),
            targets: TargetSpec::Paths(vec![target]),
            size: Some(512 << 20),
            io_size: None,
            strided: None,
            file_service: None,
            open_files: None,
            fill_device: false,
            buffer_pattern: None,
            unlink: true,
            rw: RwMode::RandRead,
            rwmixread: 50,
            bs: BlockSizes::fixed(4096),
            bs_write: None,
            bs_trim: None,
            iodepth: 32,
            iodepth_batch_submit: 0,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            engine: EngineKind::IoUring,
            engine_opts: EngineOptions::default(),
            filecreate: false,
            numjobs: 1,
            cpus_allowed: None,
            cpus_split: false,
            direct: true,
            runtime_ns: Some(9_000_000_000),
            time_based: true,
            ramp_ns: 1_000_000_000,
            distribution: Distribution::Uniform,
            randseed: 0x005E_ED0F_1105,
            rate_iops: [None; 2],
            rate_poisson: false,
            rate_min: [None; 2],
            verify: VerifyMode::Off,
            verify_pattern: None,
            verify_pattern_offsets: Vec::new(),
            do_verify: true,
            verify_interval: None,
            verify_offset: 0,
            verify_seed: 0x89,
            verify_fatal: false,
            verify_dump: false,
            verify_backlog: 0,
            verify_backlog_batch: 0,
            verify_async: 0,
            verify_trim: None,
            trace: Default::default(),
            verify_state_save: false,
            verify_state_load: false,
            verify_only: false,
            aux_path: None,
            allow_write_devices: Vec::new(),
            meta: JobMeta::default(),
            size_pct: None,
            offset: Amount::Bytes(0),
            offset_increment: Amount::Bytes(0),
            files_per_clone: None,
            rw_gap: 0,
            block_align: None,
            loops: 1,
            random_map: false,
            percentage_random: 100,
            raid0_chunk: None,
            fsync_every: 0,
            fdatasync_every: 0,
            end_fsync: false,
            invalidate: true,
            fadvise: None,
            thinktime_ns: 0,
            clocksource: None,
            gtod_reduce: false,
            number_ios: None,
            exitall: false,
            exit_what: ExitWhat::Group,
            startdelay_ns: 0,
            steady_state: None,
            logs: LogSpec::default(),
            write_iolog: None,
            replay: None,
            offload: false,
            serialize_overlap: false,
            cmdprio: None,
            flow: None,
            latency_target: None,
        }
    }

    /// The block sizes of `op`'s direction.
    pub fn bs_for(&self, op: Op) -> &BlockSizes {
        match (op, &self.bs_write, &self.bs_trim) {
            (Op::Trim, _, Some(t)) => t,
            (Op::Write | Op::Trim, Some(w), _) => w,
            _ => &self.bs,
        }
    }

    /// Every block size any direction may use.
    pub fn block_sizes(&self) -> impl Iterator<Item = u32> + '_ {
        let w = self.bs_write.iter().flat_map(|b| b.split.iter());
        let t = self.bs_trim.iter().flat_map(|b| b.split.iter());
        self.bs.split.iter().chain(w).chain(t).map(|s| s.0)
    }

    /// The largest transfer: what each buffer must hold.
    pub fn bs_max(&self) -> u32 {
        self.block_sizes().max().unwrap_or(0)
    }

    pub fn bs_min(&self) -> u32 {
        self.block_sizes().min().unwrap_or(0)
    }

    /// Issues trims: a trim workload, or a replayed trace that trims.
    pub fn trims(&self) -> bool {
        self.rw.trims()
            || self.replay.as_ref().is_some_and(|r| r.trims)
            || (self.verify_trim.is_some() && !self.verify_only)
    }

    /// Changes what its targets hold: writes or trims (fio's write or trim
    /// bit, which `--readonly` refuses).
    pub fn modifies(&self) -> bool {
        self.rw.writes() || self.trims()
    }

    /// Whether any direction is rate-limited.
    pub fn rate_limited(&self) -> bool {
        self.rate_iops.iter().any(Option::is_some)
    }

    /// The task path: the tasks clone `clone` runs.
    pub fn tasks_of(&self, clone: u32) -> Option<u32> {
        let total = self.path.as_ref()?.tasks?;
        Some(total / self.numjobs + u32::from(clone < total % self.numjobs))
    }

    /// The engine's name as fio spells it in a job file.
    pub fn engine_name(&self) -> &'static str {
        if self.filecreate {
            "filecreate"
        } else {
            self.engine.name()
        }
    }

    /// Commands a thread keeps in flight: synchronous engines do one at a
    /// time; with tasks, each task one.
    pub fn effective_depth(&self) -> u32 {
        if let Some(t) = self.tasks_of(0) {
            t
        } else if self.path.is_some() || self.offload {
            self.iodepth
        } else if self.engine.is_synchronous() {
            1
        } else {
            self.iodepth
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bssplit_parses_and_shares_the_rest() {
        assert_eq!(BlockSizes::parse("4k").unwrap(), BlockSizes::fixed(4096));
        let b = BlockSizes::parse("4k/50:64k/50").unwrap();
        assert_eq!(b.split, vec![(4096, 50), (65536, 50)]);
        let b = BlockSizes::parse("4k/40:8k:16k").unwrap();
        assert_eq!(b.split, vec![(4096, 40), (8192, 30), (16384, 30)]);
        assert!(BlockSizes::parse("4k/60:8k/60")
            .unwrap_err()
            .contains("add up to 100"));
        assert!(BlockSizes::parse("4k/30:8k/30")
            .unwrap_err()
            .contains("add up to 100"));
    }

    #[test]
    fn distributions_parse_and_reject_nonsense() {
        assert_eq!(
            Distribution::parse("zipf:1.2").unwrap(),
            Distribution::Zipf(1.2)
        );
        assert_eq!(
            Distribution::parse("pareto:0.9").unwrap(),
            Distribution::Pareto(0.9)
        );
        assert_eq!(
            Distribution::parse("zoned:60/10:40/90").unwrap(),
            Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])
        );
        assert!(Distribution::parse("zoned:60/10:30/90").is_err());
        assert_eq!(
            Distribution::parse("zoned:80/10:20/").unwrap(),
            Distribution::Zoned(vec![(80.0, 10.0), (20.0, 90.0)])
        );
        assert!(Distribution::parse("pareto:1.5").is_err());
        assert!(Distribution::parse("gauss:1")
            .unwrap_err()
            .to_string()
            .contains("unknown random_distribution"));
    }
}
