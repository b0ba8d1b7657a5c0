//! `hiops iozone`: the IOZone grid (sequential MB/s, random IOPS, 4K..64K)
//! per target, with price-per-performance tables; optionally SNIA-style
//! preconditioning, or the IOZone study's buffered mode.

use super::targets::{remove_made, resolve_targets, Resolved};
use super::values::{rounds, runtime, threads};
use super::{check_dir, check_points, create_dir, run_suite, usage, Console, Ended, SuiteRun};
use crate::papers::iozone::{parse_devices, DeviceCost, IozoneTarget, Plan};
use crate::suite_info::SuiteInfo;
use crate::sweep::{RunFailure, Runner};
use crate::SuiteError;
use std::path::{Path, PathBuf};

/// What `hiops iozone` is asked.
#[derive(clap::Args, Debug, Clone)]
pub struct IozoneOptions {
    /// Targets, [LABEL=]PATH. Default: the --dir directory (a file there).
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    #[arg(long, default_value = "hiops-iozone")]
    pub dir: PathBuf,
    /// Request sizes.
    #[arg(long, default_value = "4k,8k,16k,32k,64k")]
    pub sizes: String,
    /// Threads of synchronous I/O (IOZone's single thread by default).
    #[arg(long, default_value_t = 1, value_parser = threads)]
    pub threads: u32,
    /// Region of each target (the file made in a directory has this size).
    #[arg(long, default_value = "1g")]
    pub size: String,
    #[arg(long, default_value = "5", value_parser = runtime)]
    pub runtime: String,
    #[arg(long, default_value = "1")]
    pub ramp: String,
    /// Go through the page cache instead of O_DIRECT (each test starts with
    /// the file's cached pages dropped, fio's invalidate).
    #[arg(long)]
    pub buffered: bool,
    /// The IOZone study's mode: buffered through each target's file system
    /// (directories or files, not devices), random reads each block once a
    /// pass, the cache dropped as each test starts and capped under the
    /// file where it can be, writes timed through their final fsync, 5
    /// rounds unless --rounds says otherwise, each figure the mean of the
    /// rounds with its standard deviation, and queue depth 1 against 32.
    #[arg(long)]
    pub study: bool,
    /// Let write tests run on existing files and devices named as targets
    /// (their data is overwritten). A device that carries a filesystem,
    /// partition table or RAID label also needs --allow-write-device; a
    /// mounted one is never written.
    #[arg(long)]
    pub allow_write: bool,
    /// A target device to write even though libblkid finds a signature on
    /// it (with --allow-write; repeatable; must be one of the targets).
    #[arg(long = "allow-write-device", value_name = "DEVICE")]
    pub allow_write_devices: Vec<PathBuf>,
    /// SNIA-style: fill each writable target twice first, run every test
    /// to steady state (up to --runtime, 60 s unless given). With --study:
    /// only the fill, as the study wrote its devices with dd first.
    #[arg(long)]
    pub precondition: bool,
    /// LABEL=PRICE (dollars) for the price tables.
    #[arg(long = "price", value_name = "LABEL=USD")]
    pub prices: Vec<String>,
    /// LABEL=SIZE for price per GB.
    #[arg(long = "capacity", value_name = "LABEL=SIZE")]
    pub capacities: Vec<String>,
    /// A TOML file of the targets' prices and data-sheet figures (see
    /// below; at most 1 MiB).
    #[arg(long = "prices", visible_alias = "devices", value_name = "FILE")]
    pub devices: Option<PathBuf>,
    /// Rounds of the whole grid (default 1; 5 with --study).
    #[arg(long, value_parser = rounds)]
    pub rounds: Option<u32>,
    /// Discard the points of sweeps whose definition changed (the others
    /// resume).
    #[arg(long)]
    pub restart: bool,
}

/// Runs the grid on every target and writes the report. Every option is
/// checked, and the safety gate asked, before `dir` or a file is made.
pub fn iozone(a: IozoneOptions, console: &Console) -> Result<Ended, SuiteError> {
    check_dir("--dir", &a.dir)?;
    let resolved = resolve_targets(&a.targets, &a.dir, "hiops-iozone")?;
    if a.study {
        on_file_systems(&resolved)?;
    }
    let (mut plan, runtime) = plan(&a, &resolved)?;
    check_points(plan.all_sweeps().iter().map(|(_, d)| d))?;
    create_dir(&a.dir)?;
    // Held until the runs end: the process leaves the cap's cgroup, and
    // the cgroup is removed, as it drops.
    let (_cap, page_cache) = match a.study {
        true => {
            let (cap, c) = crate::papers::iozone::cache::cap_for(plan.file_bytes);
            eprintln!("{}: {}", console.who, c.line());
            (cap, Some(c))
        }
        false => (None, None),
    };
    plan.page_cache = page_cache;
    info(&a, &plan, &runtime, &console.command).save(&a.dir)?;
    let targets = plan.targets.clone();
    let how = SuiteRun {
        restart: a.restart,
        keep_going: false,
    };
    let ended = run_suite(
        &a.dir,
        plan.all_sweeps(),
        how,
        console,
        |i, dir, console| {
            // The grids come first, a sweep per target; the queue-depth arms
            // after them read what the grids left.
            let Some(t) = targets.get(i) else {
                return Ok(());
            };
            let who = console.who;
            eprintln!("{who}: target {}: {} ({})", i + 1, t.label, t.path);
            if a.precondition && t.writes && dir.points.is_empty() {
                precondition(t, &a.size, console)?;
            }
            Ok(())
        },
    )?;
    remove_made(&resolved, &ended);
    Ok(ended)
}

