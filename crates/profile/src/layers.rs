//! The layers of the I/O path (ADMS'10 Fig 4/5's, and what a modern path
//! adds), and which kernel functions belong to each, by name.
//!
//! A sample is charged to one layer: that of the innermost function of its
//! call chain that belongs to a layer. Functions that serve every layer
//! (locks, RCU, retpoline thunks, lists) and functions no rule names are
//! passed over, so their time goes to the layer that called them: a
//! spin-unlock under the block layer is the block layer's, `iowrite16`
//! under virtio's notify is the driver's doorbell.

use serde::{Deserialize, Serialize};

/// Where a sample's CPU time goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// User mode of the benchmark process (hiops itself).
    Application,
    /// System call entry and exit, and the thin per-call wrappers.
    Syscall,
    /// io_uring and Linux AIO.
    AsyncIo,
    /// The VFS: file lookup, permission, read/write dispatch, timestamps.
    Vfs,
    /// File systems (ext4, xfs, btrfs...) and iomap.
    FileSystem,
    /// Page cache and memory: copies to and from user space, page pinning,
    /// page faults, allocation.
    Memory,
    /// The block layer: bios, requests, tags, I/O schedulers, accounting,
    /// the raw block device's file operations.
    Block,
    /// Device drivers: virtio (its doorbell included), NVMe, SCSI, zram
    /// and its compressor, loop, null_blk, device mapper.
    Driver,
    /// Everything run in interrupt context (hard interrupts, softirqs,
    /// IPIs), whatever its code: a driver's completion handler, the block
    /// layer's completion softirq.
    Interrupt,
    /// The scheduler: switches, wake-ups, run queues, futexes, timers.
    Scheduler,
    /// Entering and leaving idle (the tick, the idle governor, RCU).
    IdleExit,
    /// The CPU was idle (halted or polling in the idle loop).
    Idle,
    /// Kernel code of no layer above.
    Other,
    /// Other programs on the machine (their user and kernel time, outside
    /// interrupts).
    OtherProcesses,
    /// The profiler's own thread (draining and attributing samples).
    Profiler,
}

impl Layer {
    pub const ALL: [Layer; 15] = [
        Layer::Application,
        Layer::Syscall,
        Layer::AsyncIo,
        Layer::Vfs,
        Layer::FileSystem,
        Layer::Memory,
        Layer::Block,
        Layer::Driver,
        Layer::Interrupt,
        Layer::Scheduler,
        Layer::IdleExit,
        Layer::Idle,
        Layer::Other,
        Layer::OtherProcesses,
        Layer::Profiler,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The name the reports use.
    pub fn label(self) -> &'static str {
        match self {
            Layer::Application => "application",
            Layer::Syscall => "syscall entry/exit",
            Layer::AsyncIo => "io_uring/aio",
            Layer::Vfs => "VFS",
            Layer::FileSystem => "file system",
            Layer::Memory => "page cache/memory",
            Layer::Block => "block layer",
            Layer::Driver => "driver",
            Layer::Interrupt => "irq/softirq",
            Layer::Scheduler => "scheduler/wakeups",
            Layer::IdleExit => "idle entry/exit",
            Layer::Idle => "idle",
            Layer::Other => "other kernel",
            Layer::OtherProcesses => "other processes",
            Layer::Profiler => "profiler",
        }
    }

    /// The name in JSON and in sweep metrics (`layer_KEY_clocks_per_io`).
    pub fn key(self) -> &'static str {
        match self {
            Layer::Application => "application",
            Layer::Syscall => "syscall",
            Layer::AsyncIo => "async_io",
            Layer::Vfs => "vfs",
            Layer::FileSystem => "file_system",
            Layer::Memory => "memory",
            Layer::Block => "block",
            Layer::Driver => "driver",
            Layer::Interrupt => "interrupt",
            Layer::Scheduler => "scheduler",
            Layer::IdleExit => "idle_exit",
            Layer::Idle => "idle",
            Layer::Other => "other",
            Layer::OtherProcesses => "other_processes",
            Layer::Profiler => "profiler",
        }
    }

    /// Work the I/O path does (not idle, other programs or the profiler):
    /// what a per-path breakdown draws.
    pub fn is_path(self) -> bool {
        !matches!(self, Layer::Idle | Layer::OtherProcesses | Layer::Profiler)
    }

    /// Time the CPU was not busy (for the sum against the machine's busy
    /// time).
    pub fn is_idle(self) -> bool {
        self == Layer::Idle
    }
}

