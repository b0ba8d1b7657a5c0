//! Device counters: /proc/diskstats (service time, utilisation) and
//! /proc/interrupts (interrupts of the device's queues).

use serde::{Deserialize, Serialize};

/// One device's line of /proc/diskstats (Documentation/admin-guide/iostats.rst).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStats {
    pub reads: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    /// Milliseconds spent by all reads, from block-layer entry to completion.
    pub read_ms: u64,
    pub writes: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    pub in_flight: u64,
    /// Milliseconds the device had I/O in flight (utilisation).
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
}

impl DiskStats {
    pub fn read(device: &str) -> Option<DiskStats> {
        Self::parse(&std::fs::read_to_string("/proc/diskstats").ok()?, device)
    }

    pub fn parse(diskstats: &str, device: &str) -> Option<DiskStats> {
        diskstats.lines().find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 14 || f[2] != device {
                return None;
            }
            let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
            Some(DiskStats {
                reads: n(3),
                read_merges: n(4),
                read_sectors: n(5),
                read_ms: n(6),
                writes: n(7),
                write_merges: n(8),
                write_sectors: n(9),
                write_ms: n(10),
                in_flight: n(11),
                io_ticks_ms: n(12),
                time_in_queue_ms: n(13),
            })
        })
    }

    pub fn delta(&self, e: &DiskStats) -> DiskStats {
        DiskStats {
            reads: self.reads.saturating_sub(e.reads),
            read_merges: self.read_merges.saturating_sub(e.read_merges),
            read_sectors: self.read_sectors.saturating_sub(e.read_sectors),
            read_ms: self.read_ms.saturating_sub(e.read_ms),
            writes: self.writes.saturating_sub(e.writes),
            write_merges: self.write_merges.saturating_sub(e.write_merges),
            write_sectors: self.write_sectors.saturating_sub(e.write_sectors),
            write_ms: self.write_ms.saturating_sub(e.write_ms),
            in_flight: self.in_flight,
            io_ticks_ms: self.io_ticks_ms.saturating_sub(e.io_ticks_ms),
            time_in_queue_ms: self.time_in_queue_ms.saturating_sub(e.time_in_queue_ms),
        }
    }

    /// Mean time per completed I/O in the device (block layer to completion),
    /// in ns; `None` when the device completed nothing in the window or keeps
    /// no time (zram and other synchronous devices report 0 ms).
    pub fn service_ns_per_io(&self) -> Option<f64> {
        let ios = self.reads + self.writes;
        let ms = self.read_ms + self.write_ms;
        (ios > 0 && ms > 0).then(|| ms as f64 * 1e6 / ios as f64)
    }

    pub fn read_service_ns(&self) -> Option<f64> {
        (self.reads > 0 && self.read_ms > 0).then(|| self.read_ms as f64 * 1e6 / self.reads as f64)
    }

    pub fn write_service_ns(&self) -> Option<f64> {
        (self.writes > 0 && self.write_ms > 0)
            .then(|| self.write_ms as f64 * 1e6 / self.writes as f64)
    }

    /// Share of the window the device was busy, in percent.
    /// The block layer's own Little's law: the mean number of requests it
    /// held (started and not completed) over `window_ms`, from the
    /// weighted time in queue (Documentation/admin-guide/iostats.rst,
    /// field 11). This is the queue the device side saw, whatever the
    /// application counts as in flight.
    pub fn mean_queue(&self, window_ms: f64) -> f64 {
        if window_ms <= 0.0 {
            0.0
        } else {
            self.time_in_queue_ms as f64 / window_ms
        }
    }

    pub fn utilisation_pct(&self, window_ms: f64) -> f64 {
        if window_ms <= 0.0 {
            0.0
        } else {
            (self.io_ticks_ms as f64 / window_ms * 100.0).min(100.0)
        }
    }
}

/// The IRQ number of a /proc/interrupts line if it is one of the device's
/// I/O vectors: its action name starts with `prefix` followed by a
/// separator (`virtio1-req.0`, `nvme0q3`); config and admin vectors carry
/// no I/O completions and are left out.
fn device_vector<'l>(line: &'l str, prefix: &str) -> Option<(&'l str, &'l str)> {
    let irq = line.split_whitespace().next()?.strip_suffix(':')?;
    let name = line.split_whitespace().last()?;
    let matches = name
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('q'));
    (matches && !name.ends_with("-config") && !name.ends_with("q0")).then_some((irq, name))
}

