//! `hiops kv ycsb`'s options as its command line takes them, and that
//! command line built back from them: one struct for the command and for
//! the programs that run it as a child (`hiops kv fig10`'s clients).

use crate::flags::parse_time;
use crate::store::StoreOptions;
use clap::{Args, Parser};
use hiops_bench::BenchError;
use hiops_kv::ycsb::{RunConfig, Workload};
use std::ffi::OsString;

/// What `hiops kv ycsb` is asked: its command line (see its --help).
#[derive(Args, Debug, Clone, PartialEq)]
pub struct YcsbOptions {
    #[command(flatten)]
    pub store: StoreOptions,
    /// Workload: YCSB's A-F, or ETC (30 GETs per SET, values 90% under
    /// 500 bytes with a long tail: Facebook's memcached pool).
    #[arg(long, default_value = "C")]
    pub workload: String,
    /// Fields per record (YCSB's fieldcount; A-F only).
    #[arg(long, default_value_t = 10)]
    pub field_count: usize,
    /// Longest field in bytes (YCSB's fieldlength; A-F only).
    #[arg(long, default_value_t = 100)]
    pub field_length: usize,
    /// Shortest field for uniform and zipfian (YCSB's minfieldlength).
    #[arg(long, default_value_t = 1)]
    pub min_field_length: usize,
    /// constant, uniform or zipfian (YCSB's fieldlengthdistribution).
    #[arg(long, default_value = "constant")]
    pub field_length_distribution: String,
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
    /// The run phase's clients as tasks instead of one thread each: one
    /// current-thread runtime per allowed CPU, the clients split among
    /// them. On the embedded store each runtime has a task ring and calls
    /// the store's async API; with --server each client is a future over
    /// its own TCP connection. Closed loop only (no --target).
    #[arg(long, conflicts_with = "target")]
    pub tasks: bool,
    /// Skip the load phase (the records are there already).
    #[arg(long)]
    pub no_load: bool,
    /// text (YCSB's format) or json.
    #[arg(long, default_value = "text")]
    pub output_format: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The options alone as a command (what follows `hiops kv ycsb`).
#[derive(Parser, Debug)]
#[command(name = "ycsb")]
struct YcsbCommand {
    #[command(flatten)]
    options: YcsbOptions,
}

impl YcsbOptions {
    /// The options of `hiops kv ycsb ARGS...` (`args` without the
    /// command's name).
    pub fn from_argv<I, T>(args: I) -> Result<YcsbOptions, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let argv = std::iter::once(OsString::from("ycsb")).chain(args.into_iter().map(Into::into));
        YcsbCommand::try_parse_from(argv).map(|c| c.options)
    }

    /// What `hiops kv ycsb` runs when given no options.
    pub fn defaults() -> YcsbOptions {
        YcsbOptions::from_argv(std::iter::empty::<OsString>())
            .expect("every option has a default or is optional")
    }

    /// The command line that gives these options (what follows `hiops kv
    /// ycsb`): [`YcsbOptions::from_argv`] of it is `self`.
    pub fn to_argv(&self) -> Vec<OsString> {
        let mut argv = store_argv(&self.store);
        let mut flag = |name: &str, value: String| argv.push(format!("--{name}={value}").into());
        flag("workload", self.workload.clone());
        flag("field-count", self.field_count.to_string());
        flag("field-length", self.field_length.to_string());
        flag("min-field-length", self.min_field_length.to_string());
        flag(
            "field-length-distribution",
            self.field_length_distribution.clone(),
        );
        flag("records", self.records.to_string());
        flag("operations", self.operations.to_string());
        flag("clients", self.clients.to_string());
        if let Some(t) = self.target {
            flag("target", t.to_string());
        }
        if let Some(t) = &self.time {
            flag("time", t.clone());
        }
        if let Some(s) = &self.server {
            flag("server", s.clone());
        }
        flag("output-format", self.output_format.clone());
        flag("seed", self.seed.to_string());
        let switches = [("tasks", self.tasks), ("no-load", self.no_load)];
        argv.extend(
            switches
                .iter()
                .filter(|s| s.1)
                .map(|s| format!("--{}", s.0).into()),
        );
        argv
    }

