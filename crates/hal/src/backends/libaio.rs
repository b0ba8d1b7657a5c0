//! libaio: Linux native AIO through the raw system calls (no libaio.so).
//!
//! The structures are the kernel ABI of `include/uapi/linux/aio_abi.h`
//! (little-endian layout, x86_64 and aarch64).

use crate::{Command, Completion, Doorbell, Engine, HalError, Op, Tag, Target};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
/// `aio_flags`: signal the eventfd in `aio_resfd` on completion.
const IOCB_FLAG_RESFD: u32 = 1;
/// `aio_flags`: `aio_reqprio` holds the command's I/O priority.
const IOCB_FLAG_IOPRIO: u32 = 2;

/// `struct iocb` (64 bytes). On little-endian machines `aio_key` comes before
/// `aio_rw_flags`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

pub struct AioEngine {
    ctx: libc::c_ulong,
    fds: Vec<RawFd>,
    /// One control block per tag, never moved: the kernel keeps pointers to
    /// them while commands are in flight.
    iocbs: Box<[Iocb]>,
    /// Pointers to staged control blocks, in issue order.
    pending: Vec<*mut Iocb>,
    /// How many of `pending` were already accepted by io_submit.
    submitted_head: usize,
    events: Box<[IoEvent]>,
    doorbell: Option<Arc<Doorbell>>,
    /// Trims: the kernel's AIO has no discard, so they are done here.
    trims: super::trim::SyncTrims,
}

// SAFETY: the raw pointers in `pending` point into `iocbs`, a boxed slice this
// engine owns and never reallocates; moving the engine to another thread moves
// the owner, not the memory. The AIO context is not tied to a thread.
unsafe impl Send for AioEngine {}

impl AioEngine {
    pub fn open(targets: &[Target], depth: u32, doorbell: bool) -> Result<AioEngine, HalError> {
        let fds: Vec<RawFd> = targets
            .iter()
            .map(|t| t.fd("libaio"))
            .collect::<Result<_, _>>()?;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id into `ctx`, which is valid.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EAGAIN) {
                return Err(HalError::Unsupported {
                    what: format!("libaio with queue depth {depth}"),
                    why: "the system-wide AIO limit (/proc/sys/fs/aio-max-nr) is reached".into(),
                    instead:
                        "raise fs.aio-max-nr, lower --iodepth/--numjobs, or use --ioengine=io_uring"
                            .into(),
                });
            }
            return Err(HalError::Setup {
                engine: "libaio",
                what: "io_setup",
                source: err,
            });
        }
        Ok(AioEngine {
            ctx,
            trims: super::trim::SyncTrims::new(&fds, depth),
            fds,
            iocbs: vec![Iocb::default(); depth as usize].into_boxed_slice(),
            pending: Vec::with_capacity(depth as usize),
            submitted_head: 0,
            events: vec![IoEvent::default(); depth as usize].into_boxed_slice(),
            doorbell: if doorbell {
                Some(Arc::new(Doorbell::new().map_err(|e| HalError::Setup {
                    engine: "libaio",
                    what: "creating the completion eventfd",
                    source: e,
                })?))
            } else {
                None
            },
        })
    }

    fn submit_pending(&mut self) -> Result<u32, HalError> {
        let mut sent = 0u32;
        while self.submitted_head < self.pending.len() {
            let rest = &mut self.pending[self.submitted_head..];
            // SAFETY: every pointer in `rest` points into self.iocbs, which
            // outlives the context; ctx is a live AIO context.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    rest.len() as libc::c_long,
                    rest.as_mut_ptr(),
                )
            };
            if rc < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EAGAIN) && sent > 0 {
                    break; // the kernel queue is full: the rest goes next time
                }
                return Err(HalError::Io {
                    engine: "libaio",
                    what: "io_submit",
                    source: err,
                });
            }
            self.submitted_head += rc as usize;
            sent += rc as u32;
        }
        if self.submitted_head == self.pending.len() {
            self.pending.clear();
            self.submitted_head = 0;
        }
        Ok(sent)
    }
}

