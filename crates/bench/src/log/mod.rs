//! fio's logs of a job thread (HOWTO: `write_bw_log`, `write_lat_log`,
//! `write_iops_log`, `write_hist_log`, and "Log File Formats"), so fio's
//! tools (fio2gnuplot, fio_generate_plots, fio-plot's log graphs) read them.
//!
//! The files are fio's: `PREFIX_bw.N.log`, `PREFIX_slat.N.log`,
//! `PREFIX_clat.N.log`, `PREFIX_lat.N.log`, `PREFIX_iops.N.log`,
//! `PREFIX_clat_hist.N.log`, N the thread's number in the run from 1 (without
//! `.N` under `per_job_logs=0`, the job's threads appending to one file).
//! Times are ms from the start of the thread's measured window (after the
//! ramp, as fio's epoch), or from the epoch of a clock with
//! `log_unix_epoch`/`log_alternate_epoch`.
//!
//! Without `log_avg_msec` every I/O of the measured window is a line: its
//! latencies in ns, the bandwidth log `bytes * 10^6 / clat_ns` (fio's
//! per-I/O "KiB/s"), the IOPS log 1. With it, windows (see `window`). As
//! in fio (io_u.c, should_account: a thread running or verifying), the
//! reads of a verify pass after the workload are logged too, their times
//! going on from the same start: the logs run from the measured window's
//! start to the thread's end.

mod error;
mod file;
pub use error::{InflateError, LogError};
pub use file::inflate_log;
mod hist;
mod kind;
mod window;

use crate::rate_stat::RateStat;
use crate::result::Rate;
use crate::spec::{JobSpec, LogSpec};
use file::{Columns, LineIo, LogFile};
use hist::HistWindows;
pub(crate) use kind::LoggedIo;
use kind::{Kind, KINDS};
use std::path::PathBuf;
use window::Windows;

/// A log file's name (fio's gen_log_name).
fn log_path(prefix: &str, kind: &str, thread: u32, per_job: bool) -> PathBuf {
    match per_job {
        true => PathBuf::from(format!("{prefix}_{kind}.{thread}.log")),
        false => PathBuf::from(format!("{prefix}_{kind}.log")),
    }
}

pub(crate) struct JobLogs {
    files: [Option<LogFile>; KINDS.len()],
    /// Which of `files` take lines (the slat log may be made and kept
    /// empty).
    lined: [bool; KINDS.len()],
    hist: Option<(LogFile, Option<HistWindows>)>,
    windows: Option<Windows>,
    cols: Columns,
    epoch_clock: Option<i32>,
    epoch_ns: u64,
    /// Added to every time: a clock's reading at the epoch, or 0.
    base_ms: u64,
    active: bool,
    /// The report's bandwidth and IOPS sampled per I/O (a log kept per
    /// I/O, clocks read per I/O), and those samples per direction.
    per_io: [bool; 2],
    rates: [[RateStat; 2]; 2],
}

/// Whether a log of `kind` is stored compressed: fio stores its histogram
/// log's samples as pointers, so only the others are here; it stays text.
fn compressed(l: &LogSpec, kind: &str) -> bool {
    l.store_compressed && kind != "clat_hist"
}

/// Every log file a job's threads write, as named on disk.
pub(crate) fn paths(spec: &JobSpec) -> Vec<PathBuf> {
    let l = &spec.logs;
    let mut kinds: Vec<(&str, &str)> = KINDS
        .iter()
        .filter_map(|k| Some((k.prefix(l)?, k.suffix())))
        .collect();
    kinds.extend(l.hist.as_deref().map(|p| (p, "clat_hist")));
    let threads = match l.per_job {
        true => spec.numjobs.max(1),
        false => 1,
    };
    let mut all = Vec::new();
    for (prefix, kind) in kinds {
        for clone in 0..threads {
            let path = log_path(prefix, kind, l.first_thread + clone, l.per_job);
            all.push(file::stored_path(path, compressed(l, kind)));
        }
    }
    all
}

impl JobLogs {
    /// Creates the logs clone `clone` of the job writes, if any.
    pub(crate) fn open(spec: &JobSpec, clone: u32) -> Result<Option<JobLogs>, LogError> {
        let l = &spec.logs;
        if !l.any() {
            return Ok(None);
        }
        let thread = l.first_thread + clone;
        let grants = hiops_safety::Grants::from_list(&spec.target.allow_write_devices);
        let open = |prefix: &str, kind: &str| {
            let path = log_path(prefix, kind, thread, l.per_job);
            let compressed = compressed(l, kind);
            LogFile::create(path, !l.per_job, compressed, &grants).map_err(|e| LogError::OfJob {
                job: spec.name.clone(),
                source: Box::new(e),
            })
        };
        let mut files: [Option<LogFile>; KINDS.len()] = Default::default();
        for kind in KINDS {
            if let Some(prefix) = kind.prefix(l) {
                files[kind as usize] = Some(open(prefix, kind.suffix())?);
            }
        }
        // Made, written to by no I/O: fio's slat log of an engine whose
        // submissions it does not time.
        let mut lined = files.each_ref().map(Option::is_some);
        lined[Kind::Slat as usize] &= !l.slat_untimed;
        let hist = match l.hist.as_deref() {
            Some(prefix) => Some((
                open(prefix, "clat_hist")?,
                (!l.hist_window.is_zero())
                    .then(|| HistWindows::new(l.hist_window, l.hist_coarseness)),
            )),
            None => None,
        };
        Ok(Some(JobLogs {
            files,
            lined,
            hist,
            windows: (!l.avg_window.is_zero()).then(|| {
                let per_io_rates = l.store_compressed || l.compression;
                Windows::new(l.avg_window, l.max_value, per_io_rates)
            }),
            cols: Columns {
                offset: l.offset,
                prio: l.prio,
                both: l.both_values,
                issue: l.issue_time,
            },
            epoch_clock: l.epoch_clock,
            epoch_ns: 0,
            base_ms: 0,
            active: false,
            per_io: l.rates_per_io().map(|p| p && !spec.timing.gtod_reduce),
            rates: Default::default(),
        }))
    }

