//! fio's value syntax: sizes with `kb_base`, times with a per-option default
//! unit, booleans, percentages. Rules from fio's HOWTO ("Parameter types")
//! and its parse.c.

/// How `k`/`KiB` suffixes are read (fio's `kb_base`). With 1024 (fio's
/// default, "compatibility mode") `k`, `kb` are powers of 1024 and `KiB` of
/// 1000; with 1000 it is the other way round, as SI and IEC say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KbBase(pub u64);

impl Default for KbBase {
    fn default() -> KbBase {
        KbBase(1024)
    }
}

use crate::error::ValueError;
use hiops_job::units::number_and_suffix as split_number;
pub use hiops_job::units::{quoted, shown};
use hiops_job::units::{scale, Scale, MAX_SECONDS};
use hiops_job::{Bytes, Percent};

/// A byte count: `4096`, `4k`, `1.5g`, `4KiB`, `0x1000`.
pub fn size(text: &str, kb: KbBase) -> Result<u64, ValueError> {
    bytes(text, kb).map_err(Bad::into_error)
}

/// Why a size was refused: past u64, or anything else.
enum Bad {
    TooLarge(ValueError),
    Other(ValueError),
}

impl Bad {
    fn into_error(self) -> ValueError {
        match self {
            Bad::TooLarge(e) | Bad::Other(e) => e,
        }
    }
}

impl From<String> for Bad {
    fn from(why: String) -> Bad {
        Bad::Other(ValueError::Said(why))
    }
}

fn bytes(text: &str, kb: KbBase) -> Result<u64, Bad> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return match u64::from_str_radix(hex, 16) {
            Ok(n) => Ok(n),
            Err(_) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Err(Bad::TooLarge(too_large(text)))
            }
            Err(_) => Err(format!("{} is not a hex number", quoted(text)).into()),
        };
    }
    let (num, suffix) = split_number(t);
    if num.is_empty() {
        return Err(format!(
            "{} is not a size: write a number with an optional suffix, like 4k or 1g",
            quoted(text)
        )
        .into());
    }
    // The option table takes kb_base=1000 or 1024 only; any other base
    // would make the swap below and the overflow bound wrong.
    assert!(matches!(kb.0, 1000 | 1024), "kb_base {}", kb.0);
    let s = suffix.to_ascii_lowercase();
    let other = if kb.0 == 1000 { 1024 } else { 1000 };
    let (pow, base) = match s.as_str() {
        // fio reads "Mi" as it reads "M": only a trailing "iB" swaps
        // the base (parse.c's get_mult_bytes).
        "" | "b" => (0, kb.0),
        "k" | "kb" | "ki" => (1, kb.0),
        "m" | "mb" | "mi" => (2, kb.0),
        "g" | "gb" | "gi" => (3, kb.0),
        "t" | "tb" | "ti" => (4, kb.0),
        "p" | "pb" | "pi" => (5, kb.0),
        "kib" => (1, other),
        "mib" => (2, other),
        "gib" => (3, other),
        "tib" => (4, other),
        "pib" => (5, other),
        _ => {
            return Err(format!(
                "{} has an unknown size suffix {}: use k, m, g, t or p (with kb_base deciding 1000 or 1024)",
                quoted(text),
                quoted(suffix)
            ).into())
        }
    };
    // base^5 is at most 1024^5 = 2^50: no overflow.
    match scale(num, base.pow(pow), false) {
        Ok(bytes) => Ok(bytes),
        Err(Scale::NotNumber) => Err(format!("{} is not a size", quoted(text)).into()),
        Err(Scale::NotWhole) => {
            Err(format!("{} is not a whole number of bytes", quoted(text)).into())
        }
        Err(Scale::TooLarge) => Err(Bad::TooLarge(too_large(text))),
    }
}

/// A size or count past u64, said with the largest there is.
fn too_large(text: &str) -> ValueError {
    ValueError::Said(format!(
        "{} is past the largest value, {} (16 EiB less a byte): give a smaller one",
        quoted(text),
        u64::MAX
    ))
}

