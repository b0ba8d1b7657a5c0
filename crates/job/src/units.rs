//! Sizes and durations as fio writes them: `4k`, `1M`, `2GiB`, `512`, `10s`,
//! `500ms`, `2m`, `100us`. Sizes use 1024 per step (fio's default kb_base).

/// The most characters of a value a message shows.
pub const SHOWN_CHARS: usize = 64;

/// A value the user gave as a message shows it: whole when short, else its
/// first [`SHOWN_CHARS`] characters and its length, so an error stays one
/// readable line whatever was given; control characters are escaped, so a
/// message cannot move the terminal about.
pub fn shown(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    for c in chars.by_ref().take(SHOWN_CHARS) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if chars.next().is_some() {
        out.push_str(&format!("... ({} bytes)", text.len()));
    }
    out
}

/// [`shown`] in quotes, as messages quote a value: `'4q'`.
pub fn quoted(text: &str) -> String {
    format!("'{}'", shown(text))
}

/// Splits `12.5ms` into ("12.5", "ms").
pub fn number_and_suffix(text: &str) -> (&str, &str) {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(split)
}

/// A size or duration fio would not take, said with the value as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("{} is not a size: write a number with an optional k/m/g/t suffix, like 4k or 1g", quoted(.0))]
    NoSize(String),
    #[error("{} is not a size", quoted(.0))]
    BadSize(String),
    #[error("{} has an unknown size suffix {}: use k, m, g, t or p", quoted(.text), quoted(.suffix))]
    SizeSuffix { text: String, suffix: String },
    #[error("{} is not a whole number of bytes", quoted(.0))]
    NotWhole(String),
    #[error("{} is not a duration: write e.g. 10s, 500ms, 2m", quoted(.0))]
    NoDuration(String),
    #[error("{} has an unknown time unit {}: use ns, us, ms, s, m, h or d", quoted(.text), quoted(.unit))]
    TimeUnit { text: String, unit: String },
    #[error("{} is past the largest size, {} bytes (16 EiB less a byte): give a smaller one", quoted(.0), u64::MAX)]
    SizeTooLarge(String),
    #[error("{} is longer than the longest time hiops keeps, {}s (213503 days, u64 nanoseconds): give a shorter one", quoted(.0), MAX_SECONDS)]
    TooLong(String),
}

/// Parses a byte count: a number with an optional k/m/g/t/p suffix (any case,
/// with or without `i`/`b`: `4k`, `4K`, `4KiB`, `4kb`). Exact: a fraction
/// must come out a whole number of bytes, and a count past u64 is refused.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let (num, suffix) = number_and_suffix(text);
    if num.is_empty() {
        return Err(UnitError::NoSize(text.into()));
    }
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        other => {
            return Err(UnitError::SizeSuffix {
                text: text.into(),
                suffix: other.into(),
            })
        }
    };
    scale(num, mult, false).map_err(|e| match e {
        Scale::NotNumber => UnitError::BadSize(text.into()),
        Scale::NotWhole => UnitError::NotWhole(text.into()),
        Scale::TooLarge => UnitError::SizeTooLarge(text.into()),
    })
}

/// Parses a duration; a bare number is seconds (fio's default unit for
/// runtime and ramp_time). Rounded to the nanosecond; past u64 nanoseconds
/// (about 584 years) it is refused.
pub fn parse_duration_ns(text: &str) -> Result<u64, UnitError> {
    let (num, suffix) = number_and_suffix(text);
    let ns_per: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1_000_000_000,
        "ms" | "msec" => 1_000_000,
        "us" | "usec" => 1_000,
        "ns" | "nsec" => 1,
        "m" | "min" => 60_000_000_000,
        "h" | "hr" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        other => {
            return Err(UnitError::TimeUnit {
                text: text.into(),
                unit: other.into(),
            })
        }
    };
    scale(num, ns_per, true).map_err(|e| match e {
        Scale::NotNumber | Scale::NotWhole => UnitError::NoDuration(text.into()),
        Scale::TooLarge => UnitError::TooLong(text.into()),
    })
}

/// The longest time hiops keeps, in whole seconds: u64 nanoseconds.
pub const MAX_SECONDS: u64 = u64::MAX / 1_000_000_000;

/// Why a number times its unit is no u64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Not digits with an optional `.fraction`.
    NotNumber,
    /// A fraction that leaves part of a unit (only when not rounding).
    NotWhole,
    /// Past u64::MAX.
    TooLarge,
}

/// `num` (digits with an optional `.fraction`) times `mult`, computed
/// exactly, whatever the number of digits: past u64::MAX is `TooLarge`; a
/// fraction of the result is rounded to the nearest when `round`, else
/// `NotWhole`.
pub fn scale(num: &str, mult: u64, round: bool) -> Result<u64, Scale> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err(Scale::NotNumber);
    }
    let mult = u128::from(mult);
    let mut whole: u128 = 0;
    for d in int.bytes() {
        whole = whole
            .checked_mul(10)
            .and_then(|w| w.checked_add(u128::from(d - b'0')))
            .ok_or(Scale::TooLarge)?;
    }
    let (part, half_or_more, exact) = fraction_times(frac, mult);
    if !exact && !round {
        return Err(Scale::NotWhole);
    }
    let total = whole
        .checked_mul(mult)
        .and_then(|w| w.checked_add(part + u128::from(round && half_or_more)))
        .ok_or(Scale::TooLarge)?;
    u64::try_from(total).map_err(|_| Scale::TooLarge)
}

