//! fio's `Run status group N (all jobs):` block and its `Disk stats
//! (read/write):` lines (stat.c `__show_run_stats`, `show_group_stats`,
//! `show_mixed_group_stats`, `print_disk_util`), from the jobs of hiops'
//! fio JSON.

use super::num2str::{num2str, Unit};
use hiops_report::fio_doc::{DiskUtil, FioJob};
use std::fmt::Write;

/// One reporting group's figures per direction (read, write, trim), as
/// fio's `struct group_run_stats` holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub id: u64,
    /// Each job's direction reported as "mixed" alone (unified_rw_reporting=mixed).
    pub mixed_only: bool,
    /// Read, write and trim also shown together (unified_rw_reporting=both).
    pub both: bool,
    pub min_run: [u64; 3],
    pub max_run: [u64; 3],
    pub min_bw: [u64; 3],
    pub max_bw: [u64; 3],
    pub io_bytes: [u64; 3],
    /// Bytes per second over the slowest job's runtime.
    pub agg: [u64; 3],
}

impl Group {
    fn new(id: u64) -> Group {
        Group {
            id,
            mixed_only: false,
            both: false,
            min_run: [u64::MAX; 3],
            max_run: [0; 3],
            min_bw: [u64::MAX; 3],
            max_bw: [0; 3],
            io_bytes: [0; 3],
            agg: [0; 3],
        }
    }

    /// One job's directions added, as fio adds each thread_stat.
    fn add(&mut self, job: &FioJob) {
        let mixed_only = job.read.is_none() && job.mixed.is_some();
        self.mixed_only |= mixed_only;
        self.both |= job.read.is_some() && job.mixed.is_some();
        let dirs = match mixed_only {
            true => [job.mixed.as_ref(), None, None],
            false => [job.read.as_ref(), job.write.as_ref(), job.trim.as_ref()],
        };
        for (i, d) in dirs.into_iter().enumerate() {
            let Some(d) = d else { continue };
            let run = d.runtime;
            // A direction the job never did has no runtime in fio.
            let did = d.io_bytes + d.total_ios > 0;
            if run == 0 || !did {
                continue;
            }
            self.min_run[i] = self.min_run[i].min(run);
            self.max_run[i] = self.max_run[i].max(run);
            let bw = d.io_bytes.saturating_mul(1000) / run;
            self.min_bw[i] = self.min_bw[i].min(bw);
            self.max_bw[i] = self.max_bw[i].max(bw);
            self.io_bytes[i] += d.io_bytes;
        }
    }

    fn settle(&mut self) {
        for i in 0..3 {
            if let Some(agg) = self.io_bytes[i]
                .saturating_mul(1000)
                .checked_div(self.max_run[i])
            {
                self.agg[i] = agg;
                self.assert_settled(i);
            }
        }
    }

    /// The figures of direction `i` after at least one job added to it:
    /// ranges in order, and the group's bandwidth (all its bytes over the
    /// slowest job's runtime) at least that slowest job's own, so at least
    /// the slowest job's bandwidth in the range.
    fn assert_settled(&self, i: usize) {
        let (run, bw) = (
            (self.min_run[i], self.max_run[i]),
            (self.min_bw[i], self.max_bw[i]),
        );
        assert!(
            run.0 <= run.1,
            "group {} runtimes {run:?} out of order",
            self.id
        );
        assert!(
            bw.0 <= bw.1,
            "group {} bandwidths {bw:?} out of order",
            self.id
        );
        assert!(
            self.agg[i] >= bw.0,
            "group {} bandwidth {} below its slowest job's {}",
            self.id,
            self.agg[i],
            bw.0
        );
    }
}

/// Every group from 0 to the highest a job names (fio prints a heading
/// for each, a group without a reported job included).
pub fn groups(jobs: &[FioJob]) -> Vec<Group> {
    let top = jobs.iter().map(|j| j.groupid).max().unwrap_or(0);
    let mut all: Vec<Group> = (0..=top).map(Group::new).collect();
    for j in jobs {
        all[j.groupid as usize].add(j);
    }
    all.iter_mut().for_each(Group::settle);
    all
}

/// `bw=AGG (AGG'), MIN-MAX (MIN'-MAX'), io=IO (IO'), run=MIN-MAXmsec`:
/// each figure in KiB-based units, then in kB-based ones.
fn figures(agg: u64, min: u64, max: u64, io: u64, run: (u64, u64)) -> String {
    let b = |v: u64, pow2: bool| num2str(v, 4, pow2, Unit::BytePerSec);
    let io_of = |pow2: bool| num2str(io, 4, pow2, Unit::Byte);
    format!(
        "bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
        b(agg, true),
        b(agg, false),
        b(min, true),
        b(max, true),
        b(min, false),
        b(max, false),
        io_of(true),
        io_of(false),
        run.0,
        run.1
    )
}

