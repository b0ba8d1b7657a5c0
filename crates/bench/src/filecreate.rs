//! fio's `ioengine=filecreate` (fio 3.33 `engines/fileoperations.c`): no
//! data moves; each file is opened with O_CREAT|O_RDWR, mode 0600, once a
//! loop, and the open is what is timed (fio adds the open's time as a
//! completion latency in the job's direction: reads when it reads, writes
//! otherwise, `init`). The I/Os of a file (filesize/bs of them: fio's
//! `get_file_size` makes a file one block only when no size is given) are
//! fake: each is counted in its own direction, bytes and all, and none is
//! timed (FIO_FAKEIO, FIO_NOSTATS). The engine is FIO_SYNCIO: one at a time.
//!
//! hiops does the same with its job loop: the first I/O of a file in a pass
//! creates it (timed, in the job's direction), the rest of its I/Os
//! complete at once untimed, and the file is closed after its last one (the
//! next loop creates it again). What fio does differently is refused by
//! [`check`].
//!
//! fio's filestat and filedelete (the same file) are this engine on files
//! laid out before the job (FIO_DISKLESSIO is filecreate's alone): a
//! file's first I/O in a pass stats it (stat, lstat or statx, its
//! `stat_type`) or unlinks it, timed, instead of creating it.

use crate::driver::{Driver, Finished, Latency};
use crate::error::{usage, BenchError};
use crate::one_at_a_time::{submit_one, OneAtATime, OneSlot};
use crate::spec::{FileOp, JobSpec, StatCall, TargetSpec, VerifyMode};
use hiops_hal::{Command, DepthStats, HalError};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

/// What fio's filecreate does not do as hiops does it, one line each.
pub(crate) fn check(spec: &JobSpec) -> Result<(), BenchError> {
    let bs = spec.workload.bs.max() as u64;
    let engine = spec.engine_name();
    let refuse = |what: &str| usage(format!("ioengine={engine}: {what}"));
    if spec.io.path.is_some() || spec.io.offload || spec.tasks_of(0).is_some() {
        return refuse("files are created by the job's own thread, one at a time: drop --strategy, --tasks and io_submit_mode=offload");
    }
    if spec.workload.rw.trims() {
        return refuse(
            "it moves no data, so there is nothing to trim: use rw=write, read or a mix of them",
        );
    }
    if spec.verify.mode != VerifyMode::Off || spec.verify.only {
        return refuse("no data is written or read, so there is nothing to verify: drop verify");
    }
    if spec.io_logs.replay.is_some() {
        return refuse("it goes through the job's files in order, not a trace's: drop read_iolog");
    }
    if !spec.workload.bs.is_fixed()
        || spec.workload.bs_write.is_some()
        || spec.workload.bs_trim.is_some()
    {
        return refuse("a file's I/Os are counted in blocks of one size: give one fixed bs");
    }
    if spec.target.size.is_some_and(|s| !s.is_multiple_of(bs)) {
        return refuse(&format!(
            "each file is counted in {bs}-byte I/Os: make filesize (or size/nrfiles) a multiple of bs"
        ));
    }
    if spec.io.file_op == Some(FileOp::Delete) {
        if let Some(node) = device_node(&spec.target.targets) {
            return refuse(&format!(
                "{node} is a device node: filedelete unlinks files, and hiops never removes a device's node (give a directory or a file name)"
            ));
        }
    }
    Ok(())
}

/// The first target that is a device node, FIFO or socket (not followed
/// through a symlink, which unlink would remove instead).
fn device_node(targets: &TargetSpec) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let TargetSpec::Paths(paths) = targets else {
        return None;
    };
    paths.iter().find_map(|p| {
        let t = std::fs::symlink_metadata(p).ok()?.file_type();
        let node = t.is_block_device() || t.is_char_device() || t.is_fifo() || t.is_socket();
        node.then(|| p.display().to_string())
    })
}

