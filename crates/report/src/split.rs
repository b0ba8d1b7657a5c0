//! The device/platform latency split (ADMS'10 Fig 3): the device's time
//! against the latency the application saw, and where that subtraction
//! means nothing. The device's time is a mean over the requests the
//! device served; it can stand for the application's I/Os only when those
//! requests are the application's I/Os: direct I/O, and no other I/O on the
//! device. Otherwise the split says why it is not made, and never prints a
//! platform time that cannot be (a negative one).

use hiops_bench::{DirStats, JobResult, RunResult};

/// Where a split's device time comes from.
pub const FROM_TRACEPOINTS: &str = "tracepoints: driver issue to completion";
pub const FROM_DISKSTATS: &str = "diskstats: block-layer entry to completion";
/// A bio-based driver (zram) has no driver issue: its bios' lives.
pub const FROM_BIO_TRACEPOINTS: &str =
    "tracepoints: bio-based driver, block-layer entry to completion";

/// What a split's device time holds, in words for the report: the
/// kernel's view from the driver's issue (or block-layer entry) to the
/// completion, which on a virtual machine also holds the host. The papers
/// split at the bus, with an analyzer on the SSD's link; software cannot.
pub fn device_time_contents() -> &'static str {
    if on_virtual_machine() {
        "The device time is the kernel's view, issue to completion: on this virtual machine it holds the doorbell's exit to the host, the host's own I/O path and the interrupt's delivery as well as the device. The papers split at the bus with an analyzer on the SSD's link, which software cannot do."
    } else {
        "The device time is the kernel's view, issue to completion: it holds the driver's submission, the bus and the interrupt's delivery as well as the device. The papers split at the bus with an analyzer on the SSD's link, which software cannot do."
    }
}

/// Whether the CPU says a hypervisor runs this machine (the `hypervisor`
/// flag of /proc/cpuinfo).
fn on_virtual_machine() -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| {
        c.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
    })
}

/// The split of one device in one direction. With `--timeline` the device
/// time is the driver's issue to the completion (the tracepoints); without,
/// /proc/diskstats' service time, which also holds the block layer's
/// queueing and the driver, and is kept beside it under its name.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencySplit {
    pub device: String,
    pub direction: &'static str,
    /// The application's latency: fio's lat (creation to completion
    /// reaped), which for an asynchronous engine includes the submission
    /// that clat leaves out.
    pub app_ns: f64,
    /// fio's clat (submitted to reaped), kept under its name.
    pub app_clat_ns: f64,
    pub device_ns: f64,
    /// [`FROM_TRACEPOINTS`], [`FROM_BIO_TRACEPOINTS`] or [`FROM_DISKSTATS`].
    pub source: &'static str,
    /// /proc/diskstats' service time per I/O, where it keeps one.
    pub diskstats_ns: Option<f64>,
    /// Application − device, never negative; `Err` says why the device's
    /// time cannot be set against the application's I/Os.
    pub platform_ns: Result<f64, NotSplit>,
}

impl LatencySplit {
    /// The platform time where the split was made.
    pub fn platform(&self) -> Option<f64> {
        self.platform_ns.as_ref().ok().copied()
    }

    /// Why the split was not made, if it was not.
    pub fn not_split(&self) -> Option<String> {
        self.platform_ns.as_ref().err().map(NotSplit::to_string)
    }
}

/// Why one device's time is not set against the application's.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NotSplit {
    /// The device's requests are not the application's I/Os (the reason).
    #[error("{0}")]
    Unmatched(String),
    #[error("the device's time exceeds the application's ({:.1} us against {:.1} us), so not all of it was spent on the application's I/Os", .device_ns / 1e3, .app_ns / 1e3)]
    DeviceLonger { device_ns: f64, app_ns: f64 },
}

/// Why no split can be measured at all.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NoSplit {
    #[error("no block device behind the target (RAM device, tmpfs or similar): device time cannot be measured")]
    NoBlockDevice,
    #[error("no I/O was measured")]
    NoIo,
    /// Each device and direction that kept no service time.
    #[error("{}", untimed_list(.untimed))]
    NoServiceTime {
        untimed: Vec<(String, &'static str)>,
    },
}

