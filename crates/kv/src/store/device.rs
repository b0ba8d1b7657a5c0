//! How the store reaches a device: one seam over the blocking path and a
//! task ring, so GET, the flusher and the defragmenter each have a single
//! code path whichever way their I/O goes.
//!
//! Buffers are owned: a ring keeps the buffer while the kernel uses it and
//! gives it back with the result. The blocking path's futures are ready
//! when made (the call blocks first), so blocking callers run the same
//! async code with `wait::now`.

use crate::format::{self, BlockHeader, Superblock, PAGE};
use hiops_hal::Op;
use hiops_path::{AlignedBuf, IoPath, TaskRing};
use std::future::Future;
use std::io;

/// Device I/O on the store's one target.
pub(crate) trait Device {
    /// Reads the first `len` bytes of `buf` at `offset`.
    fn read(
        &self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)>;

    /// Writes `data` at `offset`. A ring writes only from a buffer it
    /// owns: it copies `data` into `spare` (at least as long); the blocking
    /// path writes `data` in place and hands `spare` back untouched.
    fn write(
        &self,
        data: &[u8],
        spare: AlignedBuf,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)>;

    /// fdatasync; `spare` rides along for a ring's command.
    fn datasync(&self, spare: AlignedBuf) -> impl Future<Output = (io::Result<()>, AlignedBuf)>;
}

/// The shared path: the calling thread blocks in each call.
pub(crate) struct Blocking<'a>(pub &'a IoPath);

impl Device for Blocking<'_> {
    fn read(
        &self,
        mut buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        let got = self.0.read_at(0, &mut buf[..len], offset);
        std::future::ready((got, buf))
    }

    fn write(
        &self,
        data: &[u8],
        spare: AlignedBuf,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        std::future::ready((self.0.write_at(0, data, offset), spare))
    }

    fn datasync(&self, spare: AlignedBuf) -> impl Future<Output = (io::Result<()>, AlignedBuf)> {
        std::future::ready((self.0.datasync(0), spare))
    }
}

/// A task ring and the index of this device among the ring's targets.
pub(crate) struct OnRing<'a>(pub &'a TaskRing, pub u32);

impl Device for OnRing<'_> {
    fn read(
        &self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        self.0.io(Op::Read, self.1, offset, len as u32, buf)
    }

    fn write(
        &self,
        data: &[u8],
        mut spare: AlignedBuf,
        offset: u64,
    ) -> impl Future<Output = (io::Result<usize>, AlignedBuf)> {
        spare[..data.len()].copy_from_slice(data);
        self.0
            .io(Op::Write, self.1, offset, data.len() as u32, spare)
    }

    fn datasync(&self, spare: AlignedBuf) -> impl Future<Output = (io::Result<()>, AlignedBuf)> {
        let sync = self.0.io(Op::Fdatasync, self.1, 0, 0, spare);
        async move {
            let (r, buf) = sync.await;
            (r.map(|_| ()), buf)
        }
    }
}

/// A buffer lent to one I/O after another, with the checks every caller
/// wants (a short transfer is an error).
pub(crate) struct Lent(Option<AlignedBuf>);

impl Lent {
    pub(crate) fn new(len: usize) -> Lent {
        Lent(Some(AlignedBuf::new(len)))
    }

    fn take(&mut self) -> io::Result<AlignedBuf> {
        // Gone only if an I/O's future was dropped part way, which leaves
        // the buffer with the ring.
        self.0
            .take()
            .ok_or_else(|| io::Error::other("an I/O buffer was lost to a cancelled I/O"))
    }

    /// The buffer's bytes (after a read).
    pub(crate) fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or(&[])
    }

    /// Writes all of `data` at `offset`.
    pub(crate) async fn write_all(
        &mut self,
        dev: &impl Device,
        data: &[u8],
        offset: u64,
    ) -> io::Result<()> {
        self.write_reaching(dev, data, offset)
            .await
            .map_err(|e| e.error)
    }

    /// Writes all of `data` at `offset`; if that fails, also how many of
    /// its bytes may have reached the device.
    pub(crate) async fn write_reaching(
        &mut self,
        dev: &impl Device,
        data: &[u8],
        offset: u64,
    ) -> Result<(), FailedWrite> {
        let spare = self
            .take()
            .map_err(|error| FailedWrite { error, reached: 0 })?;
        let (n, buf) = dev.write(data, spare, offset).await;
        self.0 = Some(buf);
        let (error, reached) = match n {
            Ok(n) if n == data.len() => return Ok(()),
            Ok(n) => {
                let why = format!(
                    "short write of {n} of {} bytes at byte {offset}",
                    data.len()
                );
                (io::Error::other(why), n)
            }
            // Out of space or past the file size limit: the kernel wrote
            // nothing before it said so.
            Err(e) if wrote_nothing(&e) => (e, 0),
            // Else (an I/O error) any of it may be on the device.
            Err(e) => (e, data.len()),
        };
        Err(FailedWrite { error, reached })
    }

    /// Fills the whole buffer from `offset`.
    pub(crate) async fn read_all(&mut self, dev: &impl Device, offset: u64) -> io::Result<()> {
        let buf = self.take()?;
        let len = buf.len();
        let (n, buf) = dev.read(buf, len, offset).await;
        self.0 = Some(buf);
        let n = n?;
        if n != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("short read: {n} of {len} bytes at byte {offset}"),
            ));
        }
        Ok(())
    }

    pub(crate) async fn datasync(&mut self, dev: &impl Device) -> io::Result<()> {
        let (r, buf) = dev.datasync(self.take()?).await;
        self.0 = Some(buf);
        r
    }
}

/// A write that failed, and how many of its bytes may be on the device.
pub(crate) struct FailedWrite {
    pub(crate) error: io::Error,
    pub(crate) reached: usize,
}

/// Errors a write returns only when it wrote nothing at all: the file
/// system is full, the file would pass its size limit, or a quota.
fn wrote_nothing(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC | libc::EFBIG | libc::EDQUOT)
    )
}

/// Writes a free header (and zeros to the end of its page) into each
/// `(block, last sequence)`, then fdatasyncs.
pub(super) async fn write_free_headers(
    dev: &impl Device,
    sb: &Superblock,
    epoch: u64,
    blocks: &[(u32, u64)],
) -> io::Result<()> {
    let mut page = AlignedBuf::new(PAGE);
    let mut lent = Lent::new(PAGE);
    for &(idx, seq) in blocks {
        page.fill(0);
        format::encode_block_header(&mut page, BlockHeader::Free { epoch, seq });
        lent.write_all(dev, &page, sb.block_offset(idx)).await?;
    }
    lent.datasync(dev).await
}