/// Where a file is in the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// Its first I/O of the pass is still to come.
    Ahead,
    /// Created, with this descriptor until its last I/O.
    Open(libc::c_int),
    /// Stat'ed or deleted.
    Done,
}

/// One job thread creating (or stat'ing, or deleting) its files one at a
/// time.
pub(crate) struct FileCreateDriver {
    /// None: filecreate.
    op: Option<FileOp>,
    /// The targets are directories (fio's dircreate, dirstat, dirdelete).
    dirs: bool,
    /// This thread's files, by the job loop's target index.
    paths: Vec<CString>,
    /// Each file's state in this pass.
    pass: Vec<Pass>,
    /// Each file's I/Os left in this pass.
    left: Vec<u64>,
    /// I/Os of a file in a pass: filesize / bs.
    per_file: u64,
    /// fio's stat_ddir: where a create's time is booked.
    stat_dir: usize,
    /// The one I/O; its outcome is the result, where its time goes, and
    /// the file to close once booked.
    slot: OneSlot<(i64, Latency, Option<usize>)>,
}

/// Why a thread of `ioengine=filecreate` cannot start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileCreateError {
    #[error(
        "ioengine=filecreate (filestat, filedelete) works on files: give a directory or filename"
    )]
    NoFiles,
    #[error("{0}: a file name with a NUL byte")]
    NulByte(String),
}

impl FileCreateDriver {
    /// The files of the thread whose targets start at `base` and number `n`.
    pub(crate) fn new(
        spec: &JobSpec,
        base: usize,
        n: usize,
    ) -> Result<FileCreateDriver, FileCreateError> {
        let TargetSpec::Paths(all) = &spec.target.targets else {
            return Err(FileCreateError::NoFiles);
        };
        let paths = all[base..base + n]
            .iter()
            .map(|p| {
                CString::new(p.as_os_str().as_bytes())
                    .map_err(|_| FileCreateError::NulByte(p.display().to_string()))
            })
            .collect::<Result<_, _>>()?;
        let bs = spec.workload.bs.max() as u64;
        Ok(FileCreateDriver {
            op: spec.io.file_op,
            dirs: spec.io.dirs,
            paths,
            pass: vec![Pass::Ahead; n],
            left: vec![0; n],
            per_file: spec.target.size.map_or(1, |s| s.blocks(bs)).max(1),
            stat_dir: if spec.workload.rw.reads() { 0 } else { 1 },
            slot: OneSlot::new(),
        })
    }

    /// Opens the file as fio's filecreate does: the descriptor, or a
    /// negated errno.
    fn create(&self, target: usize) -> Result<libc::c_int, i64> {
        let path = &self.paths[target];
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
                0o600 as libc::c_uint,
            )
        };
        if fd < 0 {
            let errno = std::io::Error::last_os_error().raw_os_error();
            return Err(-(errno.unwrap_or(libc::EIO) as i64));
        }
        Ok(fd)
    }

    /// The pass's first I/O of file `target`: fio's open_file of the
    /// engine (create, stat or delete); 0 or the descriptor made, or a
    /// negated errno.
    fn first(&self, target: usize) -> Result<Pass, i64> {
        let path = &self.paths[target];
        // SAFETY: `path` is a NUL-terminated string that outlives each
        // call; `st` and `stx` are buffers of the types the calls fill.
        let rc = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            let mut stx: libc::statx = std::mem::zeroed();
            match self.op {
                None if self.dirs => libc::mkdir(path.as_ptr(), 0o700),
                None => return self.create(target).map(Pass::Open),
                Some(FileOp::Delete) if self.dirs => libc::rmdir(path.as_ptr()),
                Some(FileOp::Delete) => libc::unlink(path.as_ptr()),
                Some(FileOp::Stat(StatCall::Stat)) => libc::stat(path.as_ptr(), &mut st),
                Some(FileOp::Stat(StatCall::Lstat)) => libc::lstat(path.as_ptr(), &mut st),
                Some(FileOp::Stat(StatCall::Statx)) => {
                    libc::statx(libc::AT_FDCWD, path.as_ptr(), 0, libc::STATX_ALL, &mut stx)
                }
            }
        };
        if rc < 0 {
            let errno = std::io::Error::last_os_error().raw_os_error();
            return Err(-(errno.unwrap_or(libc::EIO) as i64));
        }
        Ok(Pass::Done)
    }

    /// File `t`'s pass is over: a created file is closed.
    fn close(&mut self, t: usize) {
        if let Pass::Open(fd) = self.pass[t] {
            // SAFETY: the descriptor was opened by `create` and is closed once.
            unsafe { libc::close(fd) };
        }
        self.pass[t] = Pass::Ahead;
    }
}

