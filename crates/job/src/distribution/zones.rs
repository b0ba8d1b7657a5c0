//! fio's zoned distributions as fio reads them (HOWTO `random_distribution`;
//! options.c, split_parse_ddir and zone_split_ddir): `zoned:A/R:A/R...`
//! (access % / range %) and `zoned_abs:A/SIZE:...`.
//!
//! - A zone without a range (`20/`, `20/0` or `20`) shares out what the
//!   others leave of 100%, in whole percents (fio's integer division).
//! - Ranges may add up to less than 100% (the rest of the file is not
//!   touched); a range over 100% counts as 100%. Accesses must add up to
//!   exactly 100%.
//! - An empty entry ends the list (`zoned:60/10:40/90:` is two zones).
//! - `LIST,LIST` gives reads and writes their own zones (a third, trim's,
//!   is accepted and unused); an empty side is uniform.
//! - No zone at all (`zoned:`, `zoned:,`) is refused: fio runs such a job
//!   uniformly, which is never what the option asked for.
//! - At most 256 zones a list (fio's ZONESPLIT_MAX, its HOWTO's "up to 256
//!   separate zones").
//! - A `zoned_abs` zone has a size above 0, and the zones must fit the range
//!   the job works on ([`fits`]): fio stops the job at run time with
//!   "zoned_abs sizes exceed file size" (io_u.c); hiops refuses it before.

use super::kinds::Distribution;
use crate::units::{format_bytes, shown};

/// A zone list fio would not take, or zones that do not fit the range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ZoneError {
    #[error("{kind}:{}: give at most READ,WRITE,TRIM lists", shown(.arg))]
    Sides { kind: &'static str, arg: String },
    #[error("no zone is given: give ACCESS%/{} pairs, as in {}:{}, or use random_distribution=random", if *.absolute { "SIZE" } else { "RANGE%" }, if *.absolute { "zoned_abs" } else { "zoned" }, if *.absolute { "60/1g:40/3g" } else { "60/10:40/90" })]
    NoZone { absolute: bool },
    #[error("zones '{}': more than {MAX_ZONES} zones (fio's limit): merge some", shown(.0))]
    TooMany(String),
    #[error("zone '{}': the access % before '/' is not a number: write ACCESS%/RANGE, as in 60/10", shown(.0))]
    Access(String),
    #[error("zone '{}': the access % must be 0 to 100", shown(.0))]
    AccessRange(String),
    #[error("zones '{}': give ACCESS/RANGE pairs, as in 60/10:40/90", shown(.0))]
    NoPairs(String),
    #[error("zones '{}': the access percentages add up to {sum}, not 100: change them so they add up to 100", shown(.list))]
    AccessSum { list: String, sum: f64 },
    #[error("zone '{access}/{}': the range % is not a number", shown(.range))]
    Range { access: f64, range: String },
    #[error("zones '{}': the ranges add up to {given}%, more than 100: shrink them", shown(.list))]
    RangeSum { list: String, given: f64 },
    #[error("zone '{0}/': zoned_abs needs each zone's size, as in 60/1g")]
    NoSize(f64),
    #[error("zone '{access}/{}': {why}", shown(.size))]
    Size {
        access: f64,
        size: String,
        why: String,
    },
    #[error("zone '{access}/{}': a zoned_abs zone of 0 bytes holds no block: give its size, as in {access}/1g", shown(.size))]
    ZeroSize { access: f64, size: String },
    #[error("random_distribution=zoned_abs: the zones add up to {total} bytes ({}), past the end of the {len} bytes ({}) the job works on: shrink the zones or raise size", format_bytes(*.total as f64), format_bytes(*.len as f64))]
    PastEnd { total: u64, len: u64 },
}

