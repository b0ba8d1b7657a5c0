//! What each thread of a job does to itself before its first I/O and after
//! its last, as fio's thread_main does for each of its threads (fio 3.33
//! backend.c): its user and group, nice value, memory policy, locked
//! memory, its device's I/O scheduler and the commands run around it.

/// fio's per-thread setup options. The default changes nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadSetup {
    /// fio's gid: the thread's group, set before its user (a new group
    /// needs the privilege a new user may drop).
    pub gid: Option<u32>,
    /// fio's uid: the thread's user; its files are opened as that user.
    pub uid: Option<u32>,
    /// fio's nice: added to the thread's nice value (-20 to 19).
    pub nice: i32,
    /// fio's numa_mem_policy: where the thread's memory is allocated.
    pub mem_policy: Option<MemPolicy>,
    /// fio's lockmem: bytes the thread keeps locked in RAM (mlock) for its
    /// run, leaving that much less to the page cache and other threads.
    pub lockmem: u64,
    /// fio's cgroup, cgroup_weight and cgroup_nodelete.
    pub cgroup: Option<CgroupSpec>,
    /// fio's ioscheduler: written to the I/O scheduler of the device that
    /// holds the job's first file, then read back.
    pub ioscheduler: Option<String>,
    /// fio's exec_prerun: a shell command each thread runs before its
    /// I/O, output to `NAME.prerun.txt`; a command that fails ends the
    /// thread with no I/O.
    pub exec_prerun: Option<String>,
    /// fio's exec_postrun: a shell command each thread runs after its
    /// I/O, output to `NAME.postrun.txt`.
    pub exec_postrun: Option<String>,
}

impl ThreadSetup {
    /// Whether any option is given (nothing to do otherwise).
    pub fn is_set(&self) -> bool {
        self != &ThreadSetup::default()
    }
}

/// fio's numa_mem_policy modes (set_mempolicy(2)'s), with their nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemPolicy {
    /// The system's default policy.
    Default,
    /// Allocate on the node the thread runs on.
    Local,
    /// Prefer this node, fall back to others.
    Prefer(u32),
    /// Only these nodes.
    Bind(Vec<u32>),
    /// Pages spread round-robin over these nodes.
    Interleave(Vec<u32>),
}

/// fio's cgroup options: the thread joins the blkio cgroup of this name
/// (made if missing, removed at the end unless `nodelete`), with
/// blkio.weight set to `weight` where given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupSpec {
    pub name: String,
    pub weight: Option<u32>,
    pub nodelete: bool,
}
