//! The lines of /proc/self/mountinfo (proc(5)), read once here for the
//! crates that need a mount's device or source: the file lock (which
//! device /proc/locks names) and the HAL (which disk a btrfs file is on).

/// One mount: "47 27 0:40 / /mnt rw - btrfs /dev/loop0 rw".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount<'a> {
    /// The mount's id (what /proc/self/fdinfo's `mnt_id` names).
    pub id: &'a str,
    /// Its superblock's device, (major, minor).
    pub dev: (u32, u32),
    /// Where it is mounted, its escapes undone.
    pub point: String,
    /// What it was mounted from (`/dev/loop0`, `tmpfs`, `overlay`).
    pub source: &'a str,
}

/// This process's mount table, or None where /proc cannot be read.
pub fn read() -> Option<String> {
    std::fs::read_to_string("/proc/self/mountinfo").ok()
}

/// The mounts of a mount table, in its order; malformed lines skipped.
pub fn mounts(info: &str) -> impl Iterator<Item = Mount<'_>> {
    info.lines().filter_map(parse)
}

fn parse(line: &str) -> Option<Mount<'_>> {
    let fields: Vec<&str> = line.split(' ').collect();
    let dash = fields.iter().position(|f| *f == "-")?;
    let (major, minor) = fields.get(2)?.split_once(':')?;
    Some(Mount {
        id: fields.first()?,
        dev: (major.parse().ok()?, minor.parse().ok()?),
        point: unescape_octal(fields.get(4)?),
        source: fields.get(dash + 2)?,
    })
}

/// mountinfo's escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape_octal(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest
            .get(i + 1..i + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(c) => {
                out.push(c as char);
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_its_id_device_point_and_source() {
        let info =
            "47 27 0:40 / /mnt/a\\040b rw,relatime shared:1 - btrfs /dev/loop0 rw\nbad line\n";
        let all: Vec<Mount> = mounts(info).collect();
        assert_eq!(
            all,
            [Mount {
                id: "47",
                dev: (0, 40),
                point: "/mnt/a b".into(),
                source: "/dev/loop0",
            }]
        );
    }
}