/// A size or a percentage (`50%`), as fio's size and offset accept.
pub fn size_or_percent(text: &str, kb: KbBase) -> Result<hiops_job::spec::Amount, ValueError> {
    use hiops_job::spec::Amount;
    match text.trim().strip_suffix('%') {
        Some(p) => {
            let p: f64 = p
                .trim()
                .parse()
                .map_err(|_| ValueError::Said(format!("{} is not a percentage", quoted(text))))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("{}: a percentage is 0 to 100", quoted(text)).into());
            }
            Ok(Amount::Percent(p))
        }
        None => size(text, kb).map(|b| Amount::Bytes(Bytes::new(b))),
    }
}

/// A size or a percentage, or a whole number of them (`3*64g`, `2*25%`):
/// what an offset of `{rank}*SIZE` becomes on each rank.
pub fn scaled_size_or_percent(
    text: &str,
    kb: KbBase,
) -> Result<hiops_job::spec::Amount, ValueError> {
    use hiops_job::spec::Amount;
    let Some((n, unit)) = text.split_once('*') else {
        return size_or_percent(text, kb);
    };
    let n: u64 = n.trim().parse().map_err(|_| {
        format!(
            "{}: before '*' goes a whole number, as in 3*64g",
            quoted(text)
        )
    })?;
    match size_or_percent(unit, kb)? {
        Amount::Bytes(b) => b
            .get()
            .checked_mul(n)
            .map(|b| Amount::Bytes(Bytes::new(b)))
            .ok_or_else(|| too_large(text)),
        Amount::Percent(p) if p * n as f64 <= 100.0 => Ok(Amount::Percent(p * n as f64)),
        Amount::Percent(_) => Err(format!("{} is past 100%: lower the share", quoted(text)).into()),
    }
}

/// A time. `unit_ns` is the option's unit for a bare number (seconds for
/// runtime, microseconds for thinktime).
pub fn time_ns(text: &str, unit_ns: u64) -> Result<u64, ValueError> {
    // Each option's unit is a whole unit of time: 0 would read every bare
    // number as no time at all.
    assert!(unit_ns >= 1, "a time option's unit is at least 1 ns");
    let (num, suffix) = split_number(text);
    let per: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => unit_ns,
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" | "hour" => 3_600_000_000_000,
        "d" | "day" => 86_400_000_000_000,
        other => {
            return Err(format!(
                "{} has an unknown time unit {}: use ns, us, ms, s, m, h or d",
                quoted(text),
                quoted(other)
            )
            .into())
        }
    };
    match scale(num, per, true) {
        Ok(ns) => Ok(ns),
        Err(Scale::TooLarge) => Err(format!(
            "{} is longer than the longest time hiops keeps, {}s (213503 days, u64 nanoseconds): give a shorter one",
            quoted(text),
            MAX_SECONDS
        )
        .into()),
        Err(_) => Err(format!(
            "{} is not a time: write e.g. 10s, 500ms, 2m, 100us",
            quoted(text)
        )
        .into()),
    }
}

/// A boolean; an option given without a value is true.
pub fn boolean(value: Option<&str>) -> Result<bool, ValueError> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(v) => Err(format!("{} is not a boolean: use 1 or 0", quoted(v)).into()),
    }
}

/// A whole number (with fio's size suffixes allowed, as fio's int options do).
pub fn int(text: &str, kb: KbBase) -> Result<u64, ValueError> {
    bytes(text, kb).map_err(|e| match e {
        Bad::TooLarge(e) => e,
        Bad::Other(_) => ValueError::Said(format!("{} is not a whole number", quoted(text))),
    })
}

/// `option`'s percentage, 0..=100 (a `%` after it allowed); the range
/// is [`Percent`]'s.
pub fn percent(option: &'static str, text: &str) -> Result<Percent, ValueError> {
    match text.trim().trim_end_matches('%').parse::<u64>() {
        Ok(p) => Ok(Percent::new(option, p)?),
        _ => Err(format!("{} is not a percentage from 0 to 100", quoted(text)).into()),
    }
}

/// A data pattern as fio's `verify_pattern` and `buffer_pattern` read it
/// (fio's lib/pattern.c): a concatenation of hex runs (`0xdead`, bytes in
/// the order written, an odd digit count padded at the front), decimal
/// numbers in the i32 range (little-endian, as few bytes as the value needs,
/// 0 as one byte), double-quoted strings and a file's bytes ('name').
/// `0xff0x14` is two runs.
pub fn pattern(text: &str) -> Result<Vec<u8>, ValueError> {
    pattern_parts(text, false).map(|(bytes, _)| bytes)
}

