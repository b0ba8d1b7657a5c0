//! fio's job-file format: an INI file of `[global]` and job sections, `;`
//! and `#` comments (whole lines, and as fio 3.x reads them, the rest of any
//! line from its first `;` or `#`), `key=value` or bare `key` (a boolean set to true),
//! `include FILE` (read in place, relative to the including file), and
//! `${VAR}` environment expansion plus fio's `$ncpus`, `$pagesize` and
//! `$mb_memory`. The command-line form (`--name=x --rw=read ...`) produces
//! the same sections.
//!
//! Whatever it is given, a parse ends, in bounded memory: a job file is a
//! regular file or a pipe of at most 16 MiB (an included one, a regular
//! file), 64 MiB with its includes, 64 MiB of values once `${VAR}` is
//! expanded, 4096 sections, 16384 options; an include loop is named once. Errors show a value once, cut to 64
//! characters ([`crate::value::shown`]).

mod args;
mod expand;
mod limits;
mod read;
mod section;

pub use args::sections_from_args;
pub use expand::{expand, Room, MAX_EXPANDED_BYTES};
pub use limits::MAX_FILE_BYTES;
use limits::{MAX_INCLUDE_DEPTH, MAX_OPTIONS, MAX_SECTIONS, MAX_TOTAL_BYTES};
pub use read::read_bounded;
pub use section::{RawOption, Section};

use crate::error::FioError;
use crate::value::{quoted, shown};
use read::{open_job_file, read_limited, too_long};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::origin::Origin;

/// Reads a job file (a regular file, or a pipe such as `<(...)`; see
/// [`MAX_FILE_BYTES`]) and the files it includes (regular files only).
pub fn parse_file(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, FioError> {
    let mut p = Parser::new(env);
    p.read_file(path, None)?;
    Ok(p.out)
}

/// Parses job-file text; `name` labels messages and `dir` resolves includes.
pub fn parse_text(
    text: &str,
    name: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, FioError> {
    parse_bytes(text.as_bytes(), name, dir, env)
}

/// Parses a job file's bytes, as fio reads them: any bytes in comments, UTF-8
/// elsewhere (see `line_text`). The entry point for any input (fuzzing
/// too): sections or one error line, never a panic; only its `include`
/// lines read files, under `dir`.
pub fn parse_bytes(
    bytes: &[u8],
    name: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, FioError> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_long(name));
    }
    let mut p = Parser::new(env);
    p.bytes = bytes.len() as u64;
    p.parse(bytes, name, dir)?;
    Ok(p.out)
}

/// One parse of a job file and its includes, within the bounds above.
struct Parser<'e> {
    env: &'e dyn Fn(&str) -> Option<String>,
    /// The files being read, outermost first: (device, inode) and name.
    stack: Vec<((u64, u64), String)>,
    /// Bytes read so far, options kept so far.
    bytes: u64,
    options: usize,
    /// What the values may still grow to as their variables are expanded.
    room: Room,
    out: Vec<Section>,
}

impl<'e> Parser<'e> {
    fn new(env: &'e dyn Fn(&str) -> Option<String>) -> Self {
        Parser {
            env,
            stack: Vec::new(),
            bytes: 0,
            options: 0,
            room: Room::full(),
            out: Vec::new(),
        }
    }