/// What a function's name says about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Layer(Layer),
    /// Serves every layer: charged to the caller's.
    Shared,
    /// No rule names it: charged to the caller's, or to "other kernel"
    /// when no caller has a layer.
    Unknown,
}

use Layer::*;

/// Name rules, first match wins: `name*` is a prefix, `a*b` a prefix and
/// a suffix, `*x*` a part, anything else the whole name. Names are compared without their compiler suffix (`.isra.0`,
/// `.cold`).
const RULES: &[(&str, Class)] = &[
    // The idle loop: the instruction after `hlt`, or polling.
    ("pv_native_safe_halt", Class::Layer(Idle)),
    ("native_safe_halt", Class::Layer(Idle)),
    ("default_idle", Class::Layer(Idle)),
    ("arch_cpu_idle", Class::Layer(Idle)),
    ("acpi_safe_halt", Class::Layer(Idle)),
    ("acpi_idle_*", Class::Layer(Idle)),
    ("mwait_idle*", Class::Layer(Idle)),
    ("intel_idle*", Class::Layer(Idle)),
    ("poll_idle", Class::Layer(Idle)),
    ("cpu_idle_poll", Class::Layer(Idle)),
    ("cpu_relax", Class::Shared),
    // Shared helpers: locks, RCU, preemption, thunks, lists, refcounts.
    ("_raw_*", Class::Shared),
    ("__raw_*", Class::Shared),
    ("raw_spin_*", Class::Shared),
    ("queued_*", Class::Shared),
    ("native_queued_*", Class::Shared),
    ("__pv_queued_*", Class::Shared),
    ("pv_queued_*", Class::Shared),
    ("__rcu_read_*", Class::Shared),
    ("rcu_read_*", Class::Shared),
    ("preempt_*", Class::Shared),
    ("__x86_indirect_*", Class::Shared),
    ("__x86_return_thunk", Class::Shared),
    ("srso_*", Class::Shared),
    ("retbleed_*", Class::Shared),
    ("entry_untrain_ret", Class::Shared),
    ("__list_*", Class::Shared),
    ("refcount_*", Class::Shared),
    ("percpu_ref_*", Class::Shared),
    ("mutex_*", Class::Shared),
    ("__mutex_*", Class::Shared),
    ("down_*", Class::Shared),
    ("up_*", Class::Shared),
    ("up", Class::Shared),
    ("down", Class::Shared),
    ("xa_*", Class::Shared),
    ("xas_*", Class::Shared),
    ("__xa_*", Class::Shared),
    ("_find_*", Class::Shared),
    ("__bitmap_*", Class::Shared),
    ("static_key_*", Class::Shared),
    ("llist_*", Class::Shared),
    // The roots of every kernel thread's chain: what runs under them says
    // the layer.
    ("kthread", Class::Shared),
    ("worker_thread", Class::Shared),
    ("process_one_work", Class::Shared),
    ("ret_from_fork*", Class::Shared),
    // System call entry and exit.
    ("entry_SYSCALL_*", Class::Layer(Syscall)),
    ("do_syscall_*", Class::Layer(Syscall)),
    ("syscall_*", Class::Layer(Syscall)),
    ("exit_to_user_mode*", Class::Layer(Syscall)),
    ("__rseq_*", Class::Layer(Syscall)),
    ("rseq_*", Class::Layer(Syscall)),
    ("fpregs_*", Class::Layer(Syscall)),
    ("switch_fpu_*", Class::Layer(Syscall)),
    ("restore_fpregs_*", Class::Layer(Syscall)),
    ("__do_sys_io_uring_*", Class::Layer(AsyncIo)),
    ("__do_sys_io_*", Class::Layer(AsyncIo)),
    ("__x64_sys_futex", Class::Layer(Scheduler)),
    ("__x64_sys_*", Class::Layer(Syscall)),
    ("__arm64_sys_*", Class::Layer(Syscall)),
    ("__do_sys_*", Class::Layer(Syscall)),
    ("__se_sys_*", Class::Layer(Syscall)),
    ("el0_*", Class::Layer(Syscall)),
    ("invoke_syscall", Class::Layer(Syscall)),
    // Interrupts, softirqs, IPIs (entry and dispatch).
    ("asm_common_interrupt", Class::Layer(Interrupt)),
    ("common_interrupt", Class::Layer(Interrupt)),
    ("asm_sysvec_*", Class::Layer(Interrupt)),
    ("sysvec_*", Class::Layer(Interrupt)),
    ("__sysvec_*", Class::Layer(Interrupt)),
    ("irqentry_*", Class::Layer(Interrupt)),
    ("irq_enter*", Class::Layer(Interrupt)),
    ("irq_exit*", Class::Layer(Interrupt)),
    ("__irq_exit*", Class::Layer(Interrupt)),
    ("handle_irq*", Class::Layer(Interrupt)),
    ("handle_edge_irq", Class::Layer(Interrupt)),
    ("handle_fasteoi_irq", Class::Layer(Interrupt)),
    ("__handle_irq_*", Class::Layer(Interrupt)),
    ("handle_softirqs", Class::Layer(Interrupt)),
    ("__do_softirq", Class::Layer(Interrupt)),
    ("do_softirq*", Class::Layer(Interrupt)),
    ("__local_bh_enable*", Class::Layer(Interrupt)),
    ("run_ksoftirqd", Class::Layer(Interrupt)),
    ("tasklet_*", Class::Layer(Interrupt)),
    ("*smp_call_function*", Class::Layer(Interrupt)),
    ("generic_smp_call_*", Class::Layer(Interrupt)),
    ("__smp_call_*", Class::Layer(Interrupt)),
    ("send_call_function_*", Class::Layer(Interrupt)),
    ("native_send_call_*", Class::Layer(Interrupt)),
    ("x2apic_*", Class::Layer(Interrupt)),
    ("apic_*", Class::Layer(Interrupt)),
    ("kvm_guest_apic_eoi*", Class::Layer(Interrupt)),
    ("ack_apic_*", Class::Layer(Interrupt)),
    ("gic_*", Class::Layer(Interrupt)),
    // io_uring and AIO (after the scheduler's io_schedule below would be
    // too late: it is named first).
    ("io_schedule*", Class::Layer(Scheduler)),
    ("io_apic*", Class::Layer(Interrupt)),
    ("io_uring*", Class::Layer(AsyncIo)),
    ("io_*", Class::Layer(AsyncIo)),
    ("__io_*", Class::Layer(AsyncIo)),
    ("aio_*", Class::Layer(AsyncIo)),
    ("__aio_*", Class::Layer(AsyncIo)),
    ("lookup_ioctx", Class::Layer(AsyncIo)),
    ("read_events", Class::Layer(AsyncIo)),
    ("do_io_getevents", Class::Layer(AsyncIo)),
    ("tctx_task_work*", Class::Layer(AsyncIo)),
    ("task_work_run", Class::Layer(AsyncIo)),
    // Block layer (before the memory rules: bio page pinning is named by
    // the block layer but is memory work, so it is listed there first).
    ("bio_iov_iter_get_pages", Class::Layer(Memory)),
    ("__bio_iov_iter_get_pages", Class::Layer(Memory)),
    ("bio_set_pages_dirty", Class::Layer(Memory)),
    ("bio_check_pages_dirty", Class::Layer(Memory)),
    ("__bio_release_pages", Class::Layer(Memory)),
    ("blkdev_*", Class::Layer(Block)),
    ("blk_*", Class::Layer(Block)),
    ("__blk_*", Class::Layer(Block)),
    ("bio_*", Class::Layer(Block)),
    ("__bio_*", Class::Layer(Block)),
    ("submit_bio*", Class::Layer(Block)),
    ("__submit_bio*", Class::Layer(Block)),
    ("bdev_*", Class::Layer(Block)),
    ("blkcg_*", Class::Layer(Block)),
    ("blkg_*", Class::Layer(Block)),
    ("sbitmap_*", Class::Layer(Block)),
    ("__sbitmap_*", Class::Layer(Block)),
    ("__sbq_*", Class::Layer(Block)),
    ("sbq_*", Class::Layer(Block)),
    ("elv_*", Class::Layer(Block)),
    ("dd_*", Class::Layer(Block)),
    ("bfq_*", Class::Layer(Block)),
    ("kyber_*", Class::Layer(Block)),
    ("rq_qos_*", Class::Layer(Block)),
    ("__rq_qos_*", Class::Layer(Block)),
    ("wbt_*", Class::Layer(Block)),
    ("update_io_ticks", Class::Layer(Block)),
    ("part_*", Class::Layer(Block)),
    ("mempool_*", Class::Layer(Memory)),
    // Drivers.
    ("iowrite*", Class::Layer(Driver)),
    ("ioread*", Class::Layer(Driver)),
    ("virtblk_*", Class::Layer(Driver)),
    ("virtio_*", Class::Layer(Driver)),
    ("virtqueue_*", Class::Layer(Driver)),
    ("vring_*", Class::Layer(Driver)),
    ("vp_*", Class::Layer(Driver)),
    ("detach_buf_*", Class::Layer(Driver)),
    ("nvme_*", Class::Layer(Driver)),
    ("scsi_*", Class::Layer(Driver)),
    ("sd_*", Class::Layer(Driver)),
    ("ata_*", Class::Layer(Driver)),
    ("ahci_*", Class::Layer(Driver)),
    ("zram_*", Class::Layer(Driver)),
    ("zs_*", Class::Layer(Driver)),
    ("zcomp_*", Class::Layer(Driver)),
    ("lzo*", Class::Layer(Driver)),
    ("lz4*", Class::Layer(Driver)),
    ("LZ4_*", Class::Layer(Driver)),
    ("zstd_*", Class::Layer(Driver)),
    ("ZSTD_*", Class::Layer(Driver)),
    ("loop_*", Class::Layer(Driver)),
    ("lo_*", Class::Layer(Driver)),
    ("null_*", Class::Layer(Driver)),
    ("nbd_*", Class::Layer(Driver)),
    ("dm_*", Class::Layer(Driver)),
    ("md_*", Class::Layer(Driver)),
    ("raid*", Class::Layer(Driver)),
    ("pmem_*", Class::Layer(Driver)),
    ("brd_*", Class::Layer(Driver)),
    // File systems.
    ("ext4_*", Class::Layer(FileSystem)),
    ("__ext4_*", Class::Layer(FileSystem)),
    ("ext2_*", Class::Layer(FileSystem)),
    ("jbd2_*", Class::Layer(FileSystem)),
    ("__jbd2_*", Class::Layer(FileSystem)),
    ("xfs_*", Class::Layer(FileSystem)),
    ("btrfs_*", Class::Layer(FileSystem)),
    ("f2fs_*", Class::Layer(FileSystem)),
    ("iomap_*", Class::Layer(FileSystem)),
    ("__iomap_*", Class::Layer(FileSystem)),
    ("shmem_*", Class::Layer(FileSystem)),
    ("fat_*", Class::Layer(FileSystem)),
    ("nfs_*", Class::Layer(FileSystem)),
    ("fuse_*", Class::Layer(FileSystem)),
    ("tmpfs_*", Class::Layer(FileSystem)),
    // Page cache and memory.
    ("filemap_*", Class::Layer(Memory)),
    ("__filemap_*", Class::Layer(Memory)),
    ("folio_*", Class::Layer(Memory)),
    ("__folio_*", Class::Layer(Memory)),
    ("page_cache_*", Class::Layer(Memory)),
    ("readahead_*", Class::Layer(Memory)),
    ("generic_file_*", Class::Layer(Memory)),
    ("generic_perform_*", Class::Layer(Memory)),
    ("copy_*", Class::Layer(Memory)),
    ("_copy_*", Class::Layer(Memory)),
    ("__copy_*", Class::Layer(Memory)),
    ("rep_movs*", Class::Layer(Memory)),
    ("rep_stos*", Class::Layer(Memory)),
    ("memcpy*", Class::Layer(Memory)),
    ("__memcpy*", Class::Layer(Memory)),
    ("memmove*", Class::Layer(Memory)),
    ("__memmove*", Class::Layer(Memory)),
    ("memset*", Class::Layer(Memory)),
    ("__memset*", Class::Layer(Memory)),
    ("clear_page*", Class::Layer(Memory)),
    ("clear_user*", Class::Layer(Memory)),
    ("iov_iter_*", Class::Layer(Memory)),
    ("__iov_iter_*", Class::Layer(Memory)),
    ("import_*", Class::Layer(Memory)),
    ("gup_*", Class::Layer(Memory)),
    ("get_user_pages*", Class::Layer(Memory)),
    ("__get_user_pages*", Class::Layer(Memory)),
    ("pin_user_pages*", Class::Layer(Memory)),
    ("unpin_user_*", Class::Layer(Memory)),
    ("try_grab_*", Class::Layer(Memory)),
    ("follow_page*", Class::Layer(Memory)),
    ("__get_user_*", Class::Layer(Memory)),
    ("__put_user_*", Class::Layer(Memory)),
    ("handle_mm_fault", Class::Layer(Memory)),
    ("__handle_mm_fault", Class::Layer(Memory)),
    ("exc_page_fault", Class::Layer(Memory)),
    ("asm_exc_page_fault", Class::Layer(Memory)),
    ("do_user_addr_fault", Class::Layer(Memory)),
    ("do_*_page", Class::Layer(Memory)),
    ("lock_vma_*", Class::Layer(Memory)),
    ("mark_page_accessed", Class::Layer(Memory)),
    ("lru_*", Class::Layer(Memory)),
    ("__lruvec_*", Class::Layer(Memory)),
    ("lruvec_*", Class::Layer(Memory)),
    ("mod_memcg_*", Class::Layer(Memory)),
    ("__mod_memcg_*", Class::Layer(Memory)),
    ("memcg*", Class::Layer(Memory)),
    ("__memcg*", Class::Layer(Memory)),
    ("kmalloc*", Class::Layer(Memory)),
    ("__kmalloc*", Class::Layer(Memory)),
    ("kfree*", Class::Layer(Memory)),
    ("kmem_cache_*", Class::Layer(Memory)),
    ("__kmem_cache_*", Class::Layer(Memory)),
    ("___slab_*", Class::Layer(Memory)),
    ("__slab_*", Class::Layer(Memory)),
    ("slab_*", Class::Layer(Memory)),
    ("alloc_pages*", Class::Layer(Memory)),
    ("__alloc_pages*", Class::Layer(Memory)),
    ("__free_pages*", Class::Layer(Memory)),
    ("free_unref_*", Class::Layer(Memory)),
    ("get_page_from_freelist", Class::Layer(Memory)),
    ("rmqueue*", Class::Layer(Memory)),
    ("set_pte*", Class::Layer(Memory)),
    ("unmap_*", Class::Layer(Memory)),
    ("zap_*", Class::Layer(Memory)),
    ("tlb_*", Class::Layer(Memory)),
    ("flush_tlb_*", Class::Layer(Memory)),
    ("mas_*", Class::Layer(Memory)),
    ("find_vma*", Class::Layer(Memory)),
    ("mtree_*", Class::Layer(Memory)),
    ("damon_*", Class::Layer(Memory)),
    ("kdamond*", Class::Layer(Memory)),
    ("__damon_*", Class::Layer(Memory)),
    // The VFS.
    ("vfs_*", Class::Layer(Vfs)),
    ("__vfs_*", Class::Layer(Vfs)),
    ("ksys_*", Class::Layer(Vfs)),
    ("do_iter_*", Class::Layer(Vfs)),
    ("new_sync_*", Class::Layer(Vfs)),
    ("rw_verify_area", Class::Layer(Vfs)),
    ("fget*", Class::Layer(Vfs)),
    ("__fget*", Class::Layer(Vfs)),
    ("fput*", Class::Layer(Vfs)),
    ("__fput*", Class::Layer(Vfs)),
    ("fdget*", Class::Layer(Vfs)),
    ("__fdget*", Class::Layer(Vfs)),
    ("touch_atime", Class::Layer(Vfs)),
    ("atime_needs_update", Class::Layer(Vfs)),
    ("current_time", Class::Layer(Vfs)),
    ("file_*", Class::Layer(Vfs)),
    ("security_file_*", Class::Layer(Vfs)),
    ("fsnotify*", Class::Layer(Vfs)),
    ("__fsnotify*", Class::Layer(Vfs)),
    ("inode_*", Class::Layer(Vfs)),
    ("kiocb_*", Class::Layer(Vfs)),
    ("do_sys_*", Class::Layer(Vfs)),
    ("vfs", Class::Layer(Vfs)),
    // The scheduler: switches, wake-ups, timers, futexes.
    ("schedule*", Class::Layer(Scheduler)),
    ("__schedule", Class::Layer(Scheduler)),
    ("finish_task_switch", Class::Layer(Scheduler)),
    ("__switch_to*", Class::Layer(Scheduler)),
    ("switch_mm*", Class::Layer(Scheduler)),
    ("context_switch", Class::Layer(Scheduler)),
    ("prepare_task_switch", Class::Layer(Scheduler)),
    ("try_to_wake_up", Class::Layer(Scheduler)),
    ("wake_up*", Class::Layer(Scheduler)),
    ("__wake_up*", Class::Layer(Scheduler)),
    ("ttwu_*", Class::Layer(Scheduler)),
    ("sched_*", Class::Layer(Scheduler)),
    ("__sched_*", Class::Layer(Scheduler)),
    ("enqueue_*", Class::Layer(Scheduler)),
    ("dequeue_*", Class::Layer(Scheduler)),
    ("pick_*", Class::Layer(Scheduler)),
    ("put_prev_*", Class::Layer(Scheduler)),
    ("set_next_*", Class::Layer(Scheduler)),
    ("update_curr*", Class::Layer(Scheduler)),
    ("update_load_*", Class::Layer(Scheduler)),
    ("update_cfs_*", Class::Layer(Scheduler)),
    ("update_rq_clock*", Class::Layer(Scheduler)),
    ("update_min_vruntime", Class::Layer(Scheduler)),
    ("reweight_*", Class::Layer(Scheduler)),
    ("select_task_rq*", Class::Layer(Scheduler)),
    ("select_idle_*", Class::Layer(Scheduler)),
    ("check_preempt*", Class::Layer(Scheduler)),
    ("wakeup_preempt*", Class::Layer(Scheduler)),
    ("resched_*", Class::Layer(Scheduler)),
    ("raw_spin_rq_*", Class::Layer(Scheduler)),
    ("newidle_balance", Class::Layer(Scheduler)),
    ("sched_balance_*", Class::Layer(Scheduler)),
    ("load_balance", Class::Layer(Scheduler)),
    ("rebalance_domains", Class::Layer(Scheduler)),
    ("psi_*", Class::Layer(Scheduler)),
    ("cpuacct_*", Class::Layer(Scheduler)),
    ("__cgroup_account_*", Class::Layer(Scheduler)),
    ("cgroup_rstat_*", Class::Layer(Scheduler)),
    ("account_*", Class::Layer(Scheduler)),
    ("__cond_resched", Class::Layer(Scheduler)),
    ("_cond_resched", Class::Layer(Scheduler)),
    ("futex_*", Class::Layer(Scheduler)),
    ("__futex_*", Class::Layer(Scheduler)),
    ("do_futex", Class::Layer(Scheduler)),
    ("hrtimer_*", Class::Layer(Scheduler)),
    ("__hrtimer_*", Class::Layer(Scheduler)),
    ("do_nanosleep", Class::Layer(Scheduler)),
    ("kick_process", Class::Layer(Scheduler)),
    ("task_tick*", Class::Layer(Scheduler)),
    ("scheduler_tick", Class::Layer(Scheduler)),
    ("sched_tick", Class::Layer(Scheduler)),
    // Entering and leaving idle.
    ("do_idle", Class::Layer(IdleExit)),
    ("cpu_startup_entry", Class::Layer(IdleExit)),
    ("start_secondary", Class::Layer(IdleExit)),
    ("default_idle_call", Class::Layer(IdleExit)),
    ("call_cpuidle", Class::Layer(IdleExit)),
    ("cpuidle_*", Class::Layer(IdleExit)),
    ("menu_*", Class::Layer(IdleExit)),
    ("haltpoll_*", Class::Layer(IdleExit)),
    ("tick_nohz_*", Class::Layer(IdleExit)),
    ("tick_irq_enter", Class::Layer(IdleExit)),
    ("rcu_idle_*", Class::Layer(IdleExit)),
    ("ct_*", Class::Layer(IdleExit)),
    ("nohz_*", Class::Layer(IdleExit)),
];

