//! fio's windowed logging (`log_avg_msec`, HOWTO "Log File Formats"): each
//! window logs one line per log and data direction that saw I/O in it, with
//! block size and offset 0. Latency logs hold the window's mean (or its
//! largest value with `log_max_value`); the bandwidth log the bytes moved
//! over the window's time in KiB/s, the IOPS log the I/Os over that time.
//!
//! Windows are `avg_window` long from the log's start, and a line is stamped
//! with its window's end; the last window ends with the job, so its line is
//! stamped with the job's end and covers only that part (a window is at
//! least 1 ms). The windows thus tile the job's time: a bandwidth log's
//! values weighted by their windows add up to the bytes moved.
//!
//! With `log_compression` or `log_store_compressed` fio 3.33 logs bandwidth
//! and IOPS per I/O (stat.h `per_unit_log`) and windows them as latencies:
//! the bandwidth log then holds the mean of the window's per-I/O rates
//! (`bytes * 10^6 / clat_ns`, or their largest with `log_max_value`), the
//! IOPS log 1. `per_io_rates` windows them so.

use super::kind::{Kind, LoggedIo, KINDS};
use std::time::Duration;

/// A log window in the unit of the log's times, whole ms (fio's
/// log_avg_msec and log_hist_msec are whole ms; a window set shorter is
/// one ms).
pub(super) fn whole_ms(window: Duration) -> u64 {
    u64::try_from(window.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[derive(Clone, Copy, Default)]
struct Acc {
    sum: u128,
    n: u64,
    max: u64,
}

pub(super) struct Windows {
    msec: u64,
    max_value: bool,
    /// Bandwidth and IOPS windowed per I/O, as latencies (fio's
    /// per_unit_log).
    per_io_rates: bool,
    /// The current window ends here (ms from the log's start).
    end_ms: u64,
    acc: [[Acc; 3]; KINDS.len()],
}

/// Where a closed window's lines go: (log, time, direction, (value, the
/// window's largest)).
pub(super) type Emit<'a> = &'a mut dyn FnMut(Kind, u64, usize, (u64, u64));

impl Windows {
    pub(super) fn new(window: Duration, max_value: bool, per_io_rates: bool) -> Windows {
        let msec = whole_ms(window);
        Windows {
            msec,
            max_value,
            per_io_rates,
            end_ms: msec,
            acc: Default::default(),
        }
    }

    /// Time starts over: the first window again.
    pub(super) fn reset(&mut self) {
        self.end_ms = self.msec;
        self.acc = Default::default();
    }

    /// Books an I/O that completed `t_ms` into the log, closing first the
    /// window it does not belong to (empty windows log nothing, as in fio).
    pub(super) fn add(&mut self, t_ms: u64, io: &LoggedIo, emit: Emit<'_>) {
        if t_ms >= self.end_ms {
            self.close(self.end_ms, self.msec, emit);
            self.end_ms = (t_ms / self.msec + 1) * self.msec;
        }
        debug_assert!(
            t_ms < self.end_ms,
            "an I/O at {t_ms} ms lands in the window ending at {} ms",
            self.end_ms
        );
        for kind in KINDS {
            let v = match self.per_io_rates {
                true => kind.per_io(io),
                false => kind.window_sample(io),
            };
            let a = &mut self.acc[kind as usize][io.dir];
            a.sum += v as u128;
            a.n += 1;
            a.max = a.max.max(v);
        }
    }

    /// The job ended `t_end_ms` into the log: the last window's lines.
    pub(super) fn finish(&mut self, t_end_ms: u64, emit: Emit<'_>) {
        if t_end_ms >= self.end_ms {
            self.close(self.end_ms, self.msec, emit);
            return;
        }
        let start = self.end_ms - self.msec;
        let dur = t_end_ms.saturating_sub(start).max(1);
        self.close(start + dur, dur, emit);
    }

    fn close(&mut self, t_ms: u64, dur_ms: u64, emit: Emit<'_>) {
        for kind in KINDS {
            for dir in 0..3 {
                let a = std::mem::take(&mut self.acc[kind as usize][dir]);
                if a.n > 0 {
                    emit(kind, t_ms, dir, self.value(kind, a, dur_ms));
                }
            }
        }
    }

    /// The window's value (mean, or largest with `max_value`) and its
    /// largest (fio's second column under log_window_value=both).
    fn value(&self, kind: Kind, a: Acc, dur_ms: u64) -> (u64, u64) {
        let per_s = |x: u128| x as f64 * 1000.0 / dur_ms as f64;
        let rate = !self.per_io_rates;
        let one = |v: u64| (v, v);
        match kind {
            // A rate is one figure per window: its mean and its max agree.
            Kind::Bw if rate => one((per_s(a.sum) / 1024.0).round() as u64),
            Kind::Iops if rate => one(per_s(a.n as u128).round() as u64),
            _ if self.max_value => one(a.max),
            _ => {
                let mean = (a.sum as f64 / a.n as f64).round() as u64;
                assert!(
                    mean <= a.max,
                    "a window's mean {mean} above its largest {}",
                    a.max
                );
                (mean, a.max)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_counts_in_the_whole_ms_of_a_logs_times() {
        assert_eq!(whole_ms(Duration::from_millis(250)), 250);
        assert_eq!(whole_ms(Duration::from_micros(1500)), 1);
        assert_eq!(whole_ms(Duration::from_micros(1)), 1, "at least 1 ms");
        assert_eq!(whole_ms(Duration::from_millis(u64::MAX)), u64::MAX);
    }

    fn io(dir: usize, lat: u64) -> LoggedIo {
        LoggedIo {
            done_ns: 0,
            dir,
            bytes: 4096,
            offset: 0,
            slat_ns: 1,
            clat_ns: lat - 1,
            lat_ns: lat,
        }
    }

    fn lines(w: &mut Windows, ios: &[(u64, LoggedIo)], end: u64) -> Vec<(Kind, u64, usize, u64)> {
        let mut out = Vec::new();
        let mut emit = |k, t, d, v: (u64, u64)| out.push((k, t, d, v.0));
        for (t, io) in ios {
            w.add(*t, io, &mut emit);
        }
        w.finish(end, &mut emit);
        out
    }

    #[test]
    fn windows_average_per_direction_and_skip_empty_ones() {
        let mut w = Windows::new(Duration::from_millis(100), false, false);
        let ios = [
            (5, io(0, 100)),
            (50, io(0, 300)),
            (60, io(1, 7)),
            (350, io(0, 10)),
        ];
        let out = lines(&mut w, &ios, 420);
        let lat: Vec<_> = out.iter().filter(|l| l.0 == Kind::Lat).collect();
        assert_eq!(
            lat,
            [
                &(Kind::Lat, 100, 0, 200),
                &(Kind::Lat, 100, 1, 7),
                &(Kind::Lat, 400, 0, 10)
            ]
        );
        // Two reads of 4 KiB over 100 ms: 80 KiB/s; 20 I/Os per second.
        assert!(out.contains(&(Kind::Bw, 100, 0, 80)));
        assert!(out.contains(&(Kind::Iops, 100, 0, 20)));
    }

    #[test]
    fn a_window_gives_its_mean_and_its_largest_for_both_columns() {
        let mut w = Windows::new(Duration::from_millis(100), false, false);
        let mut out = Vec::new();
        let mut emit = |k, t, d, v| out.push((k, t, d, v));
        w.add(5, &io(0, 100), &mut emit);
        w.add(50, &io(0, 300), &mut emit);
        w.finish(100, &mut emit);
        assert!(out.contains(&(Kind::Lat, 100, 0, (200, 300))), "{out:?}");
        // A rate's one figure stands for both.
        assert!(out.contains(&(Kind::Iops, 100, 0, (20, 20))), "{out:?}");
    }

    #[test]
    fn per_io_rates_average_each_ios_rate_as_compressed_fio_logs() {
        let mut w = Windows::new(Duration::from_millis(100), false, true);
        // clat 1023 and 4095 ns: 4096 * 10^6 / clat = 4004 for the first
        // and 1000244 for the second.
        let ios = [(5, io(0, 1024)), (50, io(0, 4096))];
        let out = lines(&mut w, &ios, 420);
        let (a, b) = (4_096_000_000_u64 / 1023, 4_096_000_000_u64 / 4095);
        let mean = ((a + b) as f64 / 2.0).round() as u64;
        assert!(out.contains(&(Kind::Bw, 100, 0, mean)), "{out:?}");
        assert!(out.contains(&(Kind::Iops, 100, 0, 1)), "{out:?}");
    }

    #[test]
    fn the_last_window_covers_only_the_time_left_and_max_keeps_the_largest() {
        let mut w = Windows::new(Duration::from_millis(100), true, false);
        let out = lines(&mut w, &[(120, io(0, 5)), (130, io(0, 9))], 150);
        assert!(out.contains(&(Kind::Lat, 150, 0, 9)));
        // Two I/Os over the 50 ms the window lasted: 40 IOPS.
        assert!(out.contains(&(Kind::Iops, 150, 0, 40)));
        // Ended on a window's edge: that window, whole.
        let mut w = Windows::new(Duration::from_millis(100), false, false);
        let out = lines(&mut w, &[(20, io(1, 5))], 100);
        assert!(out.contains(&(Kind::Iops, 100, 1, 10)));
    }
}