    /// The run phase's configuration.
    pub(crate) fn run_config(
        &self,
        workload: Workload,
        seed: u64,
    ) -> Result<RunConfig, BenchError> {
        Ok(RunConfig {
            workload,
            records: self.records,
            operations: self.operations,
            max_time: parse_time(&self.time)?,
            clients: self.clients,
            target_ops: self.target,
            seed,
        })
    }
}

/// The store's options as the command line that gives them.
fn store_argv(s: &StoreOptions) -> Vec<OsString> {
    let mut argv: Vec<OsString> = Vec::new();
    let mut flag = |name: &str, value: &std::ffi::OsStr| {
        let mut f = OsString::from(format!("--{name}="));
        f.push(value);
        argv.push(f);
    };
    for p in &s.path {
        flag("path", p.as_os_str());
    }
    if let Some(size) = &s.size {
        flag("size", size.as_ref());
    }
    flag("block-size", s.block_size.as_ref());
    flag("durability", s.durability.as_ref());
    flag("flush-max-ms", s.flush_max_ms.to_string().as_ref());
    flag("defrag-threshold", s.defrag_threshold.to_string().as_ref());
    flag("strategy", s.strategy.as_ref());
    flag("ioengine", s.ioengine.as_ref());
    flag("iodepth", s.iodepth.to_string().as_ref());
    if let Some(c) = &s.cache_size {
        flag("cache-size", c.as_ref());
    }
    // Empty only in options not made by the parser (`Default`).
    if !s.cache_writes.is_empty() {
        flag("cache-writes", s.cache_writes.as_ref());
    }
    // Bare, the grant names every --path: an empty value.
    match &s.allow_write_device {
        Some(d) if d.as_os_str().is_empty() => argv.push("--allow-write-device".into()),
        Some(d) => flag("allow-write-device", d.as_os_str()),
        None => {}
    }
    let switches = [("sparse", s.sparse), ("repair", s.repair)];
    argv.extend(
        switches
            .iter()
            .filter(|s| s.1)
            .map(|s| format!("--{}", s.0).into()),
    );
    argv
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_defaults_round_trip() {
        let d = YcsbOptions::defaults();
        assert_eq!(YcsbOptions::from_argv(d.to_argv()).unwrap(), d);
    }

    #[test]
    fn every_option_changed_round_trips() {
        let mut o = YcsbOptions::defaults();
        o.store = StoreOptions {
            path: vec![PathBuf::from("/tmp/a b.kv"), PathBuf::from("/tmp/=c.kv")],
            size: Some("64m".into()),
            sparse: true,
            block_size: "256k".into(),
            durability: "buffered".into(),
            flush_max_ms: 7,
            defrag_threshold: 12.5,
            strategy: "pread".into(),
            ioengine: "libaio".into(),
            iodepth: 9,
            allow_write_device: Some(PathBuf::new()),
            repair: true,
            cache_size: Some("0".into()),
            cache_writes: "no".into(),
        };
        (o.workload, o.field_count, o.field_length) = ("ETC".into(), 3, 77);
        (o.min_field_length, o.field_length_distribution) = (5, "zipfian".into());
        (o.records, o.operations, o.clients) = (12, u64::MAX, 300);
        (o.time, o.server) = (Some("1500ms".into()), Some("127.0.0.1:6380".into()));
        (o.tasks, o.no_load, o.output_format, o.seed) = (true, true, "json".into(), 42);
        let argv = o.to_argv();
        assert_eq!(YcsbOptions::from_argv(&argv).unwrap(), o, "{argv:?}");
        // Open loop instead of tasks (the two conflict), a named grant.
        (o.tasks, o.target) = (false, Some(0.1 + 0.2));
        o.store.allow_write_device = Some(PathBuf::from("/dev/loop7"));
        assert_eq!(YcsbOptions::from_argv(o.to_argv()).unwrap(), o);
    }
}
