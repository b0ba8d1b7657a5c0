//! The key-value store's experiments: the HIOPS paper's Fig 10, and the
//! data set against the RAM cache (`cache-sweep`). They build on `hiops
//! kv`'s own commands (serve, ycsb, check), which live beside the store
//! in hiops-kv-cmd.

pub mod cache_sweep;
mod cache_sweep_plan;
mod cache_sweep_runner;
pub mod fig10;
mod fig10_runner;
mod sample;

use crate::commands::failed as fail;
use crate::SuiteError;

/// The end of a kv suite: how many points it has and where its report is;
/// an interrupted one fails, saying how to go on.
fn suite_done(
    who: &str,
    outcome: &crate::sweep::Outcome,
    html: &std::path::Path,
) -> Result<(), SuiteError> {
    eprintln!(
        "{who}: {} of {} points; report: {}",
        outcome.kept + outcome.ran,
        outcome.total,
        html.display()
    );
    if outcome.interrupted {
        return Err(fail("interrupted: run the same command to continue"));
    }
    Ok(())
}
