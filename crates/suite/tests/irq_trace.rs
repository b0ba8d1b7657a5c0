//! A point run with `--irq_trace` times the kernel's own handlers of its
//! device's interrupts (HIOPS Fig 8's Linux arm) and the device's
//! completions, and leaves no tracefs instance behind. Needs root, tracefs
//! and a file on a device with interrupts of its own: skipped with the
//! reason otherwise.

use hiops_suite::irq::trace::{self as irq_trace, FLAG};
use hiops_suite::runner::BenchRunner;
use hiops_suite::sweep::Runner;
use std::sync::atomic::AtomicBool;

/// Why the test cannot run here, if so.
fn why_not(args: &[String]) -> Option<String> {
    if !hiops_suite::irq::affinity::is_root() {
        return Some("not root".into());
    }
    if let Err(e) = hiops_profile::tracefs::root() {
        return Some(e.to_string());
    }
    irq_trace::target_of(args).err().map(|e| e.to_string())
}

/// The tracefs instances this process left.
fn own_instances() -> Vec<String> {
    let pid = format!("-{}", std::process::id());
    let Ok(root) = hiops_profile::tracefs::root() else {
        return Vec::new();
    };
    std::fs::read_dir(root.join("instances"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("hiops-") && n.ends_with(&pid))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_traced_point_times_its_devices_interrupt_handlers() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, vec![7u8; 16 << 20]).unwrap();
    let args: Vec<String> = [
        format!("--filename={}", file.display()),
        "--size=16m".into(),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--direct=1".into(),
        "--ioengine=psync".into(),
        "--numjobs=2".into(),
        "--runtime=1".into(),
        "--time_based=1".into(),
    ]
    .to_vec();
    if let Some(why) = why_not(&args) {
        eprintln!("skipped: {why}");
        return;
    }
    let mut traced = args.clone();
    traced.push(FLAG.into());
    let stop = AtomicBool::new(false);
    let mut runner = BenchRunner {
        interrupt: &stop,
        progress: None,
    };
    let m = match runner.run(&traced) {
        Ok(m) => m.metrics,
        Err(e) => panic!("the traced point failed: {e:?}"),
    };
    let max = m.irq_handler_max_us.expect("handlers were timed");
    let (mean, min) = (
        m.irq_handler_mean_us.unwrap(),
        m.irq_handler_min_us.unwrap(),
    );
    assert!(
        min <= mean && mean <= max && max > 0.0,
        "{min} {mean} {max}"
    );
    assert!(m.irq_handler_p99_us.unwrap() <= max);
    // Direct reads of a file on the device: its completions were seen, and
    // at least some of them raised an interrupt.
    assert!(m.irq_traced_per_io.unwrap() > 0.0, "{m:?}");
    assert!(m.irq_handler_us_per_io.unwrap() > 0.0);
    assert!(m.completion_interval_p50_us.is_some());
    assert!(own_instances().is_empty(), "{:?}", own_instances());
    // A point that fails after tracing started drops its tracer: the
    // tracing stops and its instance goes.
    let tracer = irq_trace::Traced::start(&args).unwrap();
    assert_eq!(own_instances().len(), 1);
    drop(tracer);
    assert!(own_instances().is_empty(), "{:?}", own_instances());
    // Untraced, the same point has none of these figures.
    let plain = runner.run(&args).unwrap().metrics;
    assert_eq!(plain.irq_handler_max_us, None);
}
