//! posixaio: POSIX AIO through glibc (`aio_read`, `aio_write`, `aio_fsync`,
//! `aio_error`/`aio_return`, `aio_suspend`), with fio's semantics (fio's
//! `engines/posixaio.c`): one control block per I/O slot, queueing is one
//! `aio_*` call per command, and reaping walks the in-flight list with
//! `aio_error`, sleeping in `aio_suspend` when none has finished.
//!
//! glibc runs POSIX AIO on a pool of helper threads calling pread/pwrite
//! (rt/aio_misc.c); requests on one descriptor go to the thread already
//! serving it, so the device sees them one at a time while the submitter
//! sees up to the queue depth in flight, as fio's posixaio does.

use super::os::neg_errno;
use super::ready::ReadyList;
use super::trim::SyncTrims;
use crate::{Command, Completion, Engine, HalError, Op, Tag, Target};
use std::cell::UnsafeCell;
use std::os::fd::RawFd;

pub struct PosixAioEngine {
    fds: Vec<RawFd>,
    /// One control block per tag, allocated once and never moved: glibc's
    /// helper threads write the status into it while the command is in
    /// flight, so it is only ever touched through raw pointers
    /// (`UnsafeCell::get`), never through a Rust reference.
    cbs: Box<[UnsafeCell<libc::aiocb>]>,
    /// The operation staged on each tag (the control block does not say
    /// which call to make).
    ops: Box<[Op]>,
    /// Tags staged since the last issue, in order.
    staged: Vec<Tag>,
    /// Tags handed to glibc and not reaped (fio's busy list).
    in_flight: Vec<Tag>,
    /// The `aio_suspend` list, rebuilt from `in_flight` before each wait.
    suspend: Vec<*const libc::aiocb>,
    /// Commands that completed without reaching glibc (refused submissions).
    ready: ReadyList,
    /// POSIX AIO has no discard: trims are done here, synchronously.
    trims: SyncTrims,
}

// SAFETY: the raw pointers in `suspend` point into `cbs`, a boxed slice the
// engine owns and never reallocates; moving the engine moves the owner, not
// the memory. POSIX AIO requests are not tied to the submitting thread
// (aio_error/aio_return/aio_suspend may be called from any thread).
unsafe impl Send for PosixAioEngine {}

