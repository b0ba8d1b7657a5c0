//! The platform's view of a run: the machine's busy time from exact idle
//! against the process's own CPU time.

use hiops_bench::{run, JobBuilder, RunOptions, RunResult, RwMode, TargetSpec};
use hiops_hal::EngineKind;
use hiops_stats::busy::ProcessCheck;
use std::sync::atomic::AtomicBool;

/// A time-based job on the RAM device: no kernel I/O, all CPU.
fn mem_job(numjobs: u32, runtime_ms: u64) -> JobBuilder {
    let mut s = JobBuilder::default_for("unused".into());
    s.name = "cpu-bound".into();
    s.target.targets = TargetSpec::Ram;
    s.io.engine = EngineKind::Mem;
    s.target.size = Some(hiops_bench::Bytes::new(64 << 20));
    s.workload.rw = RwMode::RandRead;
    s.io.iodepth = hiops_bench::QueueDepth::new("iodepth", 1).unwrap();
    s.numjobs = numjobs;
    s.timing.time_based = true;
    s.timing.runtime = Some(std::time::Duration::from_millis(runtime_ms));
    s.timing.ramp = std::time::Duration::ZERO;
    s
}

fn run_one(spec: JobBuilder) -> RunResult {
    let stop = AtomicBool::new(false);
    let opts = RunOptions {
        interrupt: &stop,
        progress: None,
        profile: None,
        timeline: false,
    };
    run(&[spec.build().unwrap()], opts).expect("the job runs")
}

#[test]
fn machine_busy_from_idle_bounds_the_process_view_on_a_cpu_bound_run() {
    let Some(_) = hiops_stats::cpu::MachineSample::read() else {
        eprintln!("skipped: /proc/stat is not readable here");
        return;
    };
    let cpus = hiops_stats::cpu::online_cpus();
    // One spinning thread per CPU: the machine is busy the whole window.
    let r = run_one(mem_job(cpus as u32, 1500));
    assert!(r.total_ios() > 0);
    let m = r.platform.cpu.expect("the machine's window was read");
    let process = r.process_seconds().total();
    assert_eq!(m.cpus, cpus);
    assert!(
        (m.window_s - r.window_s()).abs() < 0.05,
        "the machine's window ({} s) is the measured one ({} s)",
        m.window_s,
        r.window_s()
    );
    let capacity = m.window_s * cpus as f64;
    assert!(
        m.busy_s <= capacity + m.bound_s(),
        "busy {} s on {capacity} s of CPU",
        m.busy_s
    );
    // The process is part of the machine: no more than the machine's busy
    // time, within the counters' resolution (and steal, on kernels whose
    // scheduler clock includes it).
    let check = m.check_process(process);
    assert!(
        !matches!(check, ProcessCheck::Disagrees { .. }),
        "process {process} s against busy {} s (steal {} s): {:?}",
        m.busy_s,
        m.steal_s,
        check.why()
    );
    // And it was CPU-bound: its threads had a good part of the machine.
    // Seen only where other processes left them the machine: when others
    // kept more than half of it busy, the share says nothing of the engine.
    let others = m.busy_s - process;
    if others > 0.5 * capacity {
        eprintln!("CPU-bound share not checked: other processes kept {others:.2} s of {capacity:.2} s busy");
    } else {
        assert!(
            process >= 0.3 * capacity,
            "the mem engine's {cpus} threads used {process} s of {capacity} s"
        );
    }
    // The busy split adds up to the busy time.
    let split = r.machine_seconds().unwrap();
    assert!((split.total() - m.busy_s).abs() < 1e-6);
}
