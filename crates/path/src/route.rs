//! One I/O's way through a path: checked, then done inline (pread, or a
//! target that completes inline), on the thread's own ring when it is its
//! ring's only member, or through the ring it shares with others.

use crate::local;
use crate::request::Request;
use crate::shared::{self, SharedQueue, WakeList};
use crate::{ring_error, shut_down, Caller, IoPath, Strategy, ThreadStats};
use hiops_hal::{Command, EngineKind, Op, Target};
use std::cell::{Cell, RefCell};
use std::io;
use std::sync::atomic::Ordering;

/// Paths a thread remembers its ring of; an older one forgotten is joined
/// again (counted twice, which only ever turns solo issue off).
const RING_MEMORY: usize = 16;

thread_local! {
    /// This thread's ring in each path it used: (path id, ring index).
    static THREAD_RINGS: RefCell<Vec<(u64, usize)>> = const { RefCell::new(Vec::new()) };
    /// Each thread's list of owners to wake, reused so waking allocates
    /// nothing after warm-up.
    static WAKE: Cell<WakeList> = const { Cell::new(Vec::new()) };
}

impl IoPath {
    /// One I/O of `len` bytes at `ptr`, done when this returns.
    ///
    /// # Safety
    /// `ptr` must be valid for `len` bytes (writable for a read) until this
    /// returns, and not accessed otherwise meanwhile: the kernel (or a
    /// thread completing for this one) reads or writes it until then. A
    /// flush or a trim may pass a null pointer.
    pub(crate) unsafe fn io(
        &self,
        op: Op,
        target: u32,
        ptr: *mut u8,
        len: usize,
        offset: u64,
        caller: Caller<'_>,
    ) -> io::Result<usize> {
        let len32 = self.check_io(target, len)?;
        if !op.is_sync() && len == 0 {
            return Ok(0);
        }
        let zero_copy = self.zero_copy(op, ptr, len)?;
        let cmd = Command {
            op,
            target,
            offset,
            len: len32,
        };
        // SAFETY: `ptr` as this function's own contract gives it.
        let res = unsafe { self.route(cmd, ptr, zero_copy, caller) }?;
        if res < 0 {
            return Err(io::Error::from_raw_os_error((-res) as i32));
        }
        Ok(res as usize)
    }

