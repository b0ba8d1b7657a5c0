//! The run's measured window, over which the machine's CPU is read, is
//! the jobs' own even when busy threads far outnumber the CPUs: each
//! thread's window opens when the run's does, not when the scheduler
//! next gives that thread a CPU. (Windows that opened late also closed
//! late, stretching the run's window, and the I/Os counted in them were
//! more than the run's rate over the runtime.)

use serde_json::Value;
use std::process::{Command, Stdio};

#[test]
fn with_many_busy_threads_the_machine_window_is_the_jobs_window() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (cpus * 128).max(256).to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .stdin(Stdio::null())
        .args(["run", "--output-format=json", "--no-progress"])
        .args(["--ioengine=mem", "--size=4m", "--rw=randread", "--bs=4k"])
        .args(["--runtime=1", "--ramp_time=1", "--time_based"])
        .arg(format!("--numjobs={threads}"))
        .output()
        .expect("hiops starts");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let Some(window_s) = v["hiops"]["machine"]["window_s"].as_f64() else {
        eprintln!("skipped: no machine figures here (no /proc/stat)");
        return;
    };
    let runtime_s = v["jobs"][0]["read"]["runtime"].as_f64().expect("runtime") / 1e3;
    // A thread stops at the deadline as soon as it next runs: a scheduler
    // slice or two late, but with 256 threads on 2 vCPUs and the host
    // stealing time it was 1.31 s once in a full CI run. The staggered
    // windows this guards against made it 2.0 s every time.
    assert!(
        (0.95..=1.5).contains(&runtime_s),
        "the jobs ran {runtime_s} s for a 1 s runtime"
    );
    assert!(
        window_s <= runtime_s + 0.25,
        "the run's window {window_s} s outlasts the jobs' {runtime_s} s"
    );
}
