//! `hiops sweep`, `experiment`, `iozone`, `characterize`, `report` and
//! `compare`: their options, read into hiops-suite's (whose commands run
//! them).

use super::fields::options_from;
use crate::signals;
use clap::Args;
use hiops_bench::BenchError;
use hiops_suite::commands::{self, Console};
use std::path::PathBuf;

pub use hiops_suite::commands::Ended;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Example:\n  hiops sweep --dir qd --over iodepth=1,2,4,8,16,32,64 --over ioengine=io_uring,libaio -- --filename=/var/tmp/f --size=1g --runtime=5\n\nThe options after -- are `hiops run`'s (fio's names); none gives the default job. Interrupt with Ctrl-C and run the same command again to continue."
)]
pub struct SweepArgs {
    /// Where the points, raw results and report go (resumed if it holds
    /// the same sweep).
    #[arg(long)]
    pub dir: PathBuf,
    /// A parameter and its values, NAME=V1,V2,... (a `hiops run` option);
    /// repeat for a grid. The first is the plots' x axis.
    #[arg(long = "over", required = true, value_name = "NAME=VALUES")]
    pub over: Vec<String>,
    /// Rounds over the whole grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = rounds)]
    pub rounds: u32,
    /// Discard the points a different sweep left in --dir.
    #[arg(long)]
    pub restart: bool,
    /// The report's title.
    #[arg(long)]
    pub title: Option<String>,
    /// Never show the progress line.
    #[arg(long)]
    pub no_progress: bool,
    /// `hiops run` options every point shares.
    #[arg(last = true, allow_hyphen_values = true)]
    pub options: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// A directory made by hiops sweep, experiment, iozone, characterize, kv fig10 or kv cache-sweep.
    pub dir: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// A report directory, or a JSON result of `hiops run` or fio (each
    /// JSON file read up to 128 MiB).
    pub a: PathBuf,
    /// The same kind of thing to hold against A.
    pub b: PathBuf,
}

/// A suite's option value clap refuses (exit 2), with what to give.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ValueError {
    #[error("give 1 to {max} {what}")]
    OutOfRange { max: u32, what: &'static str },
    #[error("give a time above 0, e.g. 3 (seconds) or 500ms")]
    ZeroTime,
    #[error(transparent)]
    Duration(#[from] hiops_bench::units::UnitError),
}

/// Most rounds a suite takes: more would run for days.
const MAX_ROUNDS: u32 = 1000;

/// `--rounds`: 1 to [`MAX_ROUNDS`] (clap refuses others with exit 2).
/// Every command's --rounds takes it.
pub(crate) fn rounds(v: &str) -> Result<u32, ValueError> {
    count(v, MAX_ROUNDS, "rounds")
}

/// `--threads`: 1 to the threads one phase may start.
fn threads(v: &str) -> Result<u32, ValueError> {
    count(v, hiops_bench::MAX_THREADS as u32, "threads")
}

fn count(v: &str, max: u32, what: &'static str) -> Result<u32, ValueError> {
    match v.parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(ValueError::OutOfRange { max, what }),
    }
}

/// `--runtime` of a suite's points: a time above 0 (fio's runtime=0 would
/// leave a time-based point without an end).
fn runtime(v: &str) -> Result<String, ValueError> {
    match hiops_bench::units::parse_duration_ns(v)? {
        0 => Err(ValueError::ZeroTime),
        _ => Ok(v.to_string()),
    }
}

