//! fio's job-file format: an INI file of `[global]` and job sections, `;`
//! and `#` comments (whole lines, and as fio 3.x reads them, the rest of any
//! line from its first `;` or `#`), `key=value` or bare `key` (a boolean set to true),
//! `include FILE` (read in place, relative to the including file), and
//! `${VAR}` environment expansion plus fio's `$ncpus`, `$pagesize` and
//! `$mb_memory`. The command-line form (`--name=x --rw=read ...`) produces
//! the same sections.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where an option was written, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file (as given), or `None` for the command line.
    pub file: Option<Arc<str>>,
    /// 1-based line number in the file, or argument position.
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{file}:{}", self.line),
            None => write!(f, "command line argument {}", self.line),
        }
    }
}

/// One `key=value` (or bare `key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOption {
    pub key: String,
    pub value: Option<String>,
    pub origin: Origin,
}

/// A `[name]` section and its options in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub origin: Origin,
    pub options: Vec<RawOption>,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Nested includes deeper than this are taken for a cycle.
const MAX_INCLUDE_DEPTH: usize = 16;

/// Reads a job file.
pub fn parse_file(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    let mut sections = Vec::new();
    read_into(path, env, 0, &mut sections)?;
    Ok(sections)
}

/// Parses job-file text; `name` labels messages and `dir` resolves includes.
pub fn parse_text(
    text: &str,
    name: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    let mut sections = Vec::new();
    parse_into(text, name, dir, env, 0, &mut sections)?;
    Ok(sections)
}

fn read_into(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    out: &mut Vec<Section>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read job file {}: {e}", path.display()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse_into(&text, &path.display().to_string(), &dir, env, depth, out)
}

fn parse_into(
    text: &str,
    name: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    out: &mut Vec<Section>,
) -> Result<(), String> {
    let file: Arc<str> = Arc::from(name);
    for (i, raw) in text.lines().enumerate() {
        let origin = Origin {
            file: Some(file.clone()),
            line: i + 1,
        };
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(section) = rest.strip_suffix(']') else {
                return Err(format!(
                    "{origin}: a section header needs a closing ']': {line}"
                ));
            };
            let section = section.trim();
            if section.is_empty() {
                return Err(format!("{origin}: empty section name"));
            }
            out.push(Section {
                name: section.to_string(),
                origin,
                options: Vec::new(),
            });
            continue;
        }
        if let Some(target) = line
            .strip_prefix("include ")
            .or_else(|| line.strip_prefix("include\t"))
        {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(format!(
                    "{origin}: includes nest deeper than {MAX_INCLUDE_DEPTH}: is a file including itself?"
                ));
            }
            let target = expand(target.trim(), env, &origin)?;
            let path = if Path::new(&target).is_absolute() {
                PathBuf::from(&target)
            } else {
                dir.join(&target)
            };
            read_into(&path, env, depth + 1, out).map_err(|e| format!("{origin}: {e}"))?;
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(expand(v.trim(), env, &origin)?)),
            None => (line, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!(
                "{origin}: '{line}' is not an option: write key=value"
            ));
        }
        let Some(section) = out.last_mut() else {
            return Err(format!(
                "{origin}: option '{key}' comes before any section: put it under [global] or a [job]"
            ));
        };
        section.options.push(RawOption {
            key: key.to_string(),
            value,
            origin,
        });
    }
    Ok(())
}

/// A job-file line without its comment. fio (parse.c `strip_blank_end`,
/// applied by init.c to every line of a job file) ends a line at its first
/// `;` and at its first `#` wherever they are, with or without blanks before
/// them: `bs=4k # block` and `bs=4k#block` both read `bs=4k`, and a value
/// cannot hold either character (`${VAR}` can: it is expanded afterwards).
/// The command line keeps them, as fio does.
pub fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(at) => &line[..at],
        None => line,
    }
}

