//! The sampler on this machine: a spinning thread of this process shows up
//! as the application, and a busy CPU's time is sampled throughout. (An
//! idle CPU's may not be: on some VMs an idle vCPU stops its timers, and
//! the profile names such a CPU as sparse.)

use hiops_profile::{prepare, Config, Event, Layer};
use std::time::{Duration, Instant};

#[test]
fn a_spinning_thread_is_the_application_and_its_cpu_is_sampled_throughout() {
    let config = Config {
        hz: 1000,
        event: Event::CpuClock,
    };
    let prepared = match prepare(config) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    // The spinner stays on one CPU, so that CPU is busy for the whole window.
    // SAFETY: sched_getcpu has no preconditions.
    let me = unsafe { libc::sched_getcpu() };
    assert!(me >= 0, "sched_getcpu");
    let me = me as usize;
    hiops_stats::cpu::pin_current_thread(&[me]).expect("pin the spinner");
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
    assert!(p.dithered, "every clock was restarted at a random rate");
    assert_eq!(p.layers.len(), Layer::ALL.len());
    assert_eq!(p.per_cpu.len(), p.cpus);
    assert_eq!(p.per_cpu.iter().map(|c| c.samples).sum::<u64>(), p.samples);
    assert_eq!(p.layers.iter().map(|l| l.samples).sum::<u64>(), p.samples);
    // At most one sample per period on every CPU.
    assert!(
        p.sampled_s() <= capacity * 1.05,
        "{} s sampled over {capacity} s of CPU; per CPU: {:?}",
        p.sampled_s(),
        p.per_cpu
    );
    // A timer that fires every period on a busy CPU: about one sample per
    // period, fewer only where the hypervisor took the CPU (its steal is
    // out of `expected`).
    let mine = p
        .per_cpu
        .iter()
        .find(|c| c.cpu == me)
        .expect("the spinner's CPU is online");
    let expected = mine.expected(p.window_s, p.period_ns);
    assert!(
        !mine.sparse(p.window_s, p.period_ns) && mine.samples as f64 <= 1.05 * expected + 2.0,
        "the spinner's CPU {me} took {} samples, {expected:.0} expected; per CPU: {:?}",
        mine.samples,
        p.per_cpu
    );
    // Its busy time from /proc/stat: the whole window, less what the host took.
    if let Some(busy) = mine.busy_s {
        assert!(
            busy >= 0.75 * p.window_s - stolen - 0.02,
            "CPU {me} busy {busy} s of {} s: {:?}",
            p.window_s,
            p.per_cpu
        );
    }
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

/// `cycles` samples the CPU's cycle counter where there is one: a spinning
/// thread's CPU takes about one sample per period of the cycles it counted,
/// and the layers' busy time is that CPU's busy time. Where there is none
/// (a VM without a virtual PMU) it is refused in a line that says what to
/// use, and `auto` falls back to the software clock and says why.
#[test]
fn cycles_are_sampled_where_there_is_a_counter_and_refused_with_a_reason_where_not() {
    let cycles = Config {
        hz: 1000,
        event: Event::Cycles,
    };
    let prepared = match prepare(cycles) {
        Ok(p) => p,
        Err(why) if why.to_string().contains("cycle counter") => {
            assert!(why.to_string().contains("--profile=cpu-clock"), "{why}");
            let auto = match prepare(Config::default()) {
                Ok(p) => p.start().expect("sampling starts").stop(),
                Err(why) => return eprintln!("skipped the fallback: {why}"),
            };
            assert_eq!(auto.event, "cpu-clock");
            let note = auto.event_note.expect("auto says why it fell back");
            assert!(note.contains("software CPU clock"), "{note}");
            return eprintln!("no cycle counter here: {why}");
        }
        Err(why) => return eprintln!("skipped: {why}"),
    };
    // SAFETY: sched_getcpu has no preconditions.
    let me = unsafe { libc::sched_getcpu() } as usize;
    hiops_stats::cpu::pin_current_thread(&[me]).expect("pin the spinner");
    let profiler = prepared.start().expect("sampling starts");
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < Duration::from_millis(400) {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    let p = profiler.stop();
    assert_eq!(p.event, "cycles");
    assert!(!p.dithered, "the cycle counter is no timer");
    let mine = p.per_cpu.iter().find(|c| c.cpu == me).expect("online");
    let period = p.cycles_period.expect("cycles per sample");
    let expected = mine.expected_by_cycles(period).expect("counted cycles");
    assert!(
        (mine.samples as f64 - expected).abs() <= 0.05 * expected + 2.0,
        "CPU {me}: {} samples for {expected:.0} periods counted",
        mine.samples
    );
    if let Some(busy) = mine.busy_s {
        let sampled = mine.sampled_busy_s(p.period_ns);
        assert!(
            (sampled - busy).abs() <= 0.1 * busy + 0.02,
            "CPU {me}: {sampled} s sampled, {busy} s busy"
        );
    }
}