/// fio's block for one group.
pub fn group_lines(out: &mut String, g: &Group) {
    let _ = writeln!(out, "\nRun status group {} (all jobs):", g.id);
    for (i, name) in ["   READ", "  WRITE", "   TRIM"].iter().enumerate() {
        if g.max_run[i] == 0 {
            continue;
        }
        let name = if g.mixed_only { "  MIXED" } else { name };
        let f = figures(
            g.agg[i],
            g.min_bw[i],
            g.max_bw[i],
            g.io_bytes[i],
            (g.min_run[i], g.max_run[i]),
        );
        let _ = writeln!(out, "{name}: {f}");
    }
    if g.both {
        mixed_line(out, g);
    }
}

/// unified_rw_reporting=both: the directions together on a `MIXED` line.
fn mixed_line(out: &mut String, g: &Group) {
    let seen: Vec<usize> = (0..3).filter(|&i| g.max_run[i] > 0).collect();
    let sum = |v: &[u64; 3]| seen.iter().map(|&i| v[i]).sum::<u64>();
    let min = |v: &[u64; 3]| seen.iter().map(|&i| v[i]).min().unwrap_or(u64::MAX);
    let max = |v: &[u64; 3]| seen.iter().map(|&i| v[i]).max().unwrap_or(0);
    let f = figures(
        sum(&g.agg),
        min(&g.min_bw),
        max(&g.max_bw),
        sum(&g.io_bytes),
        (min(&g.min_run), max(&g.max_run)),
    );
    let _ = writeln!(out, "  MIXED: {f}");
}

/// fio's `Disk stats (read/write):` and a line per disk; nothing when the
/// run watched no disk.
pub fn disk_lines(out: &mut String, disks: &[DiskUtil]) {
    if disks.is_empty() {
        return;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        let _ = writeln!(
            out,
            "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
            d.name,
            d.read_ios,
            d.write_ios,
            d.read_merges,
            d.write_merges,
            d.read_ticks,
            d.write_ticks,
            d.in_queue,
            d.util.min(100.0)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(group: u64, read: (u64, u64)) -> FioJob {
        serde_json::from_value(
            json!({"groupid": group, "read": {"io_bytes": read.0, "runtime": read.1},
               "write": {"io_bytes": 0, "runtime": 0}, "trim": {"io_bytes": 0, "runtime": 0}}),
        )
        .unwrap()
    }

    #[test]
    fn a_group_as_fio_prints_it() {
        // fio 3.33: 64 MiB read in 4 ms by one job.
        let gs = groups(&[job(0, (64 << 20, 4))]);
        let mut out = String::new();
        group_lines(&mut out, &gs[0]);
        let want = "\nRun status group 0 (all jobs):
   READ: bw=15.6GiB/s (16.8GB/s), 15.6GiB/s-15.6GiB/s (16.8GB/s-16.8GB/s), io=64.0MiB (67.1MB), run=4-4msec
";
        assert_eq!(out, want);
    }

    #[test]
    fn groups_take_the_slowest_runtime_and_every_heading() {
        let gs = groups(&[
            job(0, (1 << 20, 1000)),
            job(0, (1 << 20, 500)),
            job(2, (0, 0)),
        ]);
        assert_eq!(gs.len(), 3);
        assert_eq!(gs[0].agg[0], 2 * (1 << 20) * 1000 / 1000);
        assert_eq!((gs[0].min_run[0], gs[0].max_run[0]), (500, 1000));
        assert_eq!((gs[0].min_bw[0], gs[0].max_bw[0]), (1 << 20, 2 << 20));
        let mut out = String::new();
        group_lines(&mut out, &gs[1]);
        assert_eq!(out, "\nRun status group 1 (all jobs):\n");
    }

    #[test]
    fn disks_as_fio_lists_them() {
        let mut out = String::new();
        disk_lines(&mut out, &[]);
        assert!(out.is_empty());
        let d: Vec<DiskUtil> = serde_json::from_value(
            json!([{"name": "vda", "read_ios": 5, "write_ios": 6, "read_merges": 0,
            "write_merges": 1, "read_ticks": 2, "write_ticks": 3, "in_queue": 5, "util": 12.3456}]),
        )
        .unwrap();
        disk_lines(&mut out, &d);
        let want = "\nDisk stats (read/write):\n  vda: ios=5/6, merge=0/1, ticks=2/3, in_queue=5, util=12.35%\n";
        assert_eq!(out, want);
    }
}
