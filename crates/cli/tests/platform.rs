//! The platform's figures through the binary: the extra contexts per I/O
//! (BLOCK softirqs, IPIs) follow the I/O count, not the time.

use hiops_suite::devices::RamDevice;
use serde_json::Value;
use std::process::{Command, Stdio};

/// `hiops run --output-format=json` with `args`; the `hiops` object.
fn run_json(args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .stdin(Stdio::null())
        .args([
            "run",
            "--output-format=json",
            "--no-progress",
            "--ramp_time=0",
        ])
        .args(args)
        .output()
        .expect("hiops starts");
    assert!(
        o.status.success(),
        "hiops {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    v["hiops"].clone()
}

fn per_io(h: &Value, key: &str) -> f64 {
    h["contexts"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("contexts.{key} missing: {}", h["contexts"]))
}

#[test]
fn block_softirqs_and_ipis_move_with_the_io_count() {
    let dev = match RamDevice::loop_on(std::path::Path::new("/dev/shm"), 64 << 20) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("skipped: no loop device to read ({e})");
            return;
        }
    };
    let filename = format!("--filename={}", dev.path.display());
    // A loop device completes each request from its worker through the
    // block layer's completion softirq (one hardware queue, every CPU
    // mapped to it): a BLOCK softirq or a function-call IPI per I/O.
    let run = |n: u64| {
        let ios = format!("--number_ios={n}");
        run_json(&[&filename, "--ioengine=psync", "--iodepth=1", &ios])
    };
    let (small, large) = (run(1500), run(6000));
    for h in [&small, &large] {
        let completions = per_io(h, "block_softirqs") + per_io(h, "function_call_ipis");
        assert!(
            completions >= 0.5,
            "{completions} completion softirqs/IPIs per I/O: {}",
            h["contexts"]
        );
    }
    let total = |h: &Value, key: &str| per_io(h, key) * h["total_ios"].as_f64().unwrap();
    assert!(
        total(&large, "block_softirqs") >= 2.0 * total(&small, "block_softirqs"),
        "4x the I/Os, BLOCK softirqs {} then {}",
        total(&small, "block_softirqs"),
        total(&large, "block_softirqs")
    );
    if hiops_stats::cpu::online_cpus() >= 2 {
        // The loop worker and the reader wake each other, across CPUs.
        let ipis = |h: &Value| total(h, "reschedule_ipis") + total(h, "function_call_ipis");
        assert!(
            ipis(&large) >= 0.1 * 6000.0 && ipis(&large) > ipis(&small),
            "IPIs {} then {}",
            ipis(&small),
            ipis(&large)
        );
    }
    // The RAM device moves no kernel I/O: a second of it raises next to
    // no BLOCK softirq, however many I/Os it counts.
    let mem = run_json(&["--ioengine=mem", "--size=16m", "--runtime=1"]);
    assert!(
        per_io(&mem, "block_softirqs") < 0.01,
        "the mem engine: {}",
        mem["contexts"]
    );
}