/// The plan from the options, and the runtime per point.
fn plan(a: &IozoneOptions, resolved: &[Resolved]) -> Result<(Plan, String), SuiteError> {
    let allowed = devices_allowed(a, resolved)?;
    let targets: Vec<IozoneTarget> = resolved
        .iter()
        .zip(&allowed)
        .map(|(r, &device_allowed)| IozoneTarget {
            label: r.label.clone(),
            path: r.path.clone(),
            writes: r.made || a.allow_write,
            device_allowed,
        })
        .collect();
    let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
    let costs = costs(a, &labels)?;
    let runtime = if a.precondition && !a.study && a.runtime == "5" {
        "60".to_string()
    } else {
        a.runtime.clone()
    };
    let plan = Plan {
        targets,
        sizes: a.sizes.split(',').map(|s| s.trim().to_string()).collect(),
        threads: a.threads,
        base: base(a, &runtime),
        rounds: a.rounds.unwrap_or(if a.study { 5 } else { 1 }),
        costs,
        precondition: a.precondition,
        study: a.study,
        file_bytes: file_bytes(a)?,
        page_cache: None,
    };
    for s in &plan.sizes {
        match hiops_bench::units::parse_size(s) {
            Ok(0) => {
                return Err(usage(format!(
                    "--sizes: {s} is no block size: give sizes above 0, e.g. 4k,64k"
                )))
            }
            Ok(_) => {}
            Err(e) => return Err(usage(format!("--sizes: {e}"))),
        }
    }
    Ok((plan, runtime))
}

/// The region's bytes; 0 where fio's own forms (a share of a device)
/// leave it to the run, which the study, sizing its file against the page
/// cache, refuses.
fn file_bytes(a: &IozoneOptions) -> Result<u64, SuiteError> {
    match hiops_bench::units::parse_size(&a.size) {
        Ok(b) => Ok(b),
        Err(_) if !a.study => Ok(0),
        Err(e) => Err(usage(format!(
            "--size: {e}: the study sizes its file against the page cache, give it in bytes (e.g. 4g)"
        ))),
    }
}

/// The study ran on a file system: a device target is refused in its mode.
fn on_file_systems(targets: &[Resolved]) -> Result<(), SuiteError> {
    for t in targets {
        if t.block {
            return Err(usage(format!(
                "--study runs on a file system, as the IOZone study did: {} is a block device; give a directory or a file on its file system instead",
                t.path
            )));
        }
    }
    Ok(())
}

/// The options every IOZone point shares.
fn base(a: &IozoneOptions, runtime: &str) -> Vec<String> {
    let mut base = vec![
        format!("--size={}", a.size),
        format!("--runtime={runtime}"),
        format!("--ramp_time={}", a.ramp),
        "--time_based=1".into(),
        "--ioengine=psync".into(),
        "--iodepth=1".into(),
        format!("--direct={}", if a.buffered || a.study { 0 } else { 1 }),
    ];
    if a.study {
        // IOZone's -e: a write test's time includes flushing what it wrote.
        base.push("--end_fsync=1".into());
        // -U: the file's cached pages dropped as each test starts (fio's
        // invalidate, and again as each pass of the file starts).
        base.push("--invalidate=1".into());
        // Random reads without replacement: each block once a pass, so no
        // read is served again from the page cache (hiops' own default
        // draws with replacement).
        base.push("--norandommap=0".into());
    }
    if a.precondition && !a.study {
        base.push("--ss=iops:20%".into());
        base.push("--ss_dur=5".into());
    }
    base
}

fn info(a: &IozoneOptions, plan: &Plan, runtime: &str, command: &str) -> SuiteInfo {
    SuiteInfo {
        kind: crate::suite_info::SuiteKind::Iozone,
        title: "IOZone grid".into(),
        command: command.into(),
        about: vec![
            crate::report::machine_about(),
            format!(
                "Targets: {}. {} per point after a {} s ramp, {} of each target, {}.",
                plan.targets
                    .iter()
                    .map(|t| format!("{} ({})", t.label, t.path))
                    .collect::<Vec<_>>()
                    .join(", "),
                if a.precondition && !a.study {
                    format!("up to {runtime} s (steady state)")
                } else {
                    format!("{runtime} s")
                },
                a.ramp,
                a.size,
                match (a.study, a.buffered) {
                    (true, _) => "buffered as the IOZone study ran, writes through their fsync",
                    (false, true) => "buffered",
                    (false, false) => "O_DIRECT",
                }
            ),
        ],
        extra: serde_json::to_value(plan).expect("plans serialise"),
        platform: crate::report::platform_of(plan.targets.iter().map(|t| t.path.as_str())),
    }
}