/// Expands `${VAR}` from the environment and fio's `$ncpus`, `$pagesize`,
/// `$mb_memory`. An unset variable is an error (fio would keep the text and
/// fail later, less clearly).
pub fn expand(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
    origin: &Origin,
) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(format!(
                    "{origin}: '${{' without a closing '}}' in '{value}'"
                ));
            };
            let var = &body[..end];
            let v = env(var).ok_or_else(|| {
                format!("{origin}: environment variable {var} is not set (used in '{value}'): export it or edit the job file")
            })?;
            out.push_str(&v);
            rest = &body[end + 1..];
        } else if let Some((word, v)) = ["ncpus", "pagesize", "mb_memory"]
            .iter()
            .find(|w| after.starts_with(**w))
            .map(|w| (*w, builtin(w)))
        {
            out.push_str(&v.to_string());
            rest = &after[word.len()..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn builtin(word: &str) -> u64 {
    match word {
        "ncpus" => std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1),
        // SAFETY: sysconf has no memory-safety preconditions.
        "pagesize" => unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64,
        // SAFETY: as above.
        "mb_memory" => unsafe {
            (libc::sysconf(libc::_SC_PHYS_PAGES).max(0) as u64
                * libc::sysconf(libc::_SC_PAGESIZE).max(0) as u64)
                >> 20
        },
        _ => unreachable!("only the words listed above"),
    }
}

/// fio's command-line job form: options before the first `--name` are global;
/// each `--name` starts a job. `takes_value(key)` says whether `--key VALUE`
/// (a separate argument) is the option's value.
pub fn sections_from_args(
    args: &[String],
    takes_value: &dyn Fn(&str) -> bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, String> {
    let mut sections = vec![Section {
        name: "global".into(),
        origin: Origin {
            file: None,
            line: 0,
        },
        options: Vec::new(),
    }];
    let mut i = 0;
    while i < args.len() {
        let origin = Origin {
            file: None,
            line: i + 1,
        };
        let arg = &args[i];
        let Some(body) = arg.strip_prefix("--") else {
            return Err(format!("'{arg}' is not an option: write --key=value"));
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
                _ => return Err(format!("--{key} needs a value: --{key}=VALUE")),
            }
        }
        let value = value.map(|v| expand(&v, env, &origin)).transpose()?;
        if key == "name" {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn sections_comments_bare_booleans_and_lines() {
        let text = "; a comment\n# another\n[global]\nbs = 4k\ntime_based\n\n[job1]\nrw=randread\n";
        let s = parse_text(text, "t.fio", Path::new("."), &no_env).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].is_global());
        assert_eq!(s[0].options[0].key, "bs");
        assert_eq!(s[0].options[0].value.as_deref(), Some("4k"));
        assert_eq!(s[0].options[1].value, None);
        assert_eq!(s[1].options[0].origin.line, 8);
        assert_eq!(s[1].options[0].origin.to_string(), "t.fio:8");
    }

    #[test]
    fn inline_comments_end_the_line_as_in_fio() {
        let text = "[global] ; shared\nnumjobs=4 ; 4 jobs\nbs=4k # block\niodepth=8;tight\n\
                    [j]#job\nrw=randread\t# random\ntime_based ; flag\n\
                    filename=${F}\n";
        let env = |v: &str| (v == "F").then(|| "/tmp/a;b#c".to_string());
        let s = parse_text(text, "t", Path::new("."), &env).unwrap();
        assert_eq!((s[0].name.as_str(), s[1].name.as_str()), ("global", "j"));
        let kv: Vec<(&str, Option<&str>)> = s
            .iter()
            .flat_map(|s| &s.options)
            .map(|o| (o.key.as_str(), o.value.as_deref()))
            .collect();
        assert_eq!(
            kv,
            [
                ("numjobs", Some("4")),
                ("bs", Some("4k")),
                ("iodepth", Some("8")),
                ("rw", Some("randread")),
                ("time_based", None),
                // Expanded after the comment is cut: the value keeps both.
                ("filename", Some("/tmp/a;b#c")),
            ]
        );
        assert_eq!(strip_comment("a=b"), "a=b");
    }

    #[test]
    fn env_expansion_and_unset_variables() {
        let env = |v: &str| (v == "DEV").then(|| "/dev/zram0".to_string());
        let s = parse_text("[j]\nfilename=${DEV}\n", "t", Path::new("."), &env).unwrap();
        assert_eq!(s[0].options[0].value.as_deref(), Some("/dev/zram0"));
        let e = parse_text("[j]\nfilename=${NOPE}\n", "t", Path::new("."), &env).unwrap_err();
        assert!(e.contains("t:2") && e.contains("NOPE is not set"), "{e}");
        let s = parse_text("[j]\nnumjobs=$ncpus\n", "t", Path::new("."), &no_env).unwrap();
        assert!(
            s[0].options[0]
                .value
                .as_deref()
                .unwrap()
                .parse::<u32>()
                .unwrap()
                >= 1
        );
    }

    #[test]
    fn includes_read_in_place_and_cycles_stop() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("common.fio"), "bs=8k\niodepth=4\n").unwrap();
        std::fs::write(
            dir.path().join("main.fio"),
            "[global]\ninclude common.fio\n[j]\nrw=read\n",
        )
        .unwrap();
        let s = parse_file(&dir.path().join("main.fio"), &no_env).unwrap();
        assert_eq!(s[0].options.len(), 2);
        assert!(s[0].options[0].origin.to_string().ends_with("common.fio:1"));
        std::fs::write(dir.path().join("loop.fio"), "[g]\ninclude loop.fio\n").unwrap();
        let e = parse_file(&dir.path().join("loop.fio"), &no_env).unwrap_err();
        assert!(e.contains("nest deeper"), "{e}");
    }

    #[test]
    fn options_before_a_section_are_refused() {
        let e = parse_text("bs=4k\n", "t", Path::new("."), &no_env).unwrap_err();
        assert!(e.contains("t:1") && e.contains("[global]"), "{e}");
        assert!(parse_text("[j\n", "t", Path::new("."), &no_env).is_err());
    }

    #[test]
    fn command_line_jobs_split_at_name() {
        let args: Vec<String> = [
            "--bs=8k",
            "--name=a",
            "--rw",
            "read",
            "--name=b",
            "--time_based",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = sections_from_args(&args, &|k| k == "rw", &no_env).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].options[0].key, "bs");
        assert_eq!(s[1].name, "a");
        assert_eq!(s[1].options[1].value.as_deref(), Some("read"));
        assert_eq!(s[2].options[1].value, None);
    }
}
