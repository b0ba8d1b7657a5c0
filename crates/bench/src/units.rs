//! Sizes and durations as fio writes them: `4k`, `1M`, `2GiB`, `512`, `10s`,
//! `500ms`, `2m`, `100us`. Sizes use 1024 per step (fio's default kb_base).

/// Splits `12.5ms` into ("12.5", "ms").
pub fn number_and_suffix(text: &str) -> (&str, &str) {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(split)
}

/// Parses a byte count: a number with an optional k/m/g/t/p suffix (any case,
/// with or without `i`/`b`: `4k`, `4K`, `4KiB`, `4kb`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (num, suffix) = number_and_suffix(text);
    if num.is_empty() {
        return Err(format!(
            "'{text}' is not a size: write a number with an optional k/m/g/t suffix, like 4k or 1g"
        ));
    }
    let value: f64 = num.parse().map_err(|_| format!("'{text}' is not a size"))?;
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        other => {
            return Err(format!(
                "'{text}' has an unknown size suffix '{other}': use k, m, g, t or p"
            ))
        }
    };
    let bytes = value * mult as f64;
    if bytes.fract() != 0.0 || !(0.0..1.8e19).contains(&bytes) {
        return Err(format!("'{text}' is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Parses a duration; a bare number is seconds (fio's default unit for
/// runtime and ramp_time).
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let (num, suffix) = number_and_suffix(text);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration: write e.g. 10s, 500ms, 2m"))?;
    let ns_per: f64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1e9,
        "ms" | "msec" => 1e6,
        "us" | "usec" => 1e3,
        "ns" | "nsec" => 1.0,
        "m" | "min" => 60e9,
        "h" | "hr" => 3600e9,
        "d" => 86400e9,
        other => {
            return Err(format!(
                "'{text}' has an unknown time unit '{other}': use ns, us, ms, s, m, h or d"
            ))
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
            .contains("unknown size suffix"));
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").is_err());
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