fn command_line() -> String {
    std::env::args()
        .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs a suite command with the progress line (unless `no_progress`) and
/// Ctrl-C stopping it, its points kept.
pub(crate) fn with_console<T>(
    who: &str,
    no_progress: bool,
    run: impl FnOnce(&Console) -> Result<T, BenchError>,
) -> anyhow::Result<T> {
    signals::install();
    let console = Console {
        who,
        command: command_line(),
        interrupt: signals::flag(),
        progress: !no_progress,
    };
    Ok(run(&console)?)
}

pub fn sweep(a: SweepArgs) -> anyhow::Result<Ended> {
    let opts = options_from!(a => commands::sweep::SweepOptions {
        dir, over, rounds, restart, title, options
    });
    with_console("hiops sweep", a.no_progress, |c| {
        commands::sweep::sweep(opts, c)
    })
}

pub fn report(a: ReportArgs) -> anyhow::Result<Ended> {
    let html = commands::report::redraw(&a.dir)?;
    hiops_run::stdout::print(&format!("{}\n", html.display()))?;
    Ok(Ended::Done)
}

pub fn compare(a: CompareArgs) -> anyhow::Result<Ended> {
    hiops_run::stdout::print(&commands::report::compare(&a.a, &a.b)?)?;
    Ok(Ended::Done)
}

#[derive(clap::Subcommand, Debug, Clone)]
pub enum ExperimentCommand {
    /// The HIOPS paper's experiments: block size (Fig 7), threads, hand-off
    /// delay (Fig 8), poll interval (Fig 9) and devices (Fig 1), per
    /// strategy, with plots and each strategy judged against pread.
    Hiops(HiopsArgs),
}

#[derive(Args, Debug, Clone)]
pub struct HiopsArgs {
    /// Where the sweeps and the report go (resumed if interrupted).
    #[arg(long, default_value = "hiops-experiment-hiops")]
    pub dir: PathBuf,
    /// A target, LABEL=PATH or PATH (repeat for several). Default: a file
    /// `disk.dat` in --dir, on the disk that holds it.
    #[arg(long = "target", value_name = "[LABEL=]PATH")]
    pub targets: Vec<String>,
    /// Add a fresh zram device (root): the platform's cost without a device.
    #[arg(long)]
    pub zram: bool,
    /// Add a loop device over a tmpfs file (root).
    #[arg(long = "loop")]
    pub loop_dev: bool,
    /// Size of each target's region (a created file has this size).
    #[arg(long, default_value = "1g")]
    pub size: String,
    /// Measured time per point, after the ramp.
    #[arg(long, default_value = "3", value_parser = runtime)]
    pub runtime: String,
    #[arg(long, default_value = "1")]
    pub ramp: String,
    /// Rounds over each grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = rounds)]
    pub rounds: u32,
    /// A small grid that runs every part in about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Discard the points of sweeps whose definition changed (the others
    /// resume).
    #[arg(long)]
    pub restart: bool,
    #[arg(long)]
    pub no_progress: bool,
}

pub fn experiment(cmd: ExperimentCommand) -> anyhow::Result<Ended> {
    let ExperimentCommand::Hiops(a) = cmd;
    let opts = options_from!(a => commands::hiops::HiopsOptions {
        dir, targets, zram, loop_dev, size, runtime, ramp, rounds, quick, restart
    });
    with_console("hiops experiment", a.no_progress, |c| {
        commands::hiops::experiment_hiops(opts, c)
    })
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Targets: a directory (hiops makes its own file there, removed at the end), a file, or a block device, each as PATH or LABEL=PATH. Existing files and devices are only read unless --allow-write.\n\nPrices (Tables VI and VII): --prices FILE.toml, a [[device]] per target; or --price LABEL=USD and --capacity LABEL=SIZE. Without a price, the tables' rows say what to give.\n  [[device]]\n  label = \"disk\"                     # the target's label\n  price = 89.0                       # USD: Table VI, price per measured MB/s and IOPS at the smallest size\n  capacity = \"1t\"                    # optional: $ per GB (k/m/g/t are powers of 1024)\n  advertised_seq_read_mbps = 550     # optional, from the data sheet: Table VII\n  advertised_seq_write_mbps = 520\n  advertised_rand_read_iops = 90000\n  advertised_rand_write_iops = 80000\n\nThe study (--study): buffered on each target's file system, random reads each block once a pass, the file's cache dropped as each test starts, a page cache capped under the file with a cgroup v2 memory.max where RAM is larger (as root), 5 runs a point (mean ± standard deviation), and 4 KiB random reads at queue depth 1 and 32 beside the grid.\n\nExample:\n  hiops iozone ssd=/mnt/ssd hdd=/mnt/hdd --prices prices.toml"
)]
pub struct IozoneArgs {
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
    #[arg(long)]
    pub no_progress: bool,
}

