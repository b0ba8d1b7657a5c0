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
}

/// For callers whose errors are still messages.
impl From<UnitError> for String {
    fn from(e: UnitError) -> String {
        e.to_string()
    }
}

/// Parses a byte count: a number with an optional k/m/g/t/p suffix (any case,
/// with or without `i`/`b`: `4k`, `4K`, `4KiB`, `4kb`).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let (num, suffix) = number_and_suffix(text);
    if num.is_empty() {
        return Err(UnitError::NoSize(text.into()));
    }
    let value: f64 = num.parse().map_err(|_| UnitError::BadSize(text.into()))?;
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
    let bytes = value * mult as f64;
    if bytes.fract() != 0.0 || !(0.0..1.8e19).contains(&bytes) {
        return Err(UnitError::NotWhole(text.into()));
    }
    Ok(bytes as u64)
}

/// Parses a duration; a bare number is seconds (fio's default unit for
/// runtime and ramp_time).
pub fn parse_duration_ns(text: &str) -> Result<u64, UnitError> {
    let (num, suffix) = number_and_suffix(text);
    let value: f64 = num
        .parse()
        .map_err(|_| UnitError::NoDuration(text.into()))?;
    let ns_per: f64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1e9,
        "ms" | "msec" => 1e6,
        "us" | "usec" => 1e3,
        "ns" | "nsec" => 1.0,
        "m" | "min" => 60e9,
        "h" | "hr" => 3600e9,
        "d" => 86400e9,
        other => {
            return Err(UnitError::TimeUnit {
                text: text.into(),
                unit: other.into(),
            })
        }
    };
    Ok((value * ns_per).round() as u64)
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
}