/// `0.frac` times `mult`, by long division from the last digit: the whole
/// part, whether the rest is at least one half, and whether it is zero.
fn fraction_times(frac: &str, mult: u128) -> (u128, bool, bool) {
    // The result so far is `whole + 0.lead tail...`.
    let (mut whole, mut lead, mut tail) = (0u128, 0u128, false);
    for d in frac.bytes().rev() {
        let t = u128::from(d - b'0') * mult + whole;
        tail |= lead != 0;
        lead = t % 10;
        whole = t / 10;
    }
    (whole, lead >= 5, lead == 0 && !tail)
}

/// Human-readable bytes in fio's style (KiB, MiB, ...).
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0}{}", UNITS[u])
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_fio() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("4x")
            .unwrap_err()
            .to_string()
            .contains("unknown size suffix"));
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").is_err());
    }

    #[test]
    fn long_values_are_shown_cut_and_control_characters_escaped() {
        assert_eq!(shown("4k"), "4k");
        assert_eq!(quoted("4q"), "'4q'");
        let long = "x".repeat(120_000);
        let s = shown(&long);
        assert_eq!(s, format!("{}... (120000 bytes)", "x".repeat(64)));
        // Cut at a character, never inside one.
        assert_eq!(
            shown(&"é".repeat(65)),
            format!("{}... (130 bytes)", "é".repeat(64))
        );
        assert_eq!(shown("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(shown("a\u{1b}b\n"), "a\\u{1b}b\\n");
        let e = parse_size(&long).unwrap_err().to_string();
        assert!(e.len() < 200 && e.contains("(120000 bytes)"), "{e}");
    }

    #[test]
    fn durations_parse_with_seconds_as_default() {
        assert_eq!(parse_duration_ns("10"), Ok(10_000_000_000));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration_ns("100us"), Ok(100_000));
        assert!(parse_duration_ns("10y").is_err());
    }

    #[test]
    fn numbers_scale_exactly_and_refuse_past_u64() {
        assert_eq!(scale("18446744073709551615", 1, false), Ok(u64::MAX));
        assert_eq!(
            scale("18446744073709551616", 1, false),
            Err(Scale::TooLarge)
        );
        assert_eq!(
            scale("99999999999999999999999999999999999999999999", 1, false),
            Err(Scale::TooLarge)
        );
        assert_eq!(scale("16383.999999999999999", 1 << 50, true), Ok(u64::MAX));
        assert_eq!(scale("16384", 1 << 50, false), Err(Scale::TooLarge));
        // 2^-20 MiB is one byte: 20 digits after the point, exact.
        assert_eq!(scale("0.00000095367431640625", 1 << 20, false), Ok(1));
        assert_eq!(scale("0.3", 1, false), Err(Scale::NotWhole));
        assert_eq!(scale("1.5", 1 << 30, false), Ok(3 << 29));
        assert_eq!(
            scale("0.0000000015", 1_000_000_000, true),
            Ok(2),
            "half rounds up"
        );
        assert_eq!(scale("0.0000000014999", 1_000_000_000, true), Ok(1));
        assert_eq!(scale(".5", 2, false), Ok(1));
        assert_eq!(scale(".", 2, false), Err(Scale::NotNumber));
        assert_eq!(scale("1.2.3", 2, false), Err(Scale::NotNumber));
    }

    #[test]
    fn sizes_and_durations_refuse_what_u64_cannot_hold() {
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        let e = parse_size("18446744073709551616").unwrap_err().to_string();
        assert!(
            e.contains("past the largest size, 18446744073709551615 bytes"),
            "{e}"
        );
        assert_eq!(parse_size("16383p"), Ok(16383 << 50));
        assert!(matches!(
            parse_size("16384p"),
            Err(UnitError::SizeTooLarge(_))
        ));
        // u64 nanoseconds: 18446744073 s fit, the next second does not.
        assert_eq!(
            parse_duration_ns("18446744073"),
            Ok(18_446_744_073_000_000_000)
        );
        assert_eq!(
            parse_duration_ns("213503d"),
            Ok(213_503 * 86_400 * 1_000_000_000)
        );
        for long in ["18446744074", "214000d", "99999999999999999999", "5124096h"] {
            let e = parse_duration_ns(long).unwrap_err().to_string();
            assert!(
                e.contains("longest time hiops keeps, 18446744073s"),
                "{long}: {e}"
            );
        }
        assert_eq!(parse_duration_ns("18446744073709551615ns"), Ok(u64::MAX));
    }
}
