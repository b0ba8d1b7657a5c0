//! CPU time over a measurement window: the process's own (getrusage) and the
//! whole machine's (/proc/stat), split into user / kernel / irq+softirq.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Process resource usage at one instant.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct ProcessSample {
    pub user: Duration,
    pub system: Duration,
    pub voluntary_ctx: u64,
    pub involuntary_ctx: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

fn rusage(who: libc::c_int) -> ProcessSample {
    // SAFETY: getrusage fills the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    ProcessSample {
        user: tv(ru.ru_utime),
        system: tv(ru.ru_stime),
        voluntary_ctx: ru.ru_nvcsw as u64,
        involuntary_ctx: ru.ru_nivcsw as u64,
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
    }
}

impl ProcessSample {
    /// The whole process (every thread, kernel io_uring workers included).
    pub fn process() -> ProcessSample {
        rusage(libc::RUSAGE_SELF)
    }

    /// The calling thread alone.
    pub fn thread() -> ProcessSample {
        rusage(libc::RUSAGE_THREAD)
    }

    pub fn delta(&self, earlier: &ProcessSample) -> ProcessSample {
        ProcessSample {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            voluntary_ctx: self.voluntary_ctx.saturating_sub(earlier.voluntary_ctx),
            involuntary_ctx: self.involuntary_ctx.saturating_sub(earlier.involuntary_ctx),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }

    pub fn context_switches(&self) -> u64 {
        self.voluntary_ctx + self.involuntary_ctx
    }
}

/// The machine's CPU time from the aggregate `cpu` line of /proc/stat, in
/// clock ticks (USER_HZ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineSample {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl MachineSample {
    pub fn read() -> Option<MachineSample> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    pub fn parse(proc_stat: &str) -> Option<MachineSample> {
        let line = proc_stat.lines().find(|l| l.starts_with("cpu "))?;
        Self::fields(line)
    }

    /// Every CPU's own line (`cpuN ...`), as (N, its times).
    pub fn parse_per_cpu(proc_stat: &str) -> Vec<(usize, MachineSample)> {
        proc_stat
            .lines()
            .filter_map(|l| {
                // "cpu  ..." (the total) has no number in its first word.
                let n = l.split_whitespace().next()?.strip_prefix("cpu")?;
                Some((n.parse().ok()?, Self::fields(l)?))
            })
            .collect()
    }

    /// The times after a line's first word.
    fn fields(line: &str) -> Option<MachineSample> {
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        if v.len() < 8 {
            return None;
        }
        Some(MachineSample {
            user: v[0],
            nice: v[1],
            system: v[2],
            idle: v[3],
            iowait: v[4],
            irq: v[5],
            softirq: v[6],
            steal: v[7],
        })
    }

    pub fn delta(&self, e: &MachineSample) -> MachineSample {
        MachineSample {
            user: self.user.saturating_sub(e.user),
            nice: self.nice.saturating_sub(e.nice),
            system: self.system.saturating_sub(e.system),
            idle: self.idle.saturating_sub(e.idle),
            iowait: self.iowait.saturating_sub(e.iowait),
            irq: self.irq.saturating_sub(e.irq),
            softirq: self.softirq.saturating_sub(e.softirq),
            steal: self.steal.saturating_sub(e.steal),
        }
    }

    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// USER_HZ: the unit of /proc/stat.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// CPU seconds over a window, split as the reports show them.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuSeconds {
    pub user: f64,
    pub kernel: f64,
    /// Hard and soft interrupt time (machine view only).
    pub irq: f64,
}

impl CpuSeconds {
    pub fn total(&self) -> f64 {
        self.user + self.kernel + self.irq
    }

    pub fn of_process(d: &ProcessSample) -> CpuSeconds {
        CpuSeconds {
            user: d.user.as_secs_f64(),
            kernel: d.system.as_secs_f64(),
            irq: 0.0,
        }
    }