/// Parses what follows `zoned:` (or `zoned_abs:` when `absolute`).
pub(crate) fn parse<E: std::fmt::Display>(
    arg: &str,
    absolute: bool,
    size: &dyn Fn(&str) -> Result<u64, E>,
) -> Result<Distribution, ZoneError> {
    let sides: Vec<&str> = arg.split(',').collect();
    let kind = if absolute { "zoned_abs" } else { "zoned" };
    if sides.len() > 3 {
        return Err(ZoneError::Sides {
            kind,
            arg: arg.into(),
        });
    }
    // A list ends at its first empty entry (fio's split_parse_ddir).
    let empty = |list: &str| list.split(':').next().is_none_or(|z| z.trim().is_empty());
    if sides.iter().all(|s| empty(s)) {
        return Err(ZoneError::NoZone { absolute });
    }
    let one = |list: &str| -> Result<Distribution, ZoneError> {
        if empty(list) {
            return Ok(Distribution::Uniform);
        }
        if absolute {
            absolute_zones(list, size)
        } else {
            shares(list)
        }
    };
    if sides.len() == 1 {
        return one(sides[0]);
    }
    let (read, write) = (one(sides[0])?, one(sides[1])?);
    if read == write {
        return Ok(read);
    }
    Ok(Distribution::PerDirection(Box::new([read, write])))
}

/// fio's most zones a list (thread_options.h ZONESPLIT_MAX).
const MAX_ZONES: usize = 256;

/// The entries of a list, up to the first empty one: (access, range text).
fn entries(list: &str) -> Result<Vec<(f64, &str)>, ZoneError> {
    let mut out = Vec::new();
    for z in list.split(':') {
        if z.trim().is_empty() {
            break;
        }
        if out.len() == MAX_ZONES {
            return Err(ZoneError::TooMany(list.into()));
        }
        let (a, r) = z.split_once('/').unwrap_or((z, ""));
        let a: f64 = a.trim().parse().map_err(|_| ZoneError::Access(z.into()))?;
        if !(0.0..=100.0).contains(&a) {
            return Err(ZoneError::AccessRange(z.into()));
        }
        out.push((a, r.trim()));
    }
    if out.is_empty() {
        return Err(ZoneError::NoPairs(list.into()));
    }
    let sum: f64 = out.iter().map(|z| z.0).sum();
    if (sum - 100.0).abs() > 1e-6 {
        return Err(ZoneError::AccessSum {
            list: list.into(),
            sum,
        });
    }
    Ok(out)
}

fn shares(list: &str) -> Result<Distribution, ZoneError> {
    let mut zones = Vec::new();
    let mut missing = Vec::new();
    for (a, r) in entries(list)? {
        let r = match r {
            "" => None,
            r => {
                let p: f64 = r.parse().map_err(|_| ZoneError::Range {
                    access: a,
                    range: r.into(),
                })?;
                (p > 0.0).then_some(p.min(100.0))
            }
        };
        if r.is_none() {
            missing.push(zones.len());
        }
        zones.push((a, r.unwrap_or(0.0)));
    }
    let given: f64 = zones.iter().map(|z| z.1).sum();
    if given > 100.0 + 1e-6 {
        return Err(ZoneError::RangeSum {
            list: list.into(),
            given,
        });
    }
    if !missing.is_empty() {
        let each = ((100.0 - given) / missing.len() as f64).floor();
        missing.iter().for_each(|&i| zones[i].1 = each);
    }
    let ranges: f64 = zones.iter().map(|z| z.1).sum();
    assert!(
        ranges <= 100.0 + 1e-6,
        "zones given {given}% and the rest filled in cover {ranges}% of the range"
    );
    Ok(Distribution::Zoned(zones))
}

fn absolute_zones<E: std::fmt::Display>(
    list: &str,
    size: &dyn Fn(&str) -> Result<u64, E>,
) -> Result<Distribution, ZoneError> {
    let mut zones = Vec::new();
    for (a, r) in entries(list)? {
        if r.is_empty() {
            return Err(ZoneError::NoSize(a));
        }
        let bytes = size(r).map_err(|e| ZoneError::Size {
            access: a,
            size: r.into(),
            why: e.to_string(),
        })?;
        if bytes == 0 {
            return Err(ZoneError::ZeroSize {
                access: a,
                size: r.into(),
            });
        }
        zones.push((a, bytes));
    }
    assert!(!zones.is_empty(), "entries refuses a list without pairs");
    Ok(Distribution::ZonedAbs(zones))
}