    /// The measured window opens at `now_ns`: the logs' time 0. Opened
    /// again (latency_target's final run), the windows so far are logged
    /// first and time starts over, as fio's epoch does.
    pub(crate) fn start(&mut self, now_ns: u64) {
        self.flush_windows(now_ns);
        if let Some(w) = self.windows.as_mut() {
            w.reset();
        }
        if let Some((_, Some(h))) = self.hist.as_mut() {
            h.reset();
        }
        self.rates = Default::default();
        self.epoch_ns = now_ns;
        self.base_ms = self.epoch_clock.map_or(0, clock_ms);
        self.active = true;
    }

    fn ms(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.epoch_ns) / 1_000_000
    }

    /// One completion of the measured window.
    #[inline]
    pub(crate) fn io(&mut self, io: &LoggedIo) {
        if !self.active {
            return;
        }
        let t = self.ms(io.done_ns);
        let (base, cols, lined) = (self.base_ms, self.cols, self.lined);
        // fio's issue time: when the I/O was sent (its completion less its
        // clat), from the log's start.
        let issued = io
            .done_ns
            .saturating_sub(io.clat_ns)
            .saturating_sub(self.epoch_ns);
        let files = &mut self.files;
        match self.windows.as_mut() {
            Some(w) => w.add(t, io, &mut |kind, t, dir, v| {
                if let Some(f) = files[kind as usize]
                    .as_mut()
                    .filter(|_| lined[kind as usize])
                {
                    let at = LineIo {
                        dir,
                        ..LineIo::default()
                    };
                    f.line(t + base, v, at, cols);
                }
            }),
            None => {
                for kind in KINDS {
                    if let Some(f) = files[kind as usize]
                        .as_mut()
                        .filter(|_| lined[kind as usize])
                    {
                        let v = kind.per_io(io);
                        let issue_ns = match kind {
                            Kind::Clat | Kind::Slat => issued,
                            _ => 0,
                        };
                        let at = LineIo {
                            dir: io.dir,
                            bs: io.bytes,
                            off: io.offset,
                            issue_ns,
                        };
                        f.line(t + base, (v, v), at, cols);
                    }
                }
            }
        }
        if let Some((f, Some(h))) = self.hist.as_mut() {
            h.add(t + base, io, f);
        }
        self.sample_rates(io);
    }

    /// fio's add_bw_sample and add_iops_sample for a log kept per I/O
    /// (trims are sampled apart in fio; hiops reports no trim rates).
    #[inline]
    fn sample_rates(&mut self, io: &LoggedIo) {
        if io.dir >= 2 {
            return;
        }
        if self.per_io[Rate::Bw as usize] {
            self.rates[Rate::Bw as usize][io.dir].push(Kind::Bw.per_io(io));
        }
        if self.per_io[Rate::Iops as usize] {
            self.rates[Rate::Iops as usize][io.dir].push(1);
        }
    }

    /// The report's per-I/O rate samples so far (`RateSamples::per_io`).
    pub(crate) fn rates(&self) -> [[RateStat; 2]; 2] {
        self.rates
    }

    /// The windows still open at `end_ns` (the thread's end, or a new
    /// start): their lines, each stamped `end_ns` and covering only the
    /// time up to it, as fio's finalize_logs.
    fn flush_windows(&mut self, end_ns: u64) {
        if !std::mem::take(&mut self.active) {
            return;
        }
        let t = self.ms(end_ns);
        let (base, cols, lined) = (self.base_ms, self.cols, self.lined);
        let files = &mut self.files;
        if let Some(w) = self.windows.as_mut() {
            w.finish(t, &mut |kind, t, dir, v| {
                if let Some(f) = files[kind as usize]
                    .as_mut()
                    .filter(|_| lined[kind as usize])
                {
                    let at = LineIo {
                        dir,
                        ..LineIo::default()
                    };
                    f.line(t + base, v, at, cols);
                }
            });
        }
        if let Some((f, Some(h))) = self.hist.as_mut() {
            h.finish(t + base, f);
        }
    }

    /// The thread ended at `end_ns` (after its workload and any verify
    /// pass): the last windows' lines, then every file written out; the
    /// first failure, if any.
    pub(crate) fn finish(mut self, end_ns: u64) -> Result<(), LogError> {
        self.flush_windows(end_ns);
        let mut first = Ok(());
        let hist = self.hist.map(|(f, _)| f);
        for f in self.files.into_iter().flatten().chain(hist) {
            let r = f.finish();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

/// Milliseconds on clock `id` (fio's log_alternate_epoch_clock_id).
fn clock_ms(id: i32) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`; a bad id leaves it zero.
    unsafe { libc::clock_gettime(id as libc::clockid_t, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}
