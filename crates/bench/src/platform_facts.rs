//! The platform a result was measured on: the settings that move latency and
//! CPU cost per I/O (CPU frequency governor, SMT, idle states, the block
//! queue's scheduler and limits, where the device's interrupts go,
//! virtualization, the kernel command line), read from sysfs and procfs so a
//! suite's JSON and page record them, with a warning where one skews results.

use hiops_hal::device::BlockDev;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Machine-wide settings and those of each target's device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlatformFacts {
    pub kernel: String,
    pub cmdline: String,
    /// CPUs per scaling governor; empty where the kernel has no cpufreq
    /// (common in VMs: the host decides the frequency).
    pub governors: BTreeMap<String, usize>,
    /// sysfs's smt/control: on, off, forceoff, notsupported.
    pub smt: String,
    pub cpuidle_driver: String,
    /// The guest's halt-polling limit (ns) under the haltpoll cpuidle
    /// driver (/sys/module/haltpoll/parameters/guest_halt_poll_ns); None
    /// where there is no such driver.
    #[serde(default)]
    pub guest_halt_poll_ns: Option<u64>,
    /// CPU 0's idle states that are enabled, with their exit latency (µs).
    pub idle_states: Vec<(String, u64)>,
    /// "none" on bare metal, else what the machine says it runs under.
    pub virtualization: String,
    /// The timer tick (ADMS'10 Table 2's "HZ"): its rate, whether idle
    /// CPUs stop it, and how CPU time is accounted, from the kernel's
    /// build configuration. Empty in results of older hiops.
    #[serde(default)]
    pub tick: String,
    /// The CPU scheduler's time slice (EEVDF's base slice, or CFS' minimum
    /// granularity), where the kernel shows it.
    #[serde(default)]
    pub sched_slice: String,
    /// Clocks (TSC) per system call round trip (getppid), one figure per
    /// round of [`SYSCALL_CALLS`] calls (ADMS'10 §4.2's "user-kernel-user
    /// transitions"). Empty in results of older hiops.
    #[serde(default)]
    pub syscall_clocks: Vec<f64>,
    pub devices: Vec<DeviceFacts>,
}

/// Rounds of the system-call timing, and calls per round: about 5 x 30 ms.
pub const SYSCALL_ROUNDS: usize = 5;
pub const SYSCALL_CALLS: u32 = 100_000;

/// One block device's queue settings and its interrupts' CPUs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceFacts {
    pub name: String,
    pub scheduler: String,
    pub nr_requests: u64,
    pub rq_affinity: u64,
    pub nomerges: u64,
    pub rotational: bool,
    pub write_cache: String,
    /// The device's model as the kernel names it (a SCSI/NVMe model
    /// string, a virtio device's kind, zram, a loop device's file).
    #[serde(default)]
    pub model: String,
    /// The device's interrupt lines (from /proc/interrupts) and the CPUs
    /// each may run on (smp_affinity_list).
    pub irqs: Vec<(String, String)>,
}

const HALT_POLL_NS: &str = "/sys/module/haltpoll/parameters/guest_halt_poll_ns";

