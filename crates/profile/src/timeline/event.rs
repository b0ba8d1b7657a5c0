//! One decoded event, already filtered to this process and the traced
//! devices: what `decode` (and `ftrace`) make of the kernel's records and
//! the matcher joins into I/Os, apart from both so neither depends on the
//! other.

/// One decoded event (already filtered to this process and the devices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A read/write system call entered on `tid`.
    Enter {
        tid: u32,
    },
    /// io_uring took request `req` from the submission queue on `tid`.
    Submit {
        tid: u32,
        req: u64,
    },
    /// `tid` queued a bio (block-layer entry) of `sectors` sectors.
    Queue {
        tid: u32,
        dev: u32,
        sector: u64,
        write: bool,
        sectors: u32,
    },
    /// The bio queued at `sector` was merged into a request: after the
    /// bios it holds (a back merge) or before them (a front merge).
    Merge {
        dev: u32,
        sector: u64,
        sectors: u32,
        front: bool,
    },
    Issue {
        dev: u32,
        sector: u64,
    },
    Complete {
        dev: u32,
        sector: u64,
    },
    /// A bio ended. For a request's bios this follows the request's
    /// completion (already seen); a bio with no driver issue ends here, in
    /// a bio-based driver (zram), whose work this completion closes.
    BioComplete {
        dev: u32,
        sector: u64,
    },
    /// The system call returned on `tid`.
    Exit {
        tid: u32,
    },
    /// io_uring posted `req`'s completion.
    Posted {
        req: u64,
    },
    /// libaio: `tid` entered io_submit; every bio it queues before the
    /// call returns belongs to an I/O submitted then.
    AioEnter {
        tid: u32,
    },
    AioExit {
        tid: u32,
    },
    /// libaio: an io_getevents call returned; the I/Os completed before it
    /// are returned to the application then.
    AioReaped,
}
