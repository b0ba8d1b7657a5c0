//! Running jobs: targets, threads, the ramp, the measured window and the
//! system counters around it.

use crate::error::{usage, BenchError};
use crate::generator::Region;
use crate::result::{DeviceWindow, JobResult, PathReport, RunResult, SeriesPoint, TargetInfo};
use crate::spec::{JobSpec, VerifyMode};
use crate::sync_worker::run_sync_worker;
use crate::target::{open_targets, remove_created, OpenTarget, TargetKind};
use crate::worker::{run_worker, Control, Counters, WorkerPlan};
use hiops_hal::EngineKind;
use hiops_stats::cpu::{online_cpus, MachineSample, ProcessSample};
use hiops_stats::disk::{read_interrupts, DiskStats};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{mpsc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// What the progress callback is told, about every 200 ms.
#[derive(Clone, Debug)]
pub enum Progress {
    Layout {
        what: String,
        done: u64,
        total: u64,
    },
    Running {
        /// Seconds since the jobs started (ramp included).
        elapsed_s: f64,
        /// Seconds the run will take, when time-based.
        total_s: Option<f64>,
        ramping: bool,
        read_iops: f64,
        write_iops: f64,
        read_bytes_per_s: f64,
        write_bytes_per_s: f64,
    },
}

pub struct RunOptions<'a> {
    /// Set (from a signal handler) to stop early; the result is marked interrupted.
    pub interrupt: &'a AtomicBool,
    pub progress: Option<&'a mut dyn FnMut(&Progress)>,
}

/// Checks a job against its opened targets: everything that would fail later
/// fails here, before any I/O, with the option to change.
fn validate(spec: &JobSpec, targets: &[OpenTarget]) -> Result<(), BenchError> {
    if spec.iodepth == 0 {
        return usage("--iodepth must be at least 1");
    }
    if spec.numjobs == 0 {
        return usage("--numjobs must be at least 1");
    }
    if spec.path.is_some() && spec.rate_iops.is_some() {
        return usage("--rate_iops is not available with --strategy yet: drop one");
    }
    if let Some(chunk) = spec.raid0_chunk {
        // One file is a one-member RAID0: the file itself.
        if let Some(bs) = spec
            .bs
            .split
            .iter()
            .map(|s| s.0)
            .find(|&bs| chunk % bs as u64 != 0)
        {
            return usage(format!(
                "--raid0={chunk}: every block size must divide the chunk, and {bs} does not"
            ));
        }
        if spec.rw_gap != 0 {
            return usage("--raid0 takes no sequential gap (rw=read:GAP)");
        }
        let align = spec.block_align.unwrap_or(spec.bs.min()) as u64;
        if chunk % align != 0 {
            return usage(format!(
                "--raid0={chunk}: the chunk must be a multiple of blockalign ({align})"
            ));
        }
    }
    let (bs_min, bs_max) = (spec.bs.min(), spec.bs.max());
    for t in targets {
        if t.len < bs_max as u64 {
            return usage(format!(
                "{} has {} bytes, less than one block of {bs_max}: lower --bs or raise --size",
                t.describe(),
                t.len
            ));
        }
        if spec.direct && t.kind != TargetKind::Ram {
            let lb = t.logical_block;
            for &(bs, _) in &spec.bs.split {
                if bs % lb != 0 {
                    return usage(format!(
                        "--bs={bs} is not a multiple of {}'s logical block size ({lb} bytes), which direct I/O requires: use a multiple of {lb} or --direct=0",
                        t.describe()
                    ));
                }
            }
        }
    }
    let align = job_align(spec);
    for clone in 0..spec.numjobs {
        let (_, mine) = targets_of(spec, targets, clone);
        for r in regions_for(spec, mine, clone, align)? {
            if r.len < bs_max as u64 {
                return usage(format!(
                    "job {} clone {clone} has {} bytes to work on, less than one block of {bs_max}: lower --bs, --offset or --offset_increment, or raise --size",
                    spec.name, r.len
                ));
            }
        }
    }
    if spec.direct
        && !align.is_multiple_of(512)
        && targets.iter().any(|t| t.kind != TargetKind::Ram)
    {
        return usage(format!(
            "blockalign={align} does not suit direct I/O: use a multiple of the logical block size"
        ));
    }
    if spec.verify != VerifyMode::Off {
        if !spec.bs.is_fixed() {
            return usage("--verify needs one block size: drop --bssplit or the bs range");
        }
        let min = crate::verify::min_block(spec.verify);
        if (bs_min as usize) < min {
            return usage(format!("--verify needs blocks of at least {min} bytes"));
        }
        if spec.verify == VerifyMode::Pattern
            && spec.verify_pattern.as_ref().is_none_or(|p| p.is_empty())
        {
            return usage("--verify=pattern needs --verify_pattern (a hex number like 0xdeadbeef, a decimal number or a \"quoted string\")");
        }
        if !spec.rw.writes() && !spec.verify_only {
            return usage("--verify checks blocks this run writes: use a workload that writes (write, randwrite, rw, randrw), or --verify_only to check a target written earlier");
        }
        if spec.engine == EngineKind::Null {
            return usage(
                "--verify cannot check the null engine, which moves no data: use --ioengine=mem",
            );
        }
    }
    if spec.rate_iops == Some(0) {
        return usage("--rate_iops must be above 0");
    }
    if !spec.time_based
        && spec.runtime_ns.is_none()
        && spec.size.is_none()
        && targets.iter().all(|t| t.len == 0)
    {
        return usage("nothing bounds this job: give --size or --runtime");
    }
    Ok(())
}

