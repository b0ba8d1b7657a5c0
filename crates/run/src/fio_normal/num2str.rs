//! fio's number formatting for its normal output (lib/num2str.c and
//! stat.h's latency units), so hiops' figures read as fio's: at most
//! `maxlen` characters of digits and point, a carry when the dropped part
//! is half a unit or more, an SI or IEC prefix.

/// What follows the prefix (fio's `enum n2s_unit`; bits are not used here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A bare count (IOPS, latencies).
    None,
    /// Bytes: `B`.
    Byte,
    /// Bytes per second: `B/s`.
    BytePerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Byte => "B",
            Unit::BytePerSec => "B/s",
        }
    }
}

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// fio's `num2str(num, maxlen, 1, pow2, unit)`: `num` divided by 1000 (or
/// 1024 with `pow2`) until its digits fit `maxlen`, then as many decimals
/// of the last remainder as still fit (none when one or no place is left,
/// the remainder rounding the number instead).
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    num2str_base(num, maxlen, 1, pow2, unit)
}

/// fio's `num2str` of a `num` already counted in units of `base` (1024:
/// KiB): the prefix starts one step up for each thousand (or 1024) in
/// `base`, as fio steps it, whichever prefix system is asked.
pub fn num2str_base(num: u64, maxlen: usize, base: u64, pow2: bool, unit: Unit) -> String {
    assert!(maxlen > 0, "num2str needs room for a digit");
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC } else { &SI };
    let mut post = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let (mut num, mut modulo) = (num, None::<u64>);
    while post < prefixes.len() && digits(num) > maxlen {
        modulo = Some(num % thousand);
        num /= thousand;
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let Some(modulo) = modulo else {
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    };
    let room = maxlen as i64 - digits(num) as i64;
    if room <= 1 {
        // No place for a decimal: the remainder rounds.
        let num = num + u64::from(modulo >= thousand / 2);
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    }
    let places = (room - 1) as usize;
    let frac = format!("{:.*}", places, modulo as f64 / thousand as f64);
    // "1.000" when the remainder rounds up to a whole unit.
    let num = num + u64::from(frac.starts_with('1'));
    format!("{num}.{}{}{}", &frac[2..], prefixes[post], unit.suffix())
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// A latency set's figures (ns) in fio's unit for its summary line
/// (stat.h `nsec_to_msec`, `nsec_to_usec`): msec when the minimum is over
/// 2 ms, the maximum over 100 ms and the deviation over 1 ms; usec at a
/// thousandth of those; else nsec. Minimum and maximum are truncated.
pub fn latency_unit(min: u64, max: u64, mean: f64, dev: f64) -> (&'static str, u64, u64, f64, f64) {
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        return (
            "msec",
            min / 1_000_000,
            max / 1_000_000,
            mean / 1e6,
            dev / 1e6,
        );
    }
    if min > 2000 && max > 99_999 && dev > 1000.0 {
        return ("usec", min / 1000, max / 1000, mean / 1e3, dev / 1e3);
    }
    ("nsec", min, max, mean, dev)
}

/// The percentiles block's unit (stat.c `show_clat_percentiles`) from the
/// smallest and largest value shown: msec when those pass 2 ms and 100 ms,
/// usec when they pass 2 us and 100 us; (name, divisor).
pub fn percentile_unit(min: u64, max: u64) -> (&'static str, u64) {
    if min > 2_000_000 && max > 99_999_999 {
        ("msec", 1_000_000)
    } else if min > 2000 && max > 99_999 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_figures_with_fios_prefixes_and_carry() {
        // As fio 3.33 prints them (sig_figs=4).
        assert_eq!(num2str(0, 4, true, Unit::Byte), "0B");
        assert_eq!(num2str(4096, 4, true, Unit::Byte), "4096B");
        assert_eq!(num2str(10_000, 4, true, Unit::Byte), "9.77KiB");
        assert_eq!(num2str(64 << 20, 4, true, Unit::Byte), "64.0MiB");
        assert_eq!(num2str(64 << 20, 4, false, Unit::Byte), "67.1MB");
        assert_eq!(
            num2str(16_777_216_000, 4, true, Unit::BytePerSec),
            "15.6GiB/s"
        );
        assert_eq!(
            num2str(16_777_216_000, 4, false, Unit::BytePerSec),
            "16.8GB/s"
        );
        assert_eq!(num2str(4_096_000, 4, false, Unit::None), "4096k");
        assert_eq!(num2str(256_000, 4, false, Unit::None), "256k");
        assert_eq!(num2str(9999, 4, false, Unit::None), "9999");
        assert_eq!(num2str(10_000, 4, false, Unit::None), "10.0k");
        // The remainder rounds the last digit when no decimal fits.
        assert_eq!(num2str(1_234_500, 4, false, Unit::None), "1235k");
        assert_eq!(num2str(1_234_500, 4, true, Unit::Byte), "1206KiB");
        assert_eq!(num2str(12_345_600, 4, false, Unit::None), "12.3M");
        assert_eq!(num2str(99_999_999, 4, false, Unit::None), "100.0M");
        assert_eq!(num2str(1023, 4, true, Unit::Byte), "1023B");
        assert_eq!(num2str(1_048_575, 4, true, Unit::Byte), "1024KiB");
        // A figure in KiB: the prefix starts at Ki (and at k for kB, as
        // fio steps 1024 by 1000 once).
        assert_eq!(
            num2str_base(40_000, 4, 1024, true, Unit::BytePerSec),
            "39.1MiB/s"
        );
        assert_eq!(
            num2str_base(40_000, 4, 1024, false, Unit::BytePerSec),
            "40.0MB/s"
        );
        assert_eq!(
            num2str_base(512, 4, 1024, true, Unit::BytePerSec),
            "512KiB/s"
        );
        // Six places for a latency's minimum and maximum.
        assert_eq!(num2str(10_419, 6, false, Unit::None), "10419");
        assert_eq!(num2str(1_234_567, 6, false, Unit::None), "1234.6k");
        assert_eq!(num2str(64 << 20, 6, false, Unit::None), "67109k");
        assert_eq!(num2str(99_999_999, 6, false, Unit::None), "100000k");
        assert_eq!(num2str(u64::MAX, 4, false, Unit::None), "18.4E");
        assert_eq!(num2str(u64::MAX, 4, true, Unit::Byte), "16.0EiB");
    }

    #[test]
    fn latency_units_follow_fios_thresholds() {
        assert_eq!(latency_unit(9, 10_419, 23.9, 81.4).0, "nsec");
        // All three must pass: a small deviation keeps nsec.
        assert_eq!(latency_unit(3000, 200_000, 5000.0, 999.0).0, "nsec");
        let (u, min, max, mean, _) = latency_unit(3999, 200_999, 5000.0, 1500.0);
        assert_eq!((u, min, max, mean), ("usec", 3, 200, 5.0));
        assert_eq!(latency_unit(2_000_001, 100_000_000, 3e6, 2e6).0, "msec");
        assert_eq!(latency_unit(2_000_000, 100_000_000, 3e6, 2e6).0, "usec");
        assert_eq!(percentile_unit(20, 111), ("nsec", 1));
        assert_eq!(percentile_unit(2001, 100_000), ("usec", 1000));
        assert_eq!(percentile_unit(2001, 99_999), ("nsec", 1));
        assert_eq!(percentile_unit(2_000_001, 100_000_000), ("msec", 1_000_000));
    }
}
