//! The parsers the option table's entries share: fio's split READ,WRITE
//! values, CPU lists and masks, block sizes, engines and file lists.

use super::draft::Draft;
use crate::error::{ValueError, ENGINES};
use crate::value::{self, quoted, shown, KbBase};
use hiops_hal::{EngineKind, Feature};
use hiops_job::spec::{SsMetric, SteadyState};
use hiops_job::RwMode;

pub(super) fn need(v: Option<&str>) -> Result<&str, ValueError> {
    v.filter(|s| !s.is_empty())
        .ok_or_else(|| "needs a value".into())
}

/// `hybrid_depth`: a depth, or "off" for a threshold no queue reaches.
pub(super) fn hybrid_depth(v: &str) -> Result<f64, ValueError> {
    if v == "off" {
        return Ok(f64::MAX);
    }
    match v.parse::<f64>() {
        Ok(d) if d >= 0.0 && d.is_finite() => Ok(d),
        _ => Err(format!("{} is not a depth (a number, or off)", quoted(v)).into()),
    }
}

/// fio's `sync_file_range=FLAGS[:N]`: FLAGS a comma list of wait_before,
/// write and wait_after (sync_file_range(2)'s flags, or-ed), N the writes
/// between calls (1 where not given; 0 never).
pub(super) fn sync_range(v: &str) -> Result<hiops_job::spec::SyncRange, ValueError> {
    let (names, every) = match v.split_once(':') {
        Some((names, n)) => match n.trim().parse::<u32>() {
            Ok(n) => (names, n),
            Err(_) => return Err(format!("{} is not a count of writes", quoted(n)).into()),
        },
        None => (v, 1),
    };
    let mut flags = 0;
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        flags |= match name {
            "wait_before" => libc::SYNC_FILE_RANGE_WAIT_BEFORE,
            "write" => libc::SYNC_FILE_RANGE_WRITE,
            "wait_after" => libc::SYNC_FILE_RANGE_WAIT_AFTER,
            _ => {
                return Err(format!(
                    "{}: use wait_before, write or wait_after, or several of them joined by commas",
                    quoted(name)
                )
                .into())
            }
        };
    }
    Ok(hiops_job::spec::SyncRange { flags, every })
}

/// fio's zone count `Nz` (options.c's FIO_OPT_STR_VAL_ZONE), or None
/// where the value is not one.
pub(super) fn zones(v: &str) -> Result<Option<u64>, ValueError> {
    let Some(n) = v.trim().strip_suffix('z') else {
        return Ok(None);
    };
    match n.trim().parse::<u64>() {
        Ok(n) => Ok(Some(n)),
        Err(_) => Err(format!("{}: Nz is N zones, N a whole number", quoted(v)).into()),
    }
}

/// A share from 0 to 1, as fio's zone_reset_threshold and frequency (a
/// float list of one value; the errors carry fio's words, which its
/// scripts look for).
pub(super) fn unit_share(v: &str) -> Result<f64, ValueError> {
    if v.contains(':') {
        return Err(format!(
            "{}: the list exceeding max length 1: give one share from 0 to 1",
            quoted(v)
        )
        .into());
    }
    match v.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(x) => Err(format!("value out of range: {x} (give a share from 0 to 1)").into()),
        Err(_) => Err(format!("{} is not a share from 0 to 1", quoted(v)).into()),
    }
}

pub(super) fn u32_of(v: u64, what: &str) -> Result<u32, ValueError> {
    u32::try_from(v).map_err(|_| {
        ValueError::Said(format!(
            "{what} {v} is past the largest, {}: give a smaller one",
            u32::MAX
        ))
    })
}

/// The most CPUs hiops pins to (a cpu_set_t's), and the most a list may
/// name, repeats counted.
const MAX_CPUS: usize = 1024;
const MAX_LISTED: usize = MAX_CPUS;

/// A CPU list (`0-3,6`), its numbers bounded before it is expanded: a
/// range stands for every CPU in it, and `0-4000000000` would fill memory.
pub(super) fn cpu_list(text: &str) -> Result<Vec<usize>, ValueError> {
    let mut listed = 0usize;
    for part in text.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) else {
            continue; // the list's own parser says what is wrong
        };
        if b >= MAX_CPUS {
            return Err(format!(
                "CPU {b} is past the {MAX_CPUS} CPUs hiops can pin to: name CPUs below {MAX_CPUS}"
            )
            .into());
        }
        listed += b.saturating_sub(a) + 1;
        if listed > MAX_LISTED {
            return Err(format!(
                "the list names more than {MAX_LISTED} CPUs, repeats counted: name each CPU once"
            )
            .into());
        }
    }
    Ok(hiops_stats::cpu::parse_cpu_list(text)?)
}

pub(super) fn cpu_mask(text: &str) -> Result<Vec<usize>, ValueError> {
    let t = text.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| {
        ValueError::Said(format!(
            "{} is not a CPU mask: write e.g. 0x3 or 3",
            quoted(text)
        ))
    })?;
    let cpus: Vec<usize> = (0..64).filter(|b| mask & (1 << b) != 0).collect();
    if cpus.is_empty() {
        return Err("a CPU mask of 0 names no CPU".into());
    }
    Ok(cpus)
}

