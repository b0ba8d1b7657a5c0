//! fio's `ioengine=filecreate` (fio's `engines/filecreate.c`): no data
//! moves; each I/O opens one of the job's files with O_CREAT|O_RDWR, mode
//! 0600, and the open is what is timed (fio adds the open's time as the
//! I/O's completion latency). fio sizes every file at one block
//! (`get_file_size` = the smallest bs) and gives the engine FIO_SYNCIO, so
//! a job does one create per file per loop, one at a time: nrfiles files
//! make nrfiles I/Os of bs bytes each, booked as reads when the job reads
//! and as writes otherwise (fio's `init`).
//!
//! hiops does the same with its job loop: each file's region is one block,
//! and this driver opens the file a command names and closes it once the
//! completion is booked. What fio does differently is refused by [`check`].

use crate::driver::{Driver, Finished};
use crate::error::{usage, BenchError};
use crate::spec::{JobSpec, TargetSpec, VerifyMode};
use hiops_hal::{now_ns, Command, DepthStats};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

/// What fio's filecreate does not do as hiops does it, one line each.
pub(crate) fn check(spec: &JobSpec) -> Result<(), BenchError> {
    let bs = spec.bs.max() as u64;
    let refuse = |what: &str| usage(format!("ioengine=filecreate: {what}"));
    if spec.path.is_some() || spec.offload || spec.tasks_of(0).is_some() {
        return refuse("files are created by the job's own thread, one at a time: drop --strategy, --tasks and io_submit_mode=offload");
    }
    if spec.rw.trims() || (spec.rw.reads() && spec.rw.writes()) {
        return refuse("each create is booked in one direction (fio: reads when the job reads): use rw=write or rw=read");
    }
    if spec.verify != VerifyMode::Off || spec.verify_only {
        return refuse("no data is written or read, so there is nothing to verify: drop verify");
    }
    if spec.replay.is_some() {
        return refuse("it creates the job's files in order, not a trace's: drop read_iolog");
    }
    if !spec.bs.is_fixed() || spec.bs_write.is_some() {
        return refuse("every file is one block: give one fixed bs");
    }
    if spec.size.is_some_and(|s| s != bs) {
        return refuse(&format!(
            "fio makes each file one block and counts filesize/bs I/Os of which only the first creates; hiops creates once per I/O: set filesize (or size/nrfiles) to bs ({bs}), or leave both out"
        ));
    }
    Ok(())
}

/// One job thread creating its files one at a time.
pub(crate) struct FileCreateDriver {
    /// This thread's files, by the job loop's target index.
    paths: Vec<CString>,
    staged: Option<(Command, u64)>,
    /// The finished create: command, value, issue time, result, descriptor
    /// to close once booked (-1: none).
    done: Option<(Command, u64, u64, i64, libc::c_int)>,
    depth: DepthStats,
}

impl FileCreateDriver {
    /// The files of the thread whose targets start at `base` and number `n`.
    pub(crate) fn new(spec: &JobSpec, base: usize, n: usize) -> Result<FileCreateDriver, String> {
        let TargetSpec::Paths(all) = &spec.targets else {
            return Err("ioengine=filecreate creates files: give a directory or filename".into());
        };
        let paths = all[base..base + n]
            .iter()
            .map(|p| {
                CString::new(p.as_os_str().as_bytes())
                    .map_err(|_| format!("{}: a file name with a NUL byte", p.display()))
            })
            .collect::<Result<_, _>>()?;
        Ok(FileCreateDriver {
            paths,
            staged: None,
            done: None,
            depth: DepthStats {
                at_ns: now_ns(),
                ..DepthStats::default()
            },
        })
    }

    /// Opens the command's file as fio's filecreate does; (result, fd).
    fn create(&self, cmd: &Command) -> (i64, libc::c_int) {
        if cmd.op.is_sync() {
            return (0, -1); // fio's queue completes everything without work
        }
        let path = &self.paths[cmd.target as usize];
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
            (-(errno.unwrap_or(libc::EIO) as i64), -1)
        } else {
            (cmd.len as i64, fd)
        }
    }
}

impl Driver for FileCreateDriver {
    fn depth(&self) -> u32 {
        1
    }

    fn busy(&self) -> u32 {
        u32::from(self.staged.is_some() || self.done.is_some())
    }

    fn staged(&self) -> u32 {
        u32::from(self.staged.is_some())
    }

    fn stage(&mut self, cmd: Command, user: u64, _: impl FnOnce(&mut [u8])) -> Result<(), String> {
        assert_eq!(self.busy(), 0, "filecreate does one create at a time");
        self.staged = Some((cmd, user));
        Ok(())
    }

    fn submit(&mut self) -> Result<u32, String> {
        let Some((cmd, user)) = self.staged.take() else {
            return Ok(0);
        };
        let issued = now_ns();
        let (result, fd) = self.create(&cmd);
        let done = now_ns();
        let d = &mut self.depth;
        d.issued += 1;
        d.depth_sum += 1;
        d.levels[0] += 1;
        d.area += (done - issued) as u128;
        d.at_ns = done;
        self.done = Some((cmd, user, issued, result, fd));
        Ok(1)
    }

    fn reap(&mut self, _min: u32, mut each: impl FnMut(Finished<'_>)) -> Result<usize, String> {
        let Some((cmd, user, issued_ns, result, fd)) = self.done.take() else {
            return Ok(0);
        };
        each(Finished {
            cmd,
            user,
            issued_ns,
            result,
            data: &[],
        });
        // Closed after booking: the close is not part of the create's time
        // (fio closes in close_file, outside the timed open).
        if fd >= 0 {
            // SAFETY: fd was opened by `create` and is closed once.
            unsafe { libc::close(fd) };
        }
        Ok(1)
    }

    fn depth_stats(&mut self) -> DepthStats {
        let mut d = self.depth;
        d.at_ns = d.at_ns.max(now_ns());
        d
    }

    fn description(&self) -> String {
        "filecreate (open O_CREAT|O_RDWR, timed; close)".into()
    }

    fn completes_in_submit(&self) -> bool {
        true
    }
}
