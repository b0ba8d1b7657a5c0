//! Fig 10 over several devices (`hiops kv fig10` with several --path): the
//! sweep's `devices` parameter, its own section (throughput and device IOPS
//! against the device count, a line per strategy and client count) and
//! the lines of the main section split by it.

use crate::page::chart_of;
use crate::page::Section;
use crate::sweep::SweepDir;

/// The sweep parameter of the device count.
pub const DEVICES: &str = "devices";

/// The main section's lines: each strategy (the values of parameter
/// `st_i`), per device count when the sweep has one (its parameter index
/// and value).
pub fn lines(s: &SweepDir, st_i: usize) -> Vec<(Option<(usize, String)>, String)> {
    let strategies = &s.def.params[st_i].values;
    let Some(d) = s.def.params.iter().position(|p| p.name == DEVICES) else {
        return strategies.iter().map(|st| (None, st.clone())).collect();
    };
    s.def.params[d]
        .values
        .iter()
        .flat_map(|n| {
            strategies
                .iter()
                .map(move |st| (Some((d, n.clone())), st.clone()))
        })
        .collect()
}

/// The section over the device count, if the sweep has one.
pub fn section(s: &SweepDir) -> Option<Section> {
    let d = s.def.params.iter().position(|p| p.name == DEVICES)?;
    let mut charts = chart_of::sweep_charts_by(s, d, "");
    charts.retain(|c| {
        c.title.starts_with("operations per second") || c.title.starts_with("device IOPS")
    });
    let medians = s.medians();
    let ops_at = |n: &String| {
        medians
            .iter()
            .filter(|(v, _)| &v[d] == n)
            .filter_map(|(_, m)| m.ops_per_s)
            .fold(0.0, f64::max)
    };
    let counts = &s.def.params[d].values;
    let mut findings = Vec::new();
    if let (Some(first), Some(last)) = (counts.first(), counts.last()) {
        let (one, all) = (ops_at(first), ops_at(last));
        if one > 0.0 && all > 0.0 && first != last {
            findings.push(format!(
                "Best point on {last} devices: {} ops/s, {:.2}x the best on {first}.",
                chart_of::fmt_num(all),
                all / one
            ));
        }
    }
    Some(Section {
        claims: Vec::new(),
        heading: "Fig 10 over 1..N devices".into(),
        findings,
        charts,
        tables: Vec::new(),
        notes: vec![
            "Each device count n is a store over the first n --path, keys placed by digest, each device with its own write blocks, flusher and I/O path; device IOPS sum its block devices (none for files on tmpfs).".into(),
        ],
    })
}