impl Drop for FileCreateDriver {
    fn drop(&mut self) {
        for t in 0..self.pass.len() {
            self.close(t);
        }
    }
}

impl OneAtATime for FileCreateDriver {
    type Outcome = (i64, Latency, Option<usize>);

    fn slot(&mut self) -> &mut OneSlot<Self::Outcome> {
        &mut self.slot
    }

    /// Does one I/O: the file's create (stat, delete) if its pass starts,
    /// else nothing. (result, where its time goes, the file to close after
    /// it).
    fn perform(&mut self, cmd: &Command) -> (i64, Latency, Option<usize>) {
        if cmd.op.is_sync() {
            return (0, Latency::None, None); // fio completes it without work
        }
        let t = cmd.target as usize;
        let mut latency = Latency::None;
        if self.pass[t] == Pass::Ahead {
            match self.first(t) {
                Ok(p) => (self.pass[t], self.left[t]) = (p, self.per_file),
                Err(e) => return (e, Latency::In(self.stat_dir), None),
            }
            latency = Latency::In(self.stat_dir);
        }
        self.left[t] = self.left[t].saturating_sub(1);
        let close = (self.left[t] == 0).then_some(t);
        (cmd.len as i64, latency, close)
    }
}

impl Driver for FileCreateDriver {
    fn depth(&self) -> u32 {
        1
    }

    fn busy(&self) -> u32 {
        self.slot.busy()
    }

    fn staged(&self) -> u32 {
        self.slot.staged()
    }

    fn stage(
        &mut self,
        cmd: Command,
        user: u64,
        _: impl FnOnce(&mut [u8]),
    ) -> Result<(), HalError> {
        assert_eq!(self.busy(), 0, "filecreate does one create at a time");
        self.slot.stage(cmd, user);
        Ok(())
    }

    fn submit(&mut self) -> Result<u32, HalError> {
        Ok(submit_one(self))
    }

    fn reap(
        &mut self,
        _min: u32,
        _max: u32,
        mut each: impl FnMut(Finished<'_>),
    ) -> Result<usize, HalError> {
        let Some(done) = self.slot.take_done() else {
            return Ok(0);
        };
        let (result, latency, close) = done.outcome;
        each(Finished {
            cmd: done.cmd,
            user: done.user,
            issued_ns: done.issued_ns,
            result,
            data: &[],
            latency,
            seen_ns: None,
            ioprio: 0,
        });
        // Closed after booking: the close is not part of the create's time
        // (fio closes in close_file, outside the timed open).
        if let Some(t) = close {
            self.close(t);
        }
        Ok(1)
    }

    fn depth_stats(&mut self) -> DepthStats {
        self.slot.depth_stats()
    }

    fn description(&self) -> String {
        match (self.op, self.dirs) {
            (None, false) => "filecreate (open O_CREAT|O_RDWR, timed; close)".into(),
            (None, true) => "dircreate (mkdir 0700, timed)".into(),
            (Some(FileOp::Stat(call)), d) => {
                let e = if d { "dirstat" } else { "filestat" };
                format!("{e} ({call:?}, timed)").to_lowercase()
            }
            (Some(FileOp::Delete), false) => "filedelete (unlink, timed)".into(),
            (Some(FileOp::Delete), true) => "dirdelete (rmdir, timed)".into(),
        }
    }

    fn completes_in_submit(&self) -> bool {
        true
    }
}
