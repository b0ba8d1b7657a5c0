//! `hiops kv`: the key-value store's server, its YCSB driver, and the
//! paper's Fig 10 experiment (YCSB-C throughput vs clients per strategy).

use clap::{Args, Subcommand};
use hiops_hal::EngineKind;
use hiops_kv::ycsb::{self, PhaseResult, RunConfig, Target, Workload};
use hiops_kv::{server, Durability, Store, StoreConfig};
use hiops_path::{PathConfig, Strategy};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// The store's file or block device (created as a file of --size if missing).
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// Size of a file created for the store.
    #[arg(long, default_value = "1g")]
    pub size: String,
    /// Write block size (Aerospike's write-block-size).
    #[arg(long, default_value = "1m")]
    pub block_size: String,
    /// sync: a write is acknowledged once durable; buffered: once in the
    /// write buffer (a crash loses the unflushed tail).
    #[arg(long, default_value = "sync")]
    pub durability: String,
    /// Defragment blocks whose live share falls below this percentage.
    #[arg(long, default_value_t = 50.0)]
    pub defrag_threshold: f64,
    /// I/O strategy: pread, completion-thread, per-thread-ring, coop, poll, hybrid.
    #[arg(long, default_value = "coop")]
    pub strategy: String,
    /// Engine of the path's queues (io_uring or libaio).
    #[arg(long, default_value = "io_uring")]
    pub ioengine: String,
    /// Tags (commands in flight) of the shared queue.
    #[arg(long, default_value_t = 128)]
    pub iodepth: u32,
    /// Use a block device even if it looks like it holds data.
    #[arg(long)]
    pub allow_write_device: bool,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// TCP port (0: any free port, printed at start).
    #[arg(long, default_value_t = 6380)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    #[arg(long, default_value_t = 10_000)]
    pub max_clients: u64,
}

#[derive(Args, Debug)]
pub struct YcsbArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Workload A-F.
    #[arg(long, default_value = "C")]
    pub workload: char,
    /// Records loaded (recordcount).
    #[arg(long, default_value_t = 100_000)]
    pub records: u64,
    /// Operations in the run phase (operationcount).
    #[arg(long, default_value_t = 100_000)]
    pub operations: u64,
    /// Client threads (threadcount).
    #[arg(long, default_value_t = 32)]
    pub clients: usize,
    /// Open loop at this many operations per second (target); latency is
    /// measured from each operation's intended start.
    #[arg(long)]
    pub target: Option<f64>,
    /// Stop the run phase after this long (e.g. 30s).
    #[arg(long)]
    pub time: Option<String>,
    /// A Redis-protocol server (host:port) instead of the embedded store.
    #[arg(long)]
    pub server: Option<String>,
    /// Skip the load phase (the records are there already).
    #[arg(long)]
    pub no_load: bool,
    /// text (YCSB's format) or json.
    #[arg(long, default_value = "text")]
    pub output_format: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args, Debug)]
pub struct Fig10Args {
    #[command(flatten)]
    pub store: StoreArgs,
    #[arg(long, default_value_t = 200_000)]
    pub records: u64,
    /// Client counts (comma-separated).
    #[arg(long, default_value = "1,2,4,8,16,32,64,128,256")]
    pub clients: String,
    /// Strategies (comma-separated).
    #[arg(long, default_value = "pread,completion-thread,coop,poll,hybrid")]
    pub strategies: String,
    /// Length of each point.
    #[arg(long, default_value = "5s")]
    pub time: String,
    /// Directory for fig10.csv and fig10.json.
    #[arg(long, short = 'o', default_value = "hiops-fig10")]
    pub output: PathBuf,
}

fn fail(msg: impl Into<String>) -> anyhow::Error {
    anyhow::anyhow!(msg.into())
}