fn read(path: impl AsRef<Path>) -> String {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn read_u64(path: impl AsRef<Path>) -> u64 {
    read(path).parse().unwrap_or(0)
}

impl PlatformFacts {
    /// Reads the machine and the devices behind `targets` (files or block
    /// devices; ones on no block device, such as tmpfs, are skipped). A
    /// file not made yet is on the device of the directory it goes in.
    pub fn read(targets: &[&Path]) -> PlatformFacts {
        let mut devices: Vec<DeviceFacts> = Vec::new();
        for t in targets {
            // The first ancestor that exists is where the file is (or will
            // be); one on no block device (tmpfs) has none, whatever lies
            // further up.
            let existing = t.ancestors().find(|a| a.exists());
            let Some(dev) = existing.and_then(BlockDev::of_path) else {
                continue;
            };
            if !devices.iter().any(|d| d.name == dev.disk) {
                devices.push(DeviceFacts::read(&dev.disk));
            }
        }
        PlatformFacts {
            kernel: read("/proc/sys/kernel/osrelease"),
            cmdline: read("/proc/cmdline"),
            governors: governors(),
            smt: read("/sys/devices/system/cpu/smt/control"),
            cpuidle_driver: read("/sys/devices/system/cpu/cpuidle/current_driver"),
            guest_halt_poll_ns: read(HALT_POLL_NS).parse().ok(),
            idle_states: idle_states(),
            virtualization: virtualization(),
            tick: tick(&kernel_config()),
            sched_slice: sched_slice(),
            syscall_clocks: (0..SYSCALL_ROUNDS).map(|_| syscall_round_trip()).collect(),
            devices,
        }
    }

    /// Settings that skew what a benchmark measures, one sentence each.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let slow: Vec<&String> = self
            .governors
            .keys()
            .filter(|g| g.as_str() != "performance")
            .collect();
        if !slow.is_empty() {
            out.push(format!("CPU frequency governor {} (not performance): clocks per I/O and latency move with the frequency the governor picks; `cpupower frequency-set -g performance` fixes it for a run.", join(&slow)));
        }
        let deep: Vec<String> = self
            .idle_states
            .iter()
            .filter(|(_, lat)| *lat > 10)
            .map(|(n, lat)| format!("{n} ({lat} µs)"))
            .collect();
        if !deep.is_empty() {
            out.push(format!("Deep CPU idle states enabled: {}; a CPU waking from one adds its exit latency to an I/O's completion (disable them through /sys/devices/system/cpu/cpu*/cpuidle/state*/disable for latency runs).", deep.join(", ")));
        }
        if self.cpuidle_driver == "haltpoll" && self.guest_halt_poll_ns == Some(0) {
            out.push(format!("Guest halt-polling is off ({HALT_POLL_NS} is 0): an idle vCPU halts at once, so every wake-up for a completion is an interrupt to a halted CPU, and --profile books that interrupt's time to idle (a pinned psync job's layers came to 0.85-0.95x its busy time, 0.99-1.03x with polling at 400000 ns: BENCHMARKS.md)."));
        }
        if self.smt == "on" {
            out.push("SMT is on: two hardware threads share a core, so per-thread CPU time overstates a core's cost when both are busy.".into());
        }
        if self.virtualization != "none" {
            out.push(format!("Virtual machine ({}): the device and interrupts are emulated or passed through by the host, and steal time takes CPU the guest cannot see; absolute figures describe this guest, not the hardware.", self.virtualization));
        }
        out.extend(self.devices.iter().filter_map(DeviceFacts::warning));
        out
    }

    /// Rows for a report table: setting, value.
    pub fn rows(&self) -> Vec<(String, String)> {
        let governors = if self.governors.is_empty() {
            "no cpufreq (frequency set by the host or firmware)".to_string()
        } else {
            let parts: Vec<String> = self
                .governors
                .iter()
                .map(|(g, n)| format!("{g} ({n} CPUs)"))
                .collect();
            parts.join(", ")
        };
        let idle: Vec<String> = self
            .idle_states
            .iter()
            .map(|(n, l)| format!("{n} {l} µs"))
            .collect();
        let mut rows = vec![
            ("kernel".into(), self.kernel.clone()),
            ("CPU governor".into(), governors),
            ("SMT".into(), self.smt.clone()),
            (
                "cpuidle".into(),
                format!(
                    "{}: {}{}",
                    self.cpuidle_driver,
                    or_none(&idle.join(", ")),
                    self.guest_halt_poll_ns
                        .map(|ns| format!("; guest halt-polling up to {ns} ns"))
                        .unwrap_or_default()
                ),
            ),
            ("virtualization".into(), self.virtualization.clone()),
            ("timer tick".into(), or_none(&self.tick)),
            ("scheduler slice".into(), or_none(&self.sched_slice)),
            ("system call round trip".into(), self.syscall_summary()),
            ("kernel command line".into(), self.cmdline.clone()),
        ];
        rows.extend(self.devices.iter().map(|d| (d.name.clone(), d.summary())));
        rows
    }
}

impl PlatformFacts {
    /// "612 clocks (median of 5 rounds of getppid, 598-640)", or "-".
    fn syscall_summary(&self) -> String {
        let mut v = self.syscall_clocks.clone();
        v.sort_by(f64::total_cmp);
        let (Some(lo), Some(hi)) = (v.first(), v.last()) else {
            return "-".into();
        };
        format!(
            "{:.0} clocks (median of {} rounds of getppid, {lo:.0}-{hi:.0})",
            v[v.len() / 2],
            v.len()
        )
    }
}

