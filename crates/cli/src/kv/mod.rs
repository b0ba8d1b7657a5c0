//! `hiops kv`: the key-value store's server (its options checked by
//! hiops-suite, run here), its scrub, and the YCSB driver and experiments
//! hiops-suite runs (`commands::kv`).

use crate::suites::with_console;
use clap::Subcommand;
use hiops_kv::server;
use hiops_suite::commands::kv::{self as suite_kv, say_opened, shown};
use std::io::Write;
use std::sync::Arc;

mod common;

use common::*;
pub(crate) use common::{BadOption, Damaged};

#[derive(Subcommand, Debug)]
pub enum KvCommand {
    /// Serve a store over the Redis protocol (RESP2).
    Serve(ServeArgs),
    /// Run a YCSB core workload (A-F) against the embedded store or a
    /// Redis-protocol server: load phase, then run phase.
    Ycsb(YcsbArgs),
    /// The HIOPS paper's Fig 10: YCSB-C throughput as clients grow 1..256,
    /// one curve per I/O strategy, on one loaded store.
    Fig10(Fig10Args),
    /// YCSB-B and -C throughput and p99 as the data set grows from 1/4 to 8
    /// times the RAM cache, on the flash against an HDD-like device (a
    /// throttled loop device; needs root), the knee marked.
    CacheSweep(CacheSweepArgs),
    /// Check every record of a store, the superseded and deleted ones too
    /// (a scrub), reading only; damage is named by block and byte. Exit 0:
    /// clean; 4: damage found. Run it on a store no hiops kv has open.
    Check(CheckArgs),
}

pub fn main(cmd: KvCommand) -> anyhow::Result<()> {
    match cmd {
        KvCommand::Serve(a) => serve(a),
        KvCommand::Ycsb(a) => {
            crate::signals::install();
            let coordinator = || hiops_mpi::coordinator(false);
            let stop = crate::signals::flag();
            Ok(suite_kv::ycsb::ycsb(a.options(), coordinator, stop)?)
        }
        KvCommand::Fig10(a) => with_console("hiops kv fig10", true, |c| {
            suite_kv::fig10::fig10(a.options(), c)
        }),
        KvCommand::CacheSweep(a) => with_console("hiops kv cache-sweep", true, |c| {
            suite_kv::cache_sweep::cache_sweep(a.options(), c)
        }),
        KvCommand::Check(a) => check(a),
    }
}

/// `hiops kv check`: a line of counts per device, a line per damage.
fn check(a: CheckArgs) -> anyhow::Result<()> {
    if a.path.is_empty() {
        return Err(bad(
            "give --path FILE_OR_DEVICE: the store's paths, as given to hiops kv serve",
        ));
    }
    let json = match a.output_format.as_str() {
        "text" => false,
        "json" => true,
        f => return Err(bad(format!("--output-format={f}: use text or json"))),
    };
    let checks = hiops_kv::store::check_store(&a.path)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&checks)?);
    } else {
        for c in &checks {
            let path = c.path.display();
            println!("{path}: {}", c.summary());
            for d in &c.damage {
                println!("{path}: damaged: {}", d.describe());
            }
        }
    }
    let damaged: usize = checks.iter().map(|c| c.damage.len()).sum();
    if damaged > 0 {
        return Err(anyhow::Error::new(Damaged(format!(
            "{damaged} problems found in {}; the store refuses to open until repaired: open it with --repair to keep every record that checks and drop the keys the damage may have made stale",
            shown(&a.path)
        ))));
    }
    Ok(())
}

fn serve(a: ServeArgs) -> anyhow::Result<()> {
    // Every option is checked before the store is opened (or formatted).
    let opts = a.options();
    let mut cfg = opts.server_config()?;
    let store = a.store.options();
    let store_cfg = store.config()?;
    // A new store's blocks are --block-size; an existing store's are its
    // own (checked again once it is open).
    opts.bulk_limit(store_cfg.block_size)?;
    let tasks = (cfg.model == server::Model::Tasks).then(|| cfg.task.clone());
    let store = Arc::new(store.open_with(tasks)?);
    cfg.limits.max_bulk = opts.bulk_limit(store.stats().block_size)?;
    say_opened(&store);
    // A descriptor per client, plus the store's and a few spare.
    let want = a.max_clients.saturating_add(64);
    let files = server::raise_open_files(want);
    if files < want {
        eprintln!(
            "hiops kv: only {files} open files allowed (--max-clients={} wants {want}); raise `ulimit -Hn` to serve that many",
            a.max_clients
        );
    }
    let srv = server::Server::bind(store.clone(), cfg)?;
    let addr = srv.local_addr()?;
    let stats = store.stats();
    eprintln!(
        "hiops kv: serving on {addr} ({} model, backlog {}; store path {}, durability {:?}, cache {} bytes); Ctrl-C stops",
        a.model,
        srv.backlog(),
        stats.strategy,
        stats.durability,
        stats.cache.capacity
    );
    // A line on stdout that scripts can wait for.
    println!("listening {addr}");
    let _ = std::io::stdout().flush();
    crate::signals::install();
    srv.run(crate::signals::flag())?;
    store.sync()?;
    eprintln!("hiops kv: stopped; everything acknowledged is on the device");
    Ok(())
}