/// Offsets are multiples of this: the block (verify), fio's blockalign, or
/// the smallest block size.
fn job_align(spec: &JobSpec) -> u64 {
    if spec.verify != VerifyMode::Off {
        spec.bs.max() as u64
    } else {
        spec.block_align.unwrap_or(spec.bs.min()) as u64
    }
}

/// The targets a clone uses: all of the job's, or (fio's layout without a
/// filename) its own `files_per_clone` of them. Returns (first index, slice).
fn targets_of<'t>(
    spec: &JobSpec,
    targets: &'t [OpenTarget],
    clone: u32,
) -> (usize, &'t [OpenTarget]) {
    match spec.files_per_clone {
        Some(n) => {
            let first = clone as usize * n as usize;
            (first, &targets[first..first + n as usize])
        }
        None => (0, targets),
    }
}

/// The regions each clone of a job works on: from `offset` (plus
/// `offset_increment` per clone) for `size` bytes, or to the end. With verify
/// and shared targets each clone owns a disjoint slice (so the last
/// acknowledged write of a block is known); otherwise every clone uses the
/// whole range, as fio's clones do.
fn regions_for(
    spec: &JobSpec,
    targets: &[OpenTarget],
    clone: u32,
    align: u64,
) -> Result<Vec<Region>, BenchError> {
    let shared = spec.files_per_clone.is_none();
    targets
        .iter()
        .map(|t| {
            let start = spec.offset.of(t.len) + clone as u64 * spec.offset_increment.of(t.len);
            let start = start.div_ceil(align) * align;
            if start >= t.len {
                return usage(format!(
                    "job {} clone {clone} starts at byte {start}, past the end of {} ({} bytes): lower --offset or --offset_increment",
                    spec.name,
                    t.describe(),
                    t.len
                ));
            }
            let len = t.len - start;
            let len = match (spec.size, spec.size_pct) {
                (Some(s), _) => s.min(len),
                (None, Some(p)) => ((t.len as f64 * p / 100.0) as u64).min(len),
                (None, None) => len,
            };
            if spec.verify != VerifyMode::Off && spec.numjobs > 1 && shared {
                let slice = (len / spec.numjobs as u64) / align * align;
                Ok(Region {
                    start: start + clone as u64 * slice,
                    len: slice,
                })
            } else {
                Ok(Region {
                    start,
                    len: len / align * align,
                })
            }
        })
        .collect()
}

/// Runs jobs side by side (all start together) and measures them.
pub fn run(specs: &[JobSpec], mut opts: RunOptions<'_>) -> Result<RunResult, BenchError> {
    assert!(!specs.is_empty());
    let mut opened: Vec<Vec<OpenTarget>> = Vec::new();
    for spec in specs {
        let mut layout = |what: &str, done: u64, total: u64| {
            if let Some(p) = opts.progress.as_mut() {
                p(&Progress::Layout {
                    what: what.to_string(),
                    done,
                    total,
                });
            }
        };
        let targets = match open_targets(spec, &mut layout) {
            Ok(t) => t,
            Err(e) => {
                opened.iter().for_each(|t| remove_created(t));
                return Err(e);
            }
        };
        if let Err(e) = validate(spec, &targets) {
            remove_created(&targets);
            opened.iter().for_each(|t| remove_created(t));
            return Err(e);
        }
        opened.push(targets);
        if opts.interrupt.load(Relaxed) {
            break;
        }
    }
    let result = measure(specs, &opened, &mut opts);
    for (spec, targets) in specs.iter().zip(&opened) {
        if spec.unlink {
            remove_created(targets);
        }
    }
    result
}

