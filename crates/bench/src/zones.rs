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

use crate::spec::Distribution;

/// Parses what follows `zoned:` (or `zoned_abs:` when `absolute`).
pub(crate) fn parse(
    arg: &str,
    absolute: bool,
    size: &dyn Fn(&str) -> Result<u64, String>,
) -> Result<Distribution, String> {
    let sides: Vec<&str> = arg.split(',').collect();
    if sides.len() > 3 {
        return Err(format!("zones '{arg}': give at most READ,WRITE,TRIM lists"));
    }
    let one = |list: &str| -> Result<Distribution, String> {
        if list.trim().is_empty() {
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

/// The entries of a list, up to the first empty one: (access, range text).
fn entries(list: &str) -> Result<Vec<(f64, &str)>, String> {
    let mut out = Vec::new();
    for z in list.split(':') {
        if z.trim().is_empty() {
            break;
        }
        let (a, r) = z.split_once('/').unwrap_or((z, ""));
        let a: f64 = a
            .trim()
            .parse()
            .map_err(|_| format!("zone '{z}': the access % before '/' is not a number"))?;
        if !(0.0..=100.0).contains(&a) {
            return Err(format!("zone '{z}': the access % must be 0 to 100"));
        }
        out.push((a, r.trim()));
    }
    if out.is_empty() {
        return Err(format!(
            "zones '{list}': give ACCESS/RANGE pairs, as in 60/10:40/90"
        ));
    }
    let sum: f64 = out.iter().map(|z| z.0).sum();
    if (sum - 100.0).abs() > 1e-6 {
        return Err(format!(
            "zones '{list}': the access percentages add up to {sum}, not 100"
        ));
    }
    Ok(out)
}

fn shares(list: &str) -> Result<Distribution, String> {
    let mut zones = Vec::new();
    let mut missing = Vec::new();
    for (a, r) in entries(list)? {
        let r = match r {
            "" => None,
            r => {
                let p: f64 = r
                    .parse()
                    .map_err(|_| format!("zone '{a}/{r}': the range % is not a number"))?;
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
        return Err(format!(
            "zones '{list}': the ranges add up to {given}%, more than 100"
        ));
    }
    if !missing.is_empty() {
        let each = ((100.0 - given) / missing.len() as f64).floor();
        missing.iter().for_each(|&i| zones[i].1 = each);
    }
    Ok(Distribution::Zoned(zones))
}

fn absolute_zones(
    list: &str,
    size: &dyn Fn(&str) -> Result<u64, String>,
) -> Result<Distribution, String> {
    let mut zones = Vec::new();
    for (a, r) in entries(list)? {
        if r.is_empty() {
            return Err(format!(
                "zone '{a}/': zoned_abs needs each zone's size, as in 60/1g"
            ));
        }
        zones.push((a, size(r).map_err(|e| format!("zone '{a}/{r}': {e}"))?));
    }
    Ok(Distribution::ZonedAbs(zones))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zoned(arg: &str) -> Result<Distribution, String> {
        parse(arg, false, &crate::units::parse_size)
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
        assert_eq!(
            zoned(",60/10:40/90").unwrap(),
            Distribution::PerDirection(Box::new([
                Distribution::Uniform,
                z(&[(60.0, 10.0), (40.0, 90.0)])
            ]))
        );
    }
}
