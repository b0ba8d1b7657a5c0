//! One CPU's sampling event and its ring: perf_event_open(2) on the
//! kernel's software CPU clock (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK:
//! an hrtimer per CPU, so it works with no PMU, inside VMs too), every task
//! on that CPU (pid -1), each sample carrying the interrupted instruction,
//! the task and the kernel call chain, written by the kernel into a ring
//! mapped into this process.
//!
//! The ring protocol is the one perf_event_open(2) and the comments of
//! include/uapi/linux/perf_event.h (struct perf_event_mmap_page) give: the
//! first page is the control page; `data_head` is written by the kernel and
//! read with acquire ordering (its smp_rmb) before the data it covers;
//! `data_tail` is written by the reader with release ordering (its smp_mb)
//! after the data is read, and the kernel never overwrites unread data (it
//! counts what it had to drop in PERF_RECORD_LOST records instead).

use perf_event_open_sys::bindings as sys;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// One record of the ring, borrowed from it (or from the scratch copy of a
/// record that wrapped around the ring's end).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Record<'a> {
    Sample {
        /// The sample interrupted user mode (else the kernel).
        user: bool,
        ip: u64,
        pid: u32,
        tid: u32,
        /// Context markers and kernel addresses, leaf first.
        chain: &'a [u64],
    },
    /// The kernel dropped this many samples (the ring was full).
    Lost(u64),
    /// The kernel stopped (true) or resumed (false) this CPU's sampling:
    /// more interrupts in one of its ticks than
    /// kernel.perf_event_max_sample_rate allows.
    Throttle(bool),
    Other,
}

/// The sample layout asked for: IP, then pid/tid, then the call chain.
const SAMPLE_TYPE: u64 =
    (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_CALLCHAIN) as u64;

/// Deepest kernel chain kept: enough to reach the system call entry of any
/// I/O path, and a bound on a record's size.
const MAX_STACK: u16 = 64;

/// Parses one record given as 8-byte words (records are 8-byte aligned and
/// sized, so a record is whole words).
pub(crate) fn parse(words: &[u64]) -> Record<'_> {
    let Some(&head) = words.first() else {
        return Record::Other;
    };
    let b = head.to_ne_bytes();
    let kind = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    let misc = u16::from_ne_bytes([b[4], b[5]]) as u32;
    match kind {
        sys::PERF_RECORD_SAMPLE if words.len() >= 4 => {
            let pt = words[2].to_ne_bytes();
            let nr = (words[3] as usize).min(words.len() - 4);
            Record::Sample {
                user: misc & sys::PERF_RECORD_MISC_CPUMODE_MASK == sys::PERF_RECORD_MISC_USER,
                ip: words[1],
                pid: u32::from_ne_bytes([pt[0], pt[1], pt[2], pt[3]]),
                tid: u32::from_ne_bytes([pt[4], pt[5], pt[6], pt[7]]),
                chain: &words[4..4 + nr],
            }
        }
        sys::PERF_RECORD_LOST if words.len() >= 3 => Record::Lost(words[2]),
        sys::PERF_RECORD_THROTTLE => Record::Throttle(true),
        sys::PERF_RECORD_UNTHROTTLE => Record::Throttle(false),
        _ => Record::Other,
    }
}

/// The event and its mapping, owned: dropped together.
pub(crate) struct Ring {
    fd: OwnedFd,
    base: NonNull<u8>,
    map_len: usize,
    data_offset: usize,
    data_size: usize,
    /// A record that wraps around the ring's end is copied here (once
    /// sized, never reallocated: records are at most 64 KiB).
    scratch: Vec<u64>,
}

// SAFETY: the mapping belongs to this value alone (nothing else holds its
// address), and the kernel's side of the protocol does not depend on which
// thread reads it, so the value may move to another thread.
unsafe impl Send for Ring {}

/// What fires a ring's samples, and what its period counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Clock {
    /// The software CPU clock; periods in nanoseconds.
    Software,
    /// The CPU's cycle counter; periods in cycles.
    Cycles,
}

