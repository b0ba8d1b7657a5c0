//! ADMS'10 Table 2 for this machine: the platform settings the paper names
//! as needed to duplicate its measurements (SMT, CPU low-power states and
//! frequency scaling disabled; the tickless timer disabled; a 10 ms
//! scheduler slice; polling when idle; the no-op I/O scheduler; Intel
//! X25-E SSDs), each set against what the platform facts recorded when the
//! study started, and a verdict that names every setting that differs.

use crate::page::{Section, Table};
use crate::verdicts::claims::{ClaimRow, Verdict};
use hiops_bench::platform_facts::PlatformFacts;

/// How a setting here compares with the paper's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    Same,
    Differs,
    /// This machine does not show it.
    NotRead,
    /// The paper does not state it: shown, not compared.
    NotCompared,
}

/// One row of Table 2.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub name: String,
    pub paper: &'static str,
    pub here: String,
    pub how: Match,
}

fn setting(name: &str, paper: &'static str, here: String, how: Match) -> Setting {
    Setting {
        name: name.into(),
        paper,
        here,
        how,
    }
}

/// Every setting of Table 2 as this machine had it; `online` CPUs derive
/// the scheduler's slice where the kernel does not show it.
pub fn settings(p: &PlatformFacts, online: usize) -> Vec<Setting> {
    let mut out = vec![
        smt(p),
        low_power(p),
        frequency(p),
        tickless(p),
        tick_rate(p),
        slice(p, online),
        idle_polling(p),
    ];
    for d in &p.devices {
        // A bio-based device (zram) has no scheduler to choose: none.
        let here = match d.scheduler.as_str() {
            "" => "none (no I/O scheduler offered: a bio-based device)".to_string(),
            s => s.to_string(),
        };
        let how = same_if(matches!(d.scheduler.as_str(), "none" | "noop" | ""));
        out.push(setting(
            &format!("I/O scheduler of {}", d.name),
            "No-op",
            here,
            how,
        ));
        let x25e = d.model.contains("X25-E") || d.model.contains("SSDSA2SH");
        let model = if d.model.is_empty() {
            "not named by the kernel".into()
        } else {
            d.model.clone()
        };
        out.push(setting(
            &format!("device {}", d.name),
            "Intel X25-E SSDs",
            model,
            if x25e { Match::Same } else { Match::Differs },
        ));
    }
    assert_eq!(
        out.len(),
        7 + 2 * p.devices.len(),
        "the seven settings, two per device"
    );
    out
}

fn same_if(cond: bool) -> Match {
    if cond {
        Match::Same
    } else {
        Match::Differs
    }
}

fn smt(p: &PlatformFacts) -> Setting {
    let how = match p.smt.as_str() {
        "off" | "forceoff" => Match::Same,
        // No sibling threads to share a core with.
        "notsupported" => Match::Same,
        "" => Match::NotRead,
        _ => Match::Differs,
    };
    let here = match p.smt.as_str() {
        "notsupported" => "not supported (no sibling threads)".into(),
        "" => "not shown".into(),
        s => s.to_string(),
    };
    setting("SMT", "disabled", here, how)
}

/// Idle states deeper than polling: enabled ones differ from the paper's.
fn low_power(p: &PlatformFacts) -> Setting {
    let deep: Vec<String> = (p.idle_states.iter())
        .filter(|(name, _)| name != "POLL")
        .map(|(name, lat)| format!("{name} ({lat} µs)"))
        .collect();
    let (here, how) = if !deep.is_empty() {
        (
            format!("{} enabled ({})", deep.join(", "), p.cpuidle_driver),
            Match::Differs,
        )
    } else if p.cpuidle_driver.is_empty() || p.cpuidle_driver == "none" {
        ("none offered (no cpuidle driver)".to_string(), Match::Same)
    } else {
        (
            format!("none enabled beyond polling ({})", p.cpuidle_driver),
            Match::Same,
        )
    };
    setting("CPU low-power states", "disabled", here, how)
}

fn frequency(p: &PlatformFacts) -> Setting {
    if p.governors.is_empty() {
        let here = "not visible: no cpufreq (the host or firmware sets the frequency)";
        return setting("frequency scaling", "disabled", here.into(), Match::NotRead);
    }
    let names: Vec<String> = p
        .governors
        .iter()
        .map(|(g, n)| format!("{g} ({n} CPUs)"))
        .collect();
    let fixed = p.governors.keys().all(|g| g == "performance");
    let how = if fixed { Match::Same } else { Match::Differs };
    setting(
        "frequency scaling",
        "disabled",
        format!("governor {}", names.join(", ")),
        how,
    )
}

