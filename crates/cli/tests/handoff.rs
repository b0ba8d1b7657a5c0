//! The hand-off delay (the HIOPS paper's Fig 8 quantity) is stated only
//! where completions go through a shared ring: coop-shared (every thread on
//! one ring, the paper's queue) has the figure; a strategy whose threads
//! reap their own has none, null in JSON and "none" in text, never a 0 that
//! would read as the shortest delay.

mod common;

use common::{json_of, run_in, text};

fn run(dir: &std::path::Path, strategy: &str, json: bool) -> std::process::Output {
    let strategy = format!("--strategy={strategy}");
    let mut args = vec![
        "--name=h",
        "--filename=h.dat",
        "--size=8m",
        "--rw=randread",
        "--ioengine=io_uring",
        "--numjobs=4",
        "--group_reporting",
        strategy.as_str(),
    ];
    if json {
        args.push("--output-format=json");
    }
    run_in(dir, &args)
}

#[test]
fn only_a_shared_ring_has_a_hand_off_delay() {
    let tmp = tempfile::tempdir().unwrap();
    let v = json_of(&run(tmp.path(), "coop-shared", true));
    let job = &v["jobs"][0]["hiops"];
    let engine = job["engine"].as_str().unwrap_or_default();
    assert!(engine.contains("coop over 1 ring"), "{engine}");
    let h = &job["path"]["handoff_ns"];
    assert!(h["p99"].as_u64().is_some(), "coop-shared: {h}");
    for own in ["per-thread-ring", "coop"] {
        let v = json_of(&run(tmp.path(), own, true));
        let job = &v["jobs"][0]["hiops"];
        assert!(job["path"].is_object(), "{own}: {job}");
        assert!(
            job["path"]["handoff_ns"].is_null(),
            "{own}: {}",
            job["path"]
        );
        let o = run(tmp.path(), own, false);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            text(&o).contains("hand-off delay (reaped -> owner running): none"),
            "{own}: {}",
            text(&o)
        );
    }
}
