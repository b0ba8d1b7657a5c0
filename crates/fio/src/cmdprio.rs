//! fio's cmdprio options of its io_uring and libaio engines (HOWTO
//! `cmdprio_percentage`, `cmdprio_class`, `cmdprio`, `cmdprio_bssplit`;
//! engines/cmdprio.c and options.c's `parse_cmdprio_bssplit_entry`) into
//! the job's [`CmdPrio`] rules, per direction (read, write).

use crate::error::ValueError;
use crate::value::{self, quoted, KbBase};
use hiops_hal::{ioprio_value, EngineKind};
use hiops_job::spec::{CmdPrio, PrioRule};

/// The cmdprio options as written, per direction (read, write).
#[derive(Clone, Debug, Default)]
pub struct CmdPrioOptions {
    pub percentage: [Option<u32>; 2],
    pub class: [Option<u16>; 2],
    pub level: [Option<u16>; 2],
    pub bssplit: Option<String>,
}

/// fio's class range (1 realtime .. 3 idle) and level range (0 .. 7).
pub fn class(text: &str) -> Result<u16, ValueError> {
    bounded(
        text,
        1,
        3,
        "a priority class: 1 (realtime), 2 (best effort) or 3 (idle)",
    )
}

pub fn level(text: &str) -> Result<u16, ValueError> {
    bounded(text, 0, 7, "a priority level from 0 (highest) to 7")
}

fn bounded(text: &str, min: u16, max: u16, what: &str) -> Result<u16, ValueError> {
    match text.trim().parse::<u16>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(format!("{} is not {what}", quoted(text)).into()),
    }
}

impl CmdPrioOptions {
    fn given(&self) -> bool {
        self.percentage.iter().any(|p| p.is_some_and(|p| p > 0)) || self.bssplit.is_some()
    }

    /// The job's rules, or None when no I/O gets a priority of its own.
    /// `reads`/`writes`: the directions the job does (fio keeps no split
    /// for one it does not).
    pub fn plan(
        &self,
        engine: EngineKind,
        (reads, writes): (bool, bool),
        kb: KbBase,
    ) -> Result<Option<CmdPrio>, ValueError> {
        if !self.given() {
            return Ok(None);
        }
        if !matches!(engine, EngineKind::IoUring | EngineKind::Libaio) {
            return Err("cmdprio_percentage and cmdprio_bssplit are options of fio's io_uring and libaio engines: give ioengine=io_uring or libaio".into());
        }
        if self.bssplit.is_some() && self.percentage.iter().any(|p| p.is_some_and(|p| p > 0)) {
            return Err(
                "cmdprio_percentage and cmdprio_bssplit exclude each other, as in fio: give one"
                    .into(),
            );
        }
        // fio: without cmdprio_class, the realtime class.
        let implicit =
            |d: usize| ioprio_value(self.class[d].unwrap_or(1), self.level[d].unwrap_or(0));
        let lists = self.bssplit.as_deref().map(split_directions).transpose()?;
        let mut plan = CmdPrio::default();
        let wanted = [reads, writes];
        for (d, rules) in plan
            .rules
            .iter_mut()
            .enumerate()
            .filter(|(d, _)| wanted[*d])
        {
            *rules = match (&lists, self.percentage[d]) {
                (Some(lists), _) => bssplit_rules(lists[d], implicit(d), kb)?,
                (None, Some(p)) if p > 0 => vec![PrioRule {
                    bs: None,
                    choices: vec![(p, implicit(d))],
                }],
                (None, _) => Vec::new(),
            };
        }
        Ok(Some(plan))
    }
}

/// `READ,WRITE` (a single list applies to both, as fio's split options).
fn split_directions(text: &str) -> Result<[&str; 2], ValueError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    match parts[..] {
        [one] => Ok([one, one]),
        [r, w] | [r, w, _] => Ok([r, w]),
        _ => Err(format!(
            "cmdprio_bssplit {}: give at most READ,WRITE lists",
            quoted(text)
        )
        .into()),
    }
}

