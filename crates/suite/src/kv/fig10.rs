//! The Fig 10 report: the store's throughput and read latency against
//! clients, a line per strategy.

use crate::page::{self, Section};
use crate::sweep::{self, SweepDir};

/// Reads served by the store's RAM cache above this share make a Fig 10
/// point a measure of the cache rather than of the I/O path.
pub const CACHE_HITS_NOTED_PCT: f64 = 10.0;

/// A warning when some point's reads were mostly cache hits.
fn cache_note(medians: &sweep::PerPoint<f64>) -> Option<String> {
    let most = medians
        .iter()
        .filter_map(|(_, m)| m.hit_pct)
        .fold(f64::NAN, f64::max);
    (most > CACHE_HITS_NOTED_PCT).then(|| {
        format!(
            "Up to {most:.0}% of the reads of a point were served by the store's RAM cache: those points measure the cache more than the device path the paper's figure is about (run without --cache-size, whose default here is no cache)."
        )
    })
}

/// The Fig 10 report: throughput and read latency against clients, a line
/// per strategy (and device count, when the sweep has several: see
/// [`crate::kv::fig10_devices::section`]).
pub fn fig10_section(s: &SweepDir) -> Section {
    let at = |name: &str, or: usize| {
        s.def
            .params
            .iter()
            .position(|p| p.name == name)
            .unwrap_or(or)
    };
    let (st_i, cl_i) = (at("strategy", 0), at("clients", 1));
    let mut charts = page::chart_of::sweep_charts_by(s, cl_i, "");
    charts.retain(|c| !c.title.starts_with("mean latency"));
    let medians = s.medians();
    let mut findings = Vec::new();
    for (dev, st) in crate::kv::fig10_devices::lines(s, st_i) {
        let line: Vec<(&String, f64)> = medians
            .iter()
            .filter(|(v, _)| v[st_i] == st && dev.as_ref().is_none_or(|(i, n)| &v[*i] == n))
            .filter_map(|(v, m)| Some((&v[cl_i], m.ops_per_s?)))
            .collect();
        let Some(peak) = line.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let last = line.last().expect("a peak implies a point");
        let on = dev.map_or(String::new(), |(_, n)| format!(" on {n} devices"));
        let mut f = format!(
            "{st}{on}: peaks at {} ops/s with {} clients",
            page::chart_of::fmt_num(peak.1),
            peak.0
        );
        if last.0 != peak.0 {
            f += &format!(
                "; at {} clients it keeps {:.0}% of that",
                last.0,
                last.1 / peak.1 * 100.0
            );
        }
        findings.push(f + ".");
    }
    let total = s.def.points().len();
    let mut notes = if s.points.len() < total {
        vec![format!(
            "{} of {total} points measured so far: rerun the same command to finish.",
            s.points.len()
        )]
    } else {
        Vec::new()
    };
    notes.extend(cache_note(&medians));
    Section {
        claims: crate::kv::fig10_claims::claims(s),
        heading: s.def.title.clone(),
        findings,
        charts,
        tables: vec![page::chart_of::points_table(s)],
        notes,
    }
}
