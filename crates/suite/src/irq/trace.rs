//! A sweep point's `--irq_trace`: the kernel's own interrupt handlers of
//! the target's device, timed through tracefs while the point runs
//! (hiops_profile::irq), and their figures in the point's.
//!
//! The device is the one holding the point's first `--filename`; its I/O
//! vectors are the lines of /proc/interrupts its driver registered
//! (`virtio1-req.0` for vda, `nvme0q1`.. for nvme0n1). A RAM device (zram)
//! or a loop device completes without an interrupt of its own: a point on
//! one is refused with the reason, as is a run without root.

use hiops_hal::device::BlockDev;
use hiops_profile::irq::{kernel_dev, IrqTarget, IrqTrace, IrqTracer};
use hiops_report::figures::PointFigures;

/// The flag a point's options carry to be traced.
pub const FLAG: &str = "--irq_trace";

/// Why a point's interrupts cannot be traced, in one line.
#[derive(Debug, thiserror::Error)]
pub enum IrqTraceError {
    #[error("{FLAG}: the point has no --filename to find its device from")]
    NoTarget,
    #[error("{FLAG}: {path} is on no block device (tmpfs or the like): trace a file on a disk")]
    NoDevice { path: String },
    #[error("{FLAG}: {disk} completes without a device interrupt of its own (no vector of '{prefix}' in /proc/interrupts): trace a disk's file")]
    NoVectors { disk: String, prefix: String },
    #[error("{FLAG}: {disk} has no driver device to name its interrupts: trace a disk's file")]
    NoDriver { disk: String },
    #[error("{FLAG}: {0}")]
    Trace(#[from] hiops_profile::ProfileError),
}

/// The point's options without [`FLAG`], and whether it was there.
pub fn flag(args: &[String]) -> (Vec<String>, bool) {
    let rest: Vec<String> = args.iter().filter(|a| *a != FLAG).cloned().collect();
    let on = rest.len() != args.len();
    (rest, on)
}

/// The device and the vectors to trace for the point's options.
pub fn target_of(args: &[String]) -> Result<(String, IrqTarget), IrqTraceError> {
    let path = args
        .iter()
        .find_map(|a| a.strip_prefix("--filename="))
        .and_then(|v| v.split(':').next())
        .filter(|p| !p.is_empty())
        .ok_or(IrqTraceError::NoTarget)?;
    let dev = crate::irq::knobs::device_of(path).ok_or_else(|| IrqTraceError::NoDevice {
        path: path.to_string(),
    })?;
    // The block tracepoints name a partition's requests by its disk.
    let whole = match dev.name == dev.disk {
        true => dev.clone(),
        false => disk_of(&dev.disk).unwrap_or_else(|| dev.clone()),
    };
    let prefix = dev
        .interrupt_prefix()
        .ok_or_else(|| IrqTraceError::NoDriver {
            disk: dev.disk.clone(),
        })?;
    let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    let irqs = hiops_stats::disk::vectors_matching(&text, &prefix);
    if irqs.is_empty() {
        return Err(IrqTraceError::NoVectors {
            disk: dev.disk,
            prefix,
        });
    }
    let target = IrqTarget {
        irqs,
        disk_dev: Some(kernel_dev(whole.major, whole.minor)),
    };
    Ok((dev.disk, target))
}

/// The whole disk `name` (sysfs `dev`: "MAJ:MIN").
fn disk_of(name: &str) -> Option<BlockDev> {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/dev")).ok()?;
    let (ma, mi) = text.trim().split_once(':')?;
    BlockDev::from_dev(ma.parse().ok()?, mi.parse().ok()?)
}

/// Tracing started for a point, when it asked for it.
pub struct Traced(IrqTracer);

impl Traced {
    /// Starts tracing the device of `args` (the point's options, the flag
    /// taken out).
    pub fn start(args: &[String]) -> Result<Traced, IrqTraceError> {
        let (_, target) = target_of(args)?;
        Ok(Traced(IrqTracer::start(&target)?))
    }

    /// Stops tracing and puts the figures into the point's.
    pub fn finish(self, m: &mut PointFigures) {
        fill(m, &self.0.stop());
    }
}

/// The trace's figures in the point's (µs); `m.iops` and the trace's
/// completions set the per-I/O figures.
pub fn fill(m: &mut PointFigures, t: &IrqTrace) {
    let us = |ns: f64| ns / 1e3;
    m.irq_trace_lost = Some(t.lost as f64);
    if let Some(h) = t.handlers() {
        m.irq_handler_max_us = Some(us(h.max_ns as f64));
        m.irq_handler_p99_us = Some(us(h.p99_ns as f64));
        m.irq_handler_mean_us = Some(us(h.mean_ns));
        m.irq_handler_min_us = Some(us(h.min_ns as f64));
        let ios = t.completions_ns.len() as f64;
        if ios > 0.0 {
            m.irq_traced_per_io = Some(h.count as f64 / ios);
            m.irq_handler_us_per_io = Some(us(h.sum_ns as f64) / ios);
        }
    }
    if let Some(g) = t.completion_intervals() {
        m.completion_interval_p50_us = Some(us(g.p50_ns as f64));
        m.completion_interval_p99_us = Some(us(g.p99_ns as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_taken_out_of_the_options() {
        let args = ["--bs=4k", FLAG, "--filename=/x"].map(String::from);
        let (rest, on) = flag(&args);
        assert!(on);
        assert_eq!(rest, ["--bs=4k", "--filename=/x"]);
        assert!(!flag(&rest).1);
    }

    #[test]
    fn a_trace_gives_the_points_handler_and_interval_figures() {
        let t = IrqTrace {
            irqs: vec![36],
            window_s: 1.0,
            // Two interrupts for four completions.
            handlers_ns: vec![5_000, 35_000],
            completions_ns: vec![0, 4_000, 10_000, 30_000],
            lost: 0,
            unpaired: 0,
        };
        let mut m = PointFigures::default();
        fill(&mut m, &t);
        assert_eq!(m.irq_handler_max_us, Some(35.0));
        assert_eq!(m.irq_handler_min_us, Some(5.0));
        assert_eq!(m.irq_handler_mean_us, Some(20.0));
        assert_eq!(m.irq_traced_per_io, Some(0.5));
        assert_eq!(m.irq_handler_us_per_io, Some(10.0));
        assert_eq!(m.completion_interval_p50_us, Some(6.0));
        assert_eq!(m.completion_interval_p99_us, Some(20.0));
    }

    #[test]
    fn a_ram_device_is_refused_with_its_reason() {
        // /proc is on no block device.
        let args = ["--filename=/proc/self/status".to_string()];
        let e = target_of(&args).unwrap_err().to_string();
        assert!(e.contains("on no block device"), "{e}");
        assert!(matches!(target_of(&[]), Err(IrqTraceError::NoTarget)));
    }
}
