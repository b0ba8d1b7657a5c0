//! fio's output formats: `--output-format=LIST`, `--minimal`,
//! `--append-terse` (init.c `parse_output_format`).

use crate::request::Format;
use hiops_bench::BenchError;

/// The formats of --output-format, --minimal and --append-terse together
/// (fio's `output_format` bits; normal unless told otherwise).
pub struct Formats {
    normal: bool,
    pub terse: bool,
    json: bool,
    json_plus: bool,
}

impl Default for Formats {
    fn default() -> Self {
        Formats {
            normal: true,
            terse: false,
            json: false,
            json_plus: false,
        }
    }
}

impl Formats {
    /// fio's `parse_output_format`: a comma-separated list that replaces
    /// the formats before it (`minimal` and `csv` are terse).
    pub fn read(&mut self, list: &str) -> Result<(), BenchError> {
        *self = Formats {
            normal: false,
            ..Formats::default()
        };
        for f in list.split(',') {
            match f.trim() {
                "normal" => self.normal = true,
                "terse" | "minimal" | "csv" => self.terse = true,
                "json" => self.json = true,
                "json+" => self.json_plus = true,
                other => {
                    return Err(BenchError::usage(format!(
                        "--output-format={list}: '{other}' is not a format; use normal, terse, json or json+, or several joined by commas"
                    )))
                }
            }
        }
        Ok(())
    }

    /// What the run prints, from the formats asked for.
    pub fn settle(self) -> Settled {
        let format = match (self.json_plus, self.json) {
            (true, _) => Format::JsonPlus,
            (false, true) => Format::Json,
            _ => Format::Normal,
        };
        let settled = Settled {
            format,
            terse: self.terse,
            // An empty list (`--output-format=`) is refused by fio; here it
            // leaves the normal text.
            normal: self.normal || (!self.terse && format == Format::Normal),
        };
        assert!(
            settled.normal || settled.terse || settled.format != Format::Normal,
            "the settled formats {settled:?} print nothing"
        );
        settled
    }
}

/// The outputs a run prints: the JSON kind (or none: `Normal`), and
/// whether the terse line and the normal text come with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled {
    pub format: Format,
    pub terse: bool,
    pub normal: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(lists: &[&str], append_terse: bool) -> Settled {
        let mut f = Formats::default();
        for l in lists {
            f.read(l).unwrap();
        }
        f.terse |= append_terse;
        f.settle()
    }

    #[test]
    fn lists_combine_and_the_last_replaces_the_ones_before() {
        let inv = settled(&["terse,json+"], false);
        assert_eq!(inv.format, Format::JsonPlus);
        assert!(inv.terse && !inv.normal);
        let inv = settled(&["normal,json"], false);
        assert_eq!(inv.format, Format::Json);
        assert!(inv.normal && !inv.terse);
        // fio's parse_output_format starts over at each --output-format.
        let inv = settled(&["json", "normal"], false);
        assert_eq!(inv.format, Format::Normal);
        assert!(inv.normal);
        // --append-terse adds terse to the normal text.
        let inv = settled(&[], true);
        assert!(inv.normal && inv.terse);
        let inv = settled(&["terse"], false);
        assert!(!inv.normal && inv.terse && inv.format == Format::Normal);
        assert!(Formats::default().read("json,xml").is_err());
    }
}
