//! Command-line flags, in fio's names and meanings, and their translation into
//! a validated plan. Two sets of defaults: with no `--name` a flag changes the
//! embedded default job (4 KiB random reads, QD32, io_uring, direct, 10 s);
//! with `--name` (fio's command-line form) fio's own defaults apply (rw=read,
//! iodepth=1, psync, buffered, size-based).

use clap::{Args, Parser, Subcommand, ValueEnum};
use hiops_bench::units::{parse_duration_ns, parse_size};
use hiops_bench::{BenchError, BlockSizes, Distribution, JobSpec, RwMode, TargetSpec, VerifyMode};
use hiops_hal::{EngineKind, Feature};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "hiops",
    version,
    about = "Measure what flash devices and the platform really deliver.",
    long_about = "Measure what flash devices and the platform really deliver.\n\nWith no command, runs the default job: 4 KiB random reads at queue depth 32 with io_uring on a temporary 512 MiB file, for about 10 seconds."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a workload (fio's options; no options: the default job).
    Run(RunArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Normal,
    Json,
    #[value(name = "json+")]
    JsonPlus,
}

fn bool_flag(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("'{s}' is not a boolean: use 1 or 0")),
    }
}

fn feature(s: &str) -> Result<Feature, String> {
    match s {
        "auto" => Ok(Feature::Auto),
        "1" | "on" | "true" => Ok(Feature::On),
        "0" | "off" | "false" => Ok(Feature::Off),
        _ => Err(format!("'{s}' is not auto, 1 or 0")),
    }
}

