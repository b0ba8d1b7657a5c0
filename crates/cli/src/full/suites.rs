//! `hiops sweep`, `experiment`, `iozone`, `characterize`, `report` and
//! `compare`: their options, read into hiops-suite's (whose commands run
//! them).

use clap::Args;
use hiops_suite::commands::{self, Console};
use hiops_suite::SuiteError;
use std::path::PathBuf;

pub use hiops_suite::commands::Ended;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Example:\n  hiops sweep --dir qd --over iodepth=1,2,4,8,16,32,64 --over ioengine=io_uring,libaio -- --filename=/var/tmp/f --size=1g --runtime=5\n\nThe options after -- are `hiops run`'s (fio's names); none gives the default job. Interrupt with Ctrl-C and run the same command again to continue."
)]
pub struct SweepArgs {
    #[command(flatten)]
    pub options: commands::sweep::SweepOptions,
    /// Never show the progress line.
    #[arg(long)]
    pub no_progress: bool,
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
    run: impl FnOnce(&Console) -> Result<T, SuiteError>,
) -> anyhow::Result<T> {
    let console = Console {
        who,
        command: command_line(),
        interrupt: hiops_run::progress::arm_signals(),
        progress: !no_progress,
    };
    Ok(run(&console)?)
}

pub fn sweep(a: SweepArgs) -> anyhow::Result<Ended> {
    let opts = a.options;
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
    #[command(flatten)]
    pub options: commands::hiops::HiopsOptions,
    /// Never show the progress line.
    #[arg(long)]
    pub no_progress: bool,
}

pub fn experiment(cmd: ExperimentCommand) -> anyhow::Result<Ended> {
    let ExperimentCommand::Hiops(a) = cmd;
    let opts = a.options;
    with_console("hiops experiment", a.no_progress, |c| {
        commands::hiops::experiment_hiops(opts, c)
    })
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Targets: a directory (hiops makes its own file there, removed at the end), a file, or a block device, each as PATH or LABEL=PATH. Existing files and devices are only read unless --allow-write.\n\nPrices (Tables VI and VII): --prices FILE.toml, a [[device]] per target; or --price LABEL=USD and --capacity LABEL=SIZE. Without a price, the tables' rows say what to give.\n  [[device]]\n  label = \"disk\"                     # the target's label\n  price = 89.0                       # USD: Table VI, price per measured MB/s and IOPS at the smallest size\n  capacity = \"1t\"                    # optional: $ per GB (k/m/g/t are powers of 1024)\n  advertised_seq_read_mbps = 550     # optional, from the data sheet: Table VII\n  advertised_seq_write_mbps = 520\n  advertised_rand_read_iops = 90000\n  advertised_rand_write_iops = 80000\n\nThe study (--study): buffered on each target's file system, random reads each block once a pass, the file's cache dropped as each test starts, a page cache capped under the file with a cgroup v2 memory.max where RAM is larger (as root), 5 runs a point (mean ± standard deviation), and 4 KiB random reads at queue depth 1 and 32 beside the grid.\n\nExample:\n  hiops iozone ssd=/mnt/ssd hdd=/mnt/hdd --prices prices.toml"
)]
pub struct IozoneArgs {
    #[command(flatten)]
    pub options: commands::iozone::IozoneOptions,
    /// Never show the progress line.
    #[arg(long)]
    pub no_progress: bool,
}

pub fn iozone(a: IozoneArgs) -> anyhow::Result<Ended> {
    let opts = a.options;
    with_console("hiops iozone", a.no_progress, |c| {
        commands::iozone::iozone(opts, c)
    })
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Targets: a directory (hiops makes its own file there, removed at the end), a file, or a block device, each as PATH or LABEL=PATH. Everything is read only: no target is ever written (a file made in a directory is laid out once).\n\nExample:\n  hiops characterize disk=/var/tmp zram=/dev/zram0 --dir report/\n\nWith two or more targets it also measures the cores x devices grid (ADMS'10 Fig 10): each device its own job, devices 1..N by CPUs allowed 1..M, each point against linear (the 1 device, 1 CPU point's IOPS x min(devices, CPUs)). As root, a point with a CPU set moves its devices' interrupts to those CPUs and puts them back after; where it cannot, the report says why."
)]
pub struct CharacterizeArgs {
    #[command(flatten)]
    pub options: commands::characterize::CharacterizeOptions,
    /// Never show the progress line.
    #[arg(long)]
    pub no_progress: bool,
}

/// Rounds of every point: 3 by default, 1 with --quick.
pub fn characterize(a: CharacterizeArgs) -> anyhow::Result<Ended> {
    let opts = a.options;
    with_console("hiops characterize", a.no_progress, |c| {
        commands::characterize::characterize(opts, c)
    })
}
