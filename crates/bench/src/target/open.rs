//! A job's target once open: what it is, how long, and the handle its
//! queues take.

use hiops_hal::backends::mem::MemDevice;
use hiops_hal::device::BlockDev;
use hiops_hal::Target;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    BlockDevice,
    /// /dev/null or /dev/zero (and the like) as a sink or a source.
    CharDevice,
    Ram,
}

/// An opened target, ready for queues.
pub struct OpenTarget {
    pub path: Option<PathBuf>,
    pub kind: TargetKind,
    /// Bytes the job uses, from offset 0.
    pub len: u64,
    /// The block device behind it (for diskstats and interrupts), if any.
    pub device: Option<BlockDev>,
    /// Logical block size that direct I/O must respect.
    pub logical_block: u32,
    /// hiops created this file (and removes it with `unlink`).
    pub created: bool,
    /// Seconds spent laying the file out.
    pub layout_s: f64,
    pub(super) file: Option<File>,
    pub(super) mem: Option<Arc<MemDevice>>,
}

impl OpenTarget {
    pub fn hal_target(&self) -> Target {
        match (&self.file, &self.mem) {
            (Some(f), _) => Target::Fd(f.as_raw_fd()),
            (None, Some(m)) => Target::Mem(m.clone()),
            // filecreate's files do not exist yet: its driver opens them by
            // path; the job's fadvise calls on this fail (EBADF) and are
            // ignored, as there is nothing cached to advise.
            (None, None) => Target::Fd(-1),
        }
    }

    pub fn describe(&self) -> String {
        match (self.kind, &self.path) {
            (TargetKind::Ram, _) => "RAM device".into(),
            (_, Some(p)) => p.display().to_string(),
            _ => "?".into(),
        }
    }
}

/// What a layout reports to and listens to.
pub struct Layout<'a> {
    /// Told after each chunk: (what, bytes done, bytes total).
    pub progress: &'a mut dyn FnMut(&str, u64, u64),
    /// Set on Ctrl-C: the layout stops and leaves nothing it made.
    pub interrupt: &'a AtomicBool,
}