#[derive(Args, Debug, Clone)]
#[command(
    about = "Run a workload. Options carry fio's names and meanings.",
    rename_all = "snake_case"
)]
pub struct RunArgs {
    /// Job name; giving it switches to fio's defaults (see `hiops run --help`).
    #[arg(long)]
    pub name: Option<String>,
    /// Files or block devices, ':'-separated or repeated. Missing files are created at --size.
    #[arg(long, short = 'f', value_delimiter = ':')]
    pub filename: Vec<PathBuf>,
    /// Directory for the job's file when --filename is not given.
    #[arg(long)]
    pub directory: Option<PathBuf>,
    /// Bytes of each target to use (k/m/g/t suffixes, 1024-based).
    #[arg(long, short = 's')]
    pub size: Option<String>,
    /// read, write, randread, randwrite, readwrite (rw), randrw.
    #[arg(long, visible_alias = "readwrite")]
    pub rw: Option<String>,
    /// Percentage of reads in a mixed workload.
    #[arg(long)]
    pub rwmixread: Option<u32>,
    /// Percentage of writes in a mixed workload.
    #[arg(long)]
    pub rwmixwrite: Option<u32>,
    /// Block size, or a split like 4k/80:64k/20.
    #[arg(long, short = 'b')]
    pub bs: Option<String>,
    /// Block-size split (fio's bssplit), e.g. 4k/80:64k/20.
    #[arg(long)]
    pub bssplit: Option<String>,
    /// psync (sync), pvsync2, libaio, io_uring, mem (RAM device), null.
    #[arg(long, short = 'e')]
    pub ioengine: Option<String>,
    /// Commands in flight per thread.
    #[arg(long, short = 'q')]
    pub iodepth: Option<u32>,
    /// Stage at most this many commands per submission (0: as many as fit; default 1, as fio).
    #[arg(long, visible_alias = "iodepth_batch")]
    pub iodepth_batch_submit: Option<u32>,
    /// Wait for at least this many completions per reap.
    #[arg(long)]
    pub iodepth_batch_complete_min: Option<u32>,
    /// Threads running the job.
    #[arg(long, short = 'j')]
    pub numjobs: Option<u32>,
    /// CPUs the job's threads may run on: 0-3,6.
    #[arg(long)]
    pub cpus_allowed: Option<String>,
    /// shared (every thread on all of cpus_allowed) or split (one CPU each).
    #[arg(long)]
    pub cpus_allowed_policy: Option<String>,
    /// O_DIRECT (1) or the page cache (0).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub direct: Option<bool>,
    /// The opposite of --direct.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub buffered: Option<bool>,
    /// Measured time (10s, 500ms, 2m; a bare number is seconds).
    #[arg(long, short = 't')]
    pub runtime: Option<String>,
    /// Run for --runtime even when --size is done (loop over the target).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub time_based: Option<bool>,
    /// Warm-up time before measuring, excluded from results.
    #[arg(long)]
    pub ramp_time: Option<String>,
    /// random, zipf:THETA, pareto:H, zoned:ACCESS%/RANGE%:...
    #[arg(long)]
    pub random_distribution: Option<String>,
    /// Seed for offsets and data.
    #[arg(long)]
    pub randseed: Option<u64>,
    /// Same offsets every run (1, fio's default) or a fresh seed (0).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub randrepeat: Option<bool>,
    /// Target IOPS per thread; latency is measured from each I/O's intended time.
    #[arg(long)]
    pub rate_iops: Option<u64>,
    /// Stamp written blocks and check them on read-back: crc32c (or 1) / 0.
    #[arg(long, num_args = 0..=1, default_missing_value = "crc32c")]
    pub verify: Option<String>,
    /// Only read the target and check stamps a previous --verify run wrote.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub verify_only: Option<bool>,
    /// Polled completions: IOPOLL (io_uring) or RWF_HIPRI (pvsync2).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub hipri: Option<bool>,
    /// pvsync2: RWF_NOWAIT.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub nowait: Option<bool>,
    /// io_uring: registered buffers.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub fixedbufs: Option<bool>,
    /// io_uring: registered files.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub registerfiles: Option<bool>,
    /// io_uring: a kernel thread polls the submission queue.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub sqthread_poll: Option<bool>,
    /// io_uring: CPU of the submission-queue thread.
    #[arg(long)]
    pub sqthread_poll_cpu: Option<u32>,
    /// io_uring: SQ thread idle time before it sleeps (ms).
    #[arg(long, default_value_t = 1000)]
    pub sqthread_idle: u32,
    /// io_uring SINGLE_ISSUER+DEFER_TASKRUN: auto (where the kernel has it), 1, 0.
    #[arg(long, value_parser = feature)]
    pub defer_taskrun: Option<Feature>,
    /// io_uring COOP_TASKRUN: auto, 1, 0.
    #[arg(long, value_parser = feature)]
    pub coop_taskrun: Option<Feature>,
    /// Synchronous-thread mode: each of --numjobs threads does blocking I/O,
    /// one at a time, through this HIOPS path strategy: pread,
    /// completion-thread, per-thread-ring, coop, poll, hybrid. --iodepth is
    /// then the shared queue's depth (default: --numjobs).
    #[arg(long)]
    pub strategy: Option<String>,
    /// coop/poll/hybrid: how long a waiting thread spins before sleeping.
    #[arg(long, default_value = "0")]
    pub spin: String,
    /// poll/hybrid: time between two polls of the poll thread.
    #[arg(long, default_value = "16us")]
    pub poll_interval: String,
    /// poll: whether application threads peek and reap too (1) or leave it
    /// to the poll thread (0).
    #[arg(long, default_value = "1", value_parser = bool_flag)]
    pub coop_peeks: bool,
    /// Shared queues of the path; threads use the one of their CPU.
    #[arg(long, default_value_t = 1)]
    pub rings: u32,
    /// hybrid: poll while at least this many commands are in flight...
    #[arg(long, default_value_t = 16.0)]
    pub hybrid_depth: f64,
    /// ...and completions arrive at least this fast (IOPS).
    #[arg(long, default_value_t = 50_000.0)]
    pub hybrid_iops: f64,
    /// Remove files hiops created when done (default: only its temporary file).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub unlink: Option<bool>,
    /// Accepted for fio compatibility; hiops reports each job merged.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_parser = bool_flag)]
    pub group_reporting: Option<bool>,
    /// Write to this block device even though it looks in use (repeatable).
    #[arg(long = "allow-write-device", value_name = "DEVICE")]
    pub allow_write_device: Vec<PathBuf>,
    #[arg(long = "output-format", value_enum, default_value = "normal")]
    pub output_format: Format,
    /// Write the result here instead of stdout.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Never show the progress line.
    #[arg(long = "no-progress")]
    pub no_progress: bool,
}

