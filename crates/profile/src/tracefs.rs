//! Tracepoints as tracefs describes them: each event's id (the `config` of
//! a PERF_TYPE_TRACEPOINT event, and the `common_type` its records start
//! with) and the offsets of its fields in the raw record, read from
//! `events/<group>/<name>/{id,format}` (Documentation/trace/events.rst,
//! "Event formats"). Nothing about a field's place is assumed: kernels
//! move fields between versions.

use std::path::{Path, PathBuf};

/// Where tracefs is usually found; the first is its own mount point.
const MOUNTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The tracefs directory, mounted at /sys/kernel/tracing when it is not
/// (root only); an `Err` says what to do.
pub fn root() -> Result<PathBuf, crate::ProfileError> {
    if let Some(p) = MOUNTS
        .iter()
        .map(Path::new)
        .find(|p| p.join("events").is_dir())
    {
        return Ok(p.to_path_buf());
    }
    let target = c"/sys/kernel/tracing";
    // SAFETY: mount(2) with NUL-terminated strings that outlive the call
    // and no data argument; it changes nothing when it fails.
    let r = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    let p = Path::new(MOUNTS[0]);
    if r == 0 && p.join("events").is_dir() {
        return Ok(p.to_path_buf());
    }
    Err(crate::ProfileError::NoTracefs(
        std::io::Error::last_os_error(),
    ))
}

/// One tracepoint: its id and its fields' (offset, size) in the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracepoint {
    pub id: u16,
    fields: Vec<(String, usize, usize)>,
}

impl Tracepoint {
    /// Reads `group:name` from tracefs; `Err` names the event.
    pub fn load(root: &Path, group: &str, name: &str) -> Result<Tracepoint, crate::ProfileError> {
        let dir = root.join("events").join(group).join(name);
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f)).map_err(|e| match e.kind() {
                std::io::ErrorKind::PermissionDenied => crate::ProfileError::TracefsRootOnly {
                    root: root.to_path_buf(),
                },
                _ => crate::ProfileError::TracepointMissing {
                    group: group.into(),
                    name: name.into(),
                    source: e,
                },
            })
        };
        let id = read("id")?
            .trim()
            .parse()
            .map_err(|_| crate::ProfileError::TracepointId {
                group: group.into(),
                name: name.into(),
            })?;
        Ok(Tracepoint {
            id,
            fields: parse_format(&read("format")?),
        })
    }

    /// The field's offset, checked to have `size` bytes.
    pub fn field(&self, name: &str, size: usize) -> Result<usize, crate::ProfileError> {
        match self.fields.iter().find(|(n, ..)| n == name) {
            Some(&(_, off, sz)) if sz == size => Ok(off),
            Some(&(_, _, sz)) => Err(crate::ProfileError::FieldSize {
                name: name.into(),
                size: sz,
                expected: size,
            }),
            None => Err(crate::ProfileError::NoField { name: name.into() }),
        }
    }
}

/// `field:<type> <name>[N];\toffset:O;\tsize:S;\tsigned:X;` lines to
/// (name, offset, size).
fn parse_format(text: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("field:") else {
            continue;
        };
        let parts: Vec<&str> = rest.split(';').map(str::trim).collect();
        let decl = parts.first().copied().unwrap_or("");
        let name = decl
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .split('[')
            .next()
            .unwrap_or("");
        let num = |key: &str| {
            parts
                .iter()
                .find_map(|p| p.strip_prefix(key))
                .and_then(|v| v.parse::<usize>().ok())
        };
        let (offset, size) = (num("offset:"), num("size:"));
        if let (Some(o), Some(s)) = (offset, size) {
            out.push((name.to_string(), o, s));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_gives_each_fields_offset_and_size() {
        let text = "name: block_rq_issue\nID: 2104\nformat:\n\
            \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
            \tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\
            \tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\
            \tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n\n\
            print fmt: \"%d,%d\", REC->dev\n";
        let t = Tracepoint {
            id: 2104,
            fields: parse_format(text),
        };
        assert_eq!(t.field("dev", 4).ok(), Some(8));
        assert_eq!(t.field("sector", 8).ok(), Some(16));
        assert_eq!(t.field("rwbs", 10).ok(), Some(34));
        assert!(t.field("dev", 8).is_err());
        assert!(t.field("cmd", 4).is_err());
    }
}
