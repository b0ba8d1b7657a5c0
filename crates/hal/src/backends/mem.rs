//! mem: a RAM device behind the HAL. Commands copy between the tag's buffer and
//! memory, so a run measures the software path (tags, staging, reaping, the
//! benchmark itself) without any kernel I/O.

use super::ready::Inline;
use crate::{Command, Completion, Engine, HalError, Op, Tag, Target};
use std::sync::Arc;

/// The memory of a RAM device, shared by every queue that targets it.
#[derive(Debug)]
pub struct MemDevice {
    base: *mut u8,
    len: u64,
}

// SAFETY: the mapping lives as long as the MemDevice and is only accessed
// through raw-pointer copies. Concurrent commands on overlapping ranges race,
// as they would on a real device: the result is unspecified bytes, which is
// what a device promises for overlapping in-flight writes; no reference to the
// device memory is ever formed.
unsafe impl Send for MemDevice {}
unsafe impl Sync for MemDevice {}

impl MemDevice {
    /// Maps `len` bytes and fills them with incompressible data, so reads touch
    /// real pages (untouched anonymous pages all map the shared zero page,
    /// which would flatter reads with a perfect cache hit).
    pub fn new(len: u64) -> Result<Arc<MemDevice>, HalError> {
        let dev = MemDevice::map(len)?;
        dev.fill_incompressible();
        Ok(Arc::new(dev))
    }

    /// Maps `len` bytes and touches none of them: for the null engine,
    /// which moves no data, so a run costs no page faults or fill (fio's
    /// null allocates nothing either). Reads from it would see zeros.
    pub fn untouched(len: u64) -> Result<Arc<MemDevice>, HalError> {
        Ok(Arc::new(MemDevice::map(len)?))
    }

    fn map(len: u64) -> Result<MemDevice, HalError> {
        assert!(len > 0);
        // SAFETY: anonymous private mapping; arguments are valid for mmap.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(HalError::Setup {
                engine: "mem",
                what: "mapping the RAM device",
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(MemDevice {
            base: ptr.cast(),
            len,
        })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn fill_incompressible(&self) {
        let words = (self.len / 8) as usize;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..words {
            // splitmix64 (Steele, Lea, Flood 2014): cheap, full-period, no repeats.
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            // SAFETY: i < len/8, inside the mapping; unaligned-safe write.
            unsafe {
                self.base
                    .cast::<u64>()
                    .add(i)
                    .write_unaligned(z ^ (z >> 31))
            };
        }
    }

    /// Copies between the device and `buf`. Returns bytes moved, or -EINVAL for
    /// a range outside the device.
    ///
    /// SAFETY: `buf` must be valid for `len` bytes of reads and writes
    /// (unused by a trim).
    unsafe fn transfer(&self, op: Op, offset: u64, len: u32, buf: *mut u8) -> i64 {
        let Some(end) = offset.checked_add(len as u64) else {
            return -(libc::EINVAL as i64);
        };
        if end > self.len {
            return -(libc::EINVAL as i64);
        }
        let dev = self.base.add(offset as usize);
        match op {
            Op::Read => std::ptr::copy_nonoverlapping(dev, buf, len as usize),
            Op::Write => std::ptr::copy_nonoverlapping(buf, dev, len as usize),
            Op::Fsync | Op::Fdatasync | Op::SyncRange(_) => return 0,
            // A discarded range of a RAM device reads back as zeroes.
            Op::Trim => std::ptr::write_bytes(dev, 0, len as usize),
        }
        len as i64
    }
}

impl Drop for MemDevice {
    fn drop(&mut self) {
        // SAFETY: base/len are exactly the mapping made in new().
        unsafe { libc::munmap(self.base.cast(), self.len as usize) };
    }
}

pub struct MemEngine {
    devices: Vec<Arc<MemDevice>>,
    inline: Inline,
}

impl MemEngine {
    pub fn open(targets: &[Target], depth: u32) -> Result<MemEngine, HalError> {
        let devices = targets
            .iter()
            .map(|t| match t {
                Target::Mem(d) => Ok(d.clone()),
                Target::Fd(_) => Err(HalError::Unsupported {
                    what: "the mem engine on a file".into(),
                    why: "mem is a RAM device of its own and ignores files".into(),
                    instead: "drop --filename to measure the RAM device, or pick a kernel engine (io_uring, libaio, psync)".into(),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(MemEngine {
            devices,
            inline: Inline::with_capacity(depth),
        })
    }
}

impl Engine for MemEngine {
    unsafe fn prepare(&mut self, tag: Tag, cmd: &Command, buf: *mut u8) -> Result<(), HalError> {
        self.inline.stage(tag, cmd, buf);
        Ok(())
    }

    fn issue(&mut self) -> Result<u32, HalError> {
        let devices = &self.devices;
        Ok(self.inline.run(|s| {
            let dev = &devices[s.cmd.target as usize];
            // SAFETY: s.buf is the tag's arena slot, at least len bytes (Queue::bind).
            unsafe { dev.transfer(s.cmd.op, s.cmd.offset, s.cmd.len, s.buf) }
        }))
    }

    fn reap(&mut self, _min: u32, out: &mut [Completion]) -> Result<usize, HalError> {
        Ok(self.inline.reap(out))
    }

    fn completes_in_issue(&self) -> bool {
        true
    }

    fn description(&self) -> String {
        "mem (RAM device, no kernel I/O)".into()
    }
}
