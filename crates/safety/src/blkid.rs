//! The seven calls of libblkid's C API the probe makes (blkid.h), declared
//! here by hand: libblkid is still what probes, but building needs neither
//! its headers (libblkid-dev) nor libclang to generate bindings, only the
//! library itself, libblkid.so.1, which every Debian system has (util-linux
//! and mount need it). These calls and constants have kept their form since
//! the low-level probe API came (util-linux 2.15).
//!
//! [`Probe`] owns one probe and frees it when dropped; each method wraps one
//! call, and the SAFETY note at each says what makes that call sound.

use crate::ProbeStep;
use std::ffi::{c_char, c_int, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::NonNull;

/// libblkid's `struct blkid_struct_probe`: opaque, only ever behind a
/// pointer libblkid gave.
#[repr(C)]
struct RawProbe {
    _opaque: [u8; 0],
}

// Linked by the library's file name (`-l:libblkid.so.1`), so that the
// development package's `libblkid.so` link is not needed.
#[link(name = "libblkid.so.1", kind = "dylib", modifiers = "+verbatim")]
extern "C" {
    fn blkid_new_probe_from_filename(filename: *const c_char) -> *mut RawProbe;
    fn blkid_free_probe(pr: *mut RawProbe);
    fn blkid_probe_enable_superblocks(pr: *mut RawProbe, enable: c_int) -> c_int;
    fn blkid_probe_set_superblocks_flags(pr: *mut RawProbe, flags: c_int) -> c_int;
    fn blkid_probe_enable_partitions(pr: *mut RawProbe, enable: c_int) -> c_int;
    fn blkid_do_safeprobe(pr: *mut RawProbe) -> c_int;
    fn blkid_probe_lookup_value(
        pr: *mut RawProbe,
        name: *const c_char,
        data: *mut *const c_char,
        len: *mut usize,
    ) -> c_int;
}

/// blkid.h's BLKID_SUBLKS_* flags: which values a superblock probe sets.
pub const SUBLKS_TYPE: c_int = 1 << 5;
pub const SUBLKS_USAGE: c_int = 1 << 7;
pub const SUBLKS_VERSION: c_int = 1 << 8;
/// SBMAGIC and SBMAGIC_OFFSET.
pub const SUBLKS_MAGIC: c_int = 1 << 9;
/// A superblock whose checksum is off is still reported.
pub const SUBLKS_BADCSUM: c_int = 1 << 10;

/// What `blkid_do_safeprobe` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// One signature (its values can be looked up).
    One,
    Nothing,
    /// Several signatures at once.
    Ambivalent,
}

/// One libblkid probe over a device or an image file, opened read only.
pub struct Probe(NonNull<RawProbe>);

impl Probe {
    pub fn open(path: &Path) -> Result<Probe, ProbeStep> {
        let name = CString::new(path.as_os_str().as_bytes()).map_err(|_| ProbeStep::NulInPath)?;
        // SAFETY: `name` is a NUL-terminated string that outlives the call;
        // libblkid copies what it keeps. It returns a new probe, or NULL
        // with errno set (the file's open failed, or no memory).
        let raw = unsafe { blkid_new_probe_from_filename(name.as_ptr()) };
        NonNull::new(raw)
            .map(Probe)
            .ok_or_else(|| ProbeStep::Open(std::io::Error::last_os_error()))
    }

    /// Superblock probing on, with `flags` (SUBLKS_*) saying which values
    /// to set; partition tables probed too.
    pub fn enable(&mut self, flags: c_int) -> Result<(), ProbeStep> {
        let pr = self.0.as_ptr();
        // SAFETY: `pr` is the live probe this value owns (freed only on
        // drop); these three calls take a probe and plain integers.
        let codes = unsafe {
            [
                blkid_probe_enable_superblocks(pr, 1),
                blkid_probe_set_superblocks_flags(pr, flags),
                blkid_probe_enable_partitions(pr, 1),
            ]
        };
        match codes.iter().find(|&&c| c != 0) {
            None => Ok(()),
            Some(&code) => Err(ProbeStep::Enable { code }),
        }
    }

    /// Every enabled chain run; more than one signature is ambivalent.
    pub fn safeprobe(&mut self) -> Result<Found, ProbeStep> {
        // SAFETY: `self.0` is the live probe this value owns.
        match unsafe { blkid_do_safeprobe(self.0.as_ptr()) } {
            0 => Ok(Found::One),
            1 => Ok(Found::Nothing),
            -2 => Ok(Found::Ambivalent),
            code => Err(ProbeStep::Probe { code }),
        }
    }

    /// A value the last probe set ("TYPE", "USAGE", ...), None if unset.
    pub fn value(&self, name: &CStr) -> Option<String> {
        let mut data: *const c_char = std::ptr::null();
        let mut len: usize = 0;
        // SAFETY: the probe is live, `name` is NUL-terminated, and `data`
        // and `len` are valid places for the two results. On success
        // libblkid points `data` at `len` bytes (its NUL included) that the
        // probe owns until it probes again or is freed: they are copied
        // below, while `&self` keeps both from happening.
        let code = unsafe {
            blkid_probe_lookup_value(self.0.as_ptr(), name.as_ptr(), &mut data, &mut len)
        };
        if code != 0 || data.is_null() {
            return None;
        }
        // SAFETY: as above, `len` readable bytes at `data`.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches('\0');
        (!text.is_empty()).then(|| text.to_string())
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // SAFETY: the probe came from blkid_new_probe_from_filename and is
        // freed once, here; nothing borrows it past this point.
        unsafe { blkid_free_probe(self.0.as_ptr()) }
    }
}
