//! The kernel's own interrupt handlers for one device, timed from the
//! tracepoints irq:irq_handler_entry and irq:irq_handler_exit (filtered to
//! the device's IRQ numbers), and the device's completions
//! (block:block_rq_complete), read through a tracefs instance of their own
//! on the monotonic clock.
//!
//! A handler runs with interrupts off on its CPU and is never preempted,
//! so the time from its entry to its exit on one CPU is the time it held
//! that CPU: the HIOPS paper's Fig 8 quantity for Linux's own path ("up to
//! 18 µs" on its SCSI path), the slides' time per device interrupt, and,
//! summed, the CPU the device's interrupts cost. The completions' times
//! give the interval between successive completions (HIOPS §3.3).

use crate::timeline::ftrace::Instance;
use crate::tracefs::{self, Tracepoint};
use crate::ProfileError;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const DRAIN_EVERY: Duration = Duration::from_millis(10);

/// What to trace: the device's I/O vectors and, for its completions, its
/// whole disk's number as the block tracepoints print it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrqTarget {
    pub irqs: Vec<u32>,
    /// MKDEV(major, minor) as the kernel packs it: major << 20 | minor.
    pub disk_dev: Option<u32>,
}

/// The kernel's dev_t of `major:minor` as tracepoints print it.
pub fn kernel_dev(major: u32, minor: u32) -> u32 {
    (major << 20) | minor
}

/// A distribution's figures, ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub count: u64,
    pub sum_ns: u64,
    pub mean_ns: f64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Spread {
    /// The figures of `v` (sorted here); None when it is empty.
    pub fn of(v: &mut [u64]) -> Option<Spread> {
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        let sum: u64 = v.iter().sum();
        Some(Spread {
            count: v.len() as u64,
            sum_ns: sum,
            mean_ns: sum as f64 / v.len() as f64,
            min_ns: v[0],
            p50_ns: at(0.50),
            p99_ns: at(0.99),
            max_ns: v[v.len() - 1],
        })
    }
}

/// The window's interrupts and completions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IrqTrace {
    pub irqs: Vec<u32>,
    pub window_s: f64,
    /// Each handler's entry to its exit on its CPU, ns.
    pub handlers_ns: Vec<u64>,
    /// Each completion's time, ns, in no set order.
    pub completions_ns: Vec<u64>,
    /// Records the kernel dropped (a buffer full).
    pub lost: u64,
    /// Exits with no entry seen before them on their CPU (tracing turned
    /// on inside a handler), left out.
    pub unpaired: u64,
}

impl IrqTrace {
    /// The handlers' times.
    pub fn handlers(&self) -> Option<Spread> {
        Spread::of(&mut self.handlers_ns.clone())
    }

    /// The intervals between successive completions on the device.
    pub fn completion_intervals(&self) -> Option<Spread> {
        let mut t = self.completions_ns.clone();
        t.sort_unstable();
        let mut gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        Spread::of(&mut gaps)
    }
}

/// The events' ids and field offsets, and the pairing state per CPU.
struct Decoder {
    entry: u16,
    exit: u16,
    complete: Option<(u16, usize)>,
    irq_at: usize,
    disk_dev: Option<u32>,
    irqs: Vec<u32>,
    /// Per CPU: the (irq, entry time) of the handler running there.
    open: Vec<Option<(u32, u64)>>,
}

impl Decoder {
    fn record(&mut self, cpu: usize, t: u64, raw: &[u8], out: &mut IrqTrace) {
        let u32_at = |at: usize| -> Option<u32> {
            Some(u32::from_ne_bytes(raw.get(at..at + 4)?.try_into().ok()?))
        };
        let Some(kind) = raw.get(0..2).map(|b| u16::from_ne_bytes([b[0], b[1]])) else {
            return;
        };
        if let Some((id, dev_at)) = self.complete {
            if kind == id && u32_at(dev_at) == self.disk_dev {
                out.completions_ns.push(t);
                return;
            }
        }
        let Some(irq) = u32_at(self.irq_at).filter(|i| self.irqs.contains(i)) else {
            return;
        };
        if kind == self.entry {
            self.open[cpu] = Some((irq, t));
        } else if kind == self.exit {
            match self.open[cpu].take() {
                Some((i, t0)) if i == irq => out.handlers_ns.push(t.saturating_sub(t0)),
                _ => out.unpaired += 1,
            }
        }
    }
}

/// Tracing under way; dropped without [`IrqTracer::stop`] (a run that
/// failed), it still stops and removes its tracefs instance.
pub struct IrqTracer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<IrqTrace>>,
}

/// The events and the kernel-side filters for `target`.
fn events(target: &IrqTarget) -> Vec<(&'static str, &'static str, Option<String>)> {
    let irq_filter = (target.irqs.iter())
        .map(|i| format!("irq == {i}"))
        .collect::<Vec<_>>()
        .join(" || ");
    let mut evs = vec![
        ("irq", "irq_handler_entry", Some(irq_filter.clone())),
        ("irq", "irq_handler_exit", Some(irq_filter)),
    ];
    if let Some(d) = target.disk_dev {
        evs.push(("block", "block_rq_complete", Some(format!("dev == {d}"))));
    }
    evs
}

