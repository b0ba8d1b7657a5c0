//! fio's `file_service_type`: which of a job's files the next I/O goes to
//! (HOWTO "file_service_type"; io_u.c, get_next_file and
//! __get_next_file_rand). `:N` keeps a chosen file for N I/Os.

/// How files are chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum FileServiceKind {
    /// Each file in turn (fio's default).
    RoundRobin,
    /// A file at random, uniformly.
    Random,
    /// One file until its range is done, then the next.
    Sequential,
    /// A random file by zipf (theta: the first file is the hottest),
    /// pareto (h: fio's (n-1)*u^(ln h/ln(1-h)), the last file hottest) or
    /// normal (deviation, % of the files, around the middle one).
    Zipf(f64),
    Pareto(f64),
    Normal(f64),
}

/// fio's file_service_type: the kind and how many I/Os a file keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct FileService {
    pub kind: FileServiceKind,
    pub ios_per_pick: u32,
}

/// A `file_service_type` fio would not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileServiceError {
    #[error("file_service_type={text}: {what} needs a number, as in {what}:1.2")]
    NeedsNumber { text: String, what: String },
    #[error("file_service_type '{0}': use roundrobin, random, sequential, zipf:THETA, pareto:H or normal:DEV, each with an optional :N")]
    Unknown(String),
    #[error("file_service_type '{0}': zipf needs THETA above 0, pareto H between 0 and 1")]
    OutOfRange(String),
    #[error(
        "file_service_type '{0}': the count after ':' must be a whole number from 1 to 4294967295"
    )]
    Count(String),
}

impl FileService {
    /// Parses fio's `random`, `roundrobin`, `sequential`, `zipf:T`,
    /// `pareto:H`, `normal:D`/`gauss:D`, each with an optional `:N`.
    pub fn parse(text: &str) -> Result<FileService, FileServiceError> {
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or("").trim();
        let arg = parts.next().map(str::trim);
        let num = |what: &str| -> Result<f64, FileServiceError> {
            arg.and_then(|a| a.parse::<f64>().ok())
                .filter(|x| x.is_finite())
                .ok_or_else(|| FileServiceError::NeedsNumber {
                    text: text.into(),
                    what: what.into(),
                })
        };
        let (kind, count) = match name {
            "roundrobin" => (FileServiceKind::RoundRobin, arg),
            "random" => (FileServiceKind::Random, arg),
            "sequential" => (FileServiceKind::Sequential, arg),
            "zipf" => (FileServiceKind::Zipf(num("zipf")?), parts.next()),
            "pareto" => (FileServiceKind::Pareto(num("pareto")?), parts.next()),
            "normal" | "gauss" => (FileServiceKind::Normal(num(name)?), parts.next()),
            _ => return Err(FileServiceError::Unknown(text.into())),
        };
        if let FileServiceKind::Zipf(t) | FileServiceKind::Pareto(t) = kind {
            if t <= 0.0 || (matches!(kind, FileServiceKind::Pareto(_)) && t >= 1.0) {
                return Err(FileServiceError::OutOfRange(text.into()));
            }
        }
        let ios_per_pick = match count {
            None => 1,
            Some(n) => n
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| FileServiceError::Count(text.into()))?,
        };
        Ok(FileService { kind, ios_per_pick })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_must_be_finite() {
        for text in ["zipf:inf", "zipf:nan", "pareto:NaN", "normal:-inf"] {
            assert!(FileService::parse(text).is_err(), "{text}");
        }
        for text in ["zipf:inf", "zipf:nan", "pareto:NaN", "normal:inf"] {
            assert!(crate::Distribution::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn bad_forms_are_refused() {
        for bad in ["zipf", "pareto:1.5", "random:0", "lru", "roundrobin:x"] {
            assert!(FileService::parse(bad).is_err(), "{bad}");
        }
    }
}