pub(crate) fn attr(clock: Clock, period: u64) -> sys::perf_event_attr {
    // SAFETY: perf_event_attr is plain integers and unions of integers:
    // all zeroes is a valid value (and the ABI's "unset").
    let mut a: sys::perf_event_attr = unsafe { std::mem::zeroed() };
    (a.type_, a.config) = match clock {
        Clock::Software => (sys::PERF_TYPE_SOFTWARE, sys::PERF_COUNT_SW_CPU_CLOCK as u64),
        Clock::Cycles => (
            sys::PERF_TYPE_HARDWARE,
            sys::PERF_COUNT_HW_CPU_CYCLES as u64,
        ),
    };
    a.size = std::mem::size_of::<sys::perf_event_attr>() as u32;
    a.__bindgen_anon_1.sample_period = period;
    a.sample_type = SAMPLE_TYPE;
    a.sample_max_stack = MAX_STACK;
    a.set_disabled(1);
    // The user stack of other programs is neither needed (a user-mode
    // sample is the application's, whatever its function) nor cheap.
    a.set_exclude_callchain_user(1);
    a
}

/// perf_event_open(2) on `attr` for `pid` (-1: every task) on `cpu` (-1:
/// wherever the task runs), close-on-exec.
pub(crate) fn open_event(
    mut a: sys::perf_event_attr,
    pid: libc::pid_t,
    cpu: libc::c_int,
) -> io::Result<OwnedFd> {
    // SAFETY: `a` is a valid, fully initialised attr that outlives the
    // call; the kernel only reads it (and may write back its size).
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            &mut a,
            pid,
            cpu,
            -1,
            sys::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl Ring {
    /// Opens `clock` on `cpu` (every task) with a ring of `pages` data
    /// pages (a power of two), disabled until [`Ring::enable`].
    pub(crate) fn open_cpu(
        cpu: usize,
        clock: Clock,
        period: u64,
        pages: usize,
    ) -> io::Result<Ring> {
        assert!(pages.is_power_of_two());
        let fd = open_event(attr(clock, period), -1, cpu as libc::c_int)?;
        Self::map(fd, pages)
    }

    /// The software clock on the calling thread alone, wherever it runs.
    pub(crate) fn open_thread(period_ns: u64, pages: usize) -> io::Result<Ring> {
        assert!(pages.is_power_of_two());
        let fd = open_event(attr(Clock::Software, period_ns), 0, -1)?;
        Self::map(fd, pages)
    }

    /// The event's count so far (read(2) of its value: nanoseconds for the
    /// software clock, cycles for the cycle counter).
    pub(crate) fn count(&self) -> io::Result<u64> {
        let mut value = 0u64;
        // SAFETY: reads at most 8 bytes into a u64 on this frame; with no
        // read_format the kernel writes exactly the one u64 value.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut value as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        match n {
            8 => Ok(value),
            n if n < 0 => Err(io::Error::last_os_error()),
            _ => Err(io::Error::other("a short read of a perf event's count")),
        }
    }

    /// A ring of `pages` data pages (a power of two) over an event already
    /// opened (a tracepoint, say): the event's own records go there, and
    /// those of every event later pointed at it ([`Ring::redirect`]).
    pub(crate) fn over(fd: OwnedFd, pages: usize) -> io::Result<Ring> {
        assert!(pages.is_power_of_two());
        Self::map(fd, pages)
    }

    /// Sends `other`'s records (an event on the same CPU) into this ring
    /// (PERF_EVENT_IOC_SET_OUTPUT), so one ring per CPU serves many events.
    pub(crate) fn redirect(&self, other: &OwnedFd) -> io::Result<()> {
        // SAFETY: an ioctl whose argument is a descriptor number, on an
        // event we own; the kernel checks that both events are compatible.
        Self::check(unsafe {
            perf_event_open_sys::ioctls::SET_OUTPUT(other.as_raw_fd(), self.fd.as_raw_fd())
        })
    }

    fn map(fd: OwnedFd, pages: usize) -> io::Result<Ring> {
        let page = hiops_os::page_size();
        let map_len = (pages + 1) * page;
        // SAFETY: a fresh shared mapping of the event's ring, at an address
        // the kernel chooses; checked for failure below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(p.cast::<u8>()).expect("mmap returned a null mapping");
        let mut ring = Ring {
            fd,
            base,
            map_len,
            data_offset: page,
            data_size: pages * page,
            scratch: Vec::with_capacity(1 << 13),
        };
        // Kernels since 4.1 say where the data is; older ones put it right
        // after the control page, as set above.
        let (off, size) = ring.data_area();
        if size != 0 {
            (ring.data_offset, ring.data_size) = (off as usize, size as usize);
        }
        Ok(ring)
    }

    /// Where the kernel put the data area: (data_offset, data_size).
    fn data_area(&self) -> (u64, u64) {
        let page = self.base.as_ptr().cast::<sys::perf_event_mmap_page>();
        // SAFETY: the first page of the mapping is the control page, valid
        // for as long as `self`. Fields are read by value through raw
        // pointers, never borrowed: the kernel updates other fields of the
        // page (data_head, the time fields) at any moment. These two are
        // set before mmap returns and never change.
        unsafe {
            (
                std::ptr::read_volatile(std::ptr::addr_of!((*page).data_offset)),
                std::ptr::read_volatile(std::ptr::addr_of!((*page).data_size)),
            )
        }
    }

    pub(crate) fn check(r: libc::c_int) -> io::Result<()> {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    pub(crate) fn enable(&self) -> io::Result<()> {
        // SAFETY: an ioctl without a pointer argument on an event we own.
        Self::check(unsafe { perf_event_open_sys::ioctls::ENABLE(self.fd.as_raw_fd(), 0) })
    }

    /// Restarts the sampling clock, its next sample one new period from now
    /// (kernel/events/core.c, `__perf_event_period`: stop, then start).
    pub(crate) fn restart_clock(&self, period_ns: u64) -> io::Result<()> {
        let period = period_ns;
        // SAFETY: PERF_EVENT_IOC_PERIOD reads one u64 through its argument,
        // a pointer (the binding types it as the integer it is passed as);
        // `period` outlives the call, and the kernel does not keep it.
        Self::check(unsafe {
            perf_event_open_sys::ioctls::PERIOD(self.fd.as_raw_fd(), &period as *const u64 as u64)
        })
    }

    pub(crate) fn disable(&self) -> io::Result<()> {
        // SAFETY: as in `enable`.
        Self::check(unsafe { perf_event_open_sys::ioctls::DISABLE(self.fd.as_raw_fd(), 0) })
    }

    /// The control page's head and tail words, as atomics.
    fn positions(&self) -> (&AtomicU64, &AtomicU64) {
        let page = self.base.as_ptr().cast::<sys::perf_event_mmap_page>();
        // SAFETY: both fields are 8-byte aligned u64s in the control page,
        // valid for as long as `self`, and accessed only atomically here
        // (the kernel's side uses its own barriers, as documented above).
        unsafe {
            (
                AtomicU64::from_ptr(std::ptr::addr_of_mut!((*page).data_head)),
                AtomicU64::from_ptr(std::ptr::addr_of_mut!((*page).data_tail)),
            )
        }
    }

    /// Hands every record written since the last call to `f`, then gives
    /// the space back to the kernel.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(Record<'_>)) {
        self.drain_words(|words| f(parse(words)))
    }

    /// The same, each record given as its words (header first).
    pub(crate) fn drain_words(&mut self, mut f: impl FnMut(&[u64])) {
        let (head, mut tail) = {
            let (head, tail) = self.positions();
            (head.load(Ordering::Acquire), tail.load(Ordering::Relaxed))
        };
        while tail < head {
            let size = self.record_size(tail);
            if size < 8 || !size.is_multiple_of(8) || tail + size as u64 > head {
                // Not a record the protocol allows: give the rest back
                // rather than stall on it.
                tail = head;
                break;
            }
            f(self.record(tail, size));
            tail += size as u64;
        }
        self.positions().1.store(tail, Ordering::Release);
    }

    /// `n` words of the data area from word `from` (no wrap), borrowed.
    ///
    /// Only for words below `data_head` that `data_tail` has not passed:
    /// the kernel wrote them before publishing the head and writes there
    /// again only after the tail moves past them, so they do not change
    /// while borrowed. (A slice over the whole area would cover words the
    /// kernel is writing.)
    fn words(&self, from: usize, n: usize) -> &[u64] {
        assert!(from + n <= self.data_size / 8);
        // SAFETY: the range lies in the mapping's data area, 8-byte
        // aligned (page-aligned area, whole words), valid as long as
        // `self`; and it is stable while borrowed (see above).
        unsafe {
            std::slice::from_raw_parts(
                self.base
                    .as_ptr()
                    .add(self.data_offset)
                    .cast::<u64>()
                    .add(from),
                n,
            )
        }
    }

    /// The size of the record at `at` (whose header the head covers).
    fn record_size(&self, at: u64) -> usize {
        let head = self.words((at as usize % self.data_size) / 8, 1)[0].to_ne_bytes();
        u16::from_ne_bytes([head[6], head[7]]) as usize
    }

    /// The record at `at`, in place, or copied whole when it wraps.
    fn record(&mut self, at: u64, size: usize) -> &[u64] {
        let start = (at as usize % self.data_size) / 8;
        let n = size / 8;
        let len = self.data_size / 8;
        if start + n <= len {
            return self.words(start, n);
        }
        let first = len - start;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        scratch.extend_from_slice(self.words(start, first));
        scratch.extend_from_slice(self.words(0, n - first));
        self.scratch = scratch;
        &self.scratch
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `map` with this length and is
        // unmapped once; nothing borrowed from it outlives `self`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u32, misc: u16, size: u16) -> u64 {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&kind.to_ne_bytes());
        b[4..6].copy_from_slice(&misc.to_ne_bytes());
        b[6..].copy_from_slice(&size.to_ne_bytes());
        u64::from_ne_bytes(b)
    }

    fn pid_tid(pid: u32, tid: u32) -> u64 {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&pid.to_ne_bytes());
        b[4..].copy_from_slice(&tid.to_ne_bytes());
        u64::from_ne_bytes(b)
    }

    /// This thread's CPU time (exact: the scheduler's own account).
    fn thread_cpu_ns() -> u64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec on this frame.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        assert_eq!(rc, 0, "clock_gettime");
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }

    /// Samples a ring of this thread takes while it runs for `ms` of its
    /// own CPU time (the clock counts only while it runs, so time other
    /// tests take the CPU for does not count).
    fn spin_samples(ring: &mut Ring, ms: u64) -> u64 {
        let end = thread_cpu_ns() + ms * 1_000_000;
        let mut x = 0u64;
        while thread_cpu_ns() < end {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let mut samples = 0;
        ring.drain(|r| samples += u64::from(matches!(r, Record::Sample { .. })));
        samples
    }

    #[test]
    fn a_restarted_clock_samples_at_its_new_rate() {
        let mut ring = match Ring::open_thread(1_000_000, 64) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("skipped: no sampling clock for this thread ({e})");
                return;
            }
        };
        ring.enable().expect("enable");
        let at_1khz = spin_samples(&mut ring, 300);
        ring.restart_clock(5_000_000)
            .expect("PERF_EVENT_IOC_PERIOD");
        let at_200hz = spin_samples(&mut ring, 300);
        ring.disable().expect("disable");
        // 300 and 60 expected over 300 ms of the thread's own CPU time.
        assert!(at_1khz >= 240, "{at_1khz} samples in 300 ms at 1 kHz");
        assert!(
            (at_200hz as f64) < at_1khz as f64 / 2.5 && at_200hz >= 20,
            "{at_200hz} samples at 200 Hz against {at_1khz} at 1 kHz"
        );
    }

    #[test]
    fn a_sample_record_gives_its_mode_task_and_chain() {
        let kernel = sys::PERF_CONTEXT_KERNEL;
        let words = [
            header(
                sys::PERF_RECORD_SAMPLE,
                sys::PERF_RECORD_MISC_KERNEL as u16,
                56,
            ),
            0xffff_ffff_8100_0010,
            pid_tid(42, 43),
            3,
            kernel,
            0xffff_ffff_8100_0010,
            0xffff_ffff_8100_0200,
        ];
        assert_eq!(
            parse(&words),
            Record::Sample {
                user: false,
                ip: 0xffff_ffff_8100_0010,
                pid: 42,
                tid: 43,
                chain: &words[4..7],
            }
        );
        let user = [
            header(
                sys::PERF_RECORD_SAMPLE,
                sys::PERF_RECORD_MISC_USER as u16,
                32,
            ),
            0x4000,
            pid_tid(7, 7),
            0,
        ];
        assert!(matches!(
            parse(&user),
            Record::Sample {
                user: true,
                chain: &[],
                ..
            }
        ));
        // A chain longer than the record is cut to what is there.
        let torn = [
            header(sys::PERF_RECORD_SAMPLE, 1, 40),
            1,
            pid_tid(1, 1),
            9,
            kernel,
        ];
        assert!(matches!(parse(&torn), Record::Sample { chain, .. } if chain.len() == 1));
        assert_eq!(
            parse(&[header(sys::PERF_RECORD_LOST, 0, 24), 5, 17]),
            Record::Lost(17)
        );
        assert_eq!(parse(&[header(3, 0, 8)]), Record::Other);
        let on = [header(sys::PERF_RECORD_THROTTLE, 0, 24), 1, 2];
        let off = [header(sys::PERF_RECORD_UNTHROTTLE, 0, 24), 1, 2];
        assert_eq!(parse(&on), Record::Throttle(true));
        assert_eq!(parse(&off), Record::Throttle(false));
    }
}
