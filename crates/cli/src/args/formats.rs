//! fio's output formats: `--output-format=LIST`, `--minimal`,
//! `--append-terse` (init.c `parse_output_format`).

use super::{usage, Format, Invocation};
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
                    return usage(format!(
                        "--output-format={list}: '{other}' is not a format; use normal, terse, json or json+, or several joined by commas"
                    ))
                }
            }
        }
        Ok(())
    }

    pub fn settle(self, inv: &mut Invocation) {
        inv.format = match (self.json_plus, self.json) {
            (true, _) => Format::JsonPlus,
            (false, true) => Format::Json,
            _ => Format::Normal,
        };
        inv.normal_too = inv.format != Format::Normal && self.normal;
        if self.terse {
            let instead = match inv.format {
                Format::Normal => "the normal text is printed instead",
                _ => "the JSON is printed",
            };
            inv.no_effect.push(format!(
                "terse output (--output-format=terse, --minimal, --append-terse): hiops does not write fio's terse format; {instead}"
            ));
        }
    }
}