pub(super) fn feature(v: Option<&str>) -> Result<Feature, ValueError> {
    match need(v)? {
        "auto" => Ok(Feature::Auto),
        s => value::boolean(Some(s)).map(|b| if b { Feature::On } else { Feature::Off }),
    }
}

/// fio's split options (bs, rate, ...): `A` applies to every direction;
/// `A,B` gives reads A and writes B; an empty side (`,B`, `A,`) keeps that
/// direction's earlier value, and a last value not followed by a comma
/// applies to the directions after it (HOWTO: `bs=8k,32k` is 32k for
/// writes and trims). With `N` = 3 (read, write, trim) the trim value is
/// kept; with 2 (hiops keeps one value for writes and trims) a third that
/// differs from the write value is refused.
pub(super) fn per_direction<T: Clone, const N: usize>(
    text: &str,
    current: [Option<T>; N],
    parse: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<[Option<T>; N], ValueError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("{}: give at most READ,WRITE,TRIM", quoted(text)).into());
    }
    if parts.len() == 1 {
        let v = parse(parts[0])?;
        return Ok(std::array::from_fn(|_| Some(v.clone())));
    }
    if N < 3 && parts.len() == 3 && !parts[2].is_empty() && parts[2] != parts[1] {
        return Err(format!(
            "{}: a trim value of its own is not implemented for this option (trims take the write value): give READ,WRITE",
            quoted(text)
        ).into());
    }
    let mut out = current;
    for (i, slot) in out.iter_mut().enumerate() {
        let part = parts.get(i).or(parts.last()).filter(|p| !p.is_empty());
        if let Some(p) = part {
            *slot = Some(parse(p)?);
        }
    }
    Ok(out)
}

/// The most block sizes a bsrange lists (hiops keeps them all, where fio
/// draws any multiple of MIN).
pub(super) const MAX_BSRANGE_SIZES: u32 = 65536;

/// One block size, 1 byte to 4 GiB. 0 is refused as given (it was once
/// read as 1, and a later check then spoke of a block size of 1).
pub(super) fn block_size(text: &str, kb: KbBase) -> Result<u32, ValueError> {
    match value::size(text, kb)? {
        0 => Err(format!(
            "a block size of {} moves no data: give one above 0, as in 4k",
            quoted(text)
        )
        .into()),
        bs => u32_of(bs, "block size"),
    }
}

/// fio's 0 for a per-direction limit: no limit, as if not given.
pub(super) fn off_at_zero<const N: usize>(limits: [Option<u64>; N]) -> [Option<u64>; N] {
    limits.map(|l| l.filter(|&n| n > 0))
}

/// fio's `rw=MODE:N` (options.c, str_rw_cb): a sequential job adds N
/// bytes (which may be negative) to each offset, the gap returned; a
/// random job takes a new random offset every N I/Os (rw_sequencer), the
/// count returned.
pub(super) fn rw_postfix(
    text: &str,
    mode: RwMode,
    kb: KbBase,
) -> Result<(i64, Option<u32>), ValueError> {
    if text.is_empty() {
        return Ok((0, None));
    }
    if !mode.is_random() {
        return Ok((rw_gap(text, kb)?, None));
    }
    // fio reads the count with atoi; a count that is no number is refused.
    match text.parse::<u32>() {
        Ok(n) => Ok((0, Some(n))),
        Err(_) => {
            // The line shows the value already: name it when short.
            let part = match shown(text) == text && text.len() <= 16 {
                true => format!("':{text}'"),
                false => "the ':N'".to_string(),
            };
            Err(format!(
                "{part}: a random job's ':N' is how many I/Os go to each random offset (rw_sequencer): give a whole number"
            )
            .into())
        }
    }
}

/// A sequential job's gap after each I/O (`rw=read:4k`, `read:-8k`).
fn rw_gap(text: &str, kb: KbBase) -> Result<i64, ValueError> {
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, text),
    };
    let n = i64::try_from(value::size(magnitude, kb)?).map_err(|_| {
        ValueError::Said(format!(
            "{} is past the largest gap, {}: give a smaller one",
            quoted(text),
            i64::MAX
        ))
    })?;
    Ok(if negative { -n } else { n })
}

/// An accepted no-op option whose value must be one of `accepted`.
pub(super) fn one_of(v: &str, accepted: &[&str], instead: &str) -> Result<(), ValueError> {
    if accepted.contains(&v) {
        return Ok(());
    }
    Err(format!(
        "hiops does not implement {}: {instead} (accepted: {})",
        quoted(v),
        accepted.join(", ")
    )
    .into())
}

