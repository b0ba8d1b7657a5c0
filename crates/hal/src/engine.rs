//! The low-level driver interface: what every backend implements.
//!
//! The shape follows fio's engine table (prep / queue / commit / getevents,
//! fio's `ioengines.h`) with the HIOPS operation names: commands are bound to
//! tags and staged (`prepare` = `bind_tag_cmd`), staged commands are sent
//! together (`issue` = `issue_tags`), and completions are peeked or waited for
//! and fetched in batches (`reap` = `check_event` + `fetch_event`).

use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use crate::backends::mem::MemDevice;
use crate::{Command, Completion, Doorbell, HalError, Op, PostedCounter, Tag};

/// Where commands go: an open file or block device, or a RAM device.
#[derive(Clone, Debug)]
pub enum Target {
    /// A raw descriptor; the caller keeps it open for as long as any queue
    /// that uses it lives.
    Fd(RawFd),
    Mem(Arc<MemDevice>),
}

impl Target {
    pub fn from_file(file: &impl AsRawFd) -> Target {
        Target::Fd(file.as_raw_fd())
    }

    pub(crate) fn fd(&self, engine: &'static str) -> Result<RawFd, HalError> {
        match self {
            Target::Fd(fd) => Ok(*fd),
            Target::Mem(_) => Err(HalError::Unsupported {
                what: format!("the {engine} engine on a RAM device"),
                why: "it issues kernel I/O and a RAM device has no descriptor".into(),
                instead: "use --ioengine=mem for the RAM device, or give a file or block device"
                    .into(),
            }),
        }
    }
}

/// A backend ("low level driver"). One instance serves one queue; the queue
/// may move between threads (a shared queue sits behind a lock), except that
/// an io_uring ring with SINGLE_ISSUER only accepts submissions from the
/// thread that created it.
pub trait Engine: Send {
    /// Bind `tag` to `cmd` and stage it. Staging never blocks and never fails
    /// for lack of room: the queue hands out at most `depth` tags.
    ///
    /// # Safety
    /// The engine hands `buf` to the kernel (or copies through it). The caller
    /// must keep it valid for `cmd.len` bytes (writable for a read), aligned
    /// as the target requires (O_DIRECT), and neither move, free nor touch it
    /// until this tag's completion has been reaped or the engine dropped
    /// (dropping waits for in-flight commands). `cmd.target` must index the
    /// targets the engine was opened with.
    unsafe fn prepare(&mut self, tag: Tag, cmd: &Command, buf: *mut u8) -> Result<(), HalError>;

    /// [`Engine::prepare`] at an I/O priority of the command's own (not 0,
    /// see [`crate::ioprio_value`]): io_uring's `sqe->ioprio`, aio's
    /// `aio_reqprio`. Engines without per-command priorities refuse it.
    ///
    /// # Safety
    /// As [`Engine::prepare`].
    unsafe fn prepare_with_prio(
        &mut self,
        tag: Tag,
        cmd: &Command,
        buf: *mut u8,
        ioprio: u16,
    ) -> Result<(), HalError> {
        let _ = (tag, cmd, buf);
        Err(HalError::Unsupported {
            what: format!(
                "an I/O priority of its own (class {}, level {})",
                crate::ioprio_class(ioprio),
                crate::ioprio_level(ioprio)
            ),
            why: format!(
                "the {} engine has no per-command priority",
                self.description()
            ),
            instead: "use --ioengine=io_uring or libaio (fio's cmdprio engines)".into(),
        })
    }

    /// Send every staged command to the device. Returns how many were sent.
    fn issue(&mut self) -> Result<u32, HalError>;

    /// Wait until at least `min` completions are available (0: only peek), then
    /// move up to `out.len()` of them into `out`. Returns how many.
    fn reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError>;

    /// `reap(0, ..)` without entering the kernel: only completions already
    /// posted where this thread can read them. An engine whose completions
    /// are posted only inside a system call (io_uring with DEFER_TASKRUN
    /// or IOPOLL) finds none of those here; the next `reap` or `issue` gets
    /// them.
    fn peek(&mut self, out: &mut [Completion]) -> Result<usize, HalError> {
        self.reap(0, out)
    }

    /// `issue` then `reap`; engines that can do both in one system call do.
    /// Returns (commands sent, completions fetched).
    fn issue_and_reap(
        &mut self,
        min: u32,
        out: &mut [Completion],
    ) -> Result<(u32, usize), HalError> {
        let sent = self.issue()?;
        Ok((sent, self.reap(min, out)?))
    }