/// Whether `zoned_abs` zones fit a range of `len` bytes (a job's region in
/// a file): laid end to end they must end within it, as fio's io_u.c
/// requires ("zoned_abs sizes exceed file size"). Other distributions fit
/// any range.
// Until run.rs checks each region with it, only the tests call it.
pub fn fits(dist: &Distribution, len: u64) -> Result<(), ZoneError> {
    match dist {
        Distribution::PerDirection(both) => both.iter().try_for_each(|d| fits(d, len)),
        Distribution::ZonedAbs(zones) => {
            let total = zones.iter().fold(0u64, |sum, z| sum.saturating_add(z.1));
            if total <= len {
                return Ok(());
            }
            Err(ZoneError::PastEnd { total, len })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zoned_abs(arg: &str) -> Result<Distribution, String> {
        parse(arg, true, &crate::units::parse_size).map_err(|e| e.to_string())
    }

    #[test]
    fn zoned_abs_zones_have_sizes_and_must_fit() {
        let d = zoned_abs("50/8m:50/8m").unwrap();
        assert_eq!(fits(&d, 16 << 20), Ok(()));
        let e = fits(&d, (16 << 20) - 1).unwrap_err().to_string();
        assert!(e.contains("16777216 bytes") && e.contains("shrink"), "{e}");
        let rw = zoned_abs("100/4m,100/32m").unwrap();
        assert!(fits(&rw, 16 << 20)
            .unwrap_err()
            .to_string()
            .contains("33554432"));
        let e = zoned_abs("50/0:50/1m").unwrap_err();
        assert!(e.contains("0 bytes"), "{e}");
        assert!(zoned_abs(":").unwrap_err().contains("zoned_abs:60/1g"));
        assert_eq!(fits(&Distribution::Uniform, 0), Ok(()));
    }

    #[test]
    fn long_lists_are_bounded_and_shown_cut() {
        let many = vec!["1/1"; 300].join(":");
        assert!(zoned(&many).unwrap_err().contains("more than 256"));
        let long = format!("{}/10", "9".repeat(100_000));
        let e = zoned(&long).unwrap_err();
        assert!(e.len() < 200 && e.contains("(100003 bytes)"), "{e}");
    }

    fn zoned(arg: &str) -> Result<Distribution, String> {
        parse(arg, false, &crate::units::parse_size).map_err(|e| e.to_string())
    }

    #[test]
    fn fios_zoned_forms() {
        let z = |v: &[(f64, f64)]| Distribution::Zoned(v.to_vec());
        // A trailing zone without a range takes what is left.
        assert_eq!(zoned("80/10:20/"), Ok(z(&[(80.0, 10.0), (20.0, 90.0)])));
        assert_eq!(zoned("80/10:20/0"), Ok(z(&[(80.0, 10.0), (20.0, 90.0)])));
        assert_eq!(
            zoned("50/10:30:20/"),
            Ok(z(&[(50.0, 10.0), (30.0, 45.0), (20.0, 45.0)]))
        );
        // Whole percents, as fio divides: 100 / 3 is 33 each.
        assert_eq!(
            zoned("40:30:30"),
            Ok(z(&[(40.0, 33.0), (30.0, 33.0), (30.0, 33.0)]))
        );
        // Ranges short of 100% leave the rest untouched; an empty entry ends.
        assert_eq!(
            zoned("50/10:50/10::9/9"),
            Ok(z(&[(50.0, 10.0), (50.0, 10.0)]))
        );
        assert!(zoned("60/60:40/60").unwrap_err().contains("more than 100"));
        assert!(zoned("60/10:30/90").unwrap_err().contains("add up to 90"));
        // Reads and writes apart; the same list twice is one distribution.
        let rw = zoned("90/10:10/90,50/50:50/50").unwrap();
        assert_eq!(
            rw,
            Distribution::PerDirection(Box::new([
                z(&[(90.0, 10.0), (10.0, 90.0)]),
                z(&[(50.0, 50.0), (50.0, 50.0)])
            ]))
        );
        assert_eq!(zoned("60/10:40/90,60/10:40/90"), zoned("60/10:40/90"));
        // No zone at all is refused (fio would run uniformly).
        for empty in ["", " ", ",", ",,", ":", " :60/10:40/90"] {
            let e = zoned(empty).unwrap_err();
            assert!(
                e.contains("no zone is given") && e.contains("zoned:60/10"),
                "{e}"
            );
        }
        assert_eq!(
            zoned(",60/10:40/90").unwrap(),
            Distribution::PerDirection(Box::new([
                Distribution::Uniform,
                z(&[(60.0, 10.0), (40.0, 90.0)])
            ]))
        );
    }
}
