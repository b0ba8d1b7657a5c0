//! What a run across ranks (MPI) prints on rank 0: fio's client-mode JSON
//! (`client_stats`: every rank's jobs with its `hostname`, then each job of
//! all ranks merged under fio's name "All clients"), and in text the merged
//! summary with a per-rank and a per-host table.

use crate::derived::iops;
use crate::json::{disk_util, fio_units, job_obj, run_figures};
use hiops_bench::cluster::{Cluster, HostCpu};
use hiops_bench::RunResult;
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// fio's name for the entry that sums every client.
pub const ALL_CLIENTS: &str = "All clients";

/// The run as fio's `--client` mode writes it. With one rank, `"global
/// options"` is an object (as fio writes it for one client), else one
/// object per rank.
pub fn to_fio_client_json(
    c: &Cluster,
    global_options: &[(String, String)],
    ignored: &[String],
    bins: bool,
) -> Value {
    let globals: Map<String, Value> = global_options
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let globals = if c.ranks.len() == 1 {
        Value::Object(globals)
    } else {
        let per_rank = c.ranks.iter().map(|r| {
            let mut g = globals.clone();
            g.insert("hostname".into(), json!(r.host));
            g.insert("port".into(), json!(0));
            Value::Object(g)
        });
        Value::Array(per_rank.collect())
    };
    let mut stats = Vec::new();
    let mut disks = Vec::new();
    for p in 0..c.all.len() {
        stats.extend(phase_stats(c, p, bins));
        disks.extend(phase_disks(c, p));
    }
    let started = c.all.iter().map(|r| r.started_unix_s).min().unwrap_or(0);
    json!({
        "fio version": format!("hiops-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": started,
        "time": "",
        "global options": globals,
        "client_stats": stats,
        "disk_util": disks,
        "hiops": {
            "version": env!("CARGO_PKG_VERSION"),
            "ranks": c.ranks.len(),
            "hosts": c.host_names(),
            "phases": (0..c.all.len()).map(|p| phase_figures(c, p)).collect::<Vec<_>>(),
            "ignored_options": ignored,
        },
    })
}

/// Identifies an entry as fio does (its client's host and port), and by
/// rank, since one host may run several ranks.
fn client_info(obj: &mut Value, host: &str, rank: Option<usize>) {
    obj["hostname"] = json!(host);
    obj["port"] = json!(0);
    obj["hiops"]["rank"] = json!(rank);
}

/// One phase's entries: every rank's jobs, then each job of all ranks.
fn phase_stats(c: &Cluster, p: usize, bins: bool) -> Vec<Value> {
    // A cluster holds only ranks that finished (a failed one fails the merge).
    assert_eq!(
        c.phase(p).count(),
        c.ranks.len(),
        "phase {p} counts a result for some ranks only"
    );
    let mut out = Vec::new();
    let mut last_host = "";
    for (rank, run) in c.phase(p) {
        for unit in fio_units(run) {
            let mut obj = job_obj(&unit, run, bins);
            client_info(&mut obj, &rank.host, Some(rank.rank));
            out.push(obj);
        }
        last_host = &rank.host;
    }
    if c.ranks.len() < 2 {
        return out;
    }
    let all = &c.all[p];
    for unit in merged_units(c, p) {
        let name = unit.spec.name.clone();
        let mut obj = job_obj(&unit, all, bins);
        obj["jobname"] = json!(ALL_CLIENTS);
        // fio labels the sum with the client that completed it: the last.
        client_info(&mut obj, last_host, None);
        obj["hiops"]["job"] = json!(name);
        obj["hiops"]["ranks"] = json!(c.ranks.len());
        out.push(obj);
    }
    out
}

/// fio's report units (a clone, or a reporting group) of phase `p`, each
/// with every rank's threads: unit `i` of every rank merged.
fn merged_units(c: &Cluster, p: usize) -> Vec<hiops_bench::JobResult> {
    let mut units: Vec<hiops_bench::JobResult> = Vec::new();
    for (_, run) in c.phase(p) {
        let mine = fio_units(run);
        if units.is_empty() {
            units = mine;
            continue;
        }
        assert_eq!(
            units.len(),
            mine.len(),
            "every rank ran the plan all ranks agreed on, unit for unit"
        );
        for (all, u) in units.iter_mut().zip(mine) {
            all.threads.extend(u.threads);
            all.targets.extend(u.targets);
        }
    }
    units
}

/// Every host's devices once (its first rank's), with its host name.
fn phase_disks(c: &Cluster, p: usize) -> Vec<Value> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for (rank, run) in c.phase(p) {
        if seen.contains(&rank.host.as_str()) {
            continue;
        }
        seen.push(&rank.host);
        for mut d in disk_util(run) {
            d["hostname"] = json!(rank.host);
            d["port"] = json!(0);
            out.push(d);
        }
    }
    out
}