impl DeviceFacts {
    pub fn read(disk: &str) -> DeviceFacts {
        let q = Path::new("/sys/block").join(disk).join("queue");
        let scheduler = read(q.join("scheduler"));
        DeviceFacts {
            name: disk.to_string(),
            // The active one is the bracketed name: "none [mq-deadline] kyber".
            scheduler: scheduler
                .split_whitespace()
                .find(|s| s.starts_with('['))
                .map(|s| s.trim_matches(['[', ']']).to_string())
                .unwrap_or(scheduler),
            nr_requests: read_u64(q.join("nr_requests")),
            rq_affinity: read_u64(q.join("rq_affinity")),
            nomerges: read_u64(q.join("nomerges")),
            rotational: read_u64(q.join("rotational")) == 1,
            write_cache: read(q.join("write_cache")),
            model: model(disk),
            irqs: device_irqs(disk),
        }
    }

    fn summary(&self) -> String {
        let irqs: Vec<String> = self
            .irqs
            .iter()
            .map(|(name, cpus)| format!("{name} on CPUs {cpus}"))
            .collect();
        format!(
            "{}: scheduler {}, nr_requests {}, rq_affinity {}, nomerges {}, {}, write cache {}; interrupts: {}",
            or_none(&self.model),
            self.scheduler,
            self.nr_requests,
            self.rq_affinity,
            self.nomerges,
            if self.rotational { "rotational" } else { "non-rotational" },
            or_none(&self.write_cache),
            or_none(&irqs.join(", "))
        )
    }

    fn warning(&self) -> Option<String> {
        let sched = !self.rotational && !matches!(self.scheduler.as_str(), "none" | "");
        sched.then(|| format!("{}: I/O scheduler {} on a non-rotational device adds CPU and latency per I/O that fast SSD runs usually avoid (`echo none > /sys/block/{}/queue/scheduler`).", self.name, self.scheduler, self.name))
    }
}

