//! The server's INFO reply, as Redis lays it out: `# Section` blocks of
//! `name:value` lines, each block ended by an empty line. Built from a
//! table of sections so that a field is named once, beside its value.

use crate::server_state::Shared;
use crate::store::{Store, StoreStats};
use crate::{CacheStats, DeviceStats};
use std::sync::atomic::Ordering::Relaxed;

/// The Redis version clients are told, for the commands implemented.
pub(crate) const REDIS_VERSION: &str = "7.0.0";

/// One section: its title and its fields in order.
type Section = (&'static str, Vec<(String, String)>);

/// Fields from pairs whose names are static and values anything printable.
fn fields<const N: usize>(pairs: [(&str, String); N]) -> Vec<(String, String)> {
    pairs.map(|(k, v)| (k.to_string(), v)).into_iter().collect()
}

impl Shared {
    /// Every section of INFO, in the server's order.
    pub(crate) fn info(&self) -> String {
        // One snapshot of the store for every section.
        let s = self.store.stats();
        let mut hiops = self.hiops_fields(&s);
        hiops.extend(cache_fields(&s.cache));
        hiops.extend(device_fields(&s.devices));
        let sections: [Section; 6] = [
            ("Server", self.server_fields()),
            ("Clients", self.client_fields()),
            ("Stats", self.stats_fields(&s)),
            ("Persistence", persistence_fields(&s)),
            (
                "Keyspace",
                fields([("db0", format!("keys={},expires=0,avg_ttl=0", s.keys))]),
            ),
            ("Hiops", hiops),
        ];
        render(&sections)
    }

    fn server_fields(&self) -> Vec<(String, String)> {
        fields([
            ("redis_version", REDIS_VERSION.to_string()),
            ("hiops_version", env!("CARGO_PKG_VERSION").to_string()),
            ("redis_mode", "standalone".to_string()),
            ("os", "Linux".to_string()),
            ("process_id", std::process::id().to_string()),
            ("tcp_port", self.port.to_string()),
            (
                "uptime_in_seconds",
                self.started.elapsed().as_secs().to_string(),
            ),
            ("hiops_server_model", self.cfg.model.name().to_string()),
            ("hiops_tcp_backlog", self.backlog.to_string()),
            (
                "hiops_runtime_cpus",
                self.runtime_cpus.get().cloned().unwrap_or_default(),
            ),
        ])
    }

    fn client_fields(&self) -> Vec<(String, String)> {
        let c = &self.counters;
        fields([
            ("connected_clients", c.connected.load(Relaxed).to_string()),
            ("maxclients", self.cfg.max_clients.to_string()),
            (
                "hiops_query_buffers_bytes",
                self.query_bytes.load(Relaxed).to_string(),
            ),
            (
                "hiops_clients_refused_input",
                c.refused_input.load(Relaxed).to_string(),
            ),
        ])
    }

    fn stats_fields(&self, s: &StoreStats) -> Vec<(String, String)> {
        let c = &self.counters;
        fields([
            (
                "total_connections_received",
                c.connections.load(Relaxed).to_string(),
            ),
            (
                "total_commands_processed",
                c.commands.load(Relaxed).to_string(),
            ),
            ("rejected_connections", c.rejected.load(Relaxed).to_string()),
            (
                "acl_access_denied_auth",
                c.auth_failures.load(Relaxed).to_string(),
            ),
            (
                "hiops_protected_mode_denied",
                c.denied.load(Relaxed).to_string(),
            ),
            ("keyspace_hits", s.get_hits.to_string()),
            ("keyspace_misses", (s.gets - s.get_hits).to_string()),
        ])
    }

    /// The store's and the path's own fields (the Hiops section's start).
    fn hiops_fields(&self, s: &StoreStats) -> Vec<(String, String)> {
        let p = path_counters(&self.store);
        let ring_ios = self.counters.ring_ios.load(Relaxed);
        let mut out = fields([
            ("hiops_path", s.strategy.to_string()),
            ("hiops_index_bytes", s.index_bytes.to_string()),
            (
                "hiops_index_bytes_per_key",
                format!("{:.1}", s.index_bytes_per_key),
            ),
            ("hiops_tombstones", s.tombstones.to_string()),
            ("hiops_blocks", s.blocks.to_string()),
            ("hiops_blocks_free", s.blocks_free.to_string()),
            ("hiops_block_size", s.block_size.to_string()),
            ("hiops_live_bytes", s.live_bytes.to_string()),
            ("hiops_device_reads", s.device_reads.to_string()),
            ("hiops_memory_reads", s.memory_reads.to_string()),
            ("hiops_flushes", s.flushes.to_string()),
            ("hiops_flushed_bytes", s.flushed_bytes.to_string()),
            ("hiops_defrag_blocks", s.defrag_blocks.to_string()),
            ("hiops_defrag_moved", s.defrag_moved.to_string()),
        ]);
        out.extend(fields([
            ("hiops_path_issued", p.issued.to_string()),
            ("hiops_path_wakeups", p.wakeups.to_string()),
            (
                "hiops_path_reaped_for_others",
                p.reaped_for_others.to_string(),
            ),
            ("hiops_task_ring_ios", ring_ios.to_string()),
            ("hiops_workers", s.workers.to_string()),
            ("hiops_worker_ios", s.worker_ios.to_string()),
            ("hiops_worker_ring_ios", s.worker_ring_ios.to_string()),
            ("hiops_max_value_bytes", self.store.max_value(0).to_string()),
            (
                "hiops_proto_max_bulk_len",
                self.cfg.limits.max_bulk.to_string(),
            ),
        ]));
        out
    }
}

fn persistence_fields(s: &StoreStats) -> Vec<(String, String)> {
    fields([
        ("loading", "0".to_string()),
        ("hiops_durability", format!("{:?}", s.durability)),
        ("hiops_recovery_ms", format!("{:.1}", s.recovery.millis)),
        (
            "hiops_recovery_records",
            s.recovery.records_scanned.to_string(),
        ),
    ])
}

/// Sections as Redis writes them: `# Title`, `name:value` lines, an empty
/// line between sections (none after the last).
fn render(sections: &[Section]) -> String {
    let blocks: Vec<String> = sections
        .iter()
        .map(|(title, fields)| {
            let mut b = format!("# {title}\r\n");
            for (k, v) in fields {
                b += &format!("{k}:{v}\r\n");
            }
            b
        })
        .collect();
    blocks.join("\r\n")
}

/// The I/O paths' counters summed over the store's devices.
fn path_counters(store: &Store) -> hiops_path::PathCounters {
    let mut t = hiops_path::PathCounters::default();
    store.paths().for_each(|p| t.add(&p.counters()));
    t
}

/// The RAM cache tier's fields of the Hiops section.
fn cache_fields(c: &CacheStats) -> Vec<(String, String)> {
    fields([
        ("hiops_cache_capacity", c.capacity.to_string()),
        ("hiops_cache_bytes", c.bytes.to_string()),
        ("hiops_cache_entries", c.entries.to_string()),
        ("hiops_cache_hits", c.hits.to_string()),
        ("hiops_cache_misses", c.misses.to_string()),
        ("hiops_cache_evictions", c.evictions.to_string()),
        ("hiops_cache_fills", c.fills.to_string()),
        ("hiops_cache_fills_refused", c.fills_refused.to_string()),
        ("hiops_cache_written", c.written.to_string()),
        ("hiops_cache_invalidations", c.invalidations.to_string()),
    ])
}

/// One field per device (records, blocks, reads, writes), as `dbN` lines
/// are in the Keyspace section, after their count.
fn device_fields(devices: &[DeviceStats]) -> Vec<(String, String)> {
    let mut out = fields([("hiops_devices", devices.len().to_string())]);
    for (i, d) in devices.iter().enumerate() {
        let value = format!(
            "path={},keys={},blocks={},blocks_free={},live_bytes={},gets={},sets={},dels={},device_reads={},flushes={},flushed_bytes={},defrag_blocks={}",
            d.path.display(),
            d.keys,
            d.blocks,
            d.blocks_free,
            d.live_bytes,
            d.gets,
            d.sets,
            d.dels,
            d.device_reads,
            d.flushes,
            d.flushed_bytes,
            d.defrag_blocks,
        );
        out.push((format!("hiops_device{i}"), value));
    }
    out
}

/// Redis's INFO selection: no argument, `default`, `all` or `everything`
/// give every section; otherwise the named sections (any case), in the
/// server's order; an unknown name gives nothing.
pub(crate) fn info_sections(full: &str, wanted: &[&[u8]]) -> String {
    let names: Vec<String> = wanted
        .iter()
        .map(|w| String::from_utf8_lossy(w).to_ascii_lowercase())
        .collect();
    if names.is_empty()
        || names
            .iter()
            .any(|n| matches!(n.as_str(), "default" | "all" | "everything"))
    {
        return full.to_string();
    }
    let blocks: Vec<&str> = full
        .split("\r\n\r\n")
        .map(|b| b.trim_end_matches("\r\n"))
        .filter(|block| {
            let title = block
                .strip_prefix("# ")
                .and_then(|b| b.split("\r\n").next())
                .unwrap_or("");
            names.iter().any(|n| n.eq_ignore_ascii_case(title))
        })
        .collect();
    if blocks.is_empty() {
        return String::new();
    }
    blocks.join("\r\n\r\n") + "\r\n"
}
