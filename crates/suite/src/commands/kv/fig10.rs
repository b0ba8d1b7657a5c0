//! `hiops kv fig10`: the HIOPS paper's Fig 10 (YCSB-C throughput against
//! clients) for any machine. Each point's clients are YCSB tasks (or, with
//! `client_threads`, a thread each) in a child process (`hiops kv ycsb
//! --server`), over TCP to a server in this one: the thread-per-connection
//! server on each blocking strategy (the paper's setup) and the
//! event-driven server on the task path. Beside
//! ops/s, each point records the device's IOPS, the machine's and the
//! server's clocks per operation and per device I/O, and the server's
//! context switches per operation.

use super::fig10_runner::{YcsbRunner, DEVICES, TASKS};
use crate::commands::{failed as fail, usage as bad};
use crate::commands::{say_point, Console};
use crate::sweep::{Param, RunFailure, SweepDef, SweepDir};
use crate::SuiteError;
use hiops_kv_cmd::flags::parse_time;
use hiops_kv_cmd::say::shown;
use hiops_kv_cmd::store::StoreOptions;
use hiops_path::Strategy;
use std::num::NonZeroU32;
use std::path::PathBuf;

/// What `hiops kv fig10` is asked.
#[derive(clap::Args, Debug, Clone)]
pub struct Fig10Options {
    #[command(flatten)]
    pub store: StoreOptions,
    #[arg(long, default_value_t = 200_000)]
    pub records: u64,
    /// Client counts (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256,512,1024",
        value_parser = crate::commands::values::client_count
    )]
    pub clients: Vec<NonZeroU32>,
    /// Servers (comma-separated): a blocking strategy names the
    /// thread-per-connection server on that strategy (the paper's setup);
    /// `tasks` the event-driven server on the task path.
    #[arg(long, default_value = "pread,completion-thread,coop,poll,hybrid,tasks")]
    pub strategies: String,
    /// Length of each point.
    #[arg(long, default_value = "5s")]
    pub time: String,
    /// Directory for the points, the report and its plots (resumed if
    /// interrupted).
    #[arg(long, short = 'o', default_value = "hiops-fig10")]
    pub output: PathBuf,
    /// Rounds over the whole grid; the report shows medians.
    #[arg(long, default_value_t = 1, value_parser = crate::commands::values::rounds)]
    pub rounds: u32,
    /// Discard the points of a different earlier run in --output.
    #[arg(long)]
    pub restart: bool,
    /// Run each point's YCSB clients as one thread each (the old client),
    /// not as tasks on a runtime thread per CPU. A thousand client threads
    /// take CPU time from the server they share the machine with.
    #[arg(long)]
    pub client_threads: bool,
}

/// Runs the grid's remaining points and writes the report.
pub fn fig10(mut a: Fig10Options, console: &Console) -> Result<(), SuiteError> {
    // The paper's figure measures the I/O path: reads the RAM cache serves
    // never reach the device, so the cache is on only when asked for.
    a.store.cache_size.get_or_insert_with(|| "0".into());
    let strategies = strategies(&a)?;
    if a.clients.is_empty() {
        return Err(bad("--clients: give at least one client count"));
    }
    let most = a.clients.iter().map(|c| u64::from(c.get())).max();
    raise_fd_limit(2 * most.unwrap_or(0) + 256)?;
    let time = parse_time(&Some(a.time.clone()))?.unwrap();
    let paths = a.store.path.clone();
    if paths.is_empty() {
        return Err(bad(
            "give --path FILE_OR_DEVICE for the store (several for a sweep over 1..N devices)",
        ));
    }
    let cfg = a.store.config()?;
    if a.records == 0 || a.rounds == 0 {
        return Err(bad(format!(
            "--records={} --rounds={}: give at least 1 of each",
            a.records, a.rounds
        )));
    }
    if paths.len() > 1 {
        devices_allowed(&paths, cfg.allow_write_device)?;
    }
    crate::commands::check_dir("--output", &a.output)?;
    let def = definition(&a, &paths, strategies);
    let mut dir = SweepDir::open(&a.output, def, a.restart)?;
    save_info(&a, &paths, &console.command)?;
    let shape = (a.records, time);
    let mut runner = YcsbRunner::new(a.store.clone(), shape, a.client_threads, console.interrupt);
    if paths.len() == 1 {
        // One store, loaded once; each strategy reopens it.
        runner.prepare(1, false).map_err(|e| match e {
            RunFailure::Failed(why) => fail(why),
            RunFailure::Interrupted => fail("interrupted while loading"),
        })?;
    }
    let who = console.who;
    let outcome = dir.run(&mut runner, &mut |p| say_point(who, p))?;
    drop(runner);
    let html = crate::report::write_report(&a.output)?;
    super::suite_done(who, &outcome, &html)
}

