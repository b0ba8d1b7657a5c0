//! Options a plan does not honour: each refused with its file and line,
//! or skipped under `--ignore-unsupported` (never a misspelt name).

use crate::error::{FioError, OptionError, Refusal, MAX_REFUSALS};
use crate::jobfile::RawOption;
use crate::options::{is_fio_default, lookup, suggest, Draft, Lookup};
use crate::value::shown;

/// The refusals of a plan in the order written, each line once: a
/// `[global]` option applies to every job after it but is one line of the
/// file, so it is reported once.
#[derive(Default)]
pub(super) struct Refusals(Vec<Refusal>, std::collections::HashSet<Refusal>);

impl Refusals {
    pub(super) fn add(&mut self, r: Refusal) -> Result<(), FioError> {
        if self.1.insert(r.clone()) {
            self.0.push(r);
        }
        if self.0.len() > MAX_REFUSALS {
            return Err(FioError::TooManyRefused {
                refused: std::mem::take(&mut self.0),
            });
        }
        Ok(())
    }

    /// The lines of the options skipped, or the error that stops the plan.
    pub(super) fn settle(self, ignore_unsupported: bool) -> Result<Vec<String>, FioError> {
        let typos = self.0.iter().any(Refusal::is_typo);
        let unsupported = self.0.iter().any(|r| !r.is_typo());
        if !typos && (ignore_unsupported || !unsupported) {
            return Ok(self.0.iter().map(Refusal::to_string).collect());
        }
        let fix = match (typos, unsupported && !ignore_unsupported) {
            (true, false) => "fix the misspelt names (hiops run --help lists every option)",
            (true, true) => "fix the misspelt names, and drop the other options or add --ignore-unsupported to run without them (it never skips a misspelt name)",
            _ => "drop these options or add --ignore-unsupported to run without them",
        };
        let refused = self
            .0
            .into_iter()
            .filter(|r| !ignore_unsupported || r.is_typo())
            .collect();
        Err(FioError::Refused { refused, fix })
    }
}

/// Applies one option to the draft; an option the plan cannot honour comes
/// back as a refusal (a bad value of a known option is an error at once).
pub(super) fn apply(draft: &mut Draft, o: &RawOption) -> Result<Option<Refusal>, FioError> {
    let (origin, key) = (o.origin.clone(), o.key.clone());
    let refusal = match lookup(&o.key) {
        Lookup::Known(def) => return apply_known(draft, o, def.flag, def.apply).map(|()| None),
        // fio's default value: what hiops does, so nothing to refuse.
        Lookup::NotImplemented(_) if is_fio_default(&o.key, o.value.as_deref()) => return Ok(None),
        Lookup::NotImplemented(why) => Refusal::NotImplemented { origin, key, why },
        Lookup::OtherEngine(engines) => Refusal::OtherEngine {
            origin,
            key,
            engines,
        },
        Lookup::Unknown => Refusal::Unknown {
            near: suggest(&o.key),
            origin,
            key,
        },
    };
    Ok(Some(refusal))
}

/// A known option's value applied to the draft; its error names the option
/// as written: `--key` on the command line, `FILE:LINE: key` in a file.
fn apply_known(
    draft: &mut Draft,
    o: &RawOption,
    flag: bool,
    apply: crate::options::Apply,
) -> Result<(), FioError> {
    let in_file = o.origin.file.is_some();
    let key = match in_file {
        true => shown(&o.key),
        false => format!("--{}", shown(&o.key)),
    };
    let error = if !flag && o.value.as_deref().is_none_or(str::is_empty) {
        FioError::NeedsValue { key }
    } else {
        match apply(draft, o.value.as_deref()) {
            Ok(()) => return Ok(()),
            Err(expected) => FioError::Option(OptionError {
                key,
                value: o.value.clone(),
                expected,
            }),
        }
    };
    Err(match in_file {
        true => error.at(&o.origin),
        false => error,
    })
}