impl IrqTracer {
    /// Starts tracing `target`'s interrupts; an `Err` says what to do
    /// (run as root, mount tracefs).
    pub fn start(target: &IrqTarget) -> Result<IrqTracer, ProfileError> {
        assert!(!target.irqs.is_empty(), "a device with interrupts to trace");
        let root = tracefs::root()?;
        let entry = Tracepoint::load(&root, "irq", "irq_handler_entry")?;
        let exit = Tracepoint::load(&root, "irq", "irq_handler_exit")?;
        let complete = match target.disk_dev {
            Some(_) => {
                let tp = Tracepoint::load(&root, "block", "block_rq_complete")?;
                Some((tp.id, tp.field("dev", 4)?))
            }
            None => None,
        };
        let cpus = crate::sampler::online_cpus();
        let decoder = Decoder {
            entry: entry.id,
            exit: exit.id,
            complete,
            irq_at: entry.field("irq", 4)?,
            disk_dev: target.disk_dev,
            irqs: target.irqs.clone(),
            open: vec![None; cpus.len()],
        };
        if exit.field("irq", 4)? != decoder.irq_at {
            return Err(ProfileError::NoField { name: "irq".into() });
        }
        let instance = Instance::create_tagged(&root, "irq", &events(target), &cpus)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let flag = stop.clone();
        let irqs = target.irqs.clone();
        let spawned = std::thread::Builder::new()
            .name("hiops-irq-trace".into())
            .spawn(move || drain_loop(instance, decoder, irqs, flag, tx));
        let thread = crate::error::started("the interrupt tracer's", spawned, &rx)?;
        Ok(IrqTracer {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops tracing and returns the window's interrupts.
    pub fn stop(mut self) -> IrqTrace {
        self.halt().unwrap_or_default()
    }

    fn halt(&mut self) -> Option<IrqTrace> {
        let thread = self.thread.take()?;
        self.stop.store(true, Ordering::Release);
        thread.thread().unpark();
        Some(
            thread
                .join()
                .expect("the interrupt tracer's thread does not panic"),
        )
    }
}

impl Drop for IrqTracer {
    fn drop(&mut self) {
        self.halt();
    }
}

fn drain_loop(
    mut instance: Instance,
    mut decoder: Decoder,
    irqs: Vec<u32>,
    stop: Arc<AtomicBool>,
    ready: mpsc::Sender<Result<(), ProfileError>>,
) -> IrqTrace {
    let mut out = IrqTrace {
        irqs,
        ..IrqTrace::default()
    };
    let _ = ready.send(instance.set_on(true));
    let started = Instant::now();
    let mut drain = |instance: &mut Instance, out: &mut IrqTrace| {
        let mut records = Vec::new();
        let lost = instance.drain_by_cpu(|cpu, t, raw| records.push((cpu, t, raw.to_vec())));
        for (cpu, t, raw) in records {
            decoder.record(cpu, t, &raw, out);
        }
        out.lost += lost;
    };
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(DRAIN_EVERY);
        drain(&mut instance, &mut out);
    }
    let _ = instance.set_on(false);
    out.window_s = started.elapsed().as_secs_f64();
    drain(&mut instance, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoder() -> Decoder {
        Decoder {
            entry: 10,
            exit: 11,
            complete: Some((12, 8)),
            irq_at: 8,
            disk_dev: Some(kernel_dev(253, 0)),
            irqs: vec![36],
            open: vec![None; 2],
        }
    }

    /// A record: common_type, 6 bytes of other common fields, a u32.
    fn rec(kind: u16, value: u32) -> Vec<u8> {
        let mut r = kind.to_ne_bytes().to_vec();
        r.extend_from_slice(&[0; 6]);
        r.extend_from_slice(&value.to_ne_bytes());
        r
    }

    #[test]
    fn a_handler_is_timed_from_its_entry_to_its_exit_on_its_cpu() {
        let (mut d, mut out) = (decoder(), IrqTrace::default());
        d.record(0, 1_000, &rec(10, 36), &mut out);
        // Another CPU's handler and another device's vector in between.
        d.record(1, 1_500, &rec(10, 36), &mut out);
        d.record(0, 1_600, &rec(10, 40), &mut out);
        d.record(0, 1_700, &rec(12, kernel_dev(253, 0)), &mut out);
        d.record(0, 1_800, &rec(12, kernel_dev(7, 0)), &mut out);
        d.record(0, 5_000, &rec(11, 36), &mut out);
        d.record(1, 9_500, &rec(11, 36), &mut out);
        // An exit whose entry came before tracing started.
        d.record(0, 9_900, &rec(11, 36), &mut out);
        assert_eq!(out.handlers_ns, vec![4_000, 8_000]);
        assert_eq!(out.completions_ns, vec![1_700]);
        assert_eq!(out.unpaired, 1);
        let h = out.handlers().unwrap();
        assert_eq!(
            (h.count, h.max_ns, h.min_ns, h.sum_ns),
            (2, 8_000, 4_000, 12_000)
        );
    }

    #[test]
    fn completion_intervals_are_taken_in_time_order() {
        let out = IrqTrace {
            completions_ns: vec![30, 10, 15, 60],
            ..IrqTrace::default()
        };
        let g = out.completion_intervals().unwrap();
        assert_eq!((g.count, g.min_ns, g.max_ns), (3, 5, 30));
        assert_eq!(IrqTrace::default().completion_intervals(), None);
    }

    #[test]
    fn the_filters_name_every_vector_and_the_disk() {
        let evs = events(&IrqTarget {
            irqs: vec![36, 37],
            disk_dev: Some(kernel_dev(253, 0)),
        });
        assert_eq!(evs[0].2.as_deref(), Some("irq == 36 || irq == 37"));
        assert_eq!(evs[2].2.as_deref(), Some("dev == 265289728"));
    }
}
