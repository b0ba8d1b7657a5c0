//! `hiops sweep`: one workload across a grid of `hiops run` options, into
//! a resumable directory with a report.

use super::values::rounds;
use super::{check_dir, check_points, run_sweep, usage, Console, Ended};
use crate::suite_info::SuiteInfo;
use crate::sweep::{Param, SweepDef, SweepDir};
use crate::SuiteError;
use std::path::PathBuf;

/// What `hiops sweep` is asked.
#[derive(clap::Args, Debug, Clone)]
pub struct SweepOptions {
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
    /// `hiops run` options every point shares.
    #[arg(last = true, allow_hyphen_values = true)]
    pub options: Vec<String>,
}

/// The parameters, each a `hiops run` option.
fn params(over: &[String]) -> Result<Vec<Param>, SuiteError> {
    let params = over
        .iter()
        .map(|p| Param::parse(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(SuiteError::bad_argument)?;
    for p in &params {
        if !matches!(
            hiops_fio::options::lookup(&p.name),
            hiops_fio::options::Lookup::Known(_)
        ) {
            return Err(usage(format!(
                "--over {}: '{}' is not a `hiops run` option (see hiops run --help)",
                p.name, p.name
            )));
        }
    }
    Ok(params)
}

/// Runs the sweep's remaining points and writes its report.
pub fn sweep(a: SweepOptions, console: &Console) -> Result<Ended, SuiteError> {
    check_dir("--dir", &a.dir)?;
    let params = params(&a.over)?;
    let title = a.title.clone().unwrap_or_else(|| {
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        format!("Sweep of {}", names.join(" × "))
    });
    let def = SweepDef {
        title,
        base: a.options.clone(),
        params,
        rounds: a.rounds,
    };
    // Check the options once before any point runs: a typo fails now, not
    // at point 7.
    check_points([&def])?;
    let mut dir = SweepDir::open(&a.dir, def, a.restart)?;
    SuiteInfo {
        kind: crate::suite_info::SuiteKind::Sweep,
        title: dir.def.title.clone(),
        command: console.command.clone(),
        about: vec![crate::report::machine_about()],
        extra: serde_json::Value::Null,
        platform: crate::report::platform_of(
            a.options
                .iter()
                .filter_map(|o| o.strip_prefix("--filename=")),
        ),
    }
    .save(&a.dir)?;
    let outcome = run_sweep(&mut dir, console)?;
    let html = crate::report::write_report(&a.dir)?;
    eprintln!(
        "{}: {} of {} points measured; report: {}",
        console.who,
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
