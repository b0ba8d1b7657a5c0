//! What `hiops kv ycsb` prints: its report as JSON (written by the
//! command, read back by the programs that run it as a child) or as
//! YCSB's text.

use crate::server_cache::cache_line;
use hiops_kv::ycsb::{self, PhaseResult, RunConfig};
use hiops_kv::{CacheStats, StoreStats};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// How the run phase's clients ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientsAs {
    /// A thread each.
    Threads,
    /// Futures on a runtime thread per CPU (`--tasks`).
    Tasks,
}

impl ClientsAs {
    pub fn name(self) -> &'static str {
        match self {
            ClientsAs::Threads => "threads",
            ClientsAs::Tasks => "tasks",
        }
    }
}

/// `hiops kv ycsb --output-format json`: one run on one host.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct YcsbReport {
    /// The store or the server, as [`hiops_kv::ycsb::Target::describe`]
    /// names it.
    pub target: String,
    pub clients_as: ClientsAs,
    pub config: RunConfig,
    /// The load phase (unless `--no-load`), then the run phase.
    pub phases: Vec<PhaseResult>,
    /// The embedded store's counters. Written, never read back: a run
    /// against a server (the only kind another program reads) has none.
    #[serde(skip_deserializing)]
    pub store: Option<StoreStats>,
    /// The RAM cache's counters, of the store or of a hiops kv server.
    pub cache: Option<CacheStats>,
    /// A signal stopped the run: a partial run, not a result.
    pub interrupted: bool,
}

impl YcsbReport {
    /// The report as the command prints it: pretty JSON, every object's
    /// keys in sorted order (as `hiops kv ycsb` has always written them).
    pub fn to_json(&self) -> String {
        let value = serde_json::to_value(self).expect("a report is plain data");
        serde_json::to_string_pretty(&value).expect("JSON values serialise") + "\n"
    }

    /// A report from [`YcsbReport::to_json`]'s text.
    pub fn from_json(text: &[u8]) -> serde_json::Result<YcsbReport> {
        serde_json::from_slice(text)
    }

    /// The run phase: the last one (None if the load phase was all that
    /// ran).
    pub fn run_phase(&self) -> Option<&PhaseResult> {
        self.phases.last().filter(|p| p.phase == "run")
    }

    /// YCSB's text: each phase, then the embedded store's and the cache's
    /// counters where there are some.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if self.interrupted {
            out += "# INTERRUPTED by a signal: a partial run, not a result\n";
        }
        let (clients, w) = (self.config.clients, &self.config.workload.name);
        let _ = writeln!(out, "# YCSB workload {w} against {}", self.target);
        for p in &self.phases {
            // The load phase always runs on threads.
            let how = match p.phase.as_str() {
                "run" => self.clients_as.name(),
                _ => ClientsAs::Threads.name(),
            };
            let _ = writeln!(out, "# {} phase, {clients} clients as {how}", p.phase);
            let _ = write!(out, "{}", ycsb::ycsb_text(p));
        }
        if let Some(s) = &self.store {
            let _ = writeln!(
                out,
                "# store: {} keys, index {:.1} bytes per key, {} device reads, {} flushes",
                s.keys, s.index_bytes_per_key, s.device_reads, s.flushes
            );
        }
        if let Some(c) = &self.cache {
            let _ = writeln!(out, "{}", cache_line(c));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_kv::ycsb::Workload;

    fn report() -> YcsbReport {
        let config = RunConfig {
            workload: Workload::core('C').unwrap(),
            records: 10,
            operations: 20,
            max_time: Some(std::time::Duration::from_millis(1500)),
            clients: 3,
            target_ops: None,
            seed: 3,
        };
        YcsbReport {
            target: "127.0.0.1:6380".into(),
            clients_as: ClientsAs::Tasks,
            config,
            phases: vec![ycsb::merge(&[])],
            store: None,
            cache: Some(CacheStats {
                capacity: 1 << 20,
                hits: 5,
                ..CacheStats::default()
            }),
            interrupted: false,
        }
    }

    #[test]
    fn what_the_command_writes_reads_back_the_same() {
        let r = report();
        let text = r.to_json();
        let back = YcsbReport::from_json(text.as_bytes()).unwrap();
        assert_eq!(back.to_json(), text);
        assert_eq!(back.clients_as, ClientsAs::Tasks);
        assert_eq!(back.config.max_time, r.config.max_time);
        assert_eq!(back.cache, r.cache);
        assert_eq!(back.run_phase().unwrap().phase, "run");
    }

    #[test]
    fn its_keys_are_sorted_at_every_level() {
        let text = report().to_json();
        let at = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        let top = [
            "cache",
            "clients_as",
            "config",
            "interrupted",
            "phases",
            "store",
            "target",
        ];
        assert!(top.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
        // Inside config too: clients before max_time before workload.
        assert!(at("clients") < at("max_time") && at("max_time") < at("workload"));
    }
}
