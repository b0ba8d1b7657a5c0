//! hiops answering as fio writes fio's normal output (fio's default
//! `--output-format=normal`) line for line as fio 3.33 lays it out: the
//! same job through fio and through `hiops fio` gives the same kinds of
//! line in the same order (figures masked), latencies in the unit fio's
//! rule picks, percentiles in fio's columns; `--output-format=normal,json`
//! and `--output=FILE` as fio writes them. `hiops run` keeps its own
//! report. Tests that compare with fio are skipped without it.

mod common;

use common::{fio_in, have_fio, hiops, text};
use serde_json::Value;
use std::path::Path;
use std::process::{Output, Stdio};

/// `hiops fio ARGS` in `dir`.
fn hiops_fio(dir: &Path, args: &[String]) -> Output {
    hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("fio")
        .args(args)
        .output()
        .expect("hiops starts")
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// A figure (digits and point, an SI or IEC prefix after it) as `#`; the
/// indentation kept, the padding of a figure (after `=` or `[`) dropped,
/// other runs of spaces as one.
fn mask(line: &str) -> String {
    let body = line.trim_start_matches(' ');
    let mut out = " ".repeat(line.len() - body.len());
    let c: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_ascii_digit() {
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            if i < c.len() && "KkMGTPE".contains(c[i]) {
                i += 1;
                if i < c.len() && c[i] == 'i' {
                    i += 1;
                }
            }
            out.push('#');
        } else if c[i] == ' ' {
            while i < c.len() && c[i] == ' ' {
                i += 1;
            }
            if !out.ends_with(['=', '[']) {
                out.push(' ');
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// A line's kind: its shape with the figures masked, the units the data
/// decide as `UNIT`; a percentile row, a latency distribution line and
/// the job's date by what they start with.
fn kind(line: &str) -> String {
    let m = mask(line);
    let t = m.trim_start();
    if t.starts_with('|') {
        return "percentile row".into();
    }
    if t.starts_with("lat (") && t.contains(") :") {
        return "lat distribution".into();
    }
    if let Some(at) = m.find("pid=") {
        return m[..at + 4].to_string();
    }
    let mut m = m;
    for unit in [
        "(nsec)", "(usec)", "(msec)", "(KiB/s)", "(MiB/s)", "( KiB/s)", "( MiB/s)",
    ] {
        m = m.replace(unit, "(UNIT)");
    }
    m
}

/// The kinds of a text's lines in order, a run of one kind counted once
/// (rows of a percentile block, distribution lines).
fn kinds(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in text.lines().map(kind) {
        if out.last() != Some(&k) {
            out.push(k);
        }
    }
    out
}

fn assert_same_kinds(fio: &str, hiops: &str) {
    // fio finds a file's disk by its st_dev, which names none on btrfs (an
    // anonymous device); hiops names the disk the file system is mounted
    // from, in the block that ends the output.
    let hiops = match fio.contains("Disk stats (read/write):") {
        true => hiops,
        false => hiops.split("\nDisk stats (read/write):").next().unwrap(),
    };
    let (f, h) = (kinds(fio), kinds(hiops));
    for (i, (a, b)) in f.iter().zip(&h).enumerate() {
        assert_eq!(a, b, "line kind {i} differs\nfio:\n{fio}\nhiops:\n{hiops}");
    }
    assert_eq!(f.len(), h.len(), "fio:\n{fio}\nhiops:\n{hiops}");
}

fn null_job() -> Vec<String> {
    owned(&[
        "--name=j",
        "--ioengine=null",
        "--size=64m",
        "--bs=4k",
        "--rw=randread",
    ])
}

/// A small file job with psync in `dir`, reads and writes for 2 s.
fn psync_job(dir: &Path) -> Vec<String> {
    let mut a = owned(&[
        "--name=p",
        "--ioengine=psync",
        "--size=4m",
        "--bs=4k",
        "--rw=randrw",
        "--runtime=2",
        "--time_based",
    ]);
    a.push(format!("--directory={}", dir.display()));
    a
}

/// The job through fio and through hiops as fio, stdout of each.
fn both(job: impl Fn(&Path) -> Vec<String>) -> (String, String) {
    let (f, h) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let fio = fio_in(f.path(), &job(f.path()));
    assert!(fio.status.success(), "{}", text(&fio));
    let ours = hiops_fio(h.path(), &job(h.path()));
    assert!(ours.status.success(), "{}", text(&ours));
    (
        String::from_utf8(fio.stdout).unwrap(),
        String::from_utf8(ours.stdout).unwrap(),
    )
}

#[test]
fn the_null_engine_job_reads_as_fios_normal_output() {
    if !have_fio() {
        return;
    }
    let (fio, ours) = both(|_| null_job());
    assert_same_kinds(&fio, &ours);
    assert!(
        ours.contains("\nRun status group 0 (all jobs):\n   READ: bw="),
        "{ours}"
    );
    assert!(
        !ours.contains("Cost per I/O"),
        "hiops' analysis stays with hiops run:\n{ours}"
    );
}

/// fio times submissions only where the engine queues an I/O: no slat
/// line for psync or null at depth 1 (the jobs above compare it), one
/// for null at depth 4 and libaio; terse lines carry zeros for it then.
#[test]
fn the_slat_line_is_there_where_fio_times_submissions() {
    if !have_fio() {
        return;
    }
    let queued = |engine: &str| {
        let e = engine.to_string();
        move |dir: &Path| {
            let mut a = psync_job(dir);
            a.retain(|o| !o.starts_with("--ioengine"));
            a.push("--iodepth=4".into());
            a.push(e.clone());
            a
        }
    };
    for engine in ["--ioengine=null", "--ioengine=libaio"] {
        let (fio, ours) = both(queued(engine));
        assert!(fio.contains("    slat ("), "fio, {engine}:\n{fio}");
        assert_same_kinds(&fio, &ours);
    }
    let dir = tempfile::tempdir().unwrap();
    let mut terse = psync_job(dir.path());
    terse.push("--minimal".into());
    let o = hiops_fio(dir.path(), &terse);
    assert!(o.status.success(), "{}", text(&o));
    let line = String::from_utf8(o.stdout).unwrap();
    let f: Vec<&str> = line.trim_end().split(';').collect();
    // Each direction's slat min;max;mean;stddev (after its I/O, bandwidth,
    // IOPS and runtime): zeros, as fio 3.33 writes them for psync.
    for at in [9, 9 + 41] {
        assert_eq!(&f[at..at + 4], ["0", "0", "0.000000", "0.000000"], "{line}");
    }
    // clat's mean, after slat's four fields: timed.
    assert_ne!(f[9 + 6], "0.000000", "clat is timed: {line}");
}

#[test]
fn a_psync_file_job_reads_as_fios_normal_output() {
    if !have_fio() {
        return;
    }
    let (fio, ours) = both(psync_job);
    assert_same_kinds(&fio, &ours);
    for line in [
        "Laying out IO file (1 file / 4MiB)",
        "  write: IOPS=",
        "; 0 zone resets\n",
    ] {
        assert!(ours.contains(line), "{line:?} missing:\n{ours}");
    }
}

#[test]
fn clones_groups_descriptions_mixed_reports_and_steady_state_read_as_fios() {
    if !have_fio() {
        return;
    }
    let null = ["--ioengine=null", "--size=16m", "--rw=randrw"];
    let steady = [
        "--name=s",
        "--rw=read",
        "--ss=iops:20%",
        "--ss_dur=2",
        "--runtime=3",
        "--time_based",
        "--rate_iops=1000",
    ];
    let variants: [&[&str]; 5] = [
        &["--name=a", "--numjobs=2", "--group_reporting"],
        &["--name=a", "--numjobs=2"],
        &["--name=a", "--unified_rw_reporting=mixed"],
        &[
            "--name=a",
            "--description=first",
            "--name=b",
            "--new_group",
            "--rw=write",
        ],
        &steady,
    ];
    for v in variants {
        let (fio, ours) = both(|_| owned(&[&null[..], v].concat()));
        assert_same_kinds(&fio, &ours);
    }
}

#[test]
fn terse_lines_come_between_the_lines_before_the_run_and_the_normal_text() {
    if !have_fio() {
        return;
    }
    let (fio, ours) = both(|_| {
        let mut a = null_job();
        a.push("--output-format=terse,normal".into());
        a
    });
    assert_same_kinds(&fio, &ours);
    let after_start = ours.lines().skip_while(|l| !l.starts_with("Starting "));
    let next: Vec<&str> = after_start.skip(1).take(3).collect();
    assert!(next[0].starts_with("3;fio-3.33;j;0;0;"), "{ours}");
    assert_eq!(next[1], "");
    assert!(
        next[2].starts_with("j: (groupid=0, jobs=1): err= 0: pid="),
        "{ours}"
    );
}

#[test]
fn a_link_named_fio_prints_fios_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let o = hiops().arg("install-fio-link").arg(&bin).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = std::process::Command::new(bin.join("fio"))
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .args(null_job())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let first: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(first[1..], ["fio-3.33", "Starting 1 process"], "{out}");
    assert!(out.contains("\nRun status group 0 (all jobs):\n"), "{out}");
    assert!(!out.contains("Cost per I/O"), "{out}");
}

/// The text before a JSON document, the document, the text after it.
fn split_json(all: &str) -> (&str, Value, &str) {
    let start = all.find("\n{\n").expect("a JSON document") + 1;
    let end = start + all[start..].find("\n}\n").expect("its end") + 3;
    let doc = serde_json::from_str(&all[start..end]).expect("the document is JSON");
    (&all[..start], doc, &all[end..])
}

#[test]
fn normal_and_json_together_and_to_a_file_as_fio_writes_them() {
    if !have_fio() {
        return;
    }
    let (f, h) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let with = |d: &Path| {
        let mut a = psync_job(d);
        a.push("--output-format=normal,json".into());
        a.push(format!("--output={}", d.join("out.txt").display()));
        a
    };
    let fio = fio_in(f.path(), &with(f.path()));
    let ours = hiops_fio(h.path(), &with(h.path()));
    assert!(
        fio.status.success() && ours.status.success(),
        "{}",
        text(&ours)
    );
    assert!(
        ours.stdout.is_empty(),
        "the result goes to --output:\n{}",
        text(&ours)
    );
    let fio = std::fs::read_to_string(f.path().join("out.txt")).unwrap();
    let ours = std::fs::read_to_string(h.path().join("out.txt")).unwrap();
    // fio's order: the lines before the run, the JSON, the normal text.
    let (fio_before, _, fio_after) = split_json(&fio);
    let (before, doc, after) = split_json(&ours);
    assert_same_kinds(fio_before, before);
    assert_same_kinds(fio_after, after);
    check_units(after, &doc);
}

#[test]
fn latencies_take_fios_units_and_percentile_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let mut job = psync_job(tmp.path());
    job.push("--output-format=json,normal".into());
    let o = hiops_fio(tmp.path(), &job);
    assert!(o.status.success(), "{}", text(&o));
    let all = String::from_utf8(o.stdout).unwrap();
    let (_, doc, normal) = split_json(&all);
    check_units(normal, &doc);
}

/// fio's rule for a latency's summary line (stat.h nsec_to_msec/usec).
fn summary_unit(lat: &Value) -> &'static str {
    let n = |k: &str| lat[k].as_f64().unwrap();
    let (min, max, dev) = (n("min"), n("max"), n("stddev"));
    if min > 2e6 && max > 99_999_999.0 && dev > 1e6 {
        "msec"
    } else if min > 2000.0 && max > 99_999.0 && dev > 1000.0 {
        "usec"
    } else {
        "nsec"
    }
}

/// Each direction's summary lines in fio's unit for the JSON's figures,
/// and its clat percentiles in fio's unit, rounded up, four to a row
/// (73 columns) in columns as wide as the largest value, five at least.
fn check_units(normal: &str, doc: &Value) {
    let job = &doc["jobs"][0];
    for dir in ["read", "write"] {
        let block: Vec<&str> = normal
            .lines()
            .skip_while(|l| !l.starts_with(&format!("  {dir}: IOPS=")))
            .skip(1)
            .take_while(|l| l.starts_with("    ") || l.starts_with("   "))
            .collect();
        assert!(!block.is_empty(), "no {dir} block:\n{normal}");
        for (name, key) in [("clat", "clat_ns"), (" lat", "lat_ns")] {
            let want = format!("    {name} ({}): min=", summary_unit(&job[dir][key]));
            assert!(
                block.iter().any(|l| l.starts_with(&want)),
                "{want:?}:\n{normal}"
            );
        }
        let points: Vec<u64> = {
            let p = job[dir]["clat_ns"]["percentile"].as_object().unwrap();
            let mut v: Vec<(f64, u64)> = p
                .iter()
                .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
                .collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            v.into_iter().map(|x| x.1).collect()
        };
        let (min, max) = (*points.iter().min().unwrap(), *points.iter().max().unwrap());
        let (unit, div) = if min > 2_000_000 && max > 99_999_999 {
            ("msec", 1_000_000)
        } else if min > 2000 && max > 99_999 {
            ("usec", 1000)
        } else {
            ("nsec", 1)
        };
        let head = format!("    clat percentiles ({unit}):");
        let at = block.iter().position(|l| *l == head).unwrap_or_else(|| {
            panic!("{head:?} missing:\n{normal}");
        });
        let width = (max / div).to_string().len().max(5);
        let rows: Vec<&str> = block[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("     |"))
            .copied()
            .collect();
        let mut shown = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let cells: Vec<&str> = row["     |".len()..].split_inclusive(['\n', ',']).collect();
            let want = if i + 1 < rows.len() {
                73 / (2 + 10 + width)
            } else {
                cells.len()
            };
            assert_eq!(cells.len(), want, "row {row:?}");
            for cell in cells {
                // " 99.99th=[  111]" : a point of 5 columns, a value of `width`.
                let cell = cell.trim_end_matches(',');
                assert_eq!(
                    cell.len(),
                    1 + 5 + 4 + width + 1,
                    "cell {cell:?} in {row:?}"
                );
                let v = &cell[cell.find('[').unwrap() + 1..cell.len() - 1];
                shown.push(v.trim().parse::<u64>().unwrap());
            }
        }
        let want: Vec<u64> = points.iter().map(|p| p.div_ceil(div)).collect();
        assert_eq!(shown, want, "{dir} clat percentiles in {unit}:\n{normal}");
    }
}