/// The name without a compiler suffix (`.isra.0`, `.constprop.0`, `.cold`).
fn base_name(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// `*x*` holds `x`; `a*b` starts with `a` and ends with `b` (either may
/// be empty); a pattern without `*` is the whole name.
fn matches(pattern: &str, name: &str) -> bool {
    if let Some(inner) = pattern.strip_prefix('*').and_then(|p| p.strip_suffix('*')) {
        return name.contains(inner);
    }
    match pattern.split_once('*') {
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => name == pattern,
    }
}

/// What the rules say of a kernel function.
pub fn classify(name: &str) -> Class {
    let name = base_name(name);
    RULES
        .iter()
        .find(|(p, _)| matches(p, name))
        .map_or(Class::Unknown, |(_, c)| *c)
}

/// The kernel entries whose callees run in interrupt context (hard or
/// soft): a chain through one of these was sampled inside an interrupt.
pub fn is_interrupt_entry(name: &str) -> bool {
    const ENTRIES: [&str; 10] = [
        "asm_common_interrupt",
        "common_interrupt",
        "asm_sysvec_*",
        "sysvec_*",
        "handle_softirqs",
        "__do_softirq",
        "run_ksoftirqd",
        "irq_exit*",
        "__irq_exit*",
        "el1_interrupt",
    ];
    let name = base_name(name);
    ENTRIES.iter().any(|p| matches(p, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_named_to_their_layers() {
        for (name, layer) in [
            ("pv_native_safe_halt", Idle),
            ("do_idle", IdleExit),
            ("entry_SYSCALL_64", Syscall),
            ("__x64_sys_pread64", Syscall),
            ("__do_sys_io_uring_enter", AsyncIo),
            ("io_submit_sqes", AsyncIo),
            ("io_schedule", Scheduler),
            ("vfs_read", Vfs),
            ("ext4_file_read_iter", FileSystem),
            ("iomap_dio_rw", FileSystem),
            ("filemap_read", Memory),
            ("copy_page_to_iter", Memory),
            ("gup_fast_fallback", Memory),
            ("bio_iov_iter_get_pages", Memory),
            ("blkdev_direct_IO.part.0", Block),
            ("blk_mq_submit_bio", Block),
            ("__submit_bio", Block),
            ("iowrite16", Driver),
            ("virtblk_done", Driver),
            ("zram_submit_bio", Driver),
            ("lo_rw_aio.isra.0", Driver),
            ("handle_softirqs", Interrupt),
            ("__sysvec_call_function_single", Interrupt),
            ("finish_task_switch.isra.0", Scheduler),
            ("try_to_wake_up", Scheduler),
            ("futex_wake", Scheduler),
            ("do_anonymous_page", Memory),
        ] {
            assert_eq!(classify(name), Class::Layer(layer), "{name}");
        }
        for shared in [
            "_raw_spin_unlock_irqrestore",
            "__rcu_read_lock",
            "xas_load",
            "__x86_indirect_thunk_rax",
        ] {
            assert_eq!(classify(shared), Class::Shared, "{shared}");
        }
        assert_eq!(classify("some_new_function"), Class::Unknown);
        assert!(is_interrupt_entry("asm_sysvec_apic_timer_interrupt"));
        assert!(is_interrupt_entry("handle_softirqs"));
        assert!(!is_interrupt_entry("blk_mq_complete_request"));
    }

    #[test]
    fn a_layers_key_is_its_json_name() {
        for l in Layer::ALL {
            let json = format!("\"{}\"", l.key());
            assert_eq!(serde_json_like(l), json);
        }
    }

    /// serde's name of a unit variant, without a JSON crate: the Debug
    /// name in snake case (what `rename_all = "snake_case"` writes).
    fn serde_json_like(l: Layer) -> String {
        let mut out = String::from("\"");
        for (i, c) in format!("{l:?}").chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out + "\""
    }

    #[test]
    fn every_layer_has_a_distinct_label_and_its_index() {
        let mut labels: Vec<&str> = Layer::ALL.iter().map(|l| l.label()).collect();
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), Layer::ALL.len());
        for (i, l) in Layer::ALL.iter().enumerate() {
            assert_eq!(l.index(), i);
        }
    }
}