/// Writes the whole region twice, sequentially, before write tests.
fn precondition(t: &IozoneTarget, size: &str, console: &Console) -> Result<(), SuiteError> {
    let who = console.who;
    eprintln!("{who}: preconditioning {}: writing {size} twice", t.label);
    let mut args = vec![
        "--name=precondition".to_string(),
        format!("--filename={}", t.path),
        format!("--size={size}"),
        "--rw=write".into(),
        "--bs=128k".into(),
        "--loops=2".into(),
        "--direct=1".into(),
        "--ioengine=io_uring".into(),
        "--iodepth=16".into(),
    ];
    if t.device_allowed {
        args.push(format!("--allow-write-device={}", t.path));
    }
    let started = std::time::Instant::now();
    let mut runner = crate::runner::BenchRunner {
        interrupt: console.interrupt,
        progress: None,
    };
    match runner.run(&args) {
        Ok(m) => {
            eprintln!(
                "{who}: preconditioned {} in {:.1} s ({:.0} MB/s)",
                t.label,
                started.elapsed().as_secs_f64(),
                m.metrics.bw_mbps.unwrap_or(0.0)
            );
            Ok(())
        }
        Err(RunFailure::Interrupted) => Err(SuiteError::PreconditionInterrupted),
        Err(RunFailure::Failed(why)) => Err(SuiteError::Precondition {
            label: t.label.clone(),
            why,
        }),
    }
}

/// Prices and capacities from `devices`, `prices` and `capacities`.
fn costs(a: &IozoneOptions, labels: &[&str]) -> Result<Vec<DeviceCost>, SuiteError> {
    let mut costs: Vec<DeviceCost> = match &a.devices {
        Some(f) => parse_devices(
            &hiops_bench::input::read_text(f, &crate::papers::iozone::MAX_DEVICES_FILE)
                .map_err(|e| SuiteError::from(e).bad_argument())?,
        )
        .map_err(SuiteError::bad_argument)?,
        None => Vec::new(),
    };
    for p in &a.prices {
        let (l, v) = p
            .split_once('=')
            .ok_or_else(|| usage(format!("--price {p}: give LABEL=USD")))?;
        let price: f64 = v
            .trim_start_matches('$')
            .parse()
            .map_err(|_| usage(format!("--price {p}: '{v}' is not a number")))?;
        match costs.iter_mut().find(|c| c.label == l) {
            Some(c) => c.price = price,
            None => costs.push(DeviceCost {
                label: l.into(),
                price,
                ..Default::default()
            }),
        }
    }
    capacities(a, &mut costs)?;
    if let Some(c) = costs.iter().find(|c| !labels.contains(&c.label.as_str())) {
        return Err(usage(format!(
            "a price is given for '{}' but no target has that label (targets: {})",
            c.label,
            labels.join(", ")
        )));
    }
    Ok(costs)
}

/// Each LABEL=SIZE capacity onto the price of that label.
fn capacities(a: &IozoneOptions, costs: &mut [DeviceCost]) -> Result<(), SuiteError> {
    for c in &a.capacities {
        let (l, v) = c
            .split_once('=')
            .ok_or_else(|| usage(format!("--capacity {c}: give LABEL=SIZE")))?;
        let bytes =
            hiops_bench::units::parse_size(v).map_err(|e| usage(format!("--capacity {c}: {e}")))?;
        let d = costs
            .iter_mut()
            .find(|d| d.label == l)
            .ok_or_else(|| usage(format!("--capacity {c}: no --price for '{l}'")))?;
        d.capacity = Some(bytes);
    }
    Ok(())
}

/// Which targets `allow_write_devices` names; each must be an existing
/// block device among the targets.
fn devices_allowed(a: &IozoneOptions, resolved: &[Resolved]) -> Result<Vec<bool>, SuiteError> {
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    let mut allowed = vec![false; resolved.len()];
    for dev in &a.allow_write_devices {
        hiops_bench::safety::check_grant(dev)
            .map_err(|e| usage(format!("--allow-write-device={}: {e}", dev.display())))?;
        let i = resolved
            .iter()
            .position(|r| r.block && real(Path::new(&r.path)) == real(dev))
            .ok_or_else(|| {
                usage(format!(
                    "--allow-write-device={} is not one of the targets: name a target device",
                    dev.display()
                ))
            })?;
        if !a.allow_write {
            return Err(usage(format!(
                "--allow-write-device={} needs --allow-write (which lets write tests run on existing targets)",
                dev.display()
            )));
        }
        allowed[i] = true;
    }
    Ok(allowed)
}