fn measure(
    specs: &[JobSpec],
    opened: &[Vec<OpenTarget>],
    opts: &mut RunOptions<'_>,
) -> Result<RunResult, BenchError> {
    let threads: usize = specs.iter().map(|s| s.numjobs as usize).sum();
    let ctrl = Control {
        start: Barrier::new(threads + 1),
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(false),
        failed: Mutex::new(None),
        epoch: Instant::now(),
    };
    let counters: Vec<Counters> = (0..threads).map(|_| Counters::default()).collect();
    let ramp_ns = specs.iter().map(|s| s.ramp_ns).max().unwrap_or(0);
    let time_based = specs.iter().all(|s| s.time_based);
    let runtime_ns = specs
        .iter()
        .filter_map(|s| s.runtime_ns.map(|r| r + s.startdelay_ns))
        .max();
    let total_ns = runtime_ns.map(|r| r + ramp_ns);
    let mut devices: Vec<String> = opened
        .iter()
        .flatten()
        .filter_map(|t| t.device.as_ref().map(|d| d.name.clone()))
        .collect();
    devices.sort();
    devices.dedup();
    let irq_prefix: Vec<(String, Option<String>)> = opened
        .iter()
        .flatten()
        .filter_map(|t| {
            t.device
                .as_ref()
                .map(|d| (d.name.clone(), d.interrupt_prefix()))
        })
        .collect();
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let tsc_hz = hiops_stats::tsc::tsc_hz();

    // Synchronous-thread jobs share one HIOPS path per job.
    let mut paths: Vec<Option<hiops_path::IoPath>> = Vec::new();
    for (spec, targets) in specs.iter().zip(opened) {
        paths.push(match &spec.path {
            None => None,
            Some(p) => {
                let config = hiops_path::PathConfig {
                    strategy: p.strategy,
                    engine: spec.engine,
                    engine_opts: spec.engine_opts.clone(),
                    depth: spec.iodepth,
                    max_io: spec.bs.max() as usize,
                    rings: p.rings,
                    spin_ns: p.spin_ns,
                    poll_interval: Duration::from_nanos(p.poll_interval_ns),
                    coop_peeks: p.coop_peeks,
                    hybrid: p.hybrid,
                };
                let hal: Vec<_> = targets.iter().map(|t| t.hal_target()).collect();
                Some(hiops_path::IoPath::open(config, hal).map_err(|e| match e {
                    hiops_path::PathError::Config { .. } => {
                        BenchError::Usage(format!("job {}: {e}", spec.name))
                    }
                    _ => BenchError::Failed(format!("job {}: {e}", spec.name)),
                })?)
            }
        });
    }
    let snap_paths = || -> Vec<hiops_path::PathCounters> {
        paths
            .iter()
            .map(|p| p.as_ref().map(|p| p.counters()).unwrap_or_default())
            .collect()
    };
    let mut path_c0 = snap_paths();

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let outcome = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut slot = 0;
        for (j, spec) in specs.iter().enumerate() {
            let targets = &opened[j];
            let align = job_align(spec);
            for clone in 0..spec.numjobs {
                let (first, mine) = targets_of(spec, targets, clone);
                let regions = regions_for(spec, mine, clone, align)
                    .expect("validate checked every clone's regions");
                // Size-based: `loops` passes over this thread's own regions
                // (the whole targets, or its slice of them under verify).
                let budget = if spec.time_based {
                    u64::MAX
                } else {
                    let pass: u64 = regions.iter().map(|r| r.len).sum();
                    // With fio's sequential gaps a pass moves only the blocks
                    // between the holes.
                    let pass = if spec.rw_gap > 0 && !spec.rw.is_random() {
                        let bs = spec.bs.mean();
                        (pass as f64 * bs / (bs + spec.rw_gap as f64)) as u64
                    } else {
                        pass
                    };
                    pass * spec.loops.max(1) as u64
                };
                let plan = WorkerPlan {
                    spec,
                    clone,
                    targets: mine.iter().map(|t| t.hal_target()).collect(),
                    target_base: first as u32,
                    regions,
                    align: align as u32,
                    budget,
                };
                let (ctrl, counters, tx) = (&ctrl, &counters[slot], done_tx.clone());
                let path = paths[j].as_ref();
                handles.push((
                    j,
                    scope.spawn(move || {
                        let r = match path {
                            Some(path) => run_sync_worker(plan, path, ctrl, counters),
                            None => run_worker(plan, ctrl, counters),
                        };
                        let _ = tx.send(());
                        r
                    }),
                ));
                slot += 1;
            }
        }
        drop(done_tx);
        if ramp_ns == 0 {
            ctrl.measuring.store(true, Relaxed);
        }
        ctrl.start.wait();
        let failed = ctrl.failed.lock().unwrap().clone();
        let mut window = Window::default();
        let mut series = Vec::new();
        let mut interrupted = false;
        // fio's ss: the first job that asks judges the whole phase.
        let mut steady = specs
            .iter()
            .find_map(|s| s.steady_state)
            .map(crate::steady::SsTracker::new);
        if failed.is_none() {
            let t_start = Instant::now();
            if ramp_ns == 0 {
                window.begin(&devices, &irq_prefix);
            }
            let mut finished = 0;
            let mut last_tick = (Instant::now(), [0u64; 4]);
            let mut last_second = (0.0f64, [0u64; 4]);
            let tick = Duration::from_millis(200);
            loop {
                match done_rx.recv_timeout(tick.min(Duration::from_millis(50))) {
                    Ok(()) => finished += 1,
                    Err(mpsc::RecvTimeoutError::Disconnected) => finished = threads,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                }
                let elapsed = t_start.elapsed();
                let el_ns = elapsed.as_nanos() as u64;
                if finished >= threads {
                    break;
                }
                if opts.interrupt.load(Relaxed) {
                    interrupted = true;
                    break;
                }
                if !window.started && el_ns >= ramp_ns {
                    path_c0 = snap_paths();
                    ctrl.measuring.store(true, Relaxed);
                    window.begin(&devices, &irq_prefix);
                    last_second = (elapsed.as_secs_f64(), sum(&counters));
                }
                if let Some(total) = total_ns {
                    if el_ns >= total {
                        break;
                    }
                }
                if window.started && elapsed.as_secs_f64() - last_second.0 >= 1.0 {
                    let now = sum(&counters);
                    let dt = elapsed.as_secs_f64() - last_second.0;
                    let p = point(
                        window.t0.unwrap().elapsed().as_secs_f64(),
                        &last_second.1,
                        &now,
                        dt,
                    );
                    series.push(p);
                    if let Some(t) = steady.as_mut() {
                        if t.push(
                            p.t_s,
                            p.read_iops + p.write_iops,
                            p.read_bytes_per_s + p.write_bytes_per_s,
                        ) {
                            break; // fio's ss: steady, stop here
                        }
                    }
                    last_second = (elapsed.as_secs_f64(), now);
                }
                if last_tick.0.elapsed() >= tick {
                    let now = sum(&counters);
                    let dt = last_tick.0.elapsed().as_secs_f64();
                    let p = point(0.0, &last_tick.1, &now, dt);
                    if let Some(cb) = opts.progress.as_mut() {
                        cb(&Progress::Running {
                            elapsed_s: elapsed.as_secs_f64(),
                            total_s: total_ns.filter(|_| time_based).map(|t| t as f64 / 1e9),
                            ramping: !window.started,
                            read_iops: p.read_iops,
                            write_iops: p.write_iops,
                            read_bytes_per_s: p.read_bytes_per_s,
                            write_bytes_per_s: p.write_bytes_per_s,
                        });
                    }
                    last_tick = (Instant::now(), now);
                }
            }
            if !window.started {
                // Stopped (or finished) inside the ramp: measure nothing rather
                // than report ramp figures as results.
                window.begin(&devices, &irq_prefix);
            }
            window.end(&devices, &irq_prefix);
        }
        let path_c1 = snap_paths();
        ctrl.stop.store(true, Relaxed);
        let mut jobs: Vec<JobResult> = specs
            .iter()
            .zip(opened)
            .map(|(spec, targets)| JobResult {
                spec: spec.clone(),
                threads: Vec::new(),
                targets: targets
                    .iter()
                    .map(|t| TargetInfo {
                        name: t.describe(),
                        kind: t.kind,
                        len: t.len,
                        device: t.device.as_ref().map(|d| d.name.clone()),
                        created: t.created,
                        layout_s: t.layout_s,
                    })
                    .collect(),
                path: None,
            })
            .collect();
        for (j, p) in paths.iter().enumerate() {
            if let Some(p) = p {
                jobs[j].path = Some(PathReport {
                    strategy: p.strategy(),
                    description: p.description(),
                    counters: path_c1[j].since(&path_c0[j]),
                    switches: p.switches(),
                });
            }
        }
        for (j, h) in handles {
            match h.join() {
                Ok(r) => jobs[j].threads.push(r),
                Err(_) => {
                    return Err(BenchError::Failed(format!(
                        "a worker of job {} panicked: this is a bug in hiops",
                        specs[j].name
                    )))
                }
            }
        }
        if let Some(f) = failed {
            return Err(BenchError::Failed(f));
        }
        Ok((
            jobs,
            window,
            series,
            interrupted,
            steady.map(|t| t.outcome()),
        ))
    });
    let (jobs, window, series, interrupted, steady) = outcome?;
    let mut notes = Vec::new();
    for spec in specs {
        if spec.path.is_none() && spec.engine.is_synchronous() && spec.iodepth > 1 {
            notes.push(format!(
                "job {}: {} is synchronous, so each thread keeps one I/O in flight (iodepth={} has no effect); raise --numjobs for concurrency",
                spec.name, spec.engine, spec.iodepth
            ));
        }
    }
    Ok(RunResult {
        jobs,
        window_ns: window.window_ns,
        process_cpu: window.process,
        machine_cpu: window.machine,
        devices: window.devices,
        tsc_hz,
        series,
        interrupted,
        steady,
        started_unix_s,
        notes,
        cpus_online: online_cpus(),
    })
}

