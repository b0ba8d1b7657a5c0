//! A phase's shared state: its control, counters, devices and HIOPS
//! paths, and each thread's plan (targets, regions, budget).

use crate::error::{usage, BenchError};
use crate::generator::Region;
use crate::result::{JobResult, PathReport, TargetInfo};
use crate::spec::{JobSpec, VerifyMode};
use crate::target::OpenTarget;
use crate::thread_plan::{Control, Counters, WorkerPlan};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Barrier, Mutex};
use std::time::Duration;

/// The system's side of the window and the jobs' shared state.
pub(super) struct Phase<'a> {
    pub(super) specs: &'a [JobSpec],
    pub(super) opened: &'a [Vec<OpenTarget>],
    pub(super) ctrl: Control,
    pub(super) counters: Vec<Counters>,
    pub(super) devices: Vec<String>,
    pub(super) irq_prefix: Vec<(String, Option<String>)>,
    pub(super) paths: Vec<Option<hiops_path::IoPath>>,
}

/// Counters for each flow id the phase's jobs use (fio's flow).
fn flows_of(specs: &[JobSpec]) -> Vec<(u32, std::sync::Arc<crate::flow::FlowCounter>)> {
    let mut ids: Vec<u32> = specs
        .iter()
        .filter_map(|s| s.workload.flow.map(|f| f.id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter().map(|id| (id, Default::default())).collect()
}

/// The phase's shared control, its cpuio jobs already stopped where no
/// thread beside them moves data (fio's cpuio then ends at once; the plan
/// kept exit_on_io_done only where an earlier phase moved data).
pub(super) fn control_of(specs: &[JobSpec], threads: usize) -> Control {
    let ctrl = Control {
        start: Barrier::new(threads + 1),
        stop: AtomicBool::new(false),
        interrupted: AtomicBool::new(false),
        job_stop: specs.iter().map(|_| AtomicBool::new(false)).collect(),
        job_group: specs.iter().map(|s| s.meta.group).collect(),
        run_over: AtomicBool::new(false),
        flows: flows_of(specs),
        measuring: AtomicBool::new(false),
        measuring_since_ns: AtomicU64::new(0),
        failed: Mutex::new(None),
        io_threads_left: io_threads(specs).into(),
        exit_with_io: exit_with_io(specs),
    };
    if ctrl.io_threads_left.load(Relaxed) == 0 {
        ctrl.stop_exit_with_io();
    }
    ctrl
}

/// The threads of the phase that move data.
fn io_threads(specs: &[JobSpec]) -> usize {
    let moving = specs.iter().filter(|s| crate::thread_plan::moves_data(s));
    moving.map(|s| s.numjobs as usize).sum()
}

/// The jobs that end with the phase's data-moving threads.
fn exit_with_io(specs: &[JobSpec]) -> Vec<usize> {
    let ends = |s: &JobSpec| s.io.cpuio.is_some_and(|c| c.exit_on_io_done);
    (0..specs.len()).filter(|&j| ends(&specs[j])).collect()
}

impl<'a> Phase<'a> {
    pub(super) fn new(
        specs: &'a [JobSpec],
        opened: &'a [Vec<OpenTarget>],
    ) -> Result<Phase<'a>, BenchError> {
        let threads: usize = specs.iter().map(|s| s.numjobs as usize).sum();
        let mut devices: Vec<String> = opened
            .iter()
            .flatten()
            .filter_map(|t| t.device.as_ref().map(|d| d.name.clone()))
            .collect();
        devices.sort();
        devices.dedup();
        let irq_prefix = opened
            .iter()
            .flatten()
            .filter_map(|t| {
                t.device
                    .as_ref()
                    .map(|d| (d.name.clone(), d.interrupt_prefix()))
            })
            .collect();
        let paths = specs
            .iter()
            .zip(opened)
            .map(|(spec, targets)| open_path(spec, targets))
            .collect::<Result<_, _>>()?;
        let phase = Phase {
            specs,
            opened,
            ctrl: control_of(specs, threads),
            counters: (0..threads).map(|_| Counters::default()).collect(),
            devices,
            irq_prefix,
            paths,
        };
        Ok(phase)
    }

    /// Waits for the threads to end their work after the window (drain,
    /// end_fsync, a verify pass). An interrupt, before or now, stops that
    /// work too. Returns whether the run was interrupted.
    pub(super) fn await_threads<T>(
        &self,
        handles: &[(usize, std::thread::ScopedJoinHandle<'_, T>)],
        interrupt: &AtomicBool,
        interrupted: bool,
    ) -> bool {
        let mut interrupted = interrupted;
        loop {
            if !interrupted && interrupt.load(Relaxed) {
                interrupted = true;
            }
            if interrupted {
                self.ctrl.interrupted.store(true, Relaxed);
            }
            if handles.iter().all(|(_, h)| h.is_finished()) {
                return interrupted;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every thread's plan, with the index of its job.
    pub(super) fn plans(&self, finished: mpsc::Sender<()>) -> Vec<(usize, WorkerPlan<'a>)> {
        let mut plans = Vec::new();
        for (j, spec) in self.specs.iter().enumerate() {
            let align = job_align(spec);
            for clone in 0..spec.numjobs {
                let (first, mine) = targets_of(spec, &self.opened[j], clone);
                let regions = regions_for(spec, mine, clone, align)
                    .expect("validate checked every clone's regions");
                let zones = zoned_targets(spec, mine, &regions);
                let whole = pass_bytes(spec, &regions);
                // fio's loops each end at io_size when it is less (its
                // do_io: io_issue_bytes_exceeded).
                let pass = match spec.target.io_size.filter(|_| !spec.timing.time_based) {
                    Some(io) => io.get().min(whole),
                    None => whole,
                };
                plans.push((
                    j,
                    WorkerPlan {
                        spec,
                        job: j,
                        clone,
                        targets: mine.iter().map(|t| t.hal_target()).collect(),
                        target_base: first as u32,
                        regions,
                        zones,
                        align: align as u32,
                        budget: budget(spec, pass),
                        pass,
                        finished: finished.clone(),
                    },
                ));
            }
        }
        plans
    }

    pub(super) fn snap_paths(&self) -> Vec<hiops_path::PathCounters> {
        self.paths
            .iter()
            .map(|p| p.as_ref().map(|p| p.counters()).unwrap_or_default())
            .collect()
    }

    pub(super) fn job_results(&self, path_c0: &[hiops_path::PathCounters]) -> Vec<JobResult> {
        let path_c1 = self.snap_paths();
        self.specs
            .iter()
            .zip(self.opened)
            .enumerate()
            .map(|(j, (spec, targets))| JobResult {
                spec: spec.clone(),
                threads: Vec::new(),
                targets: targets.iter().map(TargetInfo::of).collect(),
                path: self.paths[j].as_ref().map(|p| PathReport {
                    strategy: p.strategy(),
                    description: p.description(),
                    counters: path_c1[j].since(&path_c0[j]),
                    switches: p.switches(),
                    completion_passes: p.completion_passes(),
                }),
            })
            .collect()
    }
}

/// Offsets are multiples of this: fio's blockalign, or the smallest block
/// size (with verify, a multiple of the verify interval: validated).
pub(super) fn job_align(spec: &JobSpec) -> u64 {
    spec.workload.block_align.unwrap_or(spec.bs_min()) as u64
}

/// The targets a clone uses: all of the job's, or (fio's layout without a
/// filename) its own `files_per_clone` of them. Returns (first index, slice).
pub(super) fn targets_of<'t>(
    spec: &JobSpec,
    targets: &'t [OpenTarget],
    clone: u32,
) -> (usize, &'t [OpenTarget]) {
    match spec.target.files_per_clone {
        Some(n) => {
            let first = clone as usize * n as usize;
            (first, &targets[first..first + n as usize])
        }
        None => (0, targets),
    }
}

/// The regions each clone of a job works on: from `offset` (plus
/// `offset_increment` per clone) for `size` bytes, or to the end. With verify
/// on shared targets, clones whose ranges overlap each own a disjoint slice
/// of it (so the last acknowledged write of a block is known); otherwise
/// every clone uses its whole range, as fio's clones do.
pub(super) fn regions_for(
    spec: &JobSpec,
    targets: &[OpenTarget],
    clone: u32,
    align: u64,
) -> Result<Vec<Region>, BenchError> {
    Ok(noted_regions(spec, targets, clone, align)?.0)
}

/// fio's zbd_info under zonemode=zbd: each target's zone table (shared by
/// every job on the file) and the thread's range of it; empty without.
fn zoned_targets(
    spec: &JobSpec,
    targets: &[OpenTarget],
    regions: &[Region],
) -> Vec<crate::zbd::ZonedTarget> {
    let Some(z) = spec.target.zbd else {
        return Vec::new();
    };
    let zoned = |(t, r): (&OpenTarget, &Region)| {
        let path = t
            .path
            .as_deref()
            .expect("the plan gave zonemode=zbd a path");
        let table = crate::zbd::table_of(path, (z.zone_size, z.capacity), || {
            // The file's own size (a device's from sysfs), not the job's.
            let file = std::fs::metadata(path).map_or(0, |m| m.len());
            let device = t.device.as_ref().and_then(|d| d.size_bytes()).unwrap_or(0);
            let len = file.max(device).max(t.len);
            crate::zbd::ZoneTable::new(len, z.zone_size, z.capacity, z.max_open_zones)
        });
        crate::zbd::ZonedTarget::new(table, *r)
    };
    targets.iter().zip(regions).map(zoned).collect()
}

/// [`regions_for`], with the lines fio prints where zonemode=zbd moved a
/// writing job's range to whole zones (fio's zbd_zone_align_file_sizes).
pub(super) fn noted_regions(
    spec: &JobSpec,
    targets: &[OpenTarget],
    clone: u32,
    align: u64,
) -> Result<(Vec<Region>, Vec<String>), BenchError> {
    // Under zonemode=zbd the range ends at a zone's end, as fio's, not at
    // a whole block: fio does not round io_size to the block size.
    let ends_at = match spec.target.zbd {
        Some(_) => 1,
        None => align,
    };
    let regions = plain_regions(spec, targets, clone, (align, ends_at))?;
    let Some(z) = spec.target.zbd.filter(|_| {
        spec.workload.rw != crate::spec::RwMode::Read
            && spec.workload.rw != crate::spec::RwMode::RandRead
    }) else {
        return Ok((regions, Vec::new()));
    };
    let mut notes = Vec::new();
    let mut aligned = Vec::with_capacity(regions.len());
    for (r, t) in regions.into_iter().zip(targets) {
        let (r, said) = crate::zbd::align_region(r, z.zone_size, &t.describe())
            .or_else(|e| usage(format!("job {}: zonemode=zbd: {e}", spec.name)))?;
        aligned.push(r);
        notes.extend(said);
    }
    Ok((aligned, notes))
}

fn plain_regions(
    spec: &JobSpec,
    targets: &[OpenTarget],
    clone: u32,
    (align, ends_at): (u64, u64),
) -> Result<Vec<Region>, BenchError> {
    let shared = spec.target.files_per_clone.is_none();
    let regions = targets
        .iter()
        .map(|t| {
            let start = spec.target.clone_start(clone, t.len);
            let step = start_align(spec, align);
            let start = start.div_ceil(step) * step;
            if start >= t.len {
                return usage(format!(
                    "job {} clone {clone} starts at byte {start}, past the end of {} ({} bytes): lower --offset or --offset_increment",
                    spec.name,
                    t.describe(),
                    t.len
                ));
            }
            let len = t.len - start;
            let len = match (spec.target.size, spec.target.size_pct) {
                (Some(s), _) => s.get().min(len),
                (None, Some(p)) => ((t.len as f64 * p / 100.0) as u64).min(len),
                (None, None) => len,
            };
            let overlapping = spec.target.offset_increment.of(t.len).get() < len;
            if spec.verify.mode != VerifyMode::Off && spec.numjobs > 1 && shared && overlapping {
                let slice = (len / spec.numjobs as u64) / align * align;
                Ok(Region {
                    start: start + clone as u64 * slice,
                    len: slice,
                })
            } else {
                Ok(Region {
                    start,
                    len: len / ends_at * ends_at,
                })
            }
        })
        .collect::<Result<Vec<Region>, BenchError>>()?;
    for (r, t) in regions.iter().zip(targets) {
        assert!(
            r.start + r.len <= t.len,
            "clone {clone}'s region {r:?} ends past {} ({} bytes)",
            t.describe(),
            t.len
        );
    }
    Ok(regions)
}

/// What a clone's start is rounded up to: fio's offset_align where a
/// percentage places it, else the job's block alignment (of which
/// offset_align is a multiple, so every offset stays aligned).
fn start_align(spec: &JobSpec, align: u64) -> u64 {
    let percent = |a: &crate::spec::Amount| matches!(a, crate::spec::Amount::Percent(_));
    let placed_by_percent = percent(&spec.target.offset) || percent(&spec.target.offset_increment);
    match spec.target.offset_align {
        Some(a) if placed_by_percent => {
            debug_assert!(
                a.is_multiple_of(align),
                "offset_align {a} is a multiple of {align}"
            );
            a.get()
        }
        _ => align,
    }
}

/// Bytes of one pass over a thread's regions; with fio's sequential holes a
/// pass moves only the blocks that start a step apart and fit before the
/// region's end (fio's t0007: 85 reads of 1m, 1.5m apart, in 128m); a
/// backwards walk moves them all.
fn pass_bytes(spec: &JobSpec, regions: &[Region]) -> u64 {
    let bytes = pass_with_holes(spec, regions);
    let whole: u64 = regions.iter().map(|r| r.len).sum();
    assert!(
        bytes <= whole,
        "a pass moves {bytes} bytes of regions holding {whole}"
    );
    bytes
}

fn pass_with_holes(spec: &JobSpec, regions: &[Region]) -> u64 {
    if spec.workload.rw_gap > 0 && !spec.workload.rw.is_random() {
        let bs = spec.workload.bs.mean();
        let step = bs + spec.workload.rw_gap as f64;
        let fits = |len: f64| match len >= bs {
            true => (((len - bs) / step).floor() + 1.0) * bs,
            false => 0.0,
        };
        regions.iter().map(|r| fits(r.len as f64)).sum::<f64>() as u64
    } else {
        regions.iter().map(|r| r.len).sum()
    }
}

/// Size-based: `loops` passes; time-based: no end by size. With io_size,
/// fio goes on after its loops until io_size is done (backend.c,
/// keep_running): at least io_size in all.
fn budget(spec: &JobSpec, pass: u64) -> u64 {
    if spec.timing.time_based {
        return u64::MAX;
    }
    let loops = pass * spec.timing.loops.max(1) as u64;
    spec.target.io_size.map_or(loops, |io| loops.max(io.get()))
}

/// Synchronous-thread jobs share one HIOPS path per job.
fn open_path(
    spec: &JobSpec,
    targets: &[OpenTarget],
) -> Result<Option<hiops_path::IoPath>, BenchError> {
    let Some(p) = spec.io.path.as_ref().filter(|p| p.tasks.is_none()) else {
        // No path, or the task path (each thread opens its own ring).
        return Ok(None);
    };
    let config = hiops_path::PathConfig {
        strategy: p.strategy,
        engine: spec.io.engine,
        engine_opts: spec.engine_options(),
        // iodepth is the path's tags in all: each ring gets its share.
        depth: spec.io.iodepth.get().div_ceil(p.rings.max(1)).max(1),
        max_io: spec.data_bs_max() as usize,
        rings: p.rings,
        spin_ns: crate::spec::clock_ns(p.spin),
        poll_interval: p.poll_interval,
        coop_peeks: p.coop_peeks,
        coop_parts: p.coop_parts,
        coop_wait: p.coop_wait,
        hybrid: p.hybrid,
    };
    let hal: Vec<_> = targets.iter().map(|t| t.hal_target()).collect();
    let path = hiops_path::IoPath::open(config, hal).map_err(|e| match e {
        hiops_path::PathError::Config { .. } => {
            BenchError::usage_by(format!("job {}", spec.name), e)
        }
        _ => BenchError::failed_by(format!("job {}", spec.name), e),
    })?;
    Ok(Some(path))
}
