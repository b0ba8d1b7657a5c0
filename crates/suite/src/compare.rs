//! `hiops compare A B`: two runs or reports side by side, with ratios.
//!
//! Each side is a sweep or suite directory (its points' medians, matched by
//! parameters) or a JSON result of `hiops run` or fio itself (matched by job
//! name), so a hiops run compares with a fio run of the same job.

use crate::page::chart_of::{fmt_num, metric_label};
use crate::page::Table;
use crate::sweep::SweepDir;
use crate::SuiteError;
use hiops_report::figures::{Figure, PointFigures};
use hiops_report::fio_doc::{Direction, FioDoc};
use std::path::Path;

type Entries = Vec<(String, PointFigures)>;

/// The figures compared, in order; others a side has are left out.
const COMPARED: &[Figure] = &[
    Figure::Iops,
    Figure::BwMbps,
    Figure::LatMeanUs,
    Figure::LatP50Us,
    Figure::LatP99Us,
    Figure::ClocksPerIo,
    Figure::CpuBusyPct,
    Figure::CtxPerIo,
    Figure::HandoffP99Us,
];

pub fn entries(path: &Path) -> Result<Entries, SuiteError> {
    if path.is_dir() {
        let mut dirs = Vec::new();
        if path.join("sweep.json").exists() {
            dirs.push((String::new(), path.to_path_buf()));
        }
        let mut subs: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| crate::sweep::io_err(path, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.join("sweep.json").exists())
            .collect();
        subs.sort();
        for p in subs {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            dirs.push((format!("{name}: "), p));
        }
        if dirs.is_empty() {
            return Err(SuiteError::NothingToCompare {
                path: path.to_path_buf(),
            });
        }
        let mut out = Vec::new();
        for (prefix, d) in dirs {
            let s = SweepDir::load(&d)?;
            for (values, m) in s.medians() {
                out.push((format!("{prefix}{}", s.def.label(&values)), m));
            }
        }
        Ok(out)
    } else {
        let text = hiops_bench::input::read_text(path, &crate::sweep::MAX_REPORT_FILE)?;
        let doc: FioDoc = serde_json::from_str(&text).map_err(|source| SuiteError::NotJson {
            path: path.to_path_buf(),
            source,
        })?;
        if doc.jobs.is_empty() {
            return Err(SuiteError::NoJobs {
                path: path.to_path_buf(),
            });
        }
        Ok(fio_json_entries(&doc))
    }
}

/// Per job of a fio-schema document: IOPS, bandwidth, completion latency
/// and (hiops only, one job) machine clocks per I/O. A job's directions
/// add up; its percentiles are the slower direction's.
fn fio_json_entries(doc: &FioDoc) -> Entries {
    let clocks = (doc.hiops.as_ref())
        .and_then(|h| h.machine.as_ref())
        .and_then(|m| m.clocks_per_io)
        .filter(|_| doc.jobs.len() == 1);
    let mut out = Vec::new();
    for j in &doc.jobs {
        let name = if j.jobname.is_empty() {
            "job"
        } else {
            &j.jobname
        };
        let dirs: Vec<&Direction> = [&j.read, &j.write]
            .into_iter()
            .flatten()
            .filter(|d| d.total_ios > 0)
            .collect();
        let n: u64 = dirs.iter().map(|d| d.total_ios).sum();
        let mut m = PointFigures {
            iops: Some(dirs.iter().map(|d| d.iops).sum()),
            bw_mbps: Some(dirs.iter().map(|d| d.bw as f64).sum::<f64>() * 1024.0 / 1e6),
            clocks_per_io: clocks,
            ..PointFigures::default()
        };
        if n > 0 {
            let weighted: f64 = (dirs.iter())
                .map(|d| d.clat_ns.mean * d.total_ios as f64)
                .sum();
            m.lat_mean_us = Some(weighted / n as f64 / 1e3);
            let slowest = |p: f64| dirs.iter().filter_map(|d| d.clat_ns.at(p)).max();
            if let (Some(p50), Some(p99)) = (slowest(50.0), slowest(99.0)) {
                m.lat_p50_us = Some(p50 as f64 / 1e3);
                m.lat_p99_us = Some(p99 as f64 / 1e3);
            }
        }
        out.push((name.to_string(), m));
    }
    out
}