impl StoreArgs {
    pub fn config(&self) -> anyhow::Result<StoreConfig> {
        let size =
            hiops_bench::units::parse_size(&self.size).map_err(|e| fail(format!("--size: {e}")))?;
        let block = hiops_bench::units::parse_size(&self.block_size)
            .map_err(|e| fail(format!("--block-size: {e}")))?;
        let strategy = Strategy::parse(&self.strategy).ok_or_else(|| {
            fail(format!(
                "--strategy={}: use pread, completion-thread, per-thread-ring, coop, poll or hybrid",
                self.strategy
            ))
        })?;
        let engine = EngineKind::parse(&self.ioengine).ok_or_else(|| {
            fail(format!(
                "--ioengine={}: use io_uring or libaio",
                self.ioengine
            ))
        })?;
        let durability = match self.durability.as_str() {
            "sync" => Durability::Sync,
            "buffered" => Durability::Buffered,
            d => return Err(fail(format!("--durability={d}: use sync or buffered"))),
        };
        if !(0.0..100.0).contains(&self.defrag_threshold) {
            return Err(fail("--defrag-threshold: give a percentage below 100"));
        }
        Ok(StoreConfig {
            block_size: u32::try_from(block)
                .map_err(|_| fail("--block-size: at most 4 GiB - 1"))?,
            create_size: size,
            durability,
            defrag_threshold: self.defrag_threshold / 100.0,
            path: PathConfig {
                strategy,
                engine,
                depth: self.iodepth.max(1),
                ..PathConfig::default()
            },
            direct: true,
            allow_write_device: self.allow_write_device,
        })
    }

    pub fn open(&self) -> anyhow::Result<Store> {
        let path = self
            .path
            .as_ref()
            .ok_or_else(|| fail("give --path FILE_OR_DEVICE for the store"))?;
        Ok(Store::open(path, self.config()?)?)
    }
}

fn say_opened(store: &Store, path: &std::path::Path) {
    let s = store.stats();
    let r = &s.recovery;
    if r.formatted {
        eprintln!(
            "hiops kv: formatted {} ({} blocks of {} KiB)",
            path.display(),
            s.blocks,
            s.block_size / 1024
        );
    } else {
        eprintln!(
            "hiops kv: opened {}: {} keys ({} tombstones) from {} records in {} blocks, rebuilt in {:.1} ms",
            path.display(),
            r.keys,
            r.tombstones,
            r.records_scanned,
            r.blocks_scanned,
            r.millis
        );
    }
}

pub fn main(cmd: KvCommand) -> anyhow::Result<()> {
    match cmd {
        KvCommand::Serve(a) => serve(a),
        KvCommand::Ycsb(a) => ycsb_cmd(a),
        KvCommand::Fig10(a) => fig10(a),
    }
}

