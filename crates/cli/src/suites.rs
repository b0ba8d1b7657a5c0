//! `hiops sweep`, `hiops report`, `hiops compare`: thin commands over
//! hiops-suite.

use crate::progress::{stderr_is_terminal, ProgressLine};
use crate::signals;
use clap::Args;
use hiops_suite::sweep::{Outcome, Param, SweepDef, SweepDir, SweepProgress};
use hiops_suite::{BenchRunner, SuiteInfo};
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Example:\n  hiops sweep --dir out/qd --over iodepth=1,2,4,8,16,32,64 --over ioengine=io_uring,libaio -- --filename=/var/tmp/f --size=1g --runtime=5\n\nThe options after -- are `hiops run`'s (fio's names); none gives the default job. Interrupt with Ctrl-C and run the same command again to continue."
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
    #[arg(long, default_value_t = 1)]
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
    /// A directory made by hiops sweep, experiment, iozone, characterize or kv fig10.
    pub dir: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// A report directory, or a JSON result of `hiops run` or fio.
    pub a: PathBuf,
    /// The same kind of thing to hold against A.
    pub b: PathBuf,
}

/// What a command ended with, for the exit code.
pub enum Ended {
    Done,
    Interrupted,
}

pub fn command_line() -> String {
    std::env::args()
        .map(|a| if a.contains(' ') { format!("'{a}'") } else { a })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn sweep(a: SweepArgs) -> Result<Ended, String> {
    let params = a
        .over
        .iter()
        .map(|p| Param::parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    for p in &params {
        if !matches!(
            hiops_fio::options::lookup(&p.name),
            hiops_fio::options::Lookup::Known(_)
        ) {
            return Err(format!(
                "--over {}: '{}' is not a `hiops run` option (see hiops run --help)",
                p.name, p.name
            ));
        }
    }
    // Check the options once before any point runs: a typo fails now, not
    // at point 7.
    let def = SweepDef {
        title: a.title.clone().unwrap_or_else(|| {
            format!(
                "Sweep of {}",
                params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" × ")
            )
        }),
        base: a.options.clone(),
        params,
        rounds: a.rounds.max(1),
    };
    for key in def.points().iter().filter(|k| k.round == 0) {
        hiops_fio::plan_args(&def.args_for(key), false)
            .map_err(|e| format!("point {}: {e}", def.label(&key.values)))?;
    }
    let mut dir = SweepDir::open(&a.dir, def, a.restart)?;
    SuiteInfo {
        kind: "sweep".into(),
        title: dir.def.title.clone(),
        command: command_line(),
        about: vec![hiops_suite::machine_about()],
        extra: serde_json::Value::Null,
    }
    .save(&a.dir)?;
    let outcome = run_sweep(&mut dir, !a.no_progress, "hiops sweep")?;
    let html = hiops_suite::write_report(&a.dir)?;
    eprintln!(
        "hiops sweep: {} of {} points measured; report: {}",
        outcome.kept + outcome.ran,
        outcome.total,
        html.display()
    );
    Ok(if outcome.interrupted {
        Ended::Interrupted
    } else {
        Ended::Done
    })
}

/// Runs a sweep's remaining points with a line per point on stderr and the
/// live run line on a terminal.
pub fn run_sweep(dir: &mut SweepDir, progress: bool, who: &str) -> Result<Outcome, String> {
    signals::install();
    let mut bar = ProgressLine::new(progress && stderr_is_terminal());
    let mut on_run = |p: &hiops_bench::Progress| bar.update(p);
    let mut runner = BenchRunner {
        interrupt: signals::flag(),
        progress: Some(&mut on_run),
    };
    let total = dir.def.points().len();
    if dir.points.len() == total {
        eprintln!(
            "{who}: all {total} points of {} are measured already",
            dir.path.display()
        );
    } else if !dir.points.is_empty() {
        eprintln!(
            "{who}: resuming {}: {} of {total} points kept",
            dir.path.display(),
            dir.points.len()
        );
    }
    let outcome = dir.run(&mut runner, &mut |p: &SweepProgress| {
        let left = p
            .eta_s
            .map(|s| format!(", about {} left", duration(s)))
            .unwrap_or_default();
        eprintln!("{who}: point {}/{} {}{left}", p.done + 1, p.total, p.label);
    });
    if let Ok(o) = &outcome {
        if o.interrupted {
            eprintln!(
                "{who}: interrupted; {} points kept in {}: run the same command to continue",
                o.kept + o.ran,
                dir.path.display()
            );
        }
    }
    outcome
}

fn duration(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

pub fn report(a: ReportArgs) -> Result<Ended, String> {
    let html = hiops_suite::write_report(&a.dir)?;
    println!("{}", html.display());
    Ok(Ended::Done)
}

pub fn compare(a: CompareArgs) -> Result<Ended, String> {
    let ea = hiops_suite::compare::entries(&a.a)?;
    let eb = hiops_suite::compare::entries(&a.b)?;
    let t = hiops_suite::compare::compare(&ea, &eb)?;
    println!("A: {}\nB: {}\n", show(&a.a), show(&a.b));
    print!("{}", hiops_suite::compare::text(&t));
    Ok(Ended::Done)
}

fn show(p: &Path) -> String {
    p.display().to_string()
}