/// The tick's mode: the kernel command line's nohz=off makes a tickless
/// build tick periodically.
fn tickless(p: &PlatformFacts) -> Setting {
    let off = p.cmdline.split_whitespace().any(|w| w == "nohz=off");
    let (here, how) = if p.tick.is_empty() {
        (
            "not shown (no kernel configuration readable)".to_string(),
            Match::NotRead,
        )
    } else if off || p.tick.contains("periodic") {
        ("disabled: the tick is periodic".to_string(), Match::Same)
    } else {
        let mode = p.tick.split(", ").nth(1).unwrap_or(&p.tick);
        (format!("enabled: {mode}"), Match::Differs)
    };
    setting("tickless timer", "disabled", here, how)
}

fn tick_rate(p: &PlatformFacts) -> Setting {
    let hz = p.tick.split(", ").next().filter(|s| s.ends_with("Hz"));
    let here = hz.map_or("not shown".into(), |h| format!("{h} (CONFIG_HZ)"));
    setting(
        "tick rate",
        "not stated (Linux 2.6.28)",
        here,
        Match::NotCompared,
    )
}

/// The slice as the kernel shows it, or EEVDF's default (0.75 ms x (1 +
/// log2 of the CPUs, up to 8)) on kernels from 6.6 that do not show it.
fn slice(p: &PlatformFacts, online: usize) -> Setting {
    let shown = p.sched_slice.split_whitespace().collect::<Vec<_>>();
    let ms = shown
        .windows(2)
        .find(|w| w[1] == "ms")
        .and_then(|w| w[0].parse::<f64>().ok());
    let (here, value) = match (ms, eevdf(&p.kernel)) {
        (Some(ms), _) => (p.sched_slice.clone(), Some(ms)),
        (None, true) => {
            let factor = 1.0 + (online.clamp(1, 8) as f64).log2().floor();
            let ms = 0.75 * factor;
            (format!("{ms:.2} ms, derived: EEVDF's default base slice for {online} CPUs (the kernel does not show it)"), Some(ms))
        }
        (None, false) => (p.sched_slice.clone(), None),
    };
    let how = match value {
        Some(ms) if (ms - 10.0).abs() <= 1.0 => Match::Same,
        Some(_) => Match::Differs,
        None => Match::NotRead,
    };
    setting("scheduler time slice", "10 ms", here, how)
}

/// Whether `release` ("6.18.44-fc") is 6.6 or later: EEVDF's kernels.
fn eevdf(release: &str) -> bool {
    let mut n = release.split(['.', '-']).map(|x| x.parse::<u32>().ok());
    matches!((n.next(), n.next()), (Some(Some(major)), Some(Some(minor))) if (major, minor) >= (6, 6))
}

fn idle_polling(p: &PlatformFacts) -> Setting {
    let poll = p.cmdline.split_whitespace().any(|w| w == "idle=poll");
    let haltpoll = p.cpuidle_driver == "haltpoll";
    let (here, how) = match (poll, haltpoll) {
        (true, _) => ("yes (idle=poll)".to_string(), Match::Same),
        (false, true) => (
            format!(
                "halts after polling up to {} ns (haltpoll)",
                p.guest_halt_poll_ns.unwrap_or(0)
            ),
            Match::Differs,
        ),
        (false, false) => (
            "no: an idle CPU halts (no idle=poll)".to_string(),
            Match::Differs,
        ),
    };
    setting("polling when idle", "yes", here, how)
}

/// The rule's verdict over the settings, and the reason naming each one
/// that differs and each one not read.
pub fn verdict(settings: &[Setting]) -> (Verdict, String) {
    compare(settings, "settings")
}

/// The rule every comparison of this run's setup with a paper's takes:
/// reproduced when each of `what` (settings, parameters) is the paper's,
/// partly when some are, not reproduced when none is, not shown when none
/// differs but some could not be read; the reason names each that differs
/// and each not read.
pub fn compare(settings: &[Setting], what: &str) -> (Verdict, String) {
    let names = |m: Match| -> Vec<String> {
        (settings.iter().filter(|s| s.how == m))
            .map(|s| format!("{} ({})", s.name, s.here))
            .collect()
    };
    let (same, differ, unread) = (
        names(Match::Same),
        names(Match::Differs),
        names(Match::NotRead),
    );
    let verdict = match (same.is_empty(), differ.is_empty(), unread.is_empty()) {
        (_, true, true) => Verdict::Reproduced,
        (_, true, false) => Verdict::NotShown,
        (true, false, _) => Verdict::NotReproduced,
        (false, false, _) => Verdict::Partly,
    };
    let mut reason = format!(
        "{} of {} {what} as the paper's",
        same.len(),
        same.len() + differ.len() + unread.len()
    );
    if !differ.is_empty() {
        reason += &format!("; differ: {}", differ.join(", "));
    }
    if !unread.is_empty() {
        reason += &format!("; not read here: {}", unread.join(", "));
    }
    (verdict, reason)
}