    /// After `issue` or `issue_and_reap` failed: how many staged commands
    /// the kernel did not take (the rest are in flight). None where a
    /// failed call sends none.
    fn unsent(&self) -> Option<u32> {
        None
    }

    /// After `issue` failed: takes the unsent commands back, so that no
    /// later call sends them and they can be failed; false where the
    /// engine cannot (they stay staged, to be sent again).
    fn withdraw_unsent(&mut self) -> bool {
        false
    }

    /// What is in force (flags the kernel accepted, modes), for the report.
    fn description(&self) -> String;

    /// The command is done inside `issue` (pread, a RAM copy): the call is
    /// the I/O, so its time is completion latency, not submission.
    fn completes_in_issue(&self) -> bool {
        false
    }

    /// The doorbell rung on each completion, when `EngineOptions::doorbell`
    /// asked for one and the engine completes asynchronously. Engines that
    /// complete inside `issue` have none: their completions are ready at once.
    fn doorbell(&self) -> Option<Arc<Doorbell>> {
        None
    }

    /// The completion queue's posted/consumed counters, readable without
    /// a system call: interrupt-driven io_uring without DEFER_TASKRUN (its
    /// completions posted in the submitting thread) and libaio (posted by
    /// the interrupt); see [`PostedCounter`].
    fn posted_counter(&self) -> Option<Arc<PostedCounter>> {
        None
    }

    /// Has the kernel signal the eventfd `fd` when the next command staged
    /// on `tag`, an `op`, completes, from the context that completes it
    /// (libaio's `IOCB_FLAG_RESFD`: the interrupt), instead of the
    /// doorbell; -1 goes back to the doorbell. Called before that
    /// command's `prepare`. Returns whether the kernel will signal it:
    /// false where the engine has no such signal, or does `op` itself.
    fn signal_on_completion(&mut self, tag: Tag, op: Op, fd: RawFd) -> bool {
        let _ = (tag, op, fd);
        false
    }

    /// Completions reach the queue only inside this engine's own calls
    /// (io_uring with DEFER_TASKRUN posts them in `io_uring_enter`): after
    /// a reap or peek has taken what was there, another peek finds nothing
    /// until the next call. So do engines that complete inside `issue`.
    fn posts_only_in_calls(&self) -> bool {
        self.completes_in_issue()
    }
}

/// The backends, selectable by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// pread/pwrite: one synchronous I/O per thread at a time.
    Psync,
    /// preadv2/pwritev2, optionally with RWF_HIPRI (polled) or RWF_NOWAIT.
    Pvsync2,
    /// Linux native AIO through the raw io_setup/io_submit/io_getevents calls.
    Libaio,
    /// io_uring, interrupt-driven by default.
    IoUring,
    /// POSIX AIO (glibc's aio_read/aio_write, served by helper threads).
    PosixAio,
    /// A RAM device behind the same HAL: the software cost alone.
    Mem,
    /// memcpy to and from a shared mapping of the file (fio's mmap).
    Mmap,
    /// Sends and receives on a socket (fio's net): writes send, reads receive.
    Net,
    /// Completes every command at once without touching data.
    Null,
    /// pread/pwrite's shape through a pipe: splice and vmsplice (fio's splice).
    Splice,
    /// Writes move a donor file's extents in (EXT4_IOC_MOVE_EXT, fio's e4defrag).
    E4defrag,
}

