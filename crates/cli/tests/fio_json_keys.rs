//! hiops' JSON carries the keys fio 3.33 writes, at the top, per job and
//! per direction, for the same job (skipped without fio): tools that read
//! fio's JSON (fio-plot, fio2gnuplot, dashboards) find what they look for.

mod common;

use common::{fio_in, have_fio, hiops_json_in, keys};
use serde_json::Value;

#[test]
fn every_key_fio_writes_is_in_hiops_json() {
    if !have_fio() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let job: Vec<String> = [
        "--name=mixed",
        "--ioengine=null",
        "--size=64m",
        "--rw=randrw",
        "--runtime=2",
        "--time_based",
        "--description=a described job",
        "--output-format=json",
    ]
    .map(String::from)
    .to_vec();
    let fio = fio_in(tmp.path(), &job);
    assert!(fio.status.success());
    let fio: Value = serde_json::from_slice(&fio.stdout).unwrap();
    // hiops run takes fio's options (`--description` among them).
    let ours = hiops_json_in(tmp.path(), &job);
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let ours: Value = serde_json::from_slice(&ours.stdout).unwrap();
    let (theirs, mine) = (keys(&fio), keys(&ours));
    let missing: Vec<&String> = theirs.difference(&mine).collect();
    assert!(
        missing.is_empty(),
        "keys fio writes and hiops does not: {missing:?}"
    );
    let j = &ours["jobs"][0];
    assert_eq!(j["desc"], "a described job");
    assert_eq!(j["latency_percentile"], 100.0);
    // Two seconds, time based: per-second bandwidth samples as fio's.
    let r = &j["read"];
    assert!(r["bw_samples"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["bw_min"].as_u64() <= r["bw_max"].as_u64());
    let agg = r["bw_agg"].as_f64().unwrap();
    assert!(
        agg > 50.0 && agg < 150.0,
        "one job is its group's bandwidth: {agg}"
    );
    // The null engine takes each command in its own call and completes it
    // there: every call in the 1-4 bucket, as fio counts it.
    assert_eq!(j["iodepth_submit"]["4"], 100.0, "{}", j["iodepth_submit"]);
    assert_eq!(
        j["iodepth_complete"]["4"], 100.0,
        "{}",
        j["iodepth_complete"]
    );
    let ts = ours["timestamp_ms"].as_u64().unwrap();
    assert_eq!(ts / 1000, ours["timestamp"].as_u64().unwrap());
}