impl Engine for AioEngine {
    unsafe fn prepare(&mut self, tag: Tag, cmd: &Command, buf: *mut u8) -> Result<(), HalError> {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.prepare_with_prio(tag, cmd, buf, 0) }
    }

    unsafe fn prepare_with_prio(
        &mut self,
        tag: Tag,
        cmd: &Command,
        buf: *mut u8,
        ioprio: u16,
    ) -> Result<(), HalError> {
        if cmd.op.is_trim() {
            self.trims.stage(tag, cmd);
            return Ok(());
        }
        let iocb = &mut self.iocbs[tag as usize];
        *iocb = Iocb {
            aio_data: tag as u64,
            aio_lio_opcode: match cmd.op {
                Op::Read => IOCB_CMD_PREAD,
                Op::Write => IOCB_CMD_PWRITE,
                Op::Fsync => IOCB_CMD_FSYNC,
                Op::Fdatasync => IOCB_CMD_FDSYNC,
                Op::Trim => unreachable!("trims are staged apart"),
            },
            aio_fildes: self.fds[cmd.target as usize] as u32,
            ..Iocb::default()
        };
        // The kernel refuses a flush with a buffer, length or offset (EINVAL).
        if !cmd.op.is_sync() {
            iocb.aio_buf = buf as u64;
            iocb.aio_nbytes = cmd.len as u64;
            iocb.aio_offset = cmd.offset as i64;
        }
        if let Some(bell) = &self.doorbell {
            iocb.aio_flags = IOCB_FLAG_RESFD;
            iocb.aio_resfd = bell.as_raw_fd() as u32;
        }
        if ioprio != 0 {
            iocb.aio_flags |= IOCB_FLAG_IOPRIO;
            iocb.aio_reqprio = ioprio as i16;
        }
        assert!(
            self.pending.len() < self.pending.capacity(),
            "more staged commands than tags"
        );
        self.pending.push(iocb as *mut Iocb);
        Ok(())
    }

    fn issue(&mut self) -> Result<u32, HalError> {
        let sent = self.submit_pending()?;
        Ok(sent + self.trims.run(&self.fds, self.doorbell.as_deref()))
    }

    fn reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        let done = self.trims.drain_into(out);
        if done > 0 && (done as u32 >= min || done == out.len()) {
            return Ok(done);
        }
        let min = min - done as u32;
        let out = &mut out[done..];
        let max = out.len().min(self.events.len());
        loop {
            // SAFETY: events has room for `max` entries; a null timeout waits.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min.min(max as u32) as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if rc < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(HalError::Io {
                    engine: "libaio",
                    what: "io_getevents",
                    source: err,
                });
            }
            let n = rc as usize;
            for (o, e) in out.iter_mut().zip(&self.events[..n]) {
                *o = Completion::new(e.data as Tag, e.res);
            }
            return Ok(done + n);
        }
    }

    fn unsent(&self) -> Option<u32> {
        // io_submit's partial successes moved submitted_head; the trims
        // run after the submissions, so none of them ran.
        Some((self.pending.len() - self.submitted_head) as u32 + self.trims.staged())
    }

    fn withdraw_unsent(&mut self) -> bool {
        // The unsent iocbs never left this process: forget them (the sent
        // ones are in flight, and complete through reap).
        self.pending.clear();
        self.submitted_head = 0;
        self.trims.clear();
        true
    }

    fn description(&self) -> String {
        "libaio (io_submit/io_getevents)".into()
    }

    fn doorbell(&self) -> Option<Arc<Doorbell>> {
        self.doorbell.clone()
    }
}

impl Drop for AioEngine {
    fn drop(&mut self) {
        // SAFETY: ctx is a live context; io_destroy waits for in-flight I/O.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}