fn join(v: &[&String]) -> String {
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

fn or_none(s: &str) -> String {
    if s.is_empty() {
        "none found".into()
    } else {
        s.to_string()
    }
}

/// The running kernel's build configuration: /proc/config.gz, or
/// /boot/config-RELEASE; empty where neither is readable.
fn kernel_config() -> String {
    use std::io::Read;
    if let Ok(f) = fs::File::open("/proc/config.gz") {
        let mut text = String::new();
        // The configuration is a few hundred KiB; a bound keeps a damaged
        // file from growing without end.
        let mut z = flate2::read::GzDecoder::new(f).take(16 << 20);
        if z.read_to_string(&mut text).is_ok() {
            return text;
        }
    }
    fs::read_to_string(format!(
        "/boot/config-{}",
        read("/proc/sys/kernel/osrelease")
    ))
    .unwrap_or_default()
}

/// The timer tick from a kernel configuration: "250 Hz, stopped on idle
/// CPUs (NO_HZ_IDLE), CPU time sampled at each tick".
fn tick(config: &str) -> String {
    let set = |key: &str| config.lines().any(|l| l == format!("CONFIG_{key}=y"));
    let Some(hz) = config.lines().find_map(|l| l.strip_prefix("CONFIG_HZ=")) else {
        return String::new();
    };
    let mode = if set("NO_HZ_FULL") {
        "stopped on idle CPUs and on CPUs with one task (NO_HZ_FULL)"
    } else if set("NO_HZ_IDLE") {
        "stopped on idle CPUs (NO_HZ_IDLE)"
    } else {
        "periodic on every CPU"
    };
    let accounting = if set("VIRT_CPU_ACCOUNTING_GEN") {
        "CPU time measured at each kernel entry and exit"
    } else if set("IRQ_TIME_ACCOUNTING") {
        "CPU time sampled at each tick, interrupt time measured"
    } else {
        "CPU time sampled at each tick"
    };
    format!("{hz} Hz, {mode}, {accounting}")
}

/// TSC clocks per system call and return: the mean over
/// [`SYSCALL_CALLS`] calls of getppid, a call that does no work in the
/// kernel (glibc does not cache it).
fn syscall_round_trip() -> f64 {
    let start = hiops_stats::tsc::rdtsc();
    for _ in 0..SYSCALL_CALLS {
        // SAFETY: getppid takes no arguments and cannot fail.
        std::hint::black_box(unsafe { libc::getppid() });
    }
    let clocks = hiops_stats::tsc::rdtsc().wrapping_sub(start);
    clocks as f64 / f64::from(SYSCALL_CALLS)
}

/// The scheduler's time slice, where the kernel shows it (debugfs mounted).
fn sched_slice() -> String {
    for (path, what) in [
        ("/sys/kernel/debug/sched/base_slice_ns", "EEVDF base slice"),
        (
            "/proc/sys/kernel/sched_min_granularity_ns",
            "CFS minimum granularity",
        ),
        (
            "/sys/kernel/debug/sched/min_granularity_ns",
            "CFS minimum granularity",
        ),
    ] {
        if let Ok(ns) = read(path).parse::<u64>() {
            return format!("{what} {:.2} ms", ns as f64 / 1e6);
        }
    }
    "not shown by this kernel (mount debugfs at /sys/kernel/debug to read it)".into()
}

/// What the device is: the model string SCSI, ATA and NVMe devices carry,
/// or the kind of a virtual one.
fn model(disk: &str) -> String {
    let dev = Path::new("/sys/block").join(disk).join("device");
    let named = read(dev.join("model"));
    if !named.is_empty() {
        let vendor = read(dev.join("vendor"));
        return [vendor, named].join(" ").trim().to_string();
    }
    let alias = read(dev.join("modalias"));
    if let Some(rest) = alias.strip_prefix("virtio:d") {
        let kind = if rest.starts_with("00000002") {
            "virtio-blk"
        } else {
            "virtio device"
        };
        return format!("{kind} ({alias})");
    }
    if disk.starts_with("zram") {
        return "zram (compressed RAM)".into();
    }
    let backing = read(Path::new("/sys/block").join(disk).join("loop/backing_file"));
    if !backing.is_empty() {
        return format!("loop device over {backing}");
    }
    String::new()
}

fn governors() -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let Ok(dir) = fs::read_dir("/sys/devices/system/cpu") else {
        return out;
    };
    for e in dir.flatten() {
        let g = read(e.path().join("cpufreq/scaling_governor"));
        if !g.is_empty() {
            *out.entry(g).or_insert(0) += 1;
        }
    }
    out
}

fn idle_states() -> Vec<(String, u64)> {
    let base = Path::new("/sys/devices/system/cpu/cpu0/cpuidle");
    (0..16)
        .map(|i| base.join(format!("state{i}")))
        .take_while(|p| p.exists())
        .filter(|p| read_u64(p.join("disable")) == 0)
        .map(|p| (read(p.join("name")), read_u64(p.join("latency"))))
        .collect()
}

/// What the machine says it runs under: the hypervisor sysfs node, DMI's
/// product name, or only cpuinfo's `hypervisor` flag.
fn virtualization() -> String {
    let hv = read("/sys/hypervisor/type");
    if !hv.is_empty() {
        return hv;
    }
    let flagged = read("/proc/cpuinfo")
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
    if !flagged {
        return "none".into();
    }
    let product = read("/sys/class/dmi/id/product_name");
    if product.is_empty() {
        "a hypervisor (cpuinfo's hypervisor flag; no DMI product name)".into()
    } else {
        product
    }
}

/// The device's MSI interrupt lines: the `msi_irqs` of the first ancestor of
/// its sysfs device that has them (the PCI function of an NVMe or virtio
/// disk), named from /proc/interrupts.
fn device_irqs(disk: &str) -> Vec<(String, String)> {
    let Ok(mut dir) = fs::canonicalize(Path::new("/sys/block").join(disk).join("device")) else {
        return Vec::new();
    };
    let names = read("/proc/interrupts");
    loop {
        if let Ok(list) = fs::read_dir(dir.join("msi_irqs")) {
            let mut irqs: Vec<u64> = list
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect();
            irqs.sort_unstable();
            return irqs.into_iter().map(|n| irq_line(n, &names)).collect();
        }
        if !dir.pop() || dir == Path::new("/sys/devices") {
            return Vec::new();
        }
    }
}