/// First of fio's `read,write` pair that is given (hiops' rate limit is one
/// figure per thread).
pub(super) fn first_of_pair(text: &str) -> &str {
    text.split(',')
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

pub(super) fn steady_state(v: Option<&str>) -> Result<SteadyState, ValueError> {
    let text = need(v)?;
    let (kind, limit) = text.split_once(':').ok_or_else(|| {
        format!(
            "ss {}: write METRIC:LIMIT, as in iops:5% or bw_slope:2%",
            quoted(text)
        )
    })?;
    let (metric, slope) = match kind.to_ascii_lowercase().as_str() {
        "iops" => (SsMetric::Iops, false),
        "iops_slope" => (SsMetric::Iops, true),
        "bw" => (SsMetric::Bandwidth, false),
        "bw_slope" => (SsMetric::Bandwidth, true),
        k => {
            return Err(format!(
                "ss metric {}: use iops, iops_slope, bw or bw_slope",
                quoted(k)
            )
            .into())
        }
    };
    let (num, percent) = match limit.strip_suffix('%') {
        Some(n) => (n, true),
        None => (limit, false),
    };
    let limit: f64 = num
        .trim()
        .parse()
        .map_err(|_| ValueError::Said(format!("ss limit {} is not a number", quoted(limit))))?;
    if !(limit >= 0.0 && limit.is_finite()) {
        return Err("ss limit must be a number, 0 or more".into());
    }
    Ok(SteadyState {
        metric,
        slope,
        limit,
        percent,
        window: std::time::Duration::ZERO,
        ramp: std::time::Duration::ZERO,
    })
}

pub(super) fn engine(name: &str) -> Result<EngineKind, ValueError> {
    Ok(match name {
        // fio's sync is read/write after lseek; psync is the same work in one call.
        "sync" | "psync" => EngineKind::Psync,
        // pvsync is preadv (vsync readv after lseek); pvsync2 without flags
        // is the same call.
        "vsync" | "pvsync" | "pvsync2" => EngineKind::Pvsync2,
        other => EngineKind::parse(other).ok_or_else(|| {
            format!(
                "ioengine {} is not implemented in hiops: use one of {ENGINES}",
                quoted(other)
            )
        })?,
    })
}

/// Splits fio's `a:b:c` file list; `\:` is a literal colon.
pub(super) fn split_filenames(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().unwrap().push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The draft's net engine options, made on the first one given.
pub(super) fn net(d: &mut super::draft::Draft) -> &mut hiops_hal::backends::net::NetOptions {
    d.net.get_or_insert_with(Default::default)
}

pub(super) fn net_port(v: &str) -> Result<u16, ValueError> {
    match v.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!("port {}: give a port from 1 to 65535", quoted(v)).into()),
    }
}

pub(super) fn net_proto(v: &str) -> Result<hiops_hal::backends::net::NetProto, ValueError> {
    use hiops_hal::backends::net::NetProto;
    Ok(match v {
        "tcp" | "tcpv6" => NetProto::Tcp,
        "udp" | "udpv6" => NetProto::Udp,
        "unix" => NetProto::Unix,
        _ => return Err(format!("protocol {}: use tcp, udp or unix", quoted(v)).into()),
    })
}

/// fio's float_list: numbers separated by colons (merge_blktrace_scalars),
/// each above 0 (fio ends its list at the first 0).
pub(super) fn float_list(text: &str) -> Result<Vec<f64>, ValueError> {
    text.split(':')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(f) if f > 0.0 && f.is_finite() => Ok(f),
            _ => Err(format!(
                "{}: give numbers above 0 separated by colons, as 50:100",
                crate::value::quoted(p)
            )
            .into()),
        })
        .collect()
}

/// fio's opendir (filesetup.c, recurse_dir): every regular file below
/// `dir`, in the order its directories list them, subdirectories walked
/// as they come; anything else, a symbolic link too, is left out (fio
/// lstats each entry).
pub(super) fn opendir_files(dir: &str) -> Result<Vec<std::path::PathBuf>, ValueError> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let kind = match entry.file_type() {
                Ok(k) => k,
                // Gone since it was listed, which fio skips too.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if kind.is_file() {
                out.push(entry.path());
            } else if kind.is_dir() {
                walk(&entry.path(), out)?;
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(std::path::Path::new(dir), &mut out)
        .map_err(|e| ValueError::Said(format!("opendir({}): {e}", quoted(dir))))?;
    Ok(out)
}

/// A bsrange's `MIN-MAX` (or `MIN:MAX`).
pub(super) fn bs_range(text: &str, kb: KbBase) -> Result<(u32, u32), ValueError> {
    let (a, b) = text
        .split_once('-')
        .or_else(|| text.split_once(':'))
        .ok_or_else(|| {
            ValueError::Said(format!("{}: write MIN-MAX, as in 4k-64k", quoted(text)))
        })?;
    let (a, b) = (block_size(a, kb)?, block_size(b, kb)?);
    if b < a {
        return Err(format!("{}: MIN must be at most MAX", quoted(text)).into());
    }
    Ok((a, b))
}

/// A bs or bssplit value replaces the bsrange of each direction it sets,
/// which bs_unaligned then no longer draws from.
pub(super) fn forget_ranges(d: &mut Draft, text: &str) -> Result<(), ValueError> {
    let set = per_direction(text, [None; 3], |_| Ok(()))?;
    for (range, set) in d.bsrange.iter_mut().zip(set) {
        if set.is_some() {
            *range = None;
        }
    }
    Ok(())
}