#[test]
fn hiops_run_keeps_its_own_report() {
    let tmp = tempfile::tempdir().unwrap();
    let o = common::run_in(
        tmp.path(),
        &["--name=j", "--ioengine=null", "--size=4m", "--rw=randread"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("Cost per I/O"), "{out}");
    assert!(!out.contains("Run status group"), "{out}");
}

#[test]
fn hiops_report_gives_hiops_own_text_when_answering_as_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let mut job = null_job();
    job.push("--hiops-report".into());
    let o = hiops_fio(tmp.path(), &job);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("Cost per I/O"), "{out}");
    assert!(!out.contains("Run status group"), "{out}");
}

#[test]
fn line_shapes_mask_figures_and_data_chosen_units() {
    assert_eq!(
        kind("  read: IOPS=4096k, BW=15.6GiB/s (16.8GB/s)(64.0MiB/4msec)"),
        "  read: IOPS=#, BW=#B/s (#B/s)(#B/#msec)"
    );
    assert_eq!(
        kind("    clat (usec): min=27, max=16899, avg=57.98, stdev=388.85"),
        kind("    clat (nsec): min=9, max=10419, avg=23.92, stdev=81.38")
    );
    assert_ne!(
        kind("    clat (usec): min=1"),
        kind("     lat (usec): min=1")
    );
    assert_eq!(
        kinds("  lat (nsec)   : 2=1%\n  lat (usec)   : 2=1%\n  cpu : usr=1%\n").len(),
        2
    );
}