/// [`pattern`] with fio's `%o` (verify_pattern's format, lib/pattern.c
/// parse_format): 8 bytes the block's offset goes into; returns the bytes
/// and where each `%o` stands.
pub fn pattern_with_offsets(text: &str) -> Result<(Vec<u8>, Vec<usize>), ValueError> {
    pattern_parts(text, true)
}

fn pattern_parts(text: &str, offsets: bool) -> Result<(Vec<u8>, Vec<usize>), ValueError> {
    let text = text.trim();
    let bad = |why: &str| ValueError::Said(format!("verify_pattern {}: {why}", quoted(text)));
    let mut out = Vec::new();
    let mut at = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let lower = rest.to_ascii_lowercase();
        let used = if let Some(quoted) = rest.strip_prefix('"') {
            let Some(end) = quoted.find('"') else {
                return Err(bad("a string has no closing quote"));
            };
            if end == 0 {
                return Err(bad("an empty string adds nothing"));
            }
            out.extend_from_slice(&quoted.as_bytes()[..end]);
            end + 2
        } else if offsets && rest.starts_with("%o") {
            at.push(out.len());
            out.extend_from_slice(&[0; 8]);
            2
        } else if let Some(quoted) = rest.strip_prefix('\'') {
            let Some(end) = quoted.find('\'') else {
                return Err(bad("a file name has no closing quote"));
            };
            file_contents(&quoted[..end], &mut out).map_err(|why| bad(&why))?;
            end + 2
        } else if rest.starts_with('%') {
            return Err(bad("%o offsets are verify_pattern's only: give bytes as 0x.., numbers, \"strings\" or a 'file'"));
        } else if lower.starts_with("0x") {
            2 + hex_run(&rest[2..], &mut out).map_err(bad)?
        } else {
            decimal(rest, &lower, &mut out).map_err(|why| bad(&why.to_string()))?
        };
        rest = &rest[used..];
    }
    if out.is_empty() {
        return Err(bad("the pattern is empty"));
    }
    Ok((out, at))
}

/// The most bytes a pattern takes from a file (fio's MAX_PATTERN_SIZE
/// since 3.34; 3.33 took 512).
const MAX_PATTERN_FILE: u64 = 128 << 20;

/// A pattern's `'file'`: the file's bytes added to `out` (fio's
/// lib/pattern.c, parse_file: the name as given, from the working
/// directory).
fn file_contents(name: &str, out: &mut Vec<u8>) -> Result<(), String> {
    use std::io::Read;
    let f = std::fs::File::open(name).map_err(|e| {
        format!("cannot read the pattern file '{name}': {e}: give a file that exists")
    })?;
    let before = out.len();
    f.take(MAX_PATTERN_FILE)
        .read_to_end(out)
        .map_err(|e| format!("cannot read the pattern file '{name}': {e}"))?;
    if out.len() == before {
        return Err(format!(
            "the pattern file '{name}' is empty: give a file with the bytes to write"
        ));
    }
    Ok(())
}

/// A pattern's hex run after its `0x`: its bytes added to `out`; returns
/// how many digits it took.
fn hex_run(digits: &str, out: &mut Vec<u8>) -> Result<usize, &'static str> {
    let mut n = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
    if n == 0 {
        return Err("0x without hex digits");
    }
    // `0xff0x14`: the 0 before the next x starts the next run.
    if n > 1 && digits[n..].starts_with(['x', 'X']) && digits.as_bytes()[n - 1] == b'0' {
        n -= 1;
    }
    let mut hex = digits[..n].to_string();
    if hex.len() % 2 == 1 {
        hex.insert(0, '0');
    }
    for pair in hex.as_bytes().chunks(2) {
        let pair = std::str::from_utf8(pair).unwrap();
        out.push(u8::from_str_radix(pair, 16).unwrap());
    }
    Ok(n)
}