/// Total interrupts (all CPUs) of the device's I/O vectors (see
/// `device_vector`). Returns the sum and the names matched.
pub fn interrupts_matching(proc_interrupts: &str, prefix: &str) -> (u64, Vec<String>) {
    let mut total = 0;
    let mut names = Vec::new();
    let cpus = proc_interrupts
        .lines()
        .next()
        .map(|l| l.split_whitespace().count())
        .unwrap_or(0);
    for line in proc_interrupts.lines().skip(1) {
        let Some((_, name)) = device_vector(line, prefix) else {
            continue;
        };
        total += (line.split_whitespace().skip(1).take(cpus))
            .filter_map(|x| x.parse::<u64>().ok())
            .sum::<u64>();
        names.push(name.to_string());
    }
    (total, names)
}

/// The IRQ numbers of the device's I/O vectors.
pub fn vectors_matching(proc_interrupts: &str, prefix: &str) -> Vec<u32> {
    (proc_interrupts.lines().skip(1))
        .filter_map(|line| device_vector(line, prefix)?.0.parse().ok())
        .collect()
}

/// The CPUs the device's I/O interrupts are delivered to now (each
/// vector's effective affinity, else its allowed one), in order; empty
/// when unknown.
pub fn interrupt_cpus(prefix: &str) -> Vec<usize> {
    let Ok(text) = std::fs::read_to_string("/proc/interrupts") else {
        return Vec::new();
    };
    let mut cpus: Vec<usize> = vectors_matching(&text, prefix)
        .into_iter()
        .filter_map(|irq| {
            let read = |f: &str| std::fs::read_to_string(format!("/proc/irq/{irq}/{f}")).ok();
            let list = read("effective_affinity_list").or_else(|| read("smp_affinity_list"))?;
            crate::cpu::parse_cpu_list(list.trim()).ok()
        })
        .flatten()
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

pub fn read_interrupts(prefix: &str) -> Option<(u64, Vec<String>)> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    let (n, names) = interrupts_matching(&text, prefix);
    (!names.is_empty()).then_some((n, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DISKSTATS: &str = "\
 254       0 vda 1000 5 80000 2000 500 3 4000 1500 0 2500 3500 0 0 0 0
 254       1 vda1 10 0 80 20 5 0 40 15 0 25 35
 251       0 zram0 300 0 2400 0 0 0 0 0 0 0 0 0 0 0 0
";

    #[test]
    fn diskstats_line_is_found_by_name_and_gives_service_time() {
        let a = DiskStats::parse(DISKSTATS, "vda").unwrap();
        assert_eq!(
            (a.reads, a.read_ms, a.writes, a.io_ticks_ms),
            (1000, 2000, 500, 2500)
        );
        assert_eq!(a.read_service_ns(), Some(2_000_000.0));
        assert!(DiskStats::parse(DISKSTATS, "vdb").is_none());
        assert_eq!(DiskStats::parse(DISKSTATS, "vda1").unwrap().reads, 10);
        // A synchronous device keeps no time: the service time is unknown, not 0.
        assert_eq!(
            DiskStats::parse(DISKSTATS, "zram0")
                .unwrap()
                .service_ns_per_io(),
            None
        );
    }

    #[test]
    fn the_mean_queue_is_the_weighted_time_over_the_window() {
        // Field 11 of vda's line: 3500 ms of requests held over the window.
        let a = DiskStats::parse(DISKSTATS, "vda").unwrap();
        assert_eq!(a.time_in_queue_ms, 3500);
        assert_eq!(a.mean_queue(1000.0), 3.5);
        assert_eq!(a.mean_queue(0.0), 0.0);
    }

    #[test]
    fn interrupts_of_a_device_are_summed_over_cpus_and_queues() {
        let text = "           CPU0       CPU1\n\
 35:          0          1 PCI-MSIX-0000:00:02.0   0-edge      virtio1-config\n\
 36:         10      27079 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n\
 37:          5          5 PCI-MSIX-0000:00:03.0   0-edge      virtio10-req.0\n\
 40:          3          4 PCI-MSIX   nvme0q1\n";
        let (n, names) = interrupts_matching(text, "virtio1");
        assert_eq!(n, 27089);
        assert_eq!(names, vec!["virtio1-req.0".to_string()]);
        assert_eq!(interrupts_matching(text, "nvme0").0, 7);
        assert_eq!(vectors_matching(text, "virtio1"), vec![36]);
        assert_eq!(vectors_matching(text, "nvme0"), vec![40]);
        assert!(vectors_matching(text, "virtio2").is_empty());
    }
}
