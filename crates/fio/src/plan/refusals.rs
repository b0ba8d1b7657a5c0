//! Options a plan does not honour: each refused with its file and line,
//! or skipped under `--ignore-unsupported` (never a misspelt name).
use crate::jobfile::RawOption;
use crate::options::{lookup, Draft, Lookup};
use crate::value::shown;

/// An option the plan does not honour, as one line for the user.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Refusal {
    /// An fio option hiops does not implement (or a name nobody has):
    /// `--ignore-unsupported` runs without it.
    Unsupported(String),
    /// A name close to a known one: a typo, which is never skipped.
    Misspelt(String),
}

/// The refusals of a plan in the order written, each line once: a
/// `[global]` option applies to every job after it but is one line of the
/// file, so it is reported once.
#[derive(Default)]
pub(super) struct Refusals(Vec<Refusal>, std::collections::HashSet<Refusal>);

/// More refusals than this stop the plan at once, whatever
/// `--ignore-unsupported` says: no fio job file has that many.
const MAX_REFUSALS: usize = 1024;
/// The most refusal lines an error shows.
const SHOWN_REFUSALS: usize = 32;

impl Refusals {
    pub(super) fn add(&mut self, r: Refusal) -> Result<(), String> {
        if self.1.insert(r.clone()) {
            self.0.push(r);
        }
        if self.0.len() > MAX_REFUSALS {
            return Err(format!(
                "{}\nhiops stops before any I/O: more than {MAX_REFUSALS} options it does not read; is this an fio job file?",
                self.lines(self.0.iter())
            ));
        }
        Ok(())
    }

    /// The first refusals' lines, and how many more there are.
    fn lines<'a>(&self, refusals: impl Iterator<Item = &'a Refusal>) -> String {
        let all: Vec<&str> = refusals
            .map(|r| match r {
                Refusal::Unsupported(l) | Refusal::Misspelt(l) => l.as_str(),
            })
            .collect();
        let mut out = all[..all.len().min(SHOWN_REFUSALS)].join("\n");
        if all.len() > SHOWN_REFUSALS {
            out.push_str(&format!("\n... and {} more", all.len() - SHOWN_REFUSALS));
        }
        out
    }

    /// The lines of the options skipped, or the error that stops the plan.
    pub(super) fn settle(self, ignore_unsupported: bool) -> Result<Vec<String>, String> {
        let is_typo = |r: &Refusal| matches!(r, Refusal::Misspelt(_));
        let text = |r: &Refusal| match r {
            Refusal::Unsupported(l) | Refusal::Misspelt(l) => l.clone(),
        };
        let typos = self.0.iter().any(is_typo);
        let unsupported = self.0.iter().any(|r| !is_typo(r));
        if !typos && (ignore_unsupported || !unsupported) {
            return Ok(self.0.iter().map(text).collect());
        }
        let shown = self.lines(self.0.iter().filter(|r| !ignore_unsupported || is_typo(r)));
        let what = match (typos, unsupported && !ignore_unsupported) {
            (true, false) => "fix the misspelt names (hiops run --help lists every option)",
            (true, true) => "fix the misspelt names, and drop the other options or add --ignore-unsupported to run without them (it never skips a misspelt name)",
            _ => "drop these options or add --ignore-unsupported to run without them",
        };
        Err(format!("{shown}\nhiops stops before any I/O; {what}"))
    }
}

/// Applies one option to the draft; an option the plan cannot honour comes
/// back as a refusal (a bad value of a known option is an error at once).
pub(super) fn apply(draft: &mut Draft, o: &RawOption) -> Result<Option<Refusal>, String> {
    // On the command line the option speaks for itself; in a file, say where.
    let (at, dashes) = match o.origin.file {
        Some(_) => (format!("{}: ", o.origin), ""),
        None => (String::new(), "--"),
    };
    let key = &shown(&o.key);
    let refusal = match lookup(&o.key) {
        Lookup::Known(def) => {
            if !def.flag && o.value.as_deref().is_none_or(str::is_empty) {
                return Err(format!(
                    "{at}{dashes}{key} needs a value: {dashes}{key}=VALUE"
                ));
            }
            (def.apply)(draft, o.value.as_deref()).map_err(|e| {
                crate::value::option_error(&format!("{at}{dashes}{key}"), o.value.as_deref(), &e)
            })?;
            return Ok(None);
        }
        Lookup::NotImplemented(why) => Refusal::Unsupported(format!(
            "{at}option {dashes}{key} is an fio option hiops does not implement: {why}"
        )),
        Lookup::OtherEngine(engines) => Refusal::Unsupported(format!(
            "{at}option {dashes}{key} is for fio's ioengine {engines}, which hiops does not implement; drop it and use one of hiops' engines: {}",
            crate::options::ENGINES
        )),
        Lookup::Unknown => match crate::options::suggest(&o.key) {
            Some(near) => Refusal::Misspelt(format!(
                "{at}unknown option {dashes}{key}: did you mean {dashes}{near}?"
            )),
            None => Refusal::Unsupported(format!(
                "{at}unknown option {dashes}{key}: neither fio 3.33 nor hiops has it; check the spelling (hiops run --help lists every option)"
            )),
        },
    };
    Ok(Some(refusal))
}
