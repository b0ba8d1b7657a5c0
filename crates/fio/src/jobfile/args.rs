//! fio's command-line job form, read into the sections a job file makes.

use super::expand::{expand, Room};
use super::limits::MAX_SECTIONS;
use super::section::{RawOption, Section};
use crate::error::FioError;
use crate::origin::Origin;
use crate::value::{quoted, shown};

/// fio's command-line job form: options before the first `--name` are global;
/// each `--name` starts a job. `takes_value(key)` says whether `--key VALUE`
/// (a separate argument) is the option's value.
pub fn sections_from_args(
    args: &[String],
    takes_value: &dyn Fn(&str) -> bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, FioError> {
    let mut sections = vec![Section {
        name: "global".into(),
        origin: Origin {
            file: None,
            line: 0,
        },
        options: Vec::new(),
    }];
    let mut room = Room::full();
    let mut i = 0;
    while i < args.len() {
        let origin = Origin {
            file: None,
            line: i + 1,
        };
        let arg = &args[i];
        let Some(body) = arg.strip_prefix("--") else {
            return Err(format!("{} is not an option: write --key=value", quoted(arg)).into());
        };
        let (key, mut value) = match body.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        if value.is_none() && takes_value(&key) {
            match args.get(i + 1) {
                Some(v) if !v.starts_with("--") => {
                    value = Some(v.clone());
                    i += 1;
                }
                _ => {
                    let key = format!("--{}", shown(&key));
                    return Err(FioError::NeedsValue { key });
                }
            }
        }
        let value = value
            .map(|v| expand(&v, env, &origin, &mut room))
            .transpose()?;
        if key == "name" {
            if sections.len() > MAX_SECTIONS {
                return Err(format!(
                    "more than {MAX_SECTIONS} --name jobs (fio runs at most {MAX_SECTIONS}): give fewer"
                ).into());
            }
            let name = value
                .clone()
                .filter(|v| !v.is_empty())
                .ok_or("--name needs a job name")?;
            sections.push(Section {
                name,
                origin: origin.clone(),
                options: Vec::new(),
            });
        }
        sections
            .last_mut()
            .unwrap()
            .options
            .push(RawOption { key, value, origin });
        i += 1;
    }
    Ok(sections)
}
