//! What every suite checks before it makes anything: each point's options
//! read as `hiops run` would, and the safety gate asked about each block
//! device a point writes.

use super::exit::usage;
use crate::sweep::SweepDef;
use crate::SuiteError;

/// Reads every point's options as `hiops run` would and asks the safety
/// gate about every block device a point writes, before anything is made:
/// a typo fails now, not at point 7, and a refusal writes nothing.
pub fn check_points<'a>(defs: impl IntoIterator<Item = &'a SweepDef>) -> Result<(), SuiteError> {
    for def in defs {
        for key in def.points().iter().filter(|k| k.round == 0) {
            let point = |e: String| usage(format!("point {}: {e}", def.label(&key.values)));
            let (args, _) = crate::irq::affinity::confine_flag(&def.args_for(key));
            let (args, _) = crate::irq::trace::flag(&args);
            let (args, _) =
                crate::irq::coalescing::point::flag(&args).map_err(|e| point(e.to_string()))?;
            let planned = hiops_run::Point::plan(&args).map_err(|e| point(e.to_string()))?;
            gate(planned.plan_ref())?;
        }
    }
    Ok(())
}

/// The safety gate (crates/safety) for every target a plan's jobs write
/// and every log they keep, and the room their files need.
fn gate(plan: &hiops_fio::FioPlan) -> Result<(), SuiteError> {
    use hiops_bench::safety::{check_write, Grants};
    hiops_bench::outputs::check(&plan.jobs)?;
    hiops_bench::target::check_room(&plan.jobs)?;
    for job in plan.jobs.iter().filter(|j| j.modifies() && !j.verify.only) {
        let hiops_bench::TargetSpec::Paths(paths) = &job.target.targets else {
            continue;
        };
        let grants = Grants::from_list(&job.target.allow_write_devices);
        for p in paths {
            check_write(p, &grants)?;
        }
    }
    Ok(())
}