impl EngineKind {
    pub const ALL: [EngineKind; 11] = [
        EngineKind::Psync,
        EngineKind::Pvsync2,
        EngineKind::Libaio,
        EngineKind::IoUring,
        EngineKind::PosixAio,
        EngineKind::Mem,
        EngineKind::Mmap,
        EngineKind::Net,
        EngineKind::Null,
        EngineKind::Splice,
        EngineKind::E4defrag,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::Libaio => "libaio",
            EngineKind::IoUring => "io_uring",
            EngineKind::PosixAio => "posixaio",
            EngineKind::Mem => "mem",
            EngineKind::Mmap => "mmap",
            EngineKind::Net => "net",
            EngineKind::Null => "null",
            EngineKind::Splice => "splice",
            EngineKind::E4defrag => "e4defrag",
        }
    }

    /// Parses an engine name; fio's spellings are accepted (`sync` is psync's
    /// behaviour here: positioned synchronous I/O).
    pub fn parse(name: &str) -> Option<EngineKind> {
        Some(match name {
            "psync" | "sync" => EngineKind::Psync,
            "pvsync2" => EngineKind::Pvsync2,
            "libaio" | "aio" => EngineKind::Libaio,
            "io_uring" | "iouring" | "uring" => EngineKind::IoUring,
            "posixaio" => EngineKind::PosixAio,
            "mem" | "ram" => EngineKind::Mem,
            "mmap" => EngineKind::Mmap,
            "net" => EngineKind::Net,
            "null" => EngineKind::Null,
            "splice" => EngineKind::Splice,
            "e4defrag" => EngineKind::E4defrag,
            _ => return None,
        })
    }

    /// Synchronous engines complete each command inside `issue`: one I/O in
    /// flight per thread, whatever the queue depth.
    pub fn is_synchronous(self) -> bool {
        matches!(
            self,
            EngineKind::Psync
                | EngineKind::Pvsync2
                | EngineKind::Mmap
                | EngineKind::Net
                | EngineKind::Splice
                | EngineKind::E4defrag
        )
    }

    /// Engines that move data through the kernel need a file or device.
    pub fn needs_file(self) -> bool {
        !matches!(self, EngineKind::Mem | EngineKind::Net | EngineKind::Null)
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Tri-state for kernel features: use where available, require, or refuse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Feature {
    /// Use it where the kernel has it, and say in the description whether it was.
    #[default]
    Auto,
    /// Fail with a clear error when the kernel lacks it.
    On,
    Off,
}

/// Backend options. Defaults are the fast, interrupt-driven configuration.
#[derive(Clone, Debug, Default)]
pub struct EngineOptions {
    /// pvsync2: RWF_HIPRI (polled completion; needs poll queues).
    pub hipri: bool,
    /// pvsync2: RWF_NOWAIT (fail with EAGAIN instead of blocking).
    pub nowait: bool,
    /// pvsync2 with `hipri`: the share of commands, in percent, that poll
    /// (fio's hipri_percentage; the others complete by interrupt). `None`:
    /// every one.
    pub hipri_percentage: Option<u8>,
    /// pvsync2, io_uring: RWF_DONTCACHE on buffered reads and writes, the
    /// pages dropped once the I/O is done (fio's uncached; Linux 6.14).
    pub dontcache: bool,
    /// libaio: completions read from the context's ring in user space
    /// before the kernel is asked (fio's userspace_reap).
    pub aio_userspace_reap: bool,
    /// io_uring: every Nth command goes with IOSQE_ASYNC, straight to an
    /// io-wq worker (fio's force_async). 0: none.
    pub force_async: u32,
    /// psync: the call each command makes (fio's falloc and ftruncate
    /// engines are psync's shape with another call).
    pub psync_call: crate::backends::sync::PsyncCall,
    /// mmap: hints and write-back (fio's fadvise_hint, sync, direct).
    pub mmap: crate::backends::mmap::MmapOptions,
    /// net: the socket, its side and options (fio's net engine).
    pub net: crate::backends::net::NetOptions,
    /// e4defrag: the donor file and its allocation.
    pub e4defrag: crate::backends::e4defrag::E4defragOptions,
    /// io_uring: a kernel thread polls the submission queue.
    pub sqpoll: bool,
    /// io_uring: how long the SQ thread spins before sleeping (ms).
    pub sqpoll_idle_ms: u32,
    /// io_uring: pin the SQ thread to this CPU.
    pub sqpoll_cpu: Option<u32>,
    /// io_uring: completions by busy polling the device (IORING_SETUP_IOPOLL).
    pub iopoll: bool,
    /// io_uring: register the buffer arena (READ_FIXED / WRITE_FIXED).
    pub fixedbufs: bool,
    /// io_uring: register the target descriptors.
    pub registerfiles: bool,
    /// Buffers the queue's arena holds beyond its tags' (registered with
    /// them where the ring registers its buffers), lent to callers to read
    /// into in place: see [`crate::Queue::lend_region`].
    pub lend_slots: u32,
    /// io_uring: IORING_SETUP_COOP_TASKRUN.
    pub coop_taskrun: Feature,
    /// io_uring: IORING_SETUP_SINGLE_ISSUER + DEFER_TASKRUN (completion work
    /// runs in the thread that waits: the HIOPS lazy completion).
    pub defer_taskrun: Feature,
    /// fio's mem=mmap:FILE, mmapshared:FILE: the queue's buffers mapped
    /// from this file (`None`: anonymous memory).
    pub buffers: Option<crate::MappedBuffers>,
    /// io_uring, libaio: ring a [`Doorbell`] on every completion, so a
    /// thread can sleep until one is ready without owning the queue.
    pub doorbell: bool,
    /// io_uring: submission faults injected on purpose (see
    /// [`crate::SubmitFaults`]), for tests of the layers above.
    #[cfg(feature = "fault-injection")]
    pub faults: Option<std::sync::Arc<crate::SubmitFaults>>,
}