    /// Whether the path takes an I/O of `len` bytes to `target` now; its
    /// length as a command carries it.
    fn check_io(&self, target: u32, len: usize) -> io::Result<u32> {
        if self.closing.load(Ordering::Relaxed) {
            return Err(shut_down());
        }
        if target as usize >= self.targets.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "target {target} does not exist: the path has {}",
                    self.targets.len()
                ),
            ));
        }
        u32::try_from(len).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "one I/O moves at most 4 GiB - 1; split it",
            )
        })
    }

    /// Whether the buffer goes to the device as it is (else it is copied
    /// through a bounce buffer, which must hold it).
    fn zero_copy(&self, op: Op, ptr: *mut u8, len: usize) -> io::Result<bool> {
        // A flush or a trim has no data to bounce.
        let zero_copy = op.is_sync()
            || op.is_trim()
            || ((ptr as usize).is_multiple_of(self.align) && len.is_multiple_of(self.align));
        if !zero_copy && len > self.config.max_io {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "an unaligned buffer of {len} bytes is larger than the path's bounce buffers ({} bytes): use an AlignedBuf or raise max_io",
                    self.config.max_io
                ),
            ));
        }
        Ok(zero_copy)
    }

    /// Does `cmd` inline, on the thread's own ring or on the ring it
    /// shares; the command's result (a negative errno on failure).
    ///
    /// # Safety
    /// As [`IoPath::io`]: `ptr` valid for `cmd.len` bytes until this returns.
    unsafe fn route(
        &self,
        cmd: Command,
        ptr: *mut u8,
        zero_copy: bool,
        caller: Caller<'_>,
    ) -> io::Result<i64> {
        let Caller { stats, lend } = caller;
        let inline = self.inline.is_none() && self.inline_targets[cmd.target as usize];
        if self.rings.is_empty() || inline {
            let engine = match (self.config.strategy, &self.targets[0]) {
                (Strategy::Pread, Target::Mem(_)) => EngineKind::Mem,
                (Strategy::Pread, _) => EngineKind::Psync,
                _ if self.inline.is_some() || inline => EngineKind::Psync,
                _ => self.config.engine,
            };
            if inline && self.config.strategy != Strategy::Pread {
                self.inline_ios.fetch_add(1, Ordering::Relaxed);
            }
            // SAFETY: `ptr` as this function's own contract gives it.
            return Ok(unsafe { self.local_io(engine, cmd, ptr, zero_copy, stats, lend) }?.result);
        }
        let ring = &self.rings[self.ring_index()];
        if ring.alone() {
            // Nobody to cooperate with: the thread's own ring, which the
            // kernel lets it own (SINGLE_ISSUER, DEFER_TASKRUN).
            // SAFETY: `ptr` as this function's own contract gives it.
            let done =
                unsafe { self.local_io(self.config.engine, cmd, ptr, zero_copy, stats, lend) };
            let done = done.inspect_err(|_| ring.count_solo_failure())?;
            ring.count_solo(done.refused);
            Ok(done.result)
        } else if let Some((lend, lent)) = lend
            .filter(|_| cmd.op == Op::Read)
            .and_then(|lend| Some((lend, ring.lend(cmd.len as usize)?)))
        {
            self.shared_read_lent(ring, cmd, lent, stats, lend)
        } else {
            // SAFETY: `ptr` as this function's own contract gives it.
            unsafe { self.shared_io(ring, cmd, ptr, zero_copy, stats) }
        }
    }

    /// A read on a shared ring into a buffer it lends (registered with the
    /// kernel: no pages pinned), whose bytes `lend` reads in place.
    fn shared_read_lent(
        &self,
        ring: &SharedQueue,
        cmd: Command,
        lent: shared::Lent<'_>,
        stats: Option<&mut ThreadStats>,
        lend: &mut dyn FnMut(&[u8]),
    ) -> io::Result<i64> {
        // SAFETY: the lent buffer is this thread's until `lent` drops, below,
        // and lies in the ring's arena, which lives as long as the ring;
        // it holds cmd.len bytes (`SharedQueue::lend`).
        let res = unsafe { self.shared_io(ring, cmd, lent.ptr(), true, stats) }?;
        self.bounced.fetch_add(1, Ordering::Relaxed);
        if res > 0 {
            // SAFETY: the read returned: nothing is in flight into the buffer.
            lend(unsafe { lent.bytes((res as usize).min(cmd.len as usize)) });
        }
        Ok(res)
    }

    /// One I/O through this thread's own queue of `engine`.
    ///
    /// # Safety
    /// As [`IoPath::io`]: `ptr` valid for `cmd.len` bytes until this returns.
    unsafe fn local_io(
        &self,
        engine: EngineKind,
        cmd: Command,
        ptr: *mut u8,
        zero_copy: bool,
        stats: Option<&mut ThreadStats>,
        lend: local::Lend<'_>,
    ) -> io::Result<local::Done> {
        let spec = local::LocalSpec {
            path_id: self.id,
            engine,
            opts: &self.config.engine_opts,
            targets: &self.targets,
            max_io: self.config.max_io,
        };
        // SAFETY: `ptr` as this function's own contract gives it.
        let done = unsafe { local::io(&spec, cmd, ptr, zero_copy, lend) }.map_err(ring_error)?;
        if done.bounced {
            self.bounced.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(s) = stats {
            // The thread reaped its own completion: no hand-off happened,
            // so none is recorded (a 0 would read as the shortest delay).
            s.ios += 1;
        }
        Ok(done)
    }

    /// One I/O through a ring this thread shares.
    ///
    /// # Safety
    /// As [`IoPath::io`]: `ptr` valid for `cmd.len` bytes until this returns
    /// (another thread may complete the command into it meanwhile).
    unsafe fn shared_io(
        &self,
        ring: &SharedQueue,
        cmd: Command,
        ptr: *mut u8,
        zero_copy: bool,
        stats: Option<&mut ThreadStats>,
    ) -> io::Result<i64> {
        let req = Request::new(cmd, ptr, zero_copy);
        let mut wake = WAKE.take();
        if ring.submit(&req, &mut wake).is_err() {
            WAKE.set(wake);
            return Err(shut_down());
        }
        // Wake whoever submit posted to before we may sleep ourselves.
        shared::wake_all(&mut wake);
        let counts = ring.wait(&req, &mut wake);
        shared::wake_all(&mut wake);
        WAKE.set(wake);
        if let Some(s) = stats {
            let now = hiops_stats::tsc::rdtsc();
            let ticks = now.saturating_sub(req.reaped_tsc());
            s.ios += 1;
            s.handoff
                .record((ticks as f64 * 1e9 / hiops_stats::tsc::tsc_hz()) as u64);
            s.parks += counts.parks;
            s.doorbell_sleeps += counts.doorbell_sleeps;
        }
        Ok(req.result())
    }

    /// A thread keeps one ring, handed out round robin at its first I/O:
    /// its completions are posted in it (the own-completion wait), and
    /// threads that moved between CPUs would otherwise spread every ring's
    /// lock over all of them.
    fn ring_index(&self) -> usize {
        THREAD_RINGS.with(|cell| {
            let mut list = cell.borrow_mut();
            if let Some(&(_, i)) = list.iter().find(|(id, _)| *id == self.id) {
                return i;
            }
            let i = self.next_member.fetch_add(1, Ordering::Relaxed) as usize % self.rings.len();
            self.rings[i].join();
            if list.len() == RING_MEMORY {
                list.remove(0);
            }
            list.push((self.id, i));
            i
        })
    }
}
