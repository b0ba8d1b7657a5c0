//! What a key names: an option of the table, an fio option hiops refuses
//! (and why), another engine's option, or a misspelling of one.

use super::draft::Draft;
use super::table::{OptDef, FIO_DEFAULTS, NOT_IMPLEMENTED, OPTIONS, OTHER_ENGINE_OPTIONS};
use crate::error::{FioError, OptionError};
use crate::value::shown;

/// Parses one option's value into a draft, as `key=value` in a job file or
/// `--key=value` gives it: the entry point for any text (fuzzing too), Ok
/// or an error line, never a panic, and no file touched. Options hiops
/// does not read are errors here (a plan may skip them instead).
pub fn parse_option(draft: &mut Draft, key: &str, value: Option<&str>) -> Result<(), FioError> {
    match lookup(key) {
        Lookup::Known(def) if !def.flag && value.is_none_or(str::is_empty) => {
            Err(FioError::NeedsValue {
                key: shown(key.trim()),
            })
        }
        Lookup::Known(def) => (def.apply)(draft, value).map_err(|expected| {
            FioError::Option(OptionError {
                key: key.trim().to_string(),
                value: value.map(str::to_string),
                expected,
            })
        }),
        Lookup::NotImplemented(_) if is_fio_default(key, value) => Ok(()),
        _ => Err(FioError::NotAnOption {
            key: key.to_string(),
        }),
    }
}

/// Whether `key=value` names an option hiops does not implement at the
/// value fio 3.33 takes by default (or as off), which is what hiops does:
/// the option then changes nothing (`FIO_DEFAULTS`). Numbers compare as
/// numbers (`0x0`, `0k`), booleans as booleans (`off`); a flag given bare
/// is 1.
pub fn is_fio_default(key: &str, value: Option<&str>) -> bool {
    let key = key.trim();
    let Some((_, defaults)) = FIO_DEFAULTS.iter().find(|(n, _)| *n == key) else {
        return false;
    };
    let given = value.map_or("1", str::trim);
    let kb = crate::value::KbBase::default();
    defaults.iter().any(|d| {
        let number = |t| crate::value::int(t, kb).ok();
        match (number(given), number(d)) {
            (Some(a), Some(b)) => a == b,
            _ => {
                given == *d
                    || crate::value::boolean(Some(given))
                        .is_ok_and(|g| crate::value::boolean(Some(d)) == Ok(g))
            }
        }
    })
}

/// What a key names.
pub enum Lookup {
    Known(&'static OptDef),
    /// An fio option hiops does not implement, with why and what to do.
    NotImplemented(&'static str),
    /// An option of fio engines hiops does not have, naming them.
    OtherEngine(&'static str),
    Unknown,
}

pub fn lookup(key: &str) -> Lookup {
    let key = key.trim();
    if let Some(d) = OPTIONS
        .iter()
        .find(|d| d.name == key || d.aliases.contains(&key))
    {
        return Lookup::Known(d);
    }
    if let Some((_, why)) = NOT_IMPLEMENTED.iter().find(|(n, _)| *n == key) {
        return Lookup::NotImplemented(why);
    }
    if let Some((_, engines)) = OTHER_ENGINE_OPTIONS.iter().find(|(n, _)| *n == key) {
        return Lookup::OtherEngine(engines);
    }
    Lookup::Unknown
}

/// Every name a job may use: options, aliases, and the fio options hiops
/// refuses by name.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    OPTIONS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
        .chain(NOT_IMPLEMENTED.iter().map(|(n, _)| *n))
        .chain(OTHER_ENGINE_OPTIONS.iter().map(|(n, _)| *n))
}

/// The known name an unknown key most likely misspells: the closest by
/// Damerau-Levenshtein distance (a swap of two letters is one edit), within
/// about a third of the name's length; `None` when nothing is that close.
pub fn suggest(key: &str) -> Option<&'static str> {
    let key = key.trim();
    // No name is within 3 edits of a longer key; and the distance costs
    // the product of the lengths, for every name.
    if key.len() > 64 {
        return None;
    }
    let lower = key.to_ascii_lowercase();
    let limit = match key.chars().count() {
        0..=3 => 1,
        4..=8 => 2,
        _ => 3,
    };
    all_names()
        .map(|n| (strsim::damerau_levenshtein(&lower, n), n))
        .filter(|&(d, _)| d <= limit)
        .min_by(|a, b| {
            a.0.cmp(&b.0).then(
                strsim::jaro_winkler(&lower, b.1).total_cmp(&strsim::jaro_winkler(&lower, a.1)),
            )
        })
        .map(|(_, n)| n)
}

/// Whether `--key VALUE` takes the next argument as the value.
pub fn takes_value(key: &str) -> bool {
    matches!(lookup(key), Lookup::Known(d) if !d.flag)
}