pub fn iozone(a: IozoneArgs) -> anyhow::Result<Ended> {
    let opts = options_from!(a => commands::iozone::IozoneOptions {
        targets, dir, sizes, threads, size, runtime, ramp, buffered, study, allow_write,
        allow_write_devices, precondition, prices, capacities, devices, rounds, restart
    });
    with_console("hiops iozone", a.no_progress, |c| {
        commands::iozone::iozone(opts, c)
    })
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Targets: a directory (hiops makes its own file there, removed at the end), a file, or a block device, each as PATH or LABEL=PATH. Everything is read only: no target is ever written (a file made in a directory is laid out once).\n\nExample:\n  hiops characterize disk=/var/tmp zram=/dev/zram0 --dir report/\n\nWith two or more targets it also measures the cores x devices grid (ADMS'10 Fig 10): each device its own job, devices 1..N by CPUs allowed 1..M, each point against linear (the 1 device, 1 CPU point's IOPS x min(devices, CPUs)). As root, a point with a CPU set moves its devices' interrupts to those CPUs and puts them back after; where it cannot, the report says why."
)]
pub struct CharacterizeArgs {
    /// Targets, [LABEL=]PATH. Default: the --dir directory (a file there).
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    #[arg(long, default_value = "hiops-characterize")]
    pub dir: PathBuf,
    /// Region of each target (the file made in a directory has this size).
    #[arg(long, default_value = "1g")]
    pub size: String,
    #[arg(long, default_value = "3", value_parser = runtime)]
    pub runtime: String,
    #[arg(long, default_value = "1")]
    pub ramp: String,
    /// A small grid that runs every part quickly (one round unless
    /// --rounds says otherwise).
    #[arg(long)]
    pub quick: bool,
    /// Rounds of every point, alternating: medians are reported and the
    /// charts draw the lowest and highest round as error bars. Default 3
    /// (1 with --quick).
    #[arg(long, value_parser = rounds)]
    pub rounds: Option<u32>,
    /// Discard the points of sweeps whose definition changed (the others
    /// resume).
    #[arg(long)]
    pub restart: bool,
    #[arg(long)]
    pub no_progress: bool,
    /// Do not sample the CPUs for clocks by layer (the engine and path
    /// points are profiled by default; without root they say why not).
    #[arg(long)]
    pub no_profile: bool,
    /// Skip Table 1 (a loop device with an ext4 file system hiops sets up
    /// in --dir: direct/buffered x block/file on it; root only).
    #[arg(long)]
    pub no_table1: bool,
    /// Measure only the cores x devices grid (ADMS'10 Fig 10: devices
    /// 1..N, a job each, by CPUs allowed 1..M, against linear); it needs
    /// two or more targets, and is part of the full run whenever there
    /// are.
    #[arg(long)]
    pub grid_only: bool,
    /// Make N zram devices of --size for the cores x devices grid (root):
    /// alike devices, so the grid's points are read against linear. The
    /// targets keep their own sweeps; the devices are removed at the end.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub zram: usize,
    /// Make N loop devices, each over a file of --size in /dev/shm, for
    /// the grid instead (root).
    #[arg(long = "loop", value_name = "N", default_value_t = 0)]
    pub loop_devices: usize,
}

/// Rounds of every point: 3 by default, 1 with --quick.
pub fn characterize(a: CharacterizeArgs) -> anyhow::Result<Ended> {
    let opts = options_from!(a => commands::characterize::CharacterizeOptions {
        targets, dir, size, runtime, ramp, quick, rounds, restart, grid_only, zram, loop_devices
    } with { profile: !a.no_profile, table1: !a.no_table1 });
    with_console("hiops characterize", a.no_progress, |c| {
        commands::characterize::characterize(opts, c)
    })
}
