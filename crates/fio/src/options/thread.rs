//! The values of fio's per-thread setup options (nice, uid, gid,
//! numa_cpu_nodes, numa_mem_policy), as fio 3.33's options.c reads them.
//! Which nodes exist is the plan's question, not the parser's.

use crate::error::ValueError;
use crate::value::quoted;

/// NUMA node numbers hiops takes (the kernel's MAX_NUMNODES at most 1024).
const MAX_NODE: u32 = 1023;

/// fio's nice: a whole number from -20 to 19 (options.c's minval, maxval).
pub(super) fn nice(text: &str) -> Result<i32, ValueError> {
    match text.trim().parse::<i32>() {
        Ok(n) if (-20..=19).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n}: nice is -20 to 19").into()),
        Err(_) => Err(format!("{}: give a whole number from -20 to 19", quoted(text)).into()),
    }
}

/// fio's uid and gid: a numeric id (fio's FIO_OPT_INT; no names).
pub(super) fn id(text: &str) -> Result<u32, ValueError> {
    match text.trim().parse::<u32>() {
        Ok(n) if n != u32::MAX => Ok(n),
        _ => Err(format!(
            "{}: give a numeric id (`id -u NAME` prints it)",
            quoted(text)
        )
        .into()),
    }
}

/// A node list as libnuma's numa_parse_nodestring reads fio's: `all`, or
/// numbers and A-B ranges separated by commas. `None` stands for all.
pub(super) fn nodes(text: &str) -> Result<Option<Vec<u32>>, ValueError> {
    let text = text.trim();
    if text == "all" {
        return Ok(None);
    }
    let bad = || {
        ValueError::from(format!(
            "{}: give NUMA nodes as all, 0, 0-1 or 0,2",
            quoted(text)
        ))
    };
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b) = (
            a.parse::<u32>().map_err(|_| bad())?,
            b.parse::<u32>().map_err(|_| bad())?,
        );
        if a > b || b > MAX_NODE {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    assert!(!out.is_empty(), "a parsed list names a node");
    Ok(Some(out))
}

/// fio's numa_mem_policy as given; the plan puts in the machine's nodes
/// for `all` and checks that each named node exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemPolicyGiven {
    Default,
    Local,
    Prefer(u32),
    /// `None`: all nodes.
    Bind(Option<Vec<u32>>),
    /// `None`: all nodes (fio's default for interleave).
    Interleave(Option<Vec<u32>>),
}

/// fio's numa_mem_policy, `MODE[:NODES]` (options.c str_numa_mpol_cb):
/// prefer takes one node, bind a list, interleave a list or all of them,
/// default and local none.
pub(super) fn mem_policy(text: &str) -> Result<MemPolicyGiven, ValueError> {
    let (mode, list) = match text.trim().split_once(':') {
        Some((m, l)) => (m, Some(l)),
        None => (text.trim(), None),
    };
    Ok(match (mode, list) {
        ("default", None) => MemPolicyGiven::Default,
        ("local", None) => MemPolicyGiven::Local,
        ("default" | "local", Some(_)) => {
            return Err(format!("{mode} takes no nodes: give numa_mem_policy={mode}").into())
        }
        ("prefer", Some(l)) => match l.trim().parse::<u32>() {
            Ok(n) if n <= MAX_NODE => MemPolicyGiven::Prefer(n),
            _ => return Err(format!("{}: prefer takes one node, as prefer:0", quoted(l)).into()),
        },
        ("prefer", None) => return Err("prefer needs its node, as prefer:0".into()),
        ("bind", None) => return Err("bind needs its nodes, as bind:0-1".into()),
        ("bind", Some(l)) => MemPolicyGiven::Bind(nodes(l)?),
        ("interleave", l) => MemPolicyGiven::Interleave(l.map(nodes).transpose()?.flatten()),
        _ => {
            return Err(format!(
                "{}: the policy is default, prefer, bind, interleave or local",
                quoted(mode)
            )
            .into())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_is_minus_20_to_19() {
        assert_eq!(nice("-20").ok(), Some(-20));
        assert_eq!(nice(" 19").ok(), Some(19));
        assert!(nice("20").is_err() && nice("-21").is_err() && nice("x").is_err());
    }

    #[test]
    fn node_lists_read_as_libnuma_reads_them() {
        assert_eq!(nodes("all").ok(), Some(None));
        assert_eq!(nodes("0").ok(), Some(Some(vec![0])));
        assert_eq!(nodes("2,0-1,1").ok(), Some(Some(vec![0, 1, 2])));
        for bad in ["", "1-0", "a", "0-", "1024", "0,,1"] {
            assert!(nodes(bad).is_err(), "{bad:?} is refused");
        }
    }

    #[test]
    fn each_policy_takes_the_nodes_fio_lets_it_take() {
        use MemPolicyGiven as G;
        assert_eq!(mem_policy("local").ok(), Some(G::Local));
        assert_eq!(mem_policy("prefer:1").ok(), Some(G::Prefer(1)));
        assert_eq!(mem_policy("bind:0-1").ok(), Some(G::Bind(Some(vec![0, 1]))));
        assert_eq!(mem_policy("interleave").ok(), Some(G::Interleave(None)));
        assert_eq!(mem_policy("interleave:all").ok(), Some(G::Interleave(None)));
        for bad in ["local:0", "prefer", "prefer:0-1", "bind", "spread:0"] {
            assert!(mem_policy(bad).is_err(), "{bad:?} is refused");
        }
    }
}