/// One direction's `bs/percent[/class/level]:...` list: entries of 0% are
/// dropped (fio's), those of one block size form one rule whose shares add
/// up to at most 100.
fn bssplit_rules(text: &str, implicit: u16, kb: KbBase) -> Result<Vec<PrioRule>, ValueError> {
    let mut rules: Vec<PrioRule> = Vec::new();
    for entry in text.split(':').filter(|e| !e.is_empty()) {
        let (bs, percent, ioprio) = bssplit_entry(entry, implicit, kb)?;
        if percent == 0 {
            continue;
        }
        match rules.iter_mut().find(|r| r.bs == Some(bs)) {
            Some(r) => r.choices.push((percent, ioprio)),
            None => rules.push(PrioRule {
                bs: Some(bs),
                choices: vec![(percent, ioprio)],
            }),
        }
    }
    rules.sort_by_key(|r| r.bs);
    for r in &rules {
        let total: u32 = r.choices.iter().map(|c| c.0).sum();
        if total > 100 {
            return Err(format!(
                "cmdprio_bssplit: the shares of block size {} add up to {total}%, more than 100",
                r.bs.unwrap_or(0)
            )
            .into());
        }
    }
    Ok(rules)
}

/// `bs/`, `bs/percent` (the implicit priority) or `bs/percent/class/level`.
fn bssplit_entry(entry: &str, implicit: u16, kb: KbBase) -> Result<(u32, u32, u16), ValueError> {
    let fields: Vec<&str> = entry.split('/').map(str::trim).collect();
    let bs = u32::try_from(value::size(fields[0], kb)?).map_err(|_| {
        format!(
            "cmdprio_bssplit: block size {} is past the largest, {} (4 GiB less a byte)",
            quoted(fields[0]),
            u32::MAX
        )
    })?;
    let percent = match fields.get(1).filter(|p| !p.is_empty()) {
        Some(p) => value::percent("cmdprio_bssplit", p)?.get(),
        None => 0,
    };
    let ioprio = match fields[1..] {
        [] | [_] => implicit,
        [_, c, l] => ioprio_value(class(c)?, level(l)?),
        _ => {
            return Err(format!(
                "cmdprio_bssplit entry {}: write BS/PERCENT or BS/PERCENT/CLASS/LEVEL",
                quoted(entry)
            )
            .into())
        }
    };
    Ok((bs, percent, ioprio))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentage_gives_the_realtime_class_unless_told() {
        let o = CmdPrioOptions {
            percentage: [Some(50), Some(50)],
            ..Default::default()
        };
        let plan = o
            .plan(EngineKind::Libaio, (true, false), KbBase::default())
            .unwrap()
            .unwrap();
        let rt = ioprio_value(1, 0);
        assert_eq!(
            plan.rules[0],
            vec![PrioRule {
                bs: None,
                choices: vec![(50, rt)]
            }]
        );
        assert!(plan.rules[1].is_empty(), "a read job keeps no write rule");
        let o = CmdPrioOptions {
            class: [Some(3), Some(3)],
            level: [Some(2), Some(2)],
            ..o
        };
        let plan = o
            .plan(EngineKind::IoUring, (true, true), KbBase::default())
            .unwrap()
            .unwrap();
        assert_eq!(plan.rules[1][0].choices, vec![(50, ioprio_value(3, 2))]);
        let e = o
            .plan(EngineKind::Psync, (true, true), KbBase::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("io_uring and libaio"), "{e}");
    }

    #[test]
    fn bssplit_reads_fios_entries() {
        // t/latency_percentiles.py's tests 21 and 22.
        let o = CmdPrioOptions {
            bssplit: Some("64k/25/1/1:64k/75/3/2:1024k/0".into()),
            ..Default::default()
        };
        let plan = o
            .plan(EngineKind::Libaio, (true, true), KbBase::default())
            .unwrap()
            .unwrap();
        let want = vec![PrioRule {
            bs: Some(65536),
            choices: vec![(25, ioprio_value(1, 1)), (75, ioprio_value(3, 2))],
        }];
        assert_eq!(plan.rules, [want.clone(), want]);
        let over = CmdPrioOptions {
            bssplit: Some("4k/60:4k/50/2/0".into()),
            ..Default::default()
        };
        assert!(over
            .plan(EngineKind::Libaio, (true, true), KbBase::default())
            .is_err());
        let both = CmdPrioOptions {
            percentage: [Some(10), None],
            bssplit: Some("4k/10".into()),
            ..Default::default()
        };
        assert!(both
            .plan(EngineKind::Libaio, (true, true), KbBase::default())
            .is_err());
        assert!(class("4").is_err() && level("8").is_err() && class("1").is_ok());
    }
}
