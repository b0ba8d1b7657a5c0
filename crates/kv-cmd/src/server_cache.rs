//! The RAM cache's counters of a store or a server, and their report line.

use hiops_kv::resp::Value;
use hiops_kv::CacheStats;

/// The RAM cache's counters of a hiops kv server, from its INFO (None for
/// a server without them, such as redis-server).
pub fn server_cache(addr: &str) -> Option<CacheStats> {
    let mut conn = hiops_kv::ycsb::RespConn::connect(addr).ok()?;
    let info = match conn.call(&[b"INFO", b"hiops"]).ok()? {
        Value::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => return None,
    };
    let field = |name: &str| -> Option<u64> {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("hiops_cache_{name}:")))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(CacheStats {
        capacity: field("capacity")?,
        bytes: field("bytes")?,
        entries: field("entries")?,
        hits: field("hits")?,
        misses: field("misses")?,
        evictions: field("evictions")?,
        fills: field("fills")?,
        fills_refused: field("fills_refused")?,
        // Servers before writes were cached do not say.
        written: field("written").unwrap_or(0),
        invalidations: field("invalidations")?,
    })
}

/// The cache's counters as a report line.
pub fn cache_line(c: &CacheStats) -> String {
    if c.capacity == 0 {
        return "# cache: off (--cache-size 0)".into();
    }
    // Since the store opened: against counters at zero.
    let rate = c.hit_pct_since(&CacheStats::default());
    format!(
        "# cache: {} hits, {} misses ({rate:.1}% hits), {} evictions, {} of {} bytes in {} entries",
        c.hits, c.misses, c.evictions, c.bytes, c.capacity, c.entries
    )
}