impl PosixAioEngine {
    pub fn open(
        targets: &[Target],
        depth: u32,
        doorbell: bool,
    ) -> Result<PosixAioEngine, HalError> {
        if doorbell {
            // A doorbell needs a notification per completion; glibc's
            // SIGEV_THREAD would start a thread for each.
            return Err(HalError::Unsupported {
                what: "posixaio on a shared queue or with tasks".into(),
                why: "POSIX AIO has no completion file descriptor to ring".into(),
                instead:
                    "use --ioengine=libaio or io_uring, or --strategy=per-thread-ring (or none)"
                        .into(),
            });
        }
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd("posixaio"))
            .collect::<Result<_, _>>()?;
        let n = depth as usize;
        Ok(PosixAioEngine {
            trims: SyncTrims::new(&fds, depth),
            fds,
            // SAFETY: aiocb is plain C data; all-zero is its documented
            // initial state (fio memsets its io_u's aiocb the same way).
            cbs: (0..n)
                .map(|_| UnsafeCell::new(unsafe { std::mem::zeroed() }))
                .collect(),
            ops: vec![Op::Read; n].into_boxed_slice(),
            staged: Vec::with_capacity(n),
            in_flight: Vec::with_capacity(n),
            suspend: Vec::with_capacity(n),
            ready: ReadyList::with_capacity(depth),
        })
    }

    fn cb(&self, tag: Tag) -> *mut libc::aiocb {
        self.cbs[tag as usize].get()
    }

    /// Hands one staged command to glibc: 0, or a negated errno when glibc
    /// refused it (EAGAIN when out of resources), as fio's queue reports an
    /// error for the I/O.
    fn submit(&mut self, tag: Tag) -> i64 {
        let cb = self.cb(tag);
        // SAFETY: `cb` was filled by prepare with a live buffer and an open
        // descriptor (the prepare contract) and is not in flight (its tag
        // was reaped before being bound again).
        let rc = unsafe {
            match self.ops[tag as usize] {
                Op::Read => libc::aio_read(cb),
                Op::Write => libc::aio_write(cb),
                Op::Fsync => libc::aio_fsync(libc::O_SYNC, cb),
                Op::Fdatasync => libc::aio_fsync(libc::O_DSYNC, cb),
                Op::Trim | Op::SyncRange(_) => unreachable!("done in place, staged apart"),
            }
        };
        if rc < 0 {
            neg_errno()
        } else {
            0
        }
    }

    /// The result of a command glibc no longer works on, or None while it
    /// is in progress.
    fn finished(&self, tag: Tag) -> Option<i64> {
        let cb = self.cb(tag);
        // SAFETY: `cb` is a submitted control block that stays put.
        let err = unsafe { libc::aio_error(cb) };
        match err {
            libc::EINPROGRESS => None,
            // aio_return releases glibc's record of the request; call it
            // exactly once, whatever the outcome.
            // SAFETY: the request is done, so aio_return may be called.
            0 => Some(unsafe { libc::aio_return(cb) } as i64),
            e => {
                // SAFETY: as above; the request failed or was cancelled.
                unsafe { libc::aio_return(cb) };
                Some(-(e as i64))
            }
        }
    }

    /// Moves finished commands into `out`, in submission order; how many.
    fn collect(&mut self, out: &mut [Completion]) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < self.in_flight.len() && n < out.len() {
            let tag = self.in_flight[i];
            match self.finished(tag) {
                Some(result) => {
                    out[n] = Completion::new(tag, result);
                    n += 1;
                    self.in_flight.remove(i);
                }
                None => i += 1,
            }
        }
        n
    }

    /// Sleeps until at least one in-flight command has finished.
    fn suspend(&mut self) -> Result<(), HalError> {
        self.suspend.clear();
        for &tag in &self.in_flight {
            self.suspend.push(self.cbs[tag as usize].get());
        }
        // SAFETY: every pointer is a submitted control block owned by self;
        // a null timeout waits without limit.
        let rc = unsafe {
            libc::aio_suspend(
                self.suspend.as_ptr(),
                self.suspend.len() as libc::c_int,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            // EINTR: a signal came first; EAGAIN cannot happen without a
            // timeout. Either way the walk that follows looks again.
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(HalError::Io {
                    engine: "posixaio",
                    what: "aio_suspend",
                    source: err,
                });
            }
        }
        Ok(())
    }
}

impl Engine for PosixAioEngine {
    unsafe fn prepare(&mut self, tag: Tag, cmd: &Command, buf: *mut u8) -> Result<(), HalError> {
        if super::trim::done_in_place(cmd.op) {
            self.trims.stage(tag, cmd);
            return Ok(());
        }
        assert!(
            self.staged.len() < self.staged.capacity(),
            "more staged commands than tags"
        );
        // SAFETY: the tag is free (not in flight), so glibc holds no pointer
        // to this control block and writing it races with nobody; all-zero
        // is a valid aiocb.
        let cb = unsafe { &mut *self.cb(tag) };
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = self.fds[cmd.target as usize];
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        if !cmd.op.is_sync() {
            cb.aio_buf = buf.cast();
            cb.aio_nbytes = cmd.len as usize;
            cb.aio_offset = cmd.offset as libc::off_t;
        }
        self.ops[tag as usize] = cmd.op;
        self.staged.push(tag);
        Ok(())
    }

    fn issue(&mut self) -> Result<u32, HalError> {
        let n = self.staged.len();
        for i in 0..n {
            let tag = self.staged[i];
            match self.submit(tag) {
                0 => self.in_flight.push(tag),
                err => self.ready.push(tag, err),
            }
        }
        self.staged.clear();
        Ok(n as u32 + self.trims.run(&self.fds, None))
    }