fn irq_line(n: u64, proc_interrupts: &str) -> (String, String) {
    let prefix = format!("{n}:");
    let name = proc_interrupts
        .lines()
        .find(|l| l.trim_start().starts_with(&prefix))
        .and_then(|l| l.split_whitespace().last())
        .unwrap_or("")
        .to_string();
    let cpus = read(format!("/proc/irq/{n}/smp_affinity_list"));
    (format!("{n} {name}").trim().to_string(), cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scheduler_on_flash_and_a_slow_governor_are_warned_about() {
        let mut f = PlatformFacts {
            virtualization: "none".into(),
            ..PlatformFacts::default()
        };
        assert!(f.warnings().is_empty());
        f.governors.insert("powersave".into(), 4);
        f.idle_states = vec![("POLL".into(), 0), ("C6".into(), 133)];
        f.devices.push(DeviceFacts {
            name: "nvme0n1".into(),
            scheduler: "mq-deadline".into(),
            ..DeviceFacts::default()
        });
        let w = f.warnings();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("powersave") && w[1].contains("C6 (133 µs)"));
        assert!(w[2].starts_with("nvme0n1: I/O scheduler mq-deadline"));
        f.devices[0].rotational = true;
        assert_eq!(
            f.warnings().len(),
            2,
            "a scheduler on a disk with heads is fine"
        );
        // A VM guest that halts at once between I/Os.
        f.cpuidle_driver = "haltpoll".into();
        f.guest_halt_poll_ns = Some(0);
        assert!(f.warnings()[2].starts_with("Guest halt-polling is off"));
        f.guest_halt_poll_ns = Some(200_000);
        assert_eq!(f.warnings().len(), 2, "polling on: nothing to say");
    }

    #[test]
    fn the_tick_is_read_from_the_kernels_configuration() {
        let cfg =
            "CONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_NO_HZ_IDLE=y\nCONFIG_TICK_CPU_ACCOUNTING=y\n";
        assert_eq!(
            tick(cfg),
            "250 Hz, stopped on idle CPUs (NO_HZ_IDLE), CPU time sampled at each tick"
        );
        let full = "CONFIG_HZ=1000\nCONFIG_NO_HZ_FULL=y\nCONFIG_VIRT_CPU_ACCOUNTING_GEN=y\n";
        assert!(tick(full).starts_with("1000 Hz, stopped on idle CPUs and on CPUs with one task"));
        assert!(tick(full).ends_with("measured at each kernel entry and exit"));
        assert_eq!(tick("# CONFIG_NO_HZ is not set\n"), "", "no rate, no line");
    }

    #[test]
    fn this_machine_reads_and_a_file_names_its_device() {
        let dir = std::env::temp_dir();
        let f = PlatformFacts::read(&[dir.as_path()]);
        assert!(!f.kernel.is_empty() && !f.cmdline.is_empty());
        match BlockDev::of_path(&dir) {
            Some(dev) => {
                assert_eq!(f.devices.len(), 1);
                assert_eq!(f.devices[0].name, dev.disk);
                assert!(f.devices[0].nr_requests > 0, "{:?}", f.devices[0]);
                assert!(!f.devices[0].scheduler.contains('['));
            }
            None => assert!(f.devices.is_empty(), "the temp dir is on no block device"),
        }
        assert_eq!(f.rows().len(), 9 + f.devices.len());
        // A system call and its return cost some clocks, in every round.
        assert_eq!(f.syscall_clocks.len(), SYSCALL_ROUNDS);
        assert!(
            f.syscall_clocks.iter().all(|&c| c > 1.0 && c.is_finite()),
            "{:?}",
            f.syscall_clocks
        );
        // A file the run has not made yet: its directory's device (the
        // suites read the platform before they make their files).
        let later = dir.join("hiops-not-made-yet/job.0.0");
        assert!(!later.exists());
        let g = PlatformFacts::read(&[later.as_path()]);
        let names =
            |f: &PlatformFacts| f.devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&g), names(&f));
    }
}