pub struct Plan {
    pub jobs: Vec<JobSpec>,
    pub format: Format,
    /// A temporary directory hiops made for the default file (removed after).
    pub temp_dir: Option<PathBuf>,
}

fn usage<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Usage(msg.into()))
}

fn parse_cpus(text: &str) -> Result<Vec<usize>, BenchError> {
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let bad = || {
            BenchError::Usage(format!(
                "--cpus_allowed '{text}': write CPU numbers and ranges like 0-3,6"
            ))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().map_err(|_| bad())?),
        }
    }
    let online = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if let Some(&c) = cpus.iter().find(|&&c| c >= online) {
        return usage(format!(
            "--cpus_allowed names CPU {c}, but this machine has CPUs 0-{}",
            online - 1
        ));
    }
    if cpus.is_empty() {
        return usage("--cpus_allowed is empty");
    }
    Ok(cpus)
}

pub fn to_plan(a: &RunArgs) -> Result<Plan, BenchError> {
    let fio_mode = a.name.is_some();
    let engine = match &a.ioengine {
        Some(e) => EngineKind::parse(e).ok_or_else(|| {
            BenchError::Usage(format!(
                "unknown --ioengine '{e}': use one of psync, pvsync2, libaio, io_uring, mem, null"
            ))
        })?,
        None if fio_mode && a.strategy.is_none() => EngineKind::Psync,
        None => EngineKind::IoUring,
    };
    let mut temp_dir = None;
    let targets = if !a.filename.is_empty() {
        if !engine.needs_file() {
            return usage(format!("--ioengine={engine} uses its own RAM device: drop --filename, or pick a kernel engine to use the file"));
        }
        let dir = a.directory.clone().unwrap_or_default();
        TargetSpec::Paths(
            a.filename
                .iter()
                .map(|f| {
                    if f.is_absolute() {
                        f.clone()
                    } else {
                        dir.join(f)
                    }
                })
                .collect(),
        )
    } else if !engine.needs_file() {
        TargetSpec::Ram
    } else {
        let name = a.name.clone().unwrap_or_else(|| "hiops".into());
        let dir = match &a.directory {
            Some(d) => d.clone(),
            None => {
                let d = std::env::temp_dir().join(format!("hiops-{}", std::process::id()));
                std::fs::create_dir_all(&d).map_err(|e| {
                    BenchError::Failed(format!(
                        "cannot create {}: {e}; set TMPDIR or --directory to a writable place",
                        d.display()
                    ))
                })?;
                temp_dir = Some(d.clone());
                d
            }
        };
        TargetSpec::Paths(vec![dir.join(format!("{name}.0.0"))])
    };
    let own_file = temp_dir.is_some();
    let mut spec = JobSpec::default_for(PathBuf::new());
    spec.targets = targets;
    spec.engine = engine;
    spec.name = a.name.clone().unwrap_or_else(|| "hiops-default".into());
    if fio_mode {
        // fio's defaults.
        spec.rw = RwMode::Read;
        spec.iodepth = 1;
        spec.direct = false;
        spec.time_based = false;
        spec.runtime_ns = None;
        spec.ramp_ns = 0;
        spec.size = None;
    }
    spec.unlink = a.unlink.unwrap_or(own_file);
    if spec.targets == TargetSpec::Ram || own_file {
        spec.size = Some(512 << 20);
    } else if !fio_mode {
        spec.size = None; // the existing file or device as it is
    }
    if let Some(s) = &a.size {
        let v = parse_size(s).map_err(BenchError::Usage)?;
        if v == 0 {
            return usage("--size must be above 0");
        }
        spec.size = Some(v);
    }
    if let Some(rw) = &a.rw {
        let (mode, _gap) = rw.split_once(':').unwrap_or((rw, ""));
        spec.rw = RwMode::parse(mode)
            .ok_or_else(|| BenchError::Usage(format!("unknown --rw '{rw}': use read, write, randread, randwrite, readwrite (rw) or randrw")))?;
    }
    match (a.rwmixread, a.rwmixwrite) {
        (Some(r), _) if r > 100 => return usage("--rwmixread is a percentage: 0 to 100"),
        (_, Some(w)) if w > 100 => return usage("--rwmixwrite is a percentage: 0 to 100"),
        (Some(r), Some(w)) if r + w != 100 => {
            return usage("--rwmixread and --rwmixwrite must add up to 100")
        }
        (Some(r), _) => spec.rwmixread = r,
        (None, Some(w)) => spec.rwmixread = 100 - w,
        (None, None) => {}
    }
    if let Some(bs) = a.bssplit.as_ref().or(a.bs.as_ref()) {
        spec.bs = BlockSizes::parse(bs).map_err(BenchError::Usage)?;
    }
    if let Some(q) = a.iodepth {
        if q == 0 {
            return usage("--iodepth must be at least 1");
        }
        if q > 65536 {
            return usage("--iodepth above 65536 is more than any device queue: lower it");
        }
        spec.iodepth = q;
    }
    spec.iodepth_batch_submit = a.iodepth_batch_submit.unwrap_or(1);
    spec.iodepth_batch_complete_min = a.iodepth_batch_complete_min.unwrap_or(1).max(1);
    if let Some(n) = a.numjobs {
        if n == 0 {
            return usage("--numjobs must be at least 1");
        }
        spec.numjobs = n;
    }
    if let Some(c) = &a.cpus_allowed {
        spec.cpus_allowed = Some(parse_cpus(c)?);
    }
    match a.cpus_allowed_policy.as_deref() {
        None | Some("shared") => {}
        Some("split") => spec.cpus_split = true,
        Some(p) => {
            return usage(format!(
                "unknown --cpus_allowed_policy '{p}': use shared or split"
            ))
        }
    }
    match (a.direct, a.buffered) {
        (Some(d), Some(b)) if d == b => {
            return usage("--direct and --buffered contradict each other: give one")
        }
        (Some(d), _) => spec.direct = d,
        (None, Some(b)) => spec.direct = !b,
        (None, None) => {}
    }
    if let Some(r) = &a.runtime {
        let ns = parse_duration_ns(r).map_err(BenchError::Usage)?;
        if ns == 0 {
            return usage("--runtime must be above 0");
        }
        spec.runtime_ns = Some(ns);
    }
    if let Some(t) = a.time_based {
        spec.time_based = t;
    }
    if spec.time_based && spec.runtime_ns.is_none() {
        return usage("--time_based needs --runtime (how long to run)");
    }
    if let Some(r) = &a.ramp_time {
        spec.ramp_ns = parse_duration_ns(r).map_err(BenchError::Usage)?;
    }
    if let Some(d) = &a.random_distribution {
        spec.distribution = Distribution::parse(d).map_err(BenchError::Usage)?;
    }
    if let Some(s) = a.randseed {
        spec.randseed = s;
    }
    if a.randrepeat == Some(false) {
        spec.randseed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
    }
    spec.rate_iops = a.rate_iops;
    if a.rate_iops == Some(0) {
        return usage("--rate_iops must be above 0");
    }
    spec.verify = match a.verify.as_deref() {
        None | Some("0") | Some("none") => VerifyMode::Off,
        Some("1") | Some("crc32c") | Some("crc32c-intel") | Some("meta") => VerifyMode::Crc32c,
        Some(v) => {
            return usage(format!(
                "--verify={v} is not supported: use --verify=crc32c"
            ))
        }
    };
    spec.verify_only = a.verify_only.unwrap_or(false);
    if spec.verify_only {
        spec.verify = VerifyMode::Crc32c;
        spec.time_based = false;
        spec.ramp_ns = 0;
        spec.runtime_ns = None;
        if own_file {
            return usage("--verify_only checks a target written before: give its --filename");
        }
    }
    let o = &mut spec.engine_opts;
    let hipri = a.hipri.unwrap_or(false);
    match engine {
        EngineKind::IoUring => o.iopoll = hipri,
        EngineKind::Pvsync2 => o.hipri = hipri,
        _ if hipri => {
            return usage(format!(
                "--hipri works with io_uring or pvsync2, not {engine}"
            ))
        }
        _ => {}
    }
    let uring_only = [
        ("--fixedbufs", a.fixedbufs == Some(true)),
        ("--registerfiles", a.registerfiles == Some(true)),
        ("--sqthread_poll", a.sqthread_poll == Some(true)),
        ("--defer_taskrun", a.defer_taskrun.is_some()),
        ("--coop_taskrun", a.coop_taskrun.is_some()),
    ];
    if engine != EngineKind::IoUring {
        if let Some((flag, _)) = uring_only.iter().find(|(_, set)| *set) {
            return usage(format!(
                "{flag} is an io_uring option: add --ioengine=io_uring or drop it"
            ));
        }
    }
    if a.nowait == Some(true) && engine != EngineKind::Pvsync2 {
        return usage("--nowait is a pvsync2 option: add --ioengine=pvsync2 or drop it");
    }
    o.nowait = a.nowait.unwrap_or(false);
    o.fixedbufs = a.fixedbufs.unwrap_or(false);
    o.registerfiles = a.registerfiles.unwrap_or(false);
    o.sqpoll = a.sqthread_poll.unwrap_or(false);
    o.sqpoll_cpu = a.sqthread_poll_cpu;
    o.sqpoll_idle_ms = a.sqthread_idle;
    o.defer_taskrun = a.defer_taskrun.unwrap_or_default();
    o.coop_taskrun = a.coop_taskrun.unwrap_or_default();
    if o.iopoll && !spec.direct {
        return usage("--hipri (IOPOLL) needs --direct=1");
    }
    spec.allow_write_devices = a.allow_write_device.clone();
    if let Some(name) = &a.strategy {
        let strategy = hiops_path::Strategy::parse(name).ok_or_else(|| {
            BenchError::Usage(format!(
                "unknown --strategy '{name}': use one of pread, completion-thread, per-thread-ring, coop, poll, hybrid"
            ))
        })?;
        if a.rings == 0 {
            return usage("--rings must be at least 1");
        }
        if a.iodepth.is_none() {
            spec.iodepth = spec.numjobs.clamp(1, 4096);
        }
        spec.path = Some(hiops_bench::PathSpec {
            strategy,
            spin_ns: parse_duration_ns(&a.spin).map_err(BenchError::Usage)?,
            poll_interval_ns: parse_duration_ns(&a.poll_interval)
                .map_err(BenchError::Usage)?
                .max(1_000),
            coop_peeks: a.coop_peeks,
            rings: a.rings,
            hybrid: hiops_path::HybridConfig {
                poll_min_depth: a.hybrid_depth,
                poll_min_iops: a.hybrid_iops,
                ..hiops_path::HybridConfig::default()
            },
        });
    }
    if !spec.time_based
        && spec.size.is_none()
        && spec.runtime_ns.is_none()
        && matches!(spec.targets, TargetSpec::Ram)
    {
        return usage("give --size or --runtime");
    }
    Ok(Plan {
        jobs: vec![spec],
        format: a.output_format,
        temp_dir,
    })
}