    fn reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        let mut done = self.trims.drain_into(out);
        done += self.ready.drain_into(&mut out[done..]);
        let want = (min as usize).min(out.len());
        loop {
            done += self.collect(&mut out[done..]);
            // Nothing left to wait for: asking for more would sleep forever.
            if done >= want || self.in_flight.is_empty() {
                return Ok(done);
            }
            self.suspend()?;
        }
    }

    fn description(&self) -> String {
        "posixaio (glibc aio_read/aio_write, aio_suspend)".into()
    }
}

impl Drop for PosixAioEngine {
    /// Cancels what is still in flight and waits until glibc is done with
    /// every control block, so no helper thread writes into freed buffers
    /// or into `cbs` after it is freed.
    fn drop(&mut self) {
        for &tag in &self.in_flight {
            let cb = self.cbs[tag as usize].get();
            // SAFETY: a submitted control block on a descriptor the caller
            // keeps open; a request already running is simply not cancelled.
            unsafe { libc::aio_cancel((*cb).aio_fildes, cb) };
        }
        while !self.in_flight.is_empty() {
            self.in_flight.retain(|&tag| {
                let cb = self.cbs[tag as usize].get();
                // SAFETY: as above; aio_return once the request is done.
                let running = unsafe { libc::aio_error(cb) } == libc::EINPROGRESS;
                if !running {
                    unsafe { libc::aio_return(cb) };
                }
                running
            });
            if !self.in_flight.is_empty() && self.suspend().is_err() {
                // aio_suspend cannot fail but by EINTR (retried inside);
                // should it, yield rather than spin hot.
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dropping the engine with reads in flight cancels or waits for them:
    /// once drop returns, nothing writes into the buffers any more.
    #[test]
    fn drop_leaves_no_request_writing_into_buffers() {
        const BS: usize = 4096;
        const DEPTH: u32 = 16;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![0x5au8; BS * DEPTH as usize]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut bufs = vec![0u8; BS * DEPTH as usize];
        let mut engine = PosixAioEngine::open(&[Target::from_file(&file)], DEPTH, false).unwrap();
        for tag in 0..DEPTH {
            let cmd = Command {
                op: Op::Read,
                target: 0,
                offset: tag as u64 * BS as u64,
                len: BS as u32,
            };
            // SAFETY: each tag's slice of `bufs` outlives the engine.
            unsafe { engine.prepare(tag, &cmd, bufs[tag as usize * BS..].as_mut_ptr()) }.unwrap();
        }
        assert_eq!(engine.issue().unwrap(), DEPTH);
        drop(engine);
        bufs.fill(0);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(bufs.iter().all(|&b| b == 0), "a read landed after drop");
    }

    /// Every command comes back once with its result, whatever `min` asked.
    #[test]
    fn reap_returns_each_command_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("f")).unwrap();
        let mut engine = PosixAioEngine::open(&[Target::from_file(&file)], 8, false).unwrap();
        let mut buf = vec![7u8; 512 * 8];
        for tag in 0..8u32 {
            let cmd = Command {
                op: Op::Write,
                target: 0,
                offset: tag as u64 * 512,
                len: 512,
            };
            // SAFETY: `buf` outlives the engine.
            unsafe { engine.prepare(tag, &cmd, buf[tag as usize * 512..].as_mut_ptr()) }.unwrap();
        }
        engine.issue().unwrap();
        let mut out = [Completion::EMPTY; 8];
        let mut seen = Vec::new();
        while seen.len() < 8 {
            let n = engine.reap(1, &mut out).unwrap();
            assert!(n >= 1);
            seen.extend(out[..n].iter().map(|c| (c.tag, c.result)));
        }
        seen.sort();
        assert_eq!(seen, (0..8).map(|t| (t, 512)).collect::<Vec<_>>());
        assert_eq!(engine.reap(0, &mut out).unwrap(), 0);
        drop(engine);
        drop(buf);
        assert_eq!(std::fs::metadata(dir.path().join("f")).unwrap().len(), 4096);
    }
}