/// The sweep: strategies by clients, and over several --path the device
/// count 1..N outermost.
fn definition(a: &Fig10Options, paths: &[PathBuf], strategies: Vec<String>) -> SweepDef {
    let clients = a.clients.iter().map(|c| c.to_string()).collect();
    // The store's shape is part of the sweep: a different one is refused
    // on resume like any other change.
    let mut def = SweepDef {
        title: format!(
            "Fig 10: YCSB-C throughput vs clients, {} records",
            a.records
        ),
        base: vec![
            format!("--path={}", shown(paths)),
            format!("--records={}", a.records),
            format!("--time={}", a.time),
            format!("--block-size={}", a.store.block_size),
            format!(
                "--cache-size={}",
                a.store.cache_size.as_deref().unwrap_or("0")
            ),
            // Points of task and thread clients are not mixed on resume.
            format!("--clients-as={}", clients_as(a)),
        ],
        params: vec![
            Param {
                name: "strategy".into(),
                values: strategies,
            },
            Param {
                name: "clients".into(),
                values: clients,
            },
        ],
        rounds: a.rounds,
    };
    if paths.len() > 1 {
        let values = (1..=paths.len()).map(|n| n.to_string()).collect();
        let devices = Param {
            name: DEVICES.into(),
            values,
        };
        def.params.insert(0, devices);
    }
    def
}

/// The strategies of the grid, checked.
fn strategies(a: &Fig10Options) -> Result<Vec<String>, SuiteError> {
    let strategies: Vec<String> = a
        .strategies
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    for s in &strategies {
        if s != TASKS && Strategy::parse(s).is_none() {
            return Err(bad(format!(
                "--strategies: unknown strategy '{s}'; give blocking strategies or '{TASKS}'"
            )));
        }
    }
    Ok(strategies)
}

/// Lifts the open-file limit to what `want` descriptors need: the clients
/// and the server of a fig10 point share this process.
fn raise_fd_limit(want: u64) -> Result<(), SuiteError> {
    let got = hiops_kv::server::raise_open_files(want);
    if got < want {
        return Err(bad(format!(
            "--clients needs {want} open files, the limit is {got}: raise the hard limit (ulimit -Hn) or give fewer clients"
        )));
    }
    Ok(())
}

/// Several --path re-form stores over 1..N of them (their records lost):
/// a block device among them must have been granted.
fn devices_allowed(paths: &[PathBuf], granted: bool) -> Result<(), SuiteError> {
    use std::os::unix::fs::FileTypeExt;
    for p in paths {
        let block = std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device());
        if block && !granted {
            return Err(bad(format!(
                "{}: fig10 over several devices formats a store over 1..N of them for each count, erasing what they hold: give --allow-write-device to let it write this block device",
                p.display()
            )));
        }
    }
    Ok(())
}

/// What the report says about the run.
fn save_info(a: &Fig10Options, paths: &[PathBuf], command: &str) -> Result<(), SuiteError> {
    let path = shown(paths);
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let devices = if paths.len() > 1 {
        " Over several devices, each device count n is a store over the first n --path (records placed by digest, each device with its own write blocks, flusher and I/O path), formatted and loaded afresh when the count changes; each device is --size.".to_string()
    } else {
        String::new()
    };
    crate::suite_info::SuiteInfo {
        kind: crate::suite_info::SuiteKind::Fig10,
        title: "Fig 10: YCSB workload C on the hiops key-value store".into(),
        command: command.into(),
        about: vec![
            crate::report::machine_about(),
            format!(
                "Store: {path} ({} write blocks, the blocking strategies on one {} ring shared by the server's threads, RAM cache {}); {} records of 10 fields x 100 bytes; {} per point. Clients are {} in a child process (`hiops kv ycsb --server`), over TCP to a server in this one: a blocking strategy's line is the thread-per-connection server on it, `tasks` the event-driven server (one runtime thread per CPU, reads on the task path).{devices}",
                a.store.block_size,
                a.store.ioengine,
                cache_about(a),
                a.records,
                a.time,
                clients_about(a)
            ),
        ],
        extra: serde_json::Value::Null,
        platform: crate::report::platform_of(names.iter().map(String::as_str)),
    }
    .save(&a.output)
}

/// The report's words for the store's RAM cache.
fn cache_about(a: &Fig10Options) -> String {
    match a.store.cache_size.as_deref() {
        None | Some("0") => {
            "off: every read the store makes goes to the device (--cache-size turns it on)".into()
        }
        Some(size) => format!(
            "{size}: reads it serves never reach the device; each point gives the share it served"
        ),
    }
}

/// How the clients run: "tasks" or "threads".
fn clients_as(a: &Fig10Options) -> &'static str {
    if a.client_threads {
        "threads"
    } else {
        "tasks"
    }
}

/// The report's words for how the clients run.
fn clients_about(a: &Fig10Options) -> &'static str {
    if a.client_threads {
        "YCSB threads, one per client (--client-threads)"
    } else {
        "YCSB tasks (one runtime thread per CPU, each client a future over its own connection; --client-threads for a thread per client)"
    }
}
