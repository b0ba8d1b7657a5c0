//! `hiops kv`: the key-value store's server, its YCSB driver, and the
//! paper's Fig 10 experiment (YCSB-C throughput vs clients per strategy).

use clap::Subcommand;
use hiops_kv::server;
use hiops_kv::ycsb::{self, PhaseResult, RunConfig, Target, Workload};
use std::io::Write;
use std::sync::Arc;

mod cache_sweep;
mod common;
mod fig10;
mod ranks;

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
    CacheSweep(cache_sweep::CacheSweepArgs),
    /// Check every record of a store, the superseded and deleted ones too
    /// (a scrub), reading only; damage is named by block and byte. Exit 0:
    /// clean; 4: damage found. Run it on a store no hiops kv has open.
    Check(CheckArgs),
}

pub fn main(cmd: KvCommand) -> anyhow::Result<()> {
    match cmd {
        KvCommand::Serve(a) => serve(a),
        KvCommand::Ycsb(a) => ycsb_cmd(a),
        KvCommand::Fig10(a) => fig10::fig10(a),
        KvCommand::CacheSweep(a) => cache_sweep::cache_sweep(a),
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
    count("max-clients", a.max_clients, 1, 10_000_000)?;
    check_bind(&a.bind, a.port)?;
    let mut cfg = server_config(&a)?;
    let store_cfg = a.store.config()?;
    // A new store's blocks are --block-size; an existing store's are its
    // own (checked again once it is open).
    bulk_limit(a.proto_max_bulk_len.as_deref(), store_cfg.block_size)?;
    let tasks = (cfg.model == server::Model::Tasks).then(|| cfg.task.clone());
    let store = Arc::new(a.store.open_with(tasks)?);
    cfg.limits.max_bulk = bulk_limit(a.proto_max_bulk_len.as_deref(), store.stats().block_size)?;
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

fn size_flag(flag: &str, v: &str) -> anyhow::Result<usize> {
    hiops_bench::units::parse_size(v)
        .ok()
        .filter(|&n| n > 0)
        .map(|n| n as usize)
        .ok_or_else(|| bad(format!("--{flag}={v}: give a size such as 64m or 1g")))
}

/// The password from --requirepass-file or --requirepass.
fn password(a: &ServeArgs) -> anyhow::Result<Option<String>> {
    let pass = match (&a.requirepass_file, &a.requirepass) {
        (Some(_), Some(_)) => {
            return Err(bad("give --requirepass-file or --requirepass, not both"));
        }
        (Some(f), None) => {
            let text = std::fs::read_to_string(f)
                .map_err(|e| bad(format!("--requirepass-file={}: {e}", f.display())))?;
            text.lines().next().unwrap_or("").to_string()
        }
        (None, Some(p)) => {
            eprintln!("hiops kv: --requirepass shows the password to every user through ps; prefer --requirepass-file");
            p.clone()
        }
        (None, None) => return Ok(None),
    };
    if pass.is_empty() {
        return Err(bad(
            "the password is empty: put it on the first line of the file",
        ));
    }
    Ok(Some(pass))
}

fn server_config(a: &ServeArgs) -> anyhow::Result<server::ServerConfig> {
    let mut cfg = server::ServerConfig {
        addr: format!("{}:{}", a.bind, a.port),
        max_clients: a.max_clients,
        model: match a.model.as_str() {
            "threads" => server::Model::Threads,
            _ => server::Model::Tasks,
        },
        workers: a.workers.unwrap_or(0),
        client_query_buffer_limit: size_flag(
            "client-query-buffer-limit",
            &a.client_query_buffer_limit,
        )?,
        ..server::ServerConfig::default()
    };
    if let Some(t) = &a.max_query_total {
        cfg.max_query_total = size_flag("max-query-total", t)?;
    }
    cfg.password = password(a)?;
    cfg.protected_mode = a.protected_mode == "yes";
    if let (Some(cert), Some(key)) = (&a.tls_cert_file, &a.tls_key_file) {
        cfg.tls = Some(server::TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
        });
    }
    if a.workers == Some(0) {
        return Err(bad(
            "--workers=0: give at least 1, or leave it out for one per CPU",
        ));
    }
    if let Some(w) = a.workers {
        count("workers", w as u64, 1, 1024)?;
    }
    Ok(cfg)
}

/// proto-max-bulk-len for write blocks of `block_size` bytes: what they
/// take (key and value together) unless a lower limit is given; a higher
/// one is refused.
fn bulk_limit(given: Option<&str>, block_size: u32) -> anyhow::Result<usize> {
    let most = hiops_kv::store::max_value_of(block_size);
    let Some(v) = given else { return Ok(most) };
    let n = size_flag("proto-max-bulk-len", v)?;
    if n > most {
        return Err(bad(format!(
            "--proto-max-bulk-len={v}: the store's write blocks of {block_size} bytes take at most {most} bytes of key and value together; give at most {most}, or leave it out (a new store with --block-size 8m takes {})",
            hiops_kv::store::max_value_of(8 << 20)
        )));
    }
    Ok(n)
}

/// `--bind` and `--port` must name an address of this machine's kind
/// (an IP address or a host name that resolves).
fn check_bind(bind: &str, port: u16) -> anyhow::Result<()> {
    use std::net::{IpAddr, ToSocketAddrs};
    if bind.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let numeric = bind.chars().all(|c| c.is_ascii_digit() || c == '.');
    let resolves = !numeric
        && (bind, port)
            .to_socket_addrs()
            .is_ok_and(|mut a| a.next().is_some());
    if resolves {
        Ok(())
    } else {
        Err(bad(format!(
            "--bind={bind}: not an IP address or a host name that resolves; use e.g. 127.0.0.1, 0.0.0.0 or ::"
        )))
    }
}

/// The workload's largest value, with YCSB's longest key, must fit write
/// blocks of `block_size` bytes.
fn values_fit(w: &Workload, block_size: u32) -> anyhow::Result<()> {
    let key = "user".len() + u64::MAX.to_string().len();
    let most = hiops_kv::store::max_value_of(block_size).saturating_sub(key);
    if w.max_record_len() <= most {
        return Ok(());
    }
    Err(bad(format!(
        "workload {}: values of up to {} bytes, and the store's write blocks of {block_size} bytes take at most {most} with a {key}-byte key: give smaller fields (--field-count, --field-length), or a new store with a larger --block-size (up to 8m)",
        w.name,
        w.max_record_len()
    )))
}

/// The workload and its value sizes from the flags.
fn workload_of(a: &YcsbArgs) -> anyhow::Result<Workload> {
    let mut w = Workload::named(&a.workload).ok_or_else(|| {
        bad(format!(
            "--workload={}: use A, B, C, D, E, F or ETC",
            a.workload
        ))
    })?;
    if w.name == "ETC" {
        return Ok(w);
    }
    count("field-count", a.field_count as u64, 1, 10_000)?;
    count("field-length", a.field_length as u64, 1, 8 << 20)?;
    w.field_count = a.field_count;
    w.field_len = hiops_kv::value_size::FieldLength::ycsb(
        &a.field_length_distribution,
        a.min_field_length,
        a.field_length,
    )
    .map_err(bad)?;
    Ok(w)
}

fn ycsb_cmd(a: YcsbArgs) -> anyhow::Result<()> {
    let workload = workload_of(&a)?;
    let json = match a.output_format.as_str() {
        "text" => false,
        "json" => true,
        f => return Err(bad(format!("--output-format={f}: use text or json"))),
    };
    parse_time(&a.time)?;
    count("clients", a.clients as u64, 1, 100_000)?;
    count("records", a.records, 1, 1 << 40)?;
    count("operations", a.operations, 1, u64::MAX)?;
    let mut coord = hiops_mpi::coordinator(false)?;
    if coord.info().ranks > 1 {
        let rank = coord.info().rank;
        let r = ranks::ycsb(&a, workload, json, coord.as_mut());
        // Rank 0 speaks for the ranks (as in `hiops run`).
        return if rank == 0 { r } else { Ok(()) };
    }
    if a.server.is_none() {
        // A new store's blocks are --block-size; an existing one's are
        // checked once it is open.
        values_fit(&workload, a.store.config()?.block_size)?;
    }
    let (target, store) = match &a.server {
        Some(addr) => (Target::Tcp(addr.clone()), None),
        None => {
            // --tasks: the store's flusher and defragmenter on a task ring
            // too, as the tasks-model server runs them.
            let tasks = a.tasks.then(hiops_path::TaskConfig::default);
            let store = Arc::new(a.store.open_with(tasks)?);
            values_fit(&workload, store.stats().block_size)?;
            say_opened(&store);
            (Target::Embedded(store.clone()), Some(store))
        }
    };
    crate::signals::install();
    let stop = crate::signals::flag();
    let mut phases: Vec<PhaseResult> = Vec::new();
    if !a.no_load {
        let p = progress_printer(a.records, "load");
        let r = ycsb::load(&target, &workload, a.records, a.clients, stop, &p)?;
        eprint!("\r");
        phases.push(r);
    }
    let cfg = RunConfig {
        workload,
        records: a.records,
        operations: a.operations,
        max_time: parse_time(&a.time)?,
        clients: a.clients,
        target_ops: a.target,
        seed: a.seed,
    };
    let p = progress_printer(a.operations, "run");
    phases.push(match (&store, &a.server, a.tasks) {
        (Some(store), _, true) => {
            let task = hiops_path::TaskConfig::default();
            hiops_kv::ycsb_tasks::run_tasks(store, &cfg, &task, stop, &p)?
        }
        (None, Some(addr), true) => hiops_kv::ycsb_tcp::run_tcp_tasks(addr, &cfg, stop, &p)?,
        _ => ycsb::run(&target, &cfg, stop, &p)?,
    });
    let clients_as = if a.tasks { "tasks" } else { "threads" };
    eprint!("\r");
    let errors: Vec<&String> = phases
        .iter()
        .filter_map(|p| p.first_error.as_ref())
        .collect();
    let cache = match (&store, &a.server) {
        (Some(s), _) => Some(s.stats().cache),
        (None, Some(addr)) => server_cache(addr),
        (None, None) => None,
    };
    if json {
        let doc = serde_json::json!({
            "target": target.describe(),
            "clients_as": clients_as,
            "config": cfg,
            "phases": phases,
            "store": store.as_ref().map(|s| s.stats()),
            "cache": cache,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let what = format!(
            "workload {} against {}",
            cfg.workload.name,
            target.describe()
        );
        let store = store.as_ref().map(|s| s.stats());
        print_ycsb_text(&what, &phases, (a.clients, clients_as), store, cache);
    }
    if let Some(e) = errors.first() {
        return Err(fail(format!("operations failed; the first error: {e}")));
    }
    Ok(())
}

/// The text report of `hiops kv ycsb`: each phase, then the embedded
/// store's and the cache's counters where there are some.
fn print_ycsb_text(
    what: &str,
    phases: &[PhaseResult],
    (clients, clients_as): (usize, &str),
    store: Option<hiops_kv::StoreStats>,
    cache: Option<hiops_kv::CacheStats>,
) {
    println!("# YCSB {what}");
    for p in phases {
        // The load phase always runs on threads.
        let how = if p.phase == "run" {
            clients_as
        } else {
            "threads"
        };
        println!("# {} phase, {clients} clients as {how}", p.phase);
        print!("{}", ycsb::ycsb_text(p));
    }
    if let Some(s) = &store {
        println!(
            "# store: {} keys, index {:.1} bytes per key, {} device reads, {} flushes",
            s.keys, s.index_bytes_per_key, s.device_reads, s.flushes
        );
    }
    if let Some(c) = &cache {
        println!("{}", cache_line(c));
    }
}