fn host_obj(h: &HostCpu) -> Value {
    json!({
        "host": h.host,
        "ranks": h.ranks,
        "total_ios": h.ios,
        "process_clocks_per_io": h.process_per_io(),
        "machine_clocks_per_io": h.machine_per_io(),
    })
}

/// hiops' own figures of phase `p`: all ranks merged, per rank, per host.
fn phase_figures(c: &Cluster, p: usize) -> Value {
    let all = &c.all[p];
    let per_rank: Vec<Value> = c
        .phase(p)
        .map(|(rank, run)| {
            json!({
                "rank": rank.rank,
                "host": rank.host,
                "total_ios": run.total_ios(),
                "window_s": run.window_s(),
                "iops": iops(run.total_ios(), run.window_ns),
                "stonewalled": run.stonewalled,
                "errors": run.jobs.iter().flat_map(|j| j.errors()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut fig = run_figures(all);
    fig["stonewalled"] = json!(all.stonewalled);
    fig["ranks"] = Value::Array(per_rank);
    fig["hosts"] = Value::Array(c.hosts(p).iter().map(host_obj).collect());
    fig["all_hosts"] = host_obj(&c.overall(p));
    fig
}

/// The merged summary (as one run), then the ranks and the hosts.
pub fn summary(c: &Cluster, ignored: &[String]) -> String {
    let mut out = format!(
        "All {} ranks on {} host(s), merged (histograms exact; IOPS over the longest rank's window):\n",
        c.ranks.len(),
        c.host_names().len()
    );
    out.push_str(&crate::text::summary_set(&c.all, ignored));
    for p in 0..c.all.len() {
        if c.all.len() > 1 {
            let _ = writeln!(out, "\n=== ranks, phase {} of {} ===", p + 1, c.all.len());
        }
        out.push_str(&rank_table(c, p));
        out.push_str(&host_table(c, p));
    }
    out
}

fn clat_us(run: &RunResult, q: f64) -> f64 {
    let mut h = hiops_stats::Histogram::new();
    for j in &run.jobs {
        let (rd, wr) = j.merged();
        h.merge(&rd.clat);
        h.merge(&wr.clat);
    }
    h.percentile(q) as f64 / 1e3
}

fn rank_table(c: &Cluster, p: usize) -> String {
    let mut out = format!(
        "\n{:>4}  {:<20} {:>12} {:>12} {:>10} {:>12} {:>12} {:>9}  note\n",
        "rank", "host", "I/Os", "IOPS", "MB/s", "clat p50 us", "clat p99 us", "window s"
    );
    for (rank, run) in c.phase(p) {
        let bytes: u64 = run
            .jobs
            .iter()
            .map(|j| {
                let (rd, wr) = j.merged();
                rd.bytes + wr.bytes
            })
            .sum();
        let errors: Vec<&str> = run.jobs.iter().flat_map(|j| j.errors()).collect();
        let note = match (errors.first(), run.stonewalled) {
            (Some(e), _) => format!("error: {e}"),
            (None, true) => "stonewalled".into(),
            (None, false) => String::new(),
        };
        let line = format!(
            "{:>4}  {:<20} {:>12} {:>12.0} {:>10.1} {:>12.1} {:>12.1} {:>9.2}  {note}",
            rank.rank,
            rank.host,
            run.total_ios(),
            iops(run.total_ios(), run.window_ns),
            bytes as f64 / run.window_s().max(1e-9) / 1e6,
            clat_us(run, 50.0),
            clat_us(run, 99.0),
            run.window_s(),
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

fn host_table(c: &Cluster, p: usize) -> String {
    let mut out = format!(
        "\n{:<20} {:>6} {:>12} {:>19} {:>19}\n",
        "host", "ranks", "I/Os", "process clocks/I/O", "machine clocks/I/O"
    );
    let clocks = |v: Option<f64>| v.map_or("-".to_string(), |c| format!("{c:.0}"));
    let mut hosts = c.hosts(p);
    hosts.push(c.overall(p));
    for h in &hosts {
        let _ = writeln!(
            out,
            "{:<20} {:>6} {:>12} {:>19} {:>19}",
            h.host,
            h.ranks.len(),
            h.ios,
            clocks(h.process_per_io()),
            clocks(h.machine_per_io()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_bench::wire::RankRun;
    use hiops_bench::{JobBuilder, RunOptions, RwMode, TargetSpec};

    fn rank(rank: usize, host: &str) -> RankRun {
        let mut s = JobBuilder::default_for("unused".into());
        s.name = "j".into();
        s.target.targets = TargetSpec::Ram;
        s.io.engine = hiops_hal::EngineKind::Mem;
        s.target.size = Some(hiops_bench::Bytes::new(1 << 20));
        s.workload.rw = RwMode::RandRead;
        s.timing.time_based = false;
        s.timing.runtime = None;
        s.timing.ramp = std::time::Duration::ZERO;
        s.meta.group_reporting = true;
        let stop = std::sync::atomic::AtomicBool::new(false);
        let opts = RunOptions {
            interrupt: &stop,
            progress: None,
            profile: None,
            timeline: false,
        };
        let runs = hiops_bench::run_phases(&[s.build().unwrap()], &[0], opts).unwrap();
        RankRun {
            rank,
            host: host.into(),
            outcome: Ok(runs),
        }
    }

    #[test]
    fn client_stats_hold_each_rank_then_all_clients_summed() {
        let c = Cluster::merge(vec![rank(0, "a"), rank(1, "a"), rank(2, "b")]).unwrap();
        let v = to_fio_client_json(&c, &[("bs".into(), "4k".into())], &[], true);
        let stats = v["client_stats"].as_array().unwrap();
        assert_eq!(stats.len(), 4);
        let hosts: Vec<&str> = stats
            .iter()
            .map(|s| s["hostname"].as_str().unwrap())
            .collect();
        assert_eq!(hosts, ["a", "a", "b", "b"]);
        assert_eq!(stats[3]["jobname"], ALL_CLIENTS);
        assert_eq!(v["global options"].as_array().unwrap()[2]["hostname"], "b");
        let ios = |s: &Value| s["read"]["total_ios"].as_u64().unwrap();
        assert_eq!(
            ios(&stats[3]),
            ios(&stats[0]) + ios(&stats[1]) + ios(&stats[2])
        );
        assert_eq!(ios(&stats[3]), 3 * 256);
        // json+ bins of the sum are the ranks' bins added.
        let bins = |s: &Value| -> u64 {
            s["read"]["clat_ns"]["bins"]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum()
        };
        assert_eq!(bins(&stats[3]), 3 * 256);
        let hosts = &v["hiops"]["phases"][0]["hosts"];
        assert_eq!(hosts[0]["ranks"], json!([0, 1]));
        assert_eq!(v["hiops"]["phases"][0]["all_hosts"]["total_ios"], 3 * 256);
    }

    #[test]
    fn the_text_has_the_merged_run_and_a_row_per_rank_and_host() {
        let c = Cluster::merge(vec![rank(0, "a"), rank(1, "b")]).unwrap();
        let t = summary(&c, &[]);
        assert!(t.starts_with("All 2 ranks on 2 host(s)"), "{t}");
        let rows = |first: &str| {
            t.lines()
                .filter(|l| l.trim_start().starts_with(first))
                .count()
        };
        assert_eq!(rows("0  a"), 1, "{t}");
        assert_eq!(rows("1  b"), 1, "{t}");
        assert_eq!(rows("all "), 1, "{t}");
    }
}