fn serve(a: ServeArgs) -> anyhow::Result<()> {
    let store = Arc::new(a.store.open()?);
    say_opened(&store, a.store.path.as_ref().unwrap());
    let srv = server::Server::bind(
        store.clone(),
        server::ServerConfig {
            addr: format!("{}:{}", a.bind, a.port),
            max_clients: a.max_clients,
            ..server::ServerConfig::default()
        },
    )?;
    let addr = srv.local_addr()?;
    eprintln!(
        "hiops kv: serving on {addr} ({}, durability {:?}); Ctrl-C stops",
        store.stats().strategy,
        store.stats().durability
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

fn parse_time(t: &Option<String>) -> anyhow::Result<Option<Duration>> {
    t.as_ref()
        .map(|t| {
            hiops_bench::units::parse_duration_ns(t)
                .map(Duration::from_nanos)
                .map_err(|e| fail(format!("--time: {e}")))
        })
        .transpose()
}

fn progress_printer(total: u64, what: &'static str) -> impl Fn(u64) + Sync {
    let tty = std::io::stderr().is_terminal();
    move |done| {
        if tty {
            eprint!(
                "\r{what}: {done} of {total} ({:.0}%)   ",
                done as f64 * 100.0 / total.max(1) as f64
            );
        }
    }
}

fn ycsb_cmd(a: YcsbArgs) -> anyhow::Result<()> {
    let workload = Workload::core(a.workload)
        .ok_or_else(|| fail(format!("--workload={}: use A, B, C, D, E or F", a.workload)))?;
    let json = match a.output_format.as_str() {
        "text" => false,
        "json" => true,
        f => return Err(fail(format!("--output-format={f}: use text or json"))),
    };
    let (target, store) = match &a.server {
        Some(addr) => (Target::Tcp(addr.clone()), None),
        None => {
            let store = Arc::new(a.store.open()?);
            say_opened(&store, a.store.path.as_ref().unwrap());
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
    phases.push(ycsb::run(&target, &cfg, stop, &p)?);
    eprint!("\r");
    let errors: Vec<&String> = phases
        .iter()
        .filter_map(|p| p.first_error.as_ref())
        .collect();
    if json {
        let doc = serde_json::json!({
            "target": target.describe(),
            "config": cfg,
            "phases": phases,
            "store": store.as_ref().map(|s| s.stats()),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "# YCSB workload {} against {}",
            cfg.workload.name,
            target.describe()
        );
        for p in &phases {
            println!("# {} phase, {} clients", p.phase, a.clients);
            print!("{}", ycsb::ycsb_text(p));
        }
        if let Some(s) = &store {
            let s = s.stats();
            println!(
                "# store: {} keys, index {:.1} bytes per key, {} device reads, {} flushes",
                s.keys, s.index_bytes_per_key, s.device_reads, s.flushes
            );
        }
    }
    if let Some(e) = errors.first() {
        return Err(fail(format!("operations failed; the first error: {e}")));
    }
    Ok(())
}

fn fig10(a: Fig10Args) -> anyhow::Result<()> {
    let clients: Vec<usize> = a
        .clients
        .split(',')
        .map(|c| {
            c.trim()
                .parse()
                .map_err(|_| fail(format!("--clients: '{c}' is not a number")))
        })
        .collect::<anyhow::Result<_>>()?;
    let strategies: Vec<Strategy> = a
        .strategies
        .split(',')
        .map(|s| {
            Strategy::parse(s.trim())
                .ok_or_else(|| fail(format!("--strategies: unknown strategy '{s}'")))
        })
        .collect::<anyhow::Result<_>>()?;
    let time = parse_time(&Some(a.time.clone()))?.unwrap();
    std::fs::create_dir_all(&a.output)?;
    crate::signals::install();
    let stop = crate::signals::flag();
    let path = a
        .store
        .path
        .clone()
        .ok_or_else(|| fail("give --path FILE_OR_DEVICE for the store"))?;
    let workload = Workload::core('C').unwrap();
    // Load once (coop), then reopen the same store per strategy.
    {
        let store = Arc::new(a.store.open()?);
        say_opened(&store, &path);
        if store.len() < a.records {
            let p = progress_printer(a.records, "load");
            let r = ycsb::load(
                &Target::Embedded(store.clone()),
                &workload,
                a.records,
                32,
                stop,
                &p,
            )?;
            eprintln!(
                "\rloaded {} records in {:.1} s",
                r.operations,
                r.runtime_ms / 1e3
            );
        }
    }
    let mut rows = Vec::new();
    let mut csv = String::from("strategy,clients,ops_per_s,read_p50_us,read_p99_us,read_mean_us\n");
    let points = strategies.len() * clients.len();
    let mut k = 0;
    for &strategy in &strategies {
        let mut args = a.store.clone();
        args.strategy = strategy.name().to_string();
        let store = Arc::new(args.open()?);
        let target = Target::Embedded(store.clone());
        for &c in &clients {
            k += 1;
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            eprintln!(
                "point {k} of {points}: {strategy} with {c} clients ({:.0} s left)",
                (points - k + 1) as f64 * time.as_secs_f64()
            );
            let cfg = RunConfig {
                workload: workload.clone(),
                records: a.records,
                operations: u64::MAX,
                max_time: Some(time),
                clients: c,
                target_ops: None,
                seed: k as u64,
            };
            let r = ycsb::run(&target, &cfg, stop, &|_| {})?;
            if let Some(e) = &r.first_error {
                return Err(fail(format!("{strategy} at {c} clients: {e}")));
            }
            let read = &r.ops[0];
            csv += &format!(
                "{},{c},{:.0},{:.1},{:.1},{:.1}\n",
                strategy.name(),
                r.throughput,
                read.p50_us,
                read.p99_us,
                read.average_us
            );
            println!(
                "{:<18} {c:>4} clients  {:>9.0} ops/s  read p50 {:>7.1} us  p99 {:>8.1} us",
                strategy.name(),
                r.throughput,
                read.p50_us,
                read.p99_us
            );
            rows.push(serde_json::json!({
                "strategy": strategy.name(), "clients": c, "result": r,
            }));
        }
    }
    std::fs::write(a.output.join("fig10.csv"), csv)?;
    std::fs::write(
        a.output.join("fig10.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "records": a.records, "time_s": time.as_secs_f64(), "points": rows,
        }))?,
    )?;
    eprintln!("wrote {}/fig10.csv and fig10.json", a.output.display());
    Ok(())
}