    /// Busy time of the machine (idle and iowait are not busy; steal is time
    /// another guest had, not ours).
    pub fn of_machine(d: &MachineSample) -> CpuSeconds {
        let hz = ticks_per_second();
        CpuSeconds {
            user: (d.user + d.nice) as f64 / hz,
            kernel: d.system as f64 / hz,
            irq: (d.irq + d.softirq) as f64 / hz,
        }
    }

    /// Clocks per I/O at `hz` ticks per second.
    pub fn clocks_per_io(&self, ios: u64, hz: f64) -> Option<f64> {
        (ios > 0).then(|| self.total() * hz / ios as f64)
    }
}

/// Number of CPUs online: the machine's, as /proc/stat counts them (not
/// this process's affinity or cgroup quota), for utilisation percentages.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    }
}

/// Memory the kernel can give without swapping (/proc/meminfo's
/// MemAvailable), in bytes.
pub fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The CPUs this process may run on (its affinity mask).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data, filled by the kernel for this process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..online_cpus()).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// A CPU list in the kernel's format (`0-3,6`, as in cpuset files, IRQ
/// affinity lists and fio's `cpus_allowed`).
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, crate::CpuListError> {
    let mut cpus = Vec::new();
    let bad = || crate::CpuListError::Malformed { text: text.into() };
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().map_err(|_| bad())?),
        }
    }
    if cpus.is_empty() {
        return Err(crate::CpuListError::Empty { text: text.into() });
    }
    Ok(cpus)
}

/// Lets the calling thread run only on `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), crate::PinError> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds for ids < 1024.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= 1024 {
                return Err(crate::PinError::BeyondSetSize { cpu: c });
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(crate::PinError::Refused {
                cpus: cpus.to_vec(),
                source: std::io::Error::last_os_error(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_cpu_line_is_parsed_and_differenced() {
        let a =
            MachineSample::parse("cpu  10 1 20 300 4 5 6 7 0 0\ncpu0 1 2 3 4 5 6 7 8\n").unwrap();
        let b = MachineSample::parse("cpu  15 1 30 310 4 6 8 7 0 0\n").unwrap();
        let d = b.delta(&a);
        assert_eq!(
            (d.user, d.system, d.idle, d.irq, d.softirq),
            (5, 10, 10, 1, 2)
        );
        assert_eq!(d.total(), 28);
        assert!(MachineSample::parse("intr 1 2 3").is_none());
    }

    #[test]
    fn each_cpus_own_line_is_parsed_and_the_total_is_not_one() {
        let text = "cpu  10 1 20 300 4 5 6 7 0 0\ncpu0 1 2 3 4 5 6 7 8\ncpu12 8 7 6 5 4 3 2 1 0 0\nintr 1 2\n";
        let per = MachineSample::parse_per_cpu(text);
        assert_eq!(per.len(), 2);
        assert_eq!((per[0].0, per[0].1.idle, per[0].1.steal), (0, 4, 8));
        assert_eq!((per[1].0, per[1].1.user, per[1].1.iowait), (12, 8, 4));
    }

    #[test]
    fn cpu_lists_in_the_kernel_format() {
        assert_eq!(parse_cpu_list("0-2,5"), Ok(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("1\n".trim()), Ok(vec![1]));
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("").is_err());
        assert!(parse_cpu_list("a").is_err());
    }

    #[test]
    fn burning_cpu_shows_up_in_process_time() {
        // Spin until the kernel's own clock of this thread's CPU time (not
        // the wall clock: a loaded machine gives the thread less of it) has
        // run 60 ms; getrusage must then see most of it.
        let thread_cpu = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid timespec the call writes.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            assert_eq!(rc, 0);
            Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        };
        let before = ProcessSample::thread();
        let start = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() - start < Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let d = ProcessSample::thread().delta(&before);
        assert!(
            d.user + d.system >= Duration::from_millis(40),
            "60 ms of this thread's CPU time measured as {:?}",
            d.user + d.system
        );
    }
}
