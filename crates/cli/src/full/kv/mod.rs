//! `hiops kv`: the key-value store's commands (serve, ycsb, check: run by
//! hiops-kv-cmd) and its experiments (fig10, cache-sweep: hiops-suite's
//! `commands::kv`).

use super::suites::with_console;
use clap::{Args, Subcommand};
use hiops_kv_cmd::check::CheckArgs;
use hiops_kv_cmd::serve::ServeArgs;
use hiops_kv_cmd::ycsb_args::YcsbOptions;
use hiops_suite::commands::kv as suite_kv;

mod common;

/// The levels `--log-level` takes, quietest first.
const LOG_LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// `hiops kv`: its commands, and the diagnostics they log.
#[derive(Args, Debug)]
pub struct KvArgs {
    /// Diagnostics on stderr, each with its time and level (default: warn;
    /// RUST_LOG is read when this is not given, and takes per-crate
    /// filters such as hiops_kv=debug).
    #[arg(long, global = true, value_name = "LEVEL", value_parser = LOG_LEVELS)]
    pub log_level: Option<String>,
    #[command(subcommand)]
    pub command: Box<KvCommand>,
}
pub(crate) use common::{Damaged, Interrupted};

#[derive(Subcommand, Debug)]
pub enum KvCommand {
    /// Serve a store over the Redis protocol (RESP2, RESP3 after HELLO 3).
    Serve(ServeArgs),
    /// Run a YCSB core workload (A-F) against the embedded store or a
    /// Redis-protocol server: load phase, then run phase.
    Ycsb(YcsbOptions),
    /// The HIOPS paper's Fig 10: YCSB-C throughput as clients grow 1..256,
    /// one curve per I/O strategy, on one loaded store.
    Fig10(suite_kv::fig10::Fig10Options),
    /// YCSB-B and -C throughput and p99 as the data set grows from 1/4 to 8
    /// times the RAM cache, on the flash against an HDD-like device (a
    /// throttled loop device; needs root), the knee marked.
    CacheSweep(suite_kv::cache_sweep::CacheSweepOptions),
    /// Check every record of a store, the superseded and deleted ones too
    /// (a scrub), reading only; damage is named by block and byte. Exit 0:
    /// clean; 4: damage found. Run it on a store no hiops kv has open.
    Check(CheckArgs),
}

pub fn main(cmd: KvCommand) -> anyhow::Result<()> {
    match cmd {
        KvCommand::Serve(a) => {
            let arm = hiops_run::progress::arm_signals;
            Ok(hiops_kv_cmd::serve::serve(a.store, a.server, arm)?)
        }
        KvCommand::Ycsb(a) => {
            let stop = hiops_run::progress::arm_signals();
            let coordinator = || hiops_mpi::coordinator(false);
            match hiops_kv_cmd::ycsb::ycsb(a, coordinator, stop) {
                // Stopped by a signal: its partial report says so.
                Err(e) if stop.load(std::sync::atomic::Ordering::SeqCst) => {
                    Err(anyhow::Error::new(Interrupted(e.to_string())))
                }
                r => Ok(r?),
            }
        }
        KvCommand::Fig10(a) => {
            with_console("hiops kv fig10", true, |c| suite_kv::fig10::fig10(a, c))
        }
        KvCommand::CacheSweep(a) => with_console("hiops kv cache-sweep", true, |c| {
            suite_kv::cache_sweep::cache_sweep(a, c)
        }),
        KvCommand::Check(a) => match hiops_kv_cmd::check::check(&a.path, &a.output_format)? {
            Some(damage) => Err(anyhow::Error::new(Damaged(damage))),
            None => Ok(()),
        },
    }
}
