//! hiops' exit codes, and the one place an error is given its code.
//!
//! 0 success, 1 the run failed (I/O error, setup failure), 2 a bad option
//! or combination, 3 refused to protect data, 4 verification found bad
//! blocks (or `hiops kv check` found damage), 130 interrupted by Ctrl-C
//! or SIGTERM.

use hiops_bench::{BenchError, ErrorClass};

pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_REFUSED: u8 = 3;
pub const EXIT_VERIFY: u8 = 4;
pub const EXIT_INTERRUPTED: u8 = hiops_os::signals::EXIT_INTERRUPTED;

/// The exit code of a run that ended (its error, if any, said on stderr).
pub fn of_run(status: hiops_run::RunStatus) -> u8 {
    use hiops_run::RunStatus;
    match status {
        RunStatus::Done => 0,
        RunStatus::Interrupted => EXIT_INTERRUPTED,
        RunStatus::Failed => EXIT_FAILED,
        RunStatus::BadBlocks => EXIT_VERIFY,
    }
}

/// The exit code of an error, from the libraries' own classification
/// (found by downcasting): a bad option, a refusal to protect data, damage
/// found, or a failure. The store's errors are classed beside its commands
/// (`more::store_exit_code`), which a lean build leaves out.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    let class = e.downcast_ref::<BenchError>().map(BenchError::class);
    let code = match class.or_else(|| crate::more::error_class(e)) {
        Some(ErrorClass::Usage) => EXIT_USAGE,
        Some(ErrorClass::Refused) => EXIT_REFUSED,
        Some(ErrorClass::Failed) => EXIT_FAILED,
        None => crate::more::store_exit_code(e).unwrap_or(EXIT_FAILED),
    };
    assert!(
        [
            EXIT_FAILED,
            EXIT_USAGE,
            EXIT_REFUSED,
            EXIT_VERIFY,
            EXIT_INTERRUPTED
        ]
        .contains(&code),
        "exit code {code} is none of those the manual lists"
    );
    code
}
