//! fio's logs, and the I/O traces a job writes or replays.

use std::path::PathBuf;
use std::time::Duration;

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
    /// Average each log over windows this long (fio's log_avg_msec, whole
    /// ms; zero: a line per I/O).
    pub avg_window: Duration,
    /// The histogram log's window (fio's log_hist_msec, whole ms; zero:
    /// its file stays empty, as in fio).
    pub hist_window: Duration,
    /// Histogram bins merged 2^coarseness at a time (0 to 6).
    pub hist_coarseness: u32,
    /// Windows log their largest value instead of the mean.
    pub max_value: bool,
    /// Lines carry two values, the window's mean and its largest (fio
    /// 3.37's log_window_value=both; a line per I/O repeats its value).
    pub both_values: bool,
    /// A last column with the I/O's issue time, ns from the log's start,
    /// in the clat and slat logs' lines per I/O; 0 in the others (fio
    /// 3.38's log_issue_time).
    pub issue_time: bool,
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
    /// fio's bwavgtime and iopsavgtime: the window over which each
    /// thread's bandwidth (`[0]`) and IOPS (`[1]`) are sampled for the
    /// report's bw_* and iops_* statistics (fio's default 500 ms).
    pub rate_windows: [Duration; 2],
    /// The slat log is made but gets no lines: fio 3.33 times no
    /// submission where the engine completes an I/O in the call that
    /// issues it (psync, pvsync2, mmap, ...), and hiops answering as fio
    /// writes its logs so.
    pub slat_untimed: bool,
    /// fio's log_compression was given (a chunk size above 0): fio then
    /// logs bandwidth and IOPS per I/O, so with `avg_window` their windows
    /// hold the mean per-I/O rate (hiops' logs stay text: their memory
    /// is bounded already).
    pub compression: bool,
}

/// fio's bwavgtime and iopsavgtime default.
pub const RATE_WINDOW: Duration = Duration::from_millis(500);

impl Default for LogSpec {
    fn default() -> Self {
        LogSpec {
            bw: None,
            lat: None,
            iops: None,
            hist: None,
            avg_window: Duration::ZERO,
            hist_window: Duration::ZERO,
            hist_coarseness: 0,
            max_value: false,
            both_values: false,
            issue_time: false,
            per_job: true,
            offset: false,
            prio: false,
            epoch_clock: None,
            first_thread: 1,
            store_compressed: false,
            rate_windows: [RATE_WINDOW; 2],
            slat_untimed: false,
            compression: false,
        }
    }
}

impl LogSpec {
    /// Whether any log is written.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }

    /// Whether the report's bandwidth (`[0]`) and IOPS (`[1]`) statistics
    /// take a sample per I/O instead of one per bwavgtime or iopsavgtime
    /// window: fio 3.33 does so for a log of that rate kept per I/O
    /// (iolog.h `per_unit_log`: no log_avg_msec, or a compressed log) and
    /// then takes no window samples (stat.c `calc_log_samples`, io_u.c
    /// `account_io_completion`; under gtod_reduce, which reads no clock
    /// per I/O, fio then samples that rate not at all).
    pub fn rates_per_io(&self) -> [bool; 2] {
        let per_unit = self.avg_window.is_zero() || self.compression || self.store_compressed;
        [self.bw.is_some(), self.iops.is_some()].map(|log| log && per_unit)
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

/// What replay_skip leaves out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplaySkip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub sync: bool,
}

/// What a job traces (fio's --debug categories that reach its threads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceSpec {
    pub io: bool,
    pub verify: bool,
}

/// The I/Os a job records or replays, and its --debug trace.
#[derive(Clone, Debug, Default)]
pub struct IoLogs {
    /// fio's --debug=io and --debug=verify for this job's threads.
    pub trace: TraceSpec,
    /// fio's write_iolog: each thread records the I/Os it issues in fio's
    /// iolog v3 text format (hiops-bench's iolog names a thread's file).
    pub write_iolog: Option<PathBuf>,
    /// fio's read_iolog: the job replays this trace instead of its workload.
    pub replay: Option<ReplaySpec>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_sampled_per_io_only_for_a_log_kept_per_io() {
        let mut l = LogSpec::default();
        assert_eq!(l.rates_per_io(), [false, false], "no log: windows");
        l.bw = Some("b".into());
        assert_eq!(l.rates_per_io(), [true, false]);
        l.iops = Some("i".into());
        assert_eq!(l.rates_per_io(), [true, true]);
        l.avg_window = Duration::from_millis(100);
        assert_eq!(l.rates_per_io(), [false, false], "log_avg_msec windows");
        l.compression = true;
        assert_eq!(l.rates_per_io(), [true, true], "compressed: per I/O");
    }
}