/// A pattern's decimal number, stopped before any following 0x run: its
/// bytes (little-endian, as few as the value needs) added to `out`;
/// returns how many characters it took.
fn decimal(rest: &str, lower: &str, out: &mut Vec<u8>) -> Result<usize, ValueError> {
    let limit = lower.find("0x").filter(|&i| i > 0).unwrap_or(rest.len());
    let sign = usize::from(rest.starts_with(['-', '+']));
    let n = sign
        + rest[sign..limit]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
    if n == sign {
        return Err(format!(
            "unexpected {}: give 0xHEX, a decimal number or a \"string\"",
            quoted(&rest[..rest.chars().next().map_or(0, char::len_utf8)])
        )
        .into());
    }
    let value: i64 = rest[..n].parse().map_err(|_| "bad number".to_string())?;
    if value < i32::MIN as i64 || value > i32::MAX as i64 {
        return Err("decimal numbers must fit in 32 bits: write larger values in hex".into());
    }
    let mut v = value as i32 as u32;
    if v == 0 {
        out.push(0);
    }
    while v != 0 {
        out.push(v as u8);
        v >>= 8;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_read_as_fio_reads_them() {
        // Examples from the comment in fio's lib/pattern.c.
        assert_eq!(pattern("\"abcd\""), Ok(b"abcd".to_vec()));
        assert_eq!(pattern("-1024"), Ok(vec![0x00, 0xfc, 0xff, 0xff]));
        assert_eq!(pattern("66"), Ok(vec![0x42]));
        assert_eq!(pattern("0xFF0X1"), Ok(vec![0xff, 0x01]));
        assert_eq!(
            pattern("\"123\"0xFFeeCC"),
            Ok(vec![0x31, 0x32, 0x33, 0xff, 0xee, 0xcc])
        );
        assert_eq!(
            pattern("-100xab\"1\""),
            Ok(vec![0xf6, 0xff, 0xff, 0xff, 0xab, 0x31])
        );
        assert_eq!(pattern("0xdeadbeef"), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(pattern("0x123"), Ok(vec![0x01, 0x23]));
        assert_eq!(pattern("0"), Ok(vec![0]));
        assert!(pattern("%o")
            .unwrap_err()
            .to_string()
            .contains("verify_pattern's only"));
        // lib/pattern.c's example #7, and %o alone.
        assert_eq!(
            pattern_with_offsets("-100xab\"1\"%o\"2\""),
            Ok((
                vec![0xf6, 0xff, 0xff, 0xff, 0xab, 0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x32],
                vec![6]
            ))
        );
        assert_eq!(pattern_with_offsets("%o"), Ok((vec![0; 8], vec![0])));
        assert!(pattern("5000000000")
            .unwrap_err()
            .to_string()
            .contains("32 bits"));
        assert!(pattern("\"abc")
            .unwrap_err()
            .to_string()
            .contains("closing quote"));
        assert!(pattern("zz")
            .unwrap_err()
            .to_string()
            .contains("unexpected 'z'"));
    }

    #[test]
    fn a_quoted_name_is_the_files_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.bin");
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&file, &bytes).unwrap();
        let name = file.to_str().unwrap();
        assert_eq!(pattern(&format!("'{name}'")), Ok(bytes.clone()));
        // Beside other parts, in order.
        let mixed = pattern(&format!("0xab'{name}'\"z\"")).unwrap();
        assert_eq!(
            (mixed[0], mixed.len(), mixed[mixed.len() - 1]),
            (0xab, bytes.len() + 2, b'z')
        );
        let missing = pattern("'/nonexistent/p'").unwrap_err().to_string();
        assert!(
            missing.contains("cannot read the pattern file"),
            "{missing}"
        );
        std::fs::write(&file, b"").unwrap();
        assert!(pattern(&format!("'{name}'"))
            .unwrap_err()
            .to_string()
            .contains("empty"));
        assert!(pattern("'p.bin")
            .unwrap_err()
            .to_string()
            .contains("closing quote"));
    }

    #[test]
    fn sizes_follow_kb_base_as_fio_does() {
        let k = KbBase::default();
        assert_eq!(size("4k", k), Ok(4096));
        assert_eq!(size("4KB", k), Ok(4096));
        assert_eq!(size("4KiB", k), Ok(4000), "fio's compatibility mode");
        assert_eq!(size("1m", k), Ok(1 << 20));
        assert_eq!(size("0x200", k), Ok(512));
        // "Mi" without the B is fio's "M" (checked on fio 3.33).
        assert_eq!(size("1Mi", k), Ok(1 << 20));
        assert_eq!(size("8ki", k), Ok(8192));
        let si = KbBase(1000);
        assert_eq!(size("4k", si), Ok(4000));
        assert_eq!(size("4KiB", si), Ok(4096));
        assert_eq!(size("1GiB", si), Ok(1 << 30));
        assert!(size("4q", k)
            .unwrap_err()
            .to_string()
            .contains("unknown size suffix"));
        assert!(size("0.3", k).is_err());
    }

    #[test]
    fn times_take_the_option_unit_for_bare_numbers() {
        assert_eq!(time_ns("10", 1_000_000_000), Ok(10_000_000_000));
        assert_eq!(time_ns("10", 1_000), Ok(10_000));
        assert_eq!(time_ns("2m", 1), Ok(120_000_000_000));
        assert_eq!(time_ns("1h", 1), Ok(3_600_000_000_000));
        assert_eq!(time_ns("250ms", 1), Ok(250_000_000));
        assert!(time_ns("5y", 1).is_err());
    }

    #[test]
    fn values_past_u64_are_refused_with_the_largest() {
        let k = KbBase::default();
        assert_eq!(size("18446744073709551615", k), Ok(u64::MAX));
        assert_eq!(size("0xffffffffffffffff", k), Ok(u64::MAX));
        assert_eq!(size("16383p", k), Ok(16383 << 50));
        for big in [
            "18446744073709551616",
            "16384p",
            "0x10000000000000000",
            "99999999999999999999",
        ] {
            let e = size(big, k).unwrap_err().to_string();
            assert!(
                e.contains("largest value, 18446744073709551615"),
                "{big}: {e}"
            );
        }
        assert_eq!(int("4294967296", k), Ok(1 << 32));
        // A time's limit is u64 nanoseconds: 18446744073 s, about 584 years.
        assert_eq!(
            time_ns("18446744073", 1_000_000_000),
            Ok(18_446_744_073_000_000_000)
        );
        assert_eq!(time_ns("213503d", 1), Ok(213_503 * 86_400_000_000_000));
        for long in ["214000d", "18446744074", "99999999999999999999"] {
            let e = time_ns(long, 1_000_000_000).unwrap_err().to_string();
            assert!(
                e.contains("longest time hiops keeps, 18446744073s"),
                "{long}: {e}"
            );
        }
        // A bare number in microseconds goes further before it is refused.
        assert_eq!(
            time_ns("18446744073709551", 1_000),
            Ok(18_446_744_073_709_551_000)
        );
        assert!(time_ns("18446744073709552", 1_000).is_err());
    }

    #[test]
    fn booleans_and_percentages() {
        assert_eq!(boolean(None), Ok(true));
        assert_eq!(boolean(Some("0")), Ok(false));
        assert!(boolean(Some("maybe")).is_err());
        assert_eq!(percent("rwmixread", "70%").map(Percent::get), Ok(70));
        let over = percent("rwmixread", "170").unwrap_err();
        assert_eq!(over.to_string(), "give a percentage from 0 to 100");
        let range = std::error::Error::source(&over)
            .and_then(|s| s.downcast_ref::<hiops_job::RangeError>());
        assert_eq!(range.map(|r| r.option), Some("rwmixread"));
        assert!(percent("rwmixread", "most").is_err());
        assert_eq!(
            size_or_percent("25%", KbBase::default()),
            Ok(hiops_job::spec::Amount::Percent(25.0))
        );
    }

    #[test]
    fn offsets_may_be_a_whole_number_of_sizes_or_shares() {
        use hiops_job::spec::Amount;
        let kb = KbBase::default();
        assert_eq!(
            scaled_size_or_percent("3*64m", kb),
            Ok(Amount::Bytes(Bytes::new(3 << 26)))
        );
        assert_eq!(
            scaled_size_or_percent("0*1g", kb),
            Ok(Amount::Bytes(Bytes::ZERO))
        );
        assert_eq!(
            scaled_size_or_percent("2*25%", kb),
            Ok(Amount::Percent(50.0))
        );
        assert_eq!(
            scaled_size_or_percent("4k", kb),
            Ok(Amount::Bytes(Bytes::new(4096)))
        );
        assert!(scaled_size_or_percent("5*25%", kb).is_err());
        assert!(scaled_size_or_percent("x*4k", kb).is_err());
    }
}