/// Rows matched by key: a row per key and figure both sides have, with B/A.
pub fn compare(a: &Entries, b: &Entries) -> Result<Table, SuiteError> {
    let mut rows = Vec::new();
    // One unnamed job on each side (two single runs): compare them as one.
    let single = a.len() == 1 && b.len() == 1;
    for (key, ma) in a {
        let Some((_, mb)) = b.iter().find(|(k, _)| single || k == key) else {
            continue;
        };
        for metric in COMPARED {
            let (Some(va), Some(vb)) = (ma.figure(*metric), mb.figure(*metric)) else {
                continue;
            };
            let ratio = if *va != 0.0 {
                format!("{:.2}", vb / va)
            } else {
                "-".into()
            };
            rows.push(vec![
                key.clone(),
                metric_label(*metric).to_string(),
                fmt_num(*va),
                fmt_num(*vb),
                ratio,
            ]);
        }
    }
    assert!(
        rows.iter().all(|r| r.len() == 5),
        "a row for each column: point, figure, A, B, B/A"
    );
    if rows.is_empty() {
        let keys = |e: &Entries| {
            e.iter()
                .take(4)
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(SuiteError::NoCommonPoint {
            a: keys(a),
            b: keys(b),
        });
    }
    Ok(Table {
        caption: "B against A".into(),
        header: vec![
            "point".into(),
            "figure".into(),
            "A".into(),
            "B".into(),
            "B/A".into(),
        ],
        rows,
    })
}

/// The table as aligned text for a terminal.
pub fn text(t: &Table) -> String {
    let mut widths: Vec<usize> = t.header.iter().map(|h| h.chars().count()).collect();
    for r in &t.rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&t.header).chain(&t.rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w - c.chars().count();
                if i < 2 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn typed(v: &Value) -> FioDoc {
        serde_json::from_value(v.clone()).unwrap()
    }

    fn fio_doc(iops: f64, clat_mean: f64) -> Value {
        serde_json::json!({"jobs": [{"jobname": "j", "read": {"total_ios": 100, "iops": iops, "bw": iops * 4.0,
            "clat_ns": {"mean": clat_mean, "percentile": {"50.000000": 1000, "99.000000": 5000}}},
            "write": {"total_ios": 0, "iops": 0.0, "bw": 0}}]})
    }

    #[test]
    fn two_json_results_compare_job_by_job_with_ratios() {
        let a = fio_json_entries(&typed(&fio_doc(1000.0, 2000.0)));
        let mut b_doc = fio_doc(1500.0, 1000.0);
        b_doc["jobs"][0]["jobname"] = "other".into();
        b_doc["hiops"] = serde_json::json!({"machine": {"clocks_per_io": 9000.0}});
        let b = fio_json_entries(&typed(&b_doc));
        let t = compare(&a, &b).unwrap();
        let iops = t.rows.iter().find(|r| r[1] == "IOPS").unwrap();
        assert_eq!(iops[2..], ["1000", "1500", "1.50"]);
        let bw = t.rows.iter().find(|r| r[1] == "bandwidth (MB/s)").unwrap();
        assert_eq!(bw[2..], ["4.096", "6.144", "1.50"]);
        let lat = t.rows.iter().find(|r| r[1] == "mean latency (µs)").unwrap();
        assert_eq!(lat[4], "0.50");
        assert!(
            !t.rows.iter().any(|r| r[1].contains("clocks")),
            "only B has clocks"
        );
        assert!(text(&t).lines().count() == t.rows.len() + 1);
    }

    #[test]
    fn a_jobs_directions_add_up_and_its_percentiles_are_the_slower_directions() {
        let mut doc = fio_doc(1000.0, 2000.0);
        doc["jobs"][0]["write"] = serde_json::json!({"total_ios": 300, "iops": 3000.0, "bw": 12000,
            "clat_ns": {"mean": 4000.0, "percentile": {"50.000000": 800, "99.000000": 9000}}});
        let (_, m) = &fio_json_entries(&typed(&doc))[0];
        assert_eq!(m.iops, Some(4000.0));
        assert_eq!(m.bw_mbps, Some(16000.0 * 1024.0 / 1e6));
        // (100 x 2 µs + 300 x 4 µs) / 400.
        assert_eq!(m.lat_mean_us, Some(3.5));
        assert_eq!((m.lat_p50_us, m.lat_p99_us), (Some(1.0), Some(9.0)));
        doc["jobs"][0]["read"]["clat_ns"]["percentile"] = Value::Null;
        doc["jobs"][0]["write"]["clat_ns"]["percentile"] = Value::Null;
        let (_, m) = &fio_json_entries(&typed(&doc))[0];
        assert_eq!(
            (m.lat_p50_us, m.lat_p99_us),
            (None, None),
            "not shown: none"
        );
    }

    #[test]
    fn a_document_without_jobs_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.json");
        std::fs::write(&path, r#"{"fio version": "fio-3.33", "jobs": []}"#).unwrap();
        let e = entries(&path).unwrap_err().to_string();
        assert!(e.contains("empty.json"), "{e}");
        std::fs::write(&path, "not json").unwrap();
        assert!(matches!(entries(&path), Err(SuiteError::NotJson { .. })));
    }

    #[test]
    fn nothing_in_common_is_an_error_that_names_both_sides() {
        let one = PointFigures {
            iops: Some(1.0),
            ..PointFigures::default()
        };
        let a2 = vec![
            ("x=1".to_string(), one.clone()),
            ("x=2".to_string(), PointFigures::default()),
        ];
        let b = vec![("y=1".to_string(), one)];
        let e = compare(&a2, &b).unwrap_err().to_string();
        assert!(e.contains("x=1") && e.contains("y=1"), "{e}");
        assert!(entries(Path::new("/nonexistent.json")).is_err());
    }
}
