//! fio's completion-latency histogram log (`write_hist_log` with
//! `log_hist_msec`, HOWTO): per data direction, a line each time a window of
//! `log_hist_msec` has passed since the last one, at the completion that
//! closes it. A line is `time, direction, block size` and then the count of
//! each of fio's 1856 latency bins (the bucketing of json+, hiops-stats'
//! histogram) since the direction's last line, `2^log_hist_coarseness` bins
//! added together per column. As fio, a direction's first window starts at
//! its first completion. Beyond fio, the windows still open when the job
//! ends are logged too, so the bins of a log add up to every I/O it saw.

use super::file::LogFile;
use super::kind::LoggedIo;
use hiops_stats::{value_to_index, FIO_PLAT_NR};
use std::time::Duration;

pub(super) struct HistWindows {
    msec: u64,
    stride: usize,
    /// Per direction (read, write, trim): counts since its last line (allocated once).
    bins: [Box<[u64]>; 3],
    n: [u64; 3],
    /// When the direction's current window started (ms into the log).
    since_ms: [Option<u64>; 3],
    /// The block size of the direction's last I/O.
    bs: [u64; 3],
}

impl HistWindows {
    pub(super) fn new(window: Duration, coarseness: u32) -> HistWindows {
        let zeros = || vec![0u64; FIO_PLAT_NR].into_boxed_slice();
        HistWindows {
            msec: super::window::whole_ms(window),
            stride: 1 << coarseness,
            bins: [zeros(), zeros(), zeros()],
            n: [0; 3],
            since_ms: [None; 3],
            bs: [0; 3],
        }
    }

    /// Time starts over (what was counted has been logged).
    pub(super) fn reset(&mut self) {
        self.since_ms = [None; 3];
    }

    pub(super) fn add(&mut self, t_ms: u64, io: &LoggedIo, file: &mut LogFile) {
        let d = io.dir;
        self.bins[d][value_to_index(io.clat_ns)] += 1;
        self.n[d] += 1;
        self.bs[d] = io.bytes;
        let since = *self.since_ms[d].get_or_insert(t_ms);
        let this_window = t_ms - since;
        if this_window >= self.msec {
            self.line(t_ms, d, file);
            // Late by (this_window - msec): the next window is that much shorter.
            self.since_ms[d] = Some(t_ms - (this_window - self.msec));
        }
    }

    /// The job ended: what each direction saw since its last line.
    pub(super) fn finish(&mut self, t_end_ms: u64, file: &mut LogFile) {
        for d in 0..3 {
            if self.n[d] > 0 {
                self.line(t_end_ms, d, file);
            }
        }
    }

    fn line(&mut self, t_ms: u64, d: usize, file: &mut LogFile) {
        let bins = self.bins[d].chunks(self.stride).map(|c| c.iter().sum());
        file.hist_line(t_ms, d, self.bs[d], bins);
        self.bins[d].fill(0);
        self.n[d] = 0;
    }
}
