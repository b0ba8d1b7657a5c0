//! The sampler on this machine: a spinning thread of this process shows up
//! as the application, and every CPU's time is sampled.

use hiops_profile::{prepare, Config, Layer};
use std::time::{Duration, Instant};

#[test]
fn a_spinning_thread_is_the_application_and_every_cpu_is_sampled() {
    let prepared = match prepare(Config { hz: 1000 }) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let machine0 = hiops_stats::cpu::MachineSample::read();
    let profiler = prepared.start().expect("sampling starts");
    let cpu0 = hiops_stats::cpu::ProcessSample::thread();
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < Duration::from_millis(400) {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    let spun = hiops_stats::cpu::ProcessSample::thread().delta(&cpu0);
    let p = profiler.stop();
    let capacity = p.window_s * p.cpus as f64;
    // What the hypervisor took (steal) is time no timer of this guest fired in.
    let stolen = match (machine0, hiops_stats::cpu::MachineSample::read()) {
        (Some(a), Some(b)) => b.delta(&a).steal as f64 / hiops_stats::cpu::ticks_per_second(),
        _ => 0.0,
    };
    assert_eq!(p.layers.len(), Layer::ALL.len());
    assert_eq!(p.layers.iter().map(|l| l.samples).sum::<u64>(), p.samples);
    // A timer that fires on every CPU: about one sample per period, fewer
    // only where the hypervisor took the CPU or interrupts stayed off.
    assert!(
        p.sampled_s() <= capacity * 1.05 && p.sampled_s() >= (capacity - stolen) * 0.5,
        "{} s sampled over {capacity} s of CPU ({stolen} s stolen)",
        p.sampled_s()
    );
    // The spinning thread's CPU time (getrusage, whatever share of a CPU
    // it got beside other programs) is the application's, in user mode.
    let spun = (spun.user + spun.system).as_secs_f64();
    let app = p.seconds(Layer::Application);
    assert!(
        spun > 0.0 && (app - spun).abs() <= 0.3 * spun + 0.02,
        "the thread ran {spun} s, the application got {app} s: {:?}",
        p.layers
    );
    assert_eq!(p.lost, 0);
    assert!(p.cost.drain_thread_s >= 0.0);
}