/// The item's row: its verdict from [`verdict`].
pub fn claim(settings: &[Setting]) -> ClaimRow {
    let (verdict, reason) = verdict(settings);
    ClaimRow {
        item: "adms-table2-platform-settings",
        source: "ADMS'10 Table 2".into(),
        claim: "SMT, CPU low-power states and frequency scaling disabled; tickless timer disabled; 10 ms slice; polling when idle; No-op scheduler".into(),
        measured: reason.clone(),
        verdict,
        why: "This machine's settings differ from the paper's where named: its figures carry their effect (an idle CPU's wake-up, the tick, the scheduler)".into(),
        rule: format!("Table 2's settings against this machine's: reproduced when each is the paper's, partly when some are, not reproduced when none is, not shown when none differs but some could not be read: {reason}"),
    }
}

/// The section: Table 2 beside this machine's settings, and its claim.
pub fn section(p: &PlatformFacts, online: usize) -> Section {
    let s = settings(p, online);
    let word = |m: Match| match m {
        Match::Same => "as the paper's",
        Match::Differs => "differs",
        Match::NotRead => "not read",
        Match::NotCompared => "not compared",
    };
    Section {
        heading: "Table 2: the platform's settings against the paper's".into(),
        claims: vec![claim(&s)],
        tables: vec![Table {
            caption: "ADMS'10 Table 2 and this machine, as the study started".into(),
            header: ["setting", "the paper", "here", "compared"]
                .map(String::from)
                .to_vec(),
            rows: (s.iter())
                .map(|x| {
                    vec![
                        x.name.clone(),
                        x.paper.into(),
                        x.here.clone(),
                        word(x.how).into(),
                    ]
                })
                .collect(),
        }],
        ..Section::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_bench::platform_facts::DeviceFacts;

    /// The paper's platform, as this machine's facts would show it.
    fn papers() -> PlatformFacts {
        PlatformFacts {
            kernel: "6.1.0".into(),
            cmdline: "idle=poll nohz=off".into(),
            governors: [("performance".to_string(), 8)].into(),
            smt: "off".into(),
            cpuidle_driver: "none".into(),
            tick: "250 Hz, stopped on idle CPUs (NO_HZ_IDLE), CPU time sampled at each tick".into(),
            sched_slice: "CFS minimum granularity 10.00 ms".into(),
            devices: vec![DeviceFacts {
                name: "sda".into(),
                scheduler: "none".into(),
                model: "ATA INTEL SSDSA2SH032G1GN X25-E".into(),
                ..DeviceFacts::default()
            }],
            ..PlatformFacts::default()
        }
    }

    #[test]
    fn the_papers_settings_are_reproduced() {
        let s = settings(&papers(), 8);
        let (v, why) = verdict(&s);
        assert_eq!(v, Verdict::Reproduced, "{why}");
        assert!(why.starts_with("8 of 8 settings as the paper's"), "{why}");
        assert_eq!(
            s.iter().find(|x| x.name == "tick rate").unwrap().here,
            "250 Hz (CONFIG_HZ)"
        );
    }

    #[test]
    fn each_setting_that_differs_is_named() {
        let mut p = papers();
        p.smt = "on".into();
        p.cmdline = String::new();
        p.devices[0].scheduler = "mq-deadline".into();
        let (v, why) = verdict(&settings(&p, 8));
        assert_eq!(v, Verdict::Partly);
        assert!(why.contains("SMT (on)"), "{why}");
        assert!(
            why.contains("tickless timer (enabled: stopped on idle CPUs (NO_HZ_IDLE))"),
            "{why}"
        );
        assert!(
            why.contains("polling when idle (no: an idle CPU halts"),
            "{why}"
        );
        assert!(why.contains("I/O scheduler of sda (mq-deadline)"), "{why}");
    }

    #[test]
    fn a_device_without_a_scheduler_has_none_to_choose() {
        let mut p = papers();
        p.devices[0].scheduler = String::new();
        let s = settings(&p, 8);
        let sched = s.iter().find(|x| x.name == "I/O scheduler of sda").unwrap();
        assert_eq!(sched.how, Match::Same);
        assert!(
            sched.here.starts_with("none (no I/O scheduler offered"),
            "{}",
            sched.here
        );
    }

    #[test]
    fn a_setting_not_read_keeps_an_otherwise_alike_platform_not_shown() {
        let mut p = papers();
        p.governors.clear();
        let (v, why) = verdict(&settings(&p, 8));
        assert_eq!(v, Verdict::NotShown);
        assert!(
            why.contains("not read here: frequency scaling (not visible"),
            "{why}"
        );
    }

    #[test]
    fn the_slice_is_derived_on_kernels_that_hide_it() {
        let mut p = papers();
        p.kernel = "6.18.44-fc-v1272".into();
        p.sched_slice =
            "not shown by this kernel (mount debugfs at /sys/kernel/debug to read it)".into();
        let s = slice(&p, 2);
        assert_eq!(s.how, Match::Differs);
        assert!(s.here.starts_with("1.50 ms, derived"), "{}", s.here);
        assert_eq!(slice(&p, 8).here[..4], *"3.00");
        p.kernel = "5.15.0".into();
        assert_eq!(slice(&p, 2).how, Match::NotRead);
    }
}
