//! The backend a queue drives, as one enum: every call on the hot path
//! (prepare, issue, reap) is a match the compiler sees through and can
//! inline into the queue, not a call through a vtable.

use super::{e4defrag, libaio, mem, mmap, net, null, posixaio, splice, sync, uring};
use crate::{
    BufferArena, Command, Completion, Doorbell, Engine, EngineKind, EngineOptions, HalError, Op,
    PostedCounter, Tag, Target,
};
use std::os::fd::RawFd;
use std::sync::Arc;

/// One of the backends, chosen when the queue is opened. One lives in each
/// queue and never moves on the I/O path, so the variants' sizes differing
/// costs a few hundred bytes per queue, and a box would cost a load per call.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Backend {
    Sync(sync::SyncEngine),
    Libaio(libaio::AioEngine),
    IoUring(uring::UringEngine),
    PosixAio(posixaio::PosixAioEngine),
    Mem(mem::MemEngine),
    Mmap(mmap::MmapEngine),
    Net(net::NetEngine),
    Null(null::NullEngine),
    Splice(splice::SpliceEngine),
    E4defrag(e4defrag::E4defragEngine),
}

/// `$body` with `$e` bound to the backend inside, whichever it is.
macro_rules! each {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            Backend::Sync($e) => $body,
            Backend::Libaio($e) => $body,
            Backend::IoUring($e) => $body,
            Backend::PosixAio($e) => $body,
            Backend::Mem($e) => $body,
            Backend::Mmap($e) => $body,
            Backend::Net($e) => $body,
            Backend::Null($e) => $body,
            Backend::Splice($e) => $body,
            Backend::E4defrag($e) => $body,
        }
    };
}

impl Backend {
    /// Opens the backend `kind` names for one queue.
    pub(crate) fn open(
        kind: EngineKind,
        opts: &EngineOptions,
        targets: &[Target],
        depth: u32,
        arena: &BufferArena,
    ) -> Result<Backend, HalError> {
        Ok(match kind {
            EngineKind::Psync => Backend::Sync(sync::SyncEngine::open(
                targets,
                depth,
                match opts.psync_call {
                    sync::PsyncCall::Data => sync::SyncMode::Psync,
                    sync::PsyncCall::Fallocate => sync::SyncMode::Fallocate,
                    sync::PsyncCall::Ftruncate => sync::SyncMode::Ftruncate,
                },
            )?),
            EngineKind::Pvsync2 => Backend::Sync(sync::SyncEngine::open(
                targets,
                depth,
                sync::SyncMode::Pvsync2(sync::Pvsync2Flags {
                    hipri_percent: match opts.hipri {
                        true => opts.hipri_percentage.unwrap_or(100),
                        false => 0,
                    },
                    nowait: opts.nowait,
                    dontcache: opts.dontcache,
                }),
            )?),
            EngineKind::Libaio => Backend::Libaio(libaio::AioEngine::open(
                targets,
                depth,
                opts.doorbell,
                opts.aio_userspace_reap,
            )?),
            EngineKind::IoUring => {
                Backend::IoUring(uring::UringEngine::open(opts, targets, depth, arena)?)
            }
            EngineKind::PosixAio => Backend::PosixAio(posixaio::PosixAioEngine::open(
                targets,
                depth,
                opts.doorbell,
            )?),
            EngineKind::Mem => Backend::Mem(mem::MemEngine::open(targets, depth)?),
            EngineKind::Mmap => Backend::Mmap(mmap::MmapEngine::open(targets, depth, &opts.mmap)?),
            EngineKind::Net => Backend::Net(net::NetEngine::open(&opts.net, depth)?),
            EngineKind::Null => Backend::Null(null::NullEngine::new(depth)),
            EngineKind::Splice => Backend::Splice(splice::SpliceEngine::open(targets, depth)?),
            EngineKind::E4defrag => Backend::E4defrag(e4defrag::E4defragEngine::open(
                targets,
                depth,
                &opts.e4defrag,
            )?),
        })
    }
}

impl Engine for Backend {
    #[inline]
    unsafe fn prepare(&mut self, tag: Tag, cmd: &Command, buf: *mut u8) -> Result<(), HalError> {
        // SAFETY: forwarded from this function's contract, which is the
        // backend's own.
        each!(self, e => unsafe { e.prepare(tag, cmd, buf) })
    }

    #[inline]
    unsafe fn prepare_with_prio(
        &mut self,
        tag: Tag,
        cmd: &Command,
        buf: *mut u8,
        ioprio: u16,
    ) -> Result<(), HalError> {
        // SAFETY: as `prepare`.
        each!(self, e => unsafe { e.prepare_with_prio(tag, cmd, buf, ioprio) })
    }

    #[inline]
    fn issue(&mut self) -> Result<u32, HalError> {
        each!(self, e => e.issue())
    }

    #[inline]
    fn reap(&mut self, min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        each!(self, e => e.reap(min, out))
    }

    #[inline]
    fn peek(&mut self, out: &mut [Completion]) -> Result<usize, HalError> {
        each!(self, e => e.peek(out))
    }

    #[inline]
    fn issue_and_reap(
        &mut self,
        min: u32,
        out: &mut [Completion],
    ) -> Result<(u32, usize), HalError> {
        each!(self, e => e.issue_and_reap(min, out))
    }

    fn unsent(&self) -> Option<u32> {
        each!(self, e => e.unsent())
    }

    fn withdraw_unsent(&mut self) -> bool {
        each!(self, e => e.withdraw_unsent())
    }

    fn description(&self) -> String {
        each!(self, e => e.description())
    }

    #[inline]
    fn completes_in_issue(&self) -> bool {
        each!(self, e => e.completes_in_issue())
    }

    fn doorbell(&self) -> Option<Arc<Doorbell>> {
        each!(self, e => e.doorbell())
    }

    fn posted_counter(&self) -> Option<Arc<PostedCounter>> {
        each!(self, e => e.posted_counter())
    }

    fn signal_on_completion(&mut self, tag: Tag, op: Op, fd: RawFd) -> bool {
        each!(self, e => e.signal_on_completion(tag, op, fd))
    }

    #[inline]
    fn posts_only_in_calls(&self) -> bool {
        each!(self, e => e.posts_only_in_calls())
    }
}