fn untimed_list(untimed: &[(String, &'static str)]) -> String {
    let each = untimed.iter().map(|(device, dir)| {
        format!("{device} kept no {dir} service time (a synchronous device such as zram, or no I/O reached it)")
    });
    each.collect::<Vec<_>>().join("; ")
}

/// The rule: no platform time where the device's requests are not the
/// application's I/Os (`unmatched`), nor where the device took longer than
/// the application saw (so some of its time was not the application's).
pub fn platform_ns(
    app_ns: f64,
    device_ns: f64,
    unmatched: Option<String>,
) -> Result<f64, NotSplit> {
    if let Some(why) = unmatched {
        return Err(NotSplit::Unmatched(why));
    }
    if device_ns > app_ns {
        return Err(NotSplit::DeviceLonger { device_ns, app_ns });
    }
    let platform = app_ns - device_ns;
    assert!(
        platform >= 0.0 || platform.is_nan(),
        "platform time {platform} ns negative: the device's {device_ns} ns passed the application's {app_ns} ns"
    );
    Ok(platform)
}

/// The timeline's device time of `device` in one direction, and where it
/// starts.
fn traced_device_ns(r: &RunResult, device: &str, write: bool) -> Option<(f64, &'static str)> {
    let t = r.platform.timeline.as_ref()?.as_ref().ok()?;
    if !completions_seen(t) {
        return None; // a biased few: diskstats' figure is the honest one
    }
    let d = t.per_device.iter().find(|d| d.device == device)?;
    let g = if write { &d.write } else { &d.read };
    let source = if d.bio_based {
        FROM_BIO_TRACEPOINTS
    } else {
        FROM_TRACEPOINTS
    };
    g.as_ref()
        .filter(|g| g.count > 0)
        .map(|g| (g.mean_ns, source))
}

/// The jobs whose targets are on `device`.
fn jobs_on<'r>(r: &'r RunResult, device: &'r str) -> impl Iterator<Item = &'r JobResult> {
    r.jobs.iter().filter(move |j| {
        j.targets
            .iter()
            .any(|t| t.device.as_deref() == Some(device))
    })
}

/// The I/Os of one direction of a job.
fn dir_of(j: &JobResult, write: bool) -> DirStats {
    let (rd, wr) = j.merged();
    if write {
        wr
    } else {
        rd
    }
}

/// The threads of `j` that wrote to `file`: each clone its own files
/// under fio's layout without a filename, otherwise every clone all of them.
fn writers_of(j: &JobResult, file: &str) -> usize {
    let holds = |ts: &[hiops_bench::result::TargetInfo]| ts.iter().any(|t| t.name == file);
    j.threads
        .iter()
        .filter(|t| t.write.ios > 0)
        .filter(|t| match j.spec.target.files_per_clone {
            Some(n) => {
                let first = t.clone as usize * n as usize;
                j.targets.get(first..first + n as usize).is_some_and(holds)
            }
            None => holds(&j.targets),
        })
        .count()
}

/// A file on `device` that several threads of this run wrote, one of them
/// through the page cache.
fn shared_buffered_file(r: &RunResult, device: &str) -> Option<String> {
    let files = jobs_on(r, device).flat_map(|j| j.targets.iter().map(|t| t.name.clone()));
    files.into_iter().find(|f| {
        let writers: Vec<(bool, usize)> = jobs_on(r, device)
            .map(|j| (j.spec.target.direct, writers_of(j, f)))
            .filter(|&(_, n)| n > 0)
            .collect();
        writers.iter().map(|&(_, n)| n).sum::<usize>() > 1 && writers.iter().any(|&(d, _)| !d)
    })
}

/// Bytes the device moved beyond this much of the application's are
/// another's I/O (journal and metadata stay well below).
const OTHER_IO_FACTOR: u64 = 2;
const OTHER_IO_SLACK: u64 = 4 << 20;

/// Why the device's requests in one direction are not the application's
/// I/Os, if they are not.
fn unmatched(r: &RunResult, d: &hiops_bench::result::DeviceWindow, write: bool) -> Option<String> {
    let (dir, app) = if write {
        ("writes", "written")
    } else {
        ("reads", "read")
    };
    if write {
        if let Some(f) = shared_buffered_file(r, &d.name) {
            return Some(format!("several writers: {f} is written by several threads through the page cache, and the device sees their combined writeback, not each write"));
        }
    }
    let on_device: Vec<DirStats> = jobs_on(r, &d.name)
        .filter(|j| !j.spec.target.direct)
        .map(|j| dir_of(j, write))
        .filter(|s| s.ios > 0)
        .collect();
    if !on_device.is_empty() {
        return Some(if write {
            "buffered writes: the device sees the page cache's writeback, not the application's writes".into()
        } else {
            "buffered reads: the device sees the page cache's misses and read-ahead, not the application's reads".into()
        });
    }
    let ours: u64 = jobs_on(r, &d.name).map(|j| dir_of(j, write).bytes).sum();
    let sectors = if write {
        d.stats.write_sectors
    } else {
        d.stats.read_sectors
    };
    let moved = sectors * 512;
    (moved > OTHER_IO_FACTOR * ours + OTHER_IO_SLACK).then(|| {
        format!(
            "other I/O reached {}: it served {:.1} MiB of {dir} while this run {app} {:.1} MiB",
            d.name,
            moved as f64 / 1048576.0,
            ours as f64 / 1048576.0
        )
    })
}

/// Per direction, for each device that served it. `Err` explains why no
/// split can be measured at all (no block device, a synchronous device that
/// keeps no time); a split that cannot be made says why in its
/// [`LatencySplit::platform_ns`].
pub fn latency_splits(r: &RunResult) -> Result<Vec<LatencySplit>, NoSplit> {
    if r.devices.is_empty() {
        return Err(NoSplit::NoBlockDevice);
    }
    let (mut reads, mut writes) = (DirStats::default(), DirStats::default());
    let mut ios = (0, 0);
    for j in &r.jobs {
        let (rd, wr) = j.merged();
        ios = (ios.0 + rd.ios, ios.1 + wr.ios);
        reads.merge(&rd);
        writes.merge(&wr);
    }
    assert_eq!(
        (reads.ios, writes.ios),
        ios,
        "the run's merged reads and writes hold each job's I/Os"
    );
    let mut out = Vec::new();
    let mut untimed = Vec::new();
    for d in &r.devices {
        for (dir, app, disk, write) in [
            ("read", &reads, d.stats.read_service_ns(), false),
            ("write", &writes, d.stats.write_service_ns(), true),
        ] {
            if app.ios == 0 {
                continue;
            }
            let (device_ns, source) = match (traced_device_ns(r, &d.name, write), disk) {
                (Some(traced), _) => traced,
                (None, Some(ns)) => (ns, FROM_DISKSTATS),
                (None, None) => {
                    untimed.push((d.name.clone(), dir));
                    continue;
                }
            };
            let app_ns = if app.lat.is_empty() {
                app.clat.mean()
            } else {
                app.lat.mean()
            };
            out.push(LatencySplit {
                device: d.name.clone(),
                direction: dir,
                app_ns,
                app_clat_ns: app.clat.mean(),
                device_ns,
                source,
                diskstats_ns: disk,
                platform_ns: platform_ns(app_ns, device_ns, unmatched(r, d, write)),
            });
        }
    }
    if out.is_empty() {
        return Err(if untimed.is_empty() {
            NoSplit::NoIo
        } else {
            NoSplit::NoServiceTime { untimed }
        });
    }
    Ok(out)
}

/// Whether the tracer saw the completion of (nearly) every request it saw
/// issued. Some kernels drop tracepoint samples taken in a disk's
/// interrupt (seen here on a virtio disk whose interrupt shares the CPU
/// with the I/O thread, `perf record` itself included); the few that
/// arrive are not a fair sample of the device's time.
/// (An I/O whose completion went unseen either ends without one, a
/// system call's return closing it, or stays open to the end, as libaio's
/// wait for their reap: both count.)
pub fn completions_seen(t: &hiops_profile::timeline::Timeline) -> bool {
    let (issued, done) = (t.stages.driver_issue, t.stages.completion);
    let open = t.in_flight_at_end as f64;
    (issued == 0 || done as f64 >= 0.9 * issued as f64) && open <= 0.1 * t.ios.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_bench::result::{DeviceWindow, TargetInfo};
    use hiops_bench::target::TargetKind;
    use hiops_bench::{JobBuilder, RwMode};
    use hiops_stats::disk::DiskStats;

    /// A run of one writing job on vda: `numjobs` threads, each with 1000
    /// writes of 4 KiB at `app_us`, the device at `device_us` per request.
    fn writes(direct: bool, numjobs: u32, app_us: u64, device_us: u64) -> RunResult {
        let mut spec = JobBuilder::default_for("/data/f".into());
        (spec.target.direct, spec.numjobs, spec.workload.rw) = (direct, numjobs, RwMode::RandWrite);
        let mut r = RunResult::not_run(vec![spec.build().unwrap()]);
        let j = &mut r.jobs[0];
        j.targets.push(TargetInfo {
            name: "/data/f".into(),
            kind: TargetKind::File,
            len: 1 << 30,
            device: Some("vda".into()),
            created: false,
            layout_s: 0.0,
        });
        for t in &mut j.threads {
            (t.write.ios, t.write.bytes) = (1000, 1000 * 4096);
            (0..1000).for_each(|_| t.write.lat.record(app_us * 1000));
        }
        let n = 1000 * u64::from(numjobs);
        r.devices.push(DeviceWindow {
            name: "vda".into(),
            stats: DiskStats {
                writes: n,
                write_sectors: n * 8,
                write_ms: n * device_us / 1000,
                ..Default::default()
            },
            interrupts: None,
        });
        r
    }

    fn only(r: &RunResult) -> LatencySplit {
        let mut v = latency_splits(r).expect("a split");
        assert_eq!(v.len(), 1, "{v:?}");
        v.remove(0)
    }

    #[test]
    fn direct_writes_of_one_job_split_into_parts_that_sum_to_the_total() {
        let s = only(&writes(true, 1, 500, 400));
        let p = s.platform().expect("split");
        assert!(p >= 0.0, "{s:?}");
        assert!((s.device_ns + p - s.app_ns).abs() < 1e-6, "{s:?}");
        assert!(s.not_split().is_none());
    }

    #[test]
    fn buffered_writes_are_not_split_and_say_why() {
        // The tester's case: writes reaped at 4 us, writeback at 3.9 ms.
        let s = only(&writes(false, 1, 4, 3936));
        assert_eq!(s.platform(), None, "{s:?}");
        assert!(
            s.not_split().unwrap().starts_with("buffered writes"),
            "{s:?}"
        );
        // Not even where the subtraction happens to come out positive.
        let s = only(&writes(false, 1, 500, 400));
        assert!(s.not_split().unwrap().starts_with("buffered writes"));
    }

    #[test]
    fn several_buffered_writers_of_one_file_are_named() {
        let s = only(&writes(false, 2, 4, 3936));
        assert!(
            s.not_split()
                .unwrap()
                .starts_with("several writers: /data/f"),
            "{s:?}"
        );
        // Direct writers of one file: the device serves exactly their writes.
        assert!(only(&writes(true, 2, 500, 400)).platform().is_some());
    }

    #[test]
    fn a_device_slower_than_the_application_is_not_split() {
        let s = only(&writes(true, 1, 300, 400));
        assert_eq!(s.platform(), None, "{s:?}");
        assert!(s.not_split().unwrap().contains("exceeds"), "{s:?}");
        assert_eq!(platform_ns(300.0, 300.0, None), Ok(0.0));
        assert!(platform_ns(300.0, 300.1, None).is_err());
    }

    #[test]
    fn a_device_that_moved_far_more_than_the_run_had_other_io() {
        let mut r = writes(true, 1, 500, 400);
        r.devices[0].stats.write_sectors *= 10;
        let s = only(&r);
        assert!(
            s.not_split().unwrap().starts_with("other I/O reached vda"),
            "{s:?}"
        );
    }
}