fn sum(counters: &[Counters]) -> [u64; 4] {
    let mut s = [0u64; 4];
    for c in counters {
        s[0] += c.ios[0].load(Relaxed);
        s[1] += c.ios[1].load(Relaxed);
        s[2] += c.bytes[0].load(Relaxed);
        s[3] += c.bytes[1].load(Relaxed);
    }
    s
}

fn point(t_s: f64, a: &[u64; 4], b: &[u64; 4], dt: f64) -> SeriesPoint {
    let r = |i: usize| b[i].saturating_sub(a[i]) as f64 / dt.max(1e-9);
    SeriesPoint {
        t_s,
        read_iops: r(0),
        write_iops: r(1),
        read_bytes_per_s: r(2),
        write_bytes_per_s: r(3),
    }
}

/// System counters at the start and end of the measured window.
#[derive(Default)]
struct Window {
    started: bool,
    t0: Option<Instant>,
    window_ns: u64,
    p0: ProcessSample,
    m0: Option<MachineSample>,
    d0: Vec<(String, Option<DiskStats>)>,
    i0: Vec<Option<(u64, Vec<String>)>>,
    process: ProcessSample,
    machine: Option<MachineSample>,
    devices: Vec<DeviceWindow>,
}

impl Window {
    fn begin(&mut self, devices: &[String], irq: &[(String, Option<String>)]) {
        self.started = true;
        self.d0 = devices
            .iter()
            .map(|d| (d.clone(), DiskStats::read(d)))
            .collect();
        self.i0 = devices.iter().map(|d| irq_of(d, irq)).collect();
        self.m0 = MachineSample::read();
        self.p0 = ProcessSample::process();
        self.t0 = Some(Instant::now());
    }

    fn end(&mut self, devices: &[String], irq: &[(String, Option<String>)]) {
        self.window_ns = self.t0.map(|t| t.elapsed().as_nanos() as u64).unwrap_or(0);
        self.process = ProcessSample::process().delta(&self.p0);
        self.machine = MachineSample::read().zip(self.m0).map(|(b, a)| b.delta(&a));
        self.devices = devices
            .iter()
            .zip(&self.d0)
            .zip(&self.i0)
            .filter_map(|((d, (_, s0)), i0)| {
                let stats = DiskStats::read(d)?.delta(s0.as_ref()?);
                let interrupts = irq_of(d, irq)
                    .zip(i0.clone())
                    .map(|((n1, names), (n0, _))| (n1.saturating_sub(n0), names));
                Some(DeviceWindow {
                    name: d.clone(),
                    stats,
                    interrupts,
                })
            })
            .collect();
    }
}

fn irq_of(device: &str, irq: &[(String, Option<String>)]) -> Option<(u64, Vec<String>)> {
    let prefix = irq.iter().find(|(d, _)| d == device)?.1.as_ref()?;
    read_interrupts(prefix)
}