    /// Reads and parses a file: the job file (`from` is `None`) or one an
    /// include line (`from`) names. Errors name that line.
    fn read_file(&mut self, path: &Path, from: Option<&Origin>) -> Result<(), FioError> {
        // An included file's error is the include line's.
        let at = |e: FioError| match from {
            Some(o) => e.at(o),
            None => e,
        };
        let name = path.display().to_string();
        let (file, meta) = open_job_file(path, from.is_none()).map_err(at)?;
        let id = (meta.dev(), meta.ino());
        if let Some(first) = self.stack.iter().position(|(s, _)| *s == id) {
            return Err(at(self.cycle(first).into()));
        }
        let limit = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES - self.bytes);
        let bytes = read_limited(file, meta.len(), limit, &name).map_err(at)?;
        self.bytes += bytes.len() as u64;
        self.stack.push((id, name.clone()));
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.parse(&bytes, &name, &dir)?;
        self.stack.pop();
        Ok(())
    }

    /// The include loop closed by including `stack[first]` again, named once.
    fn cycle(&self, first: usize) -> String {
        let names: Vec<&str> = self.stack[first..]
            .iter()
            .map(|(_, n)| n.as_str())
            .collect();
        if names.len() == 1 {
            return "the file includes itself: remove this include line".into();
        }
        format!(
            "{} includes itself ({} -> {}): remove one of these include lines",
            names[0],
            names.join(" -> "),
            names[0]
        )
    }

    fn parse(&mut self, bytes: &[u8], name: &str, dir: &Path) -> Result<(), FioError> {
        let file: Arc<str> = Arc::from(name);
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let origin = Origin {
                file: Some(file.clone()),
                line: i + 1,
            };
            let line = line_text(raw, &origin)?;
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                self.section(rest, line, origin)?;
            } else if let Some(target) = line
                .strip_prefix("include ")
                .or_else(|| line.strip_prefix("include\t"))
            {
                self.include(target, dir, &origin)?;
            } else {
                self.option(line, origin)?;
            }
        }
        Ok(())
    }

    fn section(&mut self, rest: &str, line: &str, origin: Origin) -> Result<(), FioError> {
        let Some(section) = rest.strip_suffix(']') else {
            return Err(FioError::from(format!(
                "a section header needs a closing ']': {}",
                shown(line)
            ))
            .at(&origin));
        };
        let section = section.trim();
        if section.is_empty() {
            return Err(FioError::from("empty section name").at(&origin));
        }
        if self.out.len() == MAX_SECTIONS {
            return Err(FioError::from(format!(
                "more than {MAX_SECTIONS} sections (fio runs at most {MAX_SECTIONS} jobs): split the job file"
            )).at(&origin));
        }
        self.out.push(Section {
            name: section.to_string(),
            origin,
            options: Vec::new(),
        });
        Ok(())
    }

    fn include(&mut self, target: &str, dir: &Path, origin: &Origin) -> Result<(), FioError> {
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(FioError::from(format!(
                "includes nest deeper than {MAX_INCLUDE_DEPTH}: include the files from fewer levels"
            ))
            .at(origin));
        }
        let target = expand(target.trim(), self.env, origin, &mut self.room)?;
        let path = if Path::new(&target).is_absolute() {
            PathBuf::from(&target)
        } else {
            dir.join(&target)
        };
        self.read_file(&path, Some(origin))
    }

    fn option(&mut self, line: &str, origin: Origin) -> Result<(), FioError> {
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => {
                let v = expand(v.trim(), self.env, &origin, &mut self.room)?;
                (k.trim(), Some(v))
            }
            None => (line, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(FioError::from(format!(
                "{} is not an option: write key=value",
                quoted(line)
            ))
            .at(&origin));
        }
        let Some(section) = self.out.last_mut() else {
            return Err(FioError::from(format!(
                "option {} comes before any section: put it under [global] or a [job]",
                quoted(key)
            ))
            .at(&origin));
        };
        if self.options == MAX_OPTIONS {
            return Err(FioError::from(format!(
                "more than {MAX_OPTIONS} options: split the job file"
            ))
            .at(&origin));
        }
        self.options += 1;
        section.options.push(RawOption {
            key: key.to_string(),
            value,
            origin,
        });
        Ok(())
    }
}

/// A job-file line's text: without its comment, trimmed, as UTF-8.
///
/// fio reads a job file as bytes (init.c `__parse_jobs_ini`: `fgets` into a
/// `char` buffer, then parse.c `strip_blank_end` cuts the line at its first
/// `;` or `#`), so a comment may hold any bytes and fio never looks at them.
/// The cut is made here on bytes too, before any decoding: `;` and `#` are
/// ASCII, never part of a UTF-8 sequence. What is left goes, in fio, to the
/// options as bytes (a `filename` straight to open(2)); hiops keeps options
/// as UTF-8 text, and reading a stray byte as U+FFFD would silently name
/// another file. So a line whose text outside its comment is not UTF-8 is
/// refused, naming the line and byte, not the whole file; so is a NUL byte
/// (fio's C strings would end the line there, unseen).
fn line_text<'b>(raw: &'b [u8], origin: &Origin) -> Result<&'b str, FioError> {
    let kept = strip_comment(raw);
    if let Some(at) = kept.iter().position(|&b| b == 0) {
        return Err(FioError::from(format!(
            "a NUL byte at byte {} of the line: remove it (fio would end the line there)",
            at + 1
        ))
        .at(origin));
    }
    std::str::from_utf8(kept).map(str::trim).map_err(|e| {
        let at = e.valid_up_to();
        FioError::from(format!(
            "byte {} of the line (0x{:02x}) is not UTF-8, which hiops reads outside comments: save the file as UTF-8 (iconv -t UTF-8) or fix that byte",
            at + 1,
            kept[at]
        )).at(origin)
    })
}

/// A job-file line without its comment. fio (parse.c `strip_blank_end`,
/// applied by init.c to every line of a job file) ends a line at its first
/// `;` and at its first `#` wherever they are, with or without blanks before
/// them: `bs=4k # block` and `bs=4k#block` both read `bs=4k`, and a value
/// cannot hold either character (`${VAR}` can: it is expanded afterwards).
/// The command line keeps them, as fio does.
pub fn strip_comment(line: &[u8]) -> &[u8] {
    match line.iter().position(|&b| b == b';' || b == b'#') {
        Some(at) => &line[..at],
        None => line,
    }
}

#[cfg(test)]
mod tests;
