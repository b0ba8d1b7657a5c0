//! Inputs that reach a fault already reported and not yet fixed in the
//! parser crates: the targets step around them, so a bounded CI run stays
//! about new faults. Each guard names its reproducer in fuzz/found/ and
//! goes once the fault is fixed (and the reproducer joins the corpus).
//! With HIOPS_FUZZ_ALL=1 in the environment no guard steps aside: to check
//! a fix, run a target on its reproducer so.

use hiops_fio::options::Draft;
use std::sync::OnceLock;

/// Whether the guards step around known faults (not under HIOPS_FUZZ_ALL).
fn guarded() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("HIOPS_FUZZ_ALL").is_none())
}

/// A job whose draft reaches a known fault when made into a spec.
pub fn skip_draft(d: &Draft) -> bool {
    // found/jobfile-numjobs-oom.fio: numjobs has no bound before the
    // run's thread limit, and fio's file names are made for every clone
    // and file.
    let names = u64::from(d.numjobs.unwrap_or(1)) * u64::from(d.nrfiles.unwrap_or(1));
    guarded() && names > 1 << 16
}

/// found/jobfile-showcmd-dollar.fio: `--showcmd` writes a job's name as it
/// stands, and `$ncpus` or `${VAR}` in it is expanded when the line runs.
pub fn showcmd_changes_name(name: &str) -> bool {
    guarded() && name.contains('$')
}

/// found/iolog-offset-overflow.iolog: an I/O's end (offset + length) past
/// 2^64 overflows in the scan.
pub fn iolog_end_overflows(data: &[u8]) -> bool {
    if !guarded() {
        return false;
    }
    let text = String::from_utf8_lossy(data);
    let far = u64::MAX - u64::from(u32::MAX);
    text.split_ascii_whitespace()
        .any(|w| w.parse::<u64>().is_ok_and(|n| n > far))
}

/// found/blktrace-sector-overflow.bin: a queue event's sector past 2^55
/// overflows when made a byte offset (sector * 512), and one just below
/// reaches the scan's overflow of offset + length
/// (found/iolog-offset-overflow.iolog).
pub fn blktrace_sector_overflows(data: &[u8]) -> bool {
    let Some(first) = data.get(..4).filter(|_| guarded()) else {
        return false;
    };
    // The first event's magic tells the byte order, as the reader does.
    let swap = u32::from_ne_bytes(first.try_into().unwrap()) & 0xffff_ff00 != 0x6561_7400;
    let mut at = 0;
    while let Some(ev) = data.get(at..at + 48) {
        let mut sector = u64::from_ne_bytes(ev[16..24].try_into().unwrap());
        let mut pdu = u16::from_ne_bytes([ev[46], ev[47]]);
        if swap {
            (sector, pdu) = (sector.swap_bytes(), pdu.swap_bytes());
        }
        // The scan's end of the I/O: sector * 512 + its length.
        let end = sector
            .checked_mul(512)
            .and_then(|o| o.checked_add(u32::MAX.into()));
        if end.is_none() {
            return true;
        }
        at += 48 + pdu as usize;
    }
    false
}
