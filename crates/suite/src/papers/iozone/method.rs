//! Does the run follow the study's method? Its recorded parameters (the
//! plan saved with the report) set against the paper's: the IOZone
//! command, the preconditioning and the five runs. A parameter that
//! changes what is measured (direct I/O, several threads, no final sync,
//! a cache left warm, reads drawn with replacement, write tests not run)
//! makes the method "not reproduced"; one that changes its scale (fewer
//! request sizes, a file that fits in memory while each block is read
//! once anyway) "partly"; the verdict's why names each difference.

use super::plan::Plan;
use crate::verdicts::claims::{ClaimRow, Verdict};

/// The study's request sizes (its Tables II-V rows).
const STUDY_SIZES: [u64; 5] = [4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10];

/// The study's runs of each point on its devices of varying performance.
const STUDY_RUNS: u32 = 5;

const SOURCE: &str = "IOZone study";

/// How far a parameter of the run is from the paper's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Differs {
    /// The same scale of test, smaller or differently sized.
    Scale,
    /// What is measured is not what the paper measured.
    Method,
}

/// One parameter: what the run did, and how it differs (if it does).
struct Check {
    here: String,
    differs: Option<(Differs, String)>,
}

fn check(here: impl Into<String>, differs: Option<(Differs, String)>) -> Check {
    Check {
        here: here.into(),
        differs,
    }
}

/// The method claims of a study run.
pub fn claims(plan: &Plan) -> Vec<ClaimRow> {
    vec![command(plan), precondition(plan), five_runs(plan)]
}

/// A verdict from the worst difference, and the why that lists them.
fn verdict_of(checks: &[Check]) -> (Verdict, String) {
    let worst = checks
        .iter()
        .filter_map(|c| c.differs.as_ref())
        .max_by_key(|d| d.0);
    let whys: Vec<&str> = (checks.iter())
        .filter_map(|c| Some(c.differs.as_ref()?.1.as_str()))
        .collect();
    assert_eq!(
        worst.is_none(),
        whys.is_empty(),
        "a difference found is a difference said"
    );
    let verdict = match worst {
        None => Verdict::Reproduced,
        Some((Differs::Scale, _)) => Verdict::Partly,
        Some((Differs::Method, _)) => Verdict::NotReproduced,
    };
    (verdict, whys.join("; "))
}

fn row(item: &'static str, claim: &str, checks: &[Check], rule: &str) -> ClaimRow {
    let (verdict, why) = verdict_of(checks);
    let same = checks.iter().filter(|c| c.differs.is_none()).count();
    let here: Vec<&str> = checks.iter().map(|c| c.here.as_str()).collect();
    ClaimRow {
        item,
        source: SOURCE.into(),
        claim: claim.into(),
        measured: here.join(", "),
        verdict,
        why: if why.is_empty() {
            "every parameter as the paper's".into()
        } else {
            format!("Differs: {why}")
        },
        rule: format!("method: {rule}, {same} of {} as the paper's", checks.len()),
    }
}

fn has(plan: &Plan, option: &str) -> bool {
    plan.base.iter().any(|a| a == option)
}

/// `iozone -Raz -e -i 0 -i 1 -i 2 -s 4g -U`, parameter by parameter.
fn command(plan: &Plan) -> ClaimRow {
    let method = |why: &str| Some((Differs::Method, why.to_string()));
    let read_only: Vec<&str> = (plan.targets.iter())
        .filter(|t| !t.writes)
        .map(|t| t.label.as_str())
        .collect();
    let checks = [
        match read_only.is_empty() {
            true => check("all four tests (-i 0 -i 1 -i 2)", None),
            false => check(
                "reads only on some targets",
                method(&format!("no write tests on {} (give --allow-write or a directory)", read_only.join(", "))),
            ),
        },
        sizes_check(plan),
        match plan.threads {
            1 => check("1 thread", None),
            n => check(format!("{n} threads"), method(&format!("{n} threads, IOZone's one"))),
        },
        match has(plan, "--direct=0") {
            true => check("buffered through the file system", None),
            false => check("O_DIRECT", method("O_DIRECT, not through the page cache as IOZone")),
        },
        match has(plan, "--end_fsync=1") {
            true => check("writes timed through their fsync (-e)", None),
            false => check("no final fsync", method("writes not timed through a final fsync (-e)")),
        },
        match has(plan, "--invalidate=1") {
            true => check("the file's cache dropped as each test starts (-U)", None),
            false => check("the cache kept", method("the file's cached pages not dropped before each test (-U remounts)")),
        },
        match has(plan, "--norandommap=0") {
            true => check("each block read once a pass", None),
            false => check("random reads with replacement", method("random reads drawn with replacement: blocks read again come from the page cache")),
        },
        file_check(plan),
    ];
    row(
        "iozone-method-command",
        "iozone -Raz -e -i 0 -i 1 -i 2 -s 4g -U: four tests, 4KB-64KB, a sync before each test ends, a 4GB file larger than memory, remounted before each test",
        &checks,
        "the run's recorded parameters against the IOZone command",
    )
}

/// The request sizes against the study's five.
fn sizes_check(plan: &Plan) -> Check {
    let bytes: Vec<u64> = (plan.sizes.iter())
        .filter_map(|s| hiops_bench::units::parse_size(s).ok())
        .collect();
    let here = format!("sizes {}", plan.sizes.join(","));
    match bytes == STUDY_SIZES {
        true => check(here, None),
        false => {
            let why = format!(
                "request sizes {}, the study's 4k,8k,16k,32k,64k",
                plan.sizes.join(",")
            );
            check(here, Some((Differs::Scale, why)))
        }
    }
}

/// The test file against the page cache.
fn file_check(plan: &Plan) -> Check {
    let mib = plan.file_bytes >> 20;
    match &plan.page_cache {
        Some(c) if c.file_larger() => {
            check(format!("a {mib} MiB file larger than the page cache"), None)
        }
        Some(c) => check(
            format!("a {mib} MiB file"),
            Some((Differs::Scale, c.line())),
        ),
        None => check(
            format!("a {mib} MiB file"),
            Some((
                Differs::Scale,
                "the file's size against the page cache was not recorded".into(),
            )),
        ),
    }
}

/// dd over every logical address before the tests.
fn precondition(plan: &Plan) -> ClaimRow {
    let writable = plan.targets.iter().any(|t| t.writes);
    let checks = [match (plan.precondition, writable) {
        (true, true) => check(
            "each writable test file written in full twice before the tests",
            Some((Differs::Scale, "the test file, not every logical address of its device: hiops writes only what it made or was allowed".into())),
        ),
        (true, false) => check(
            "no target writable",
            Some((Differs::Method, "no target could be written, so none was preconditioned (give --allow-write)".into())),
        ),
        (false, _) => check(
            "the file written once, as it was laid out",
            Some((Differs::Method, "no several writes before the tests (give --precondition)".into())),
        ),
    }];
    row(
        "iozone-method-precondition",
        "several writes with dd to every logical address before the tests",
        &checks,
        "the run's preconditioning against the paper's",
    )
}

/// Five runs, the mean and its standard deviation.
fn five_runs(plan: &Plan) -> ClaimRow {
    let n = plan.rounds;
    let here = format!("{n} runs of every point, mean ± standard deviation");
    let checks = [match n {
        _ if n >= STUDY_RUNS => check(here, None),
        1 => check(
            here,
            Some((
                Differs::Method,
                "one run: no standard deviation to show (give --rounds 5)".into(),
            )),
        ),
        _ => check(
            here,
            Some((
                Differs::Scale,
                format!("{n} runs, the study's {STUDY_RUNS} (give --rounds 5)"),
            )),
        ),
    }];
    row(
        "iozone-method-five-runs",
        "five runs, shown as the average with standard deviation error bars",
        &checks,
        "the run's rounds against the study's five",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::papers::iozone::{IozoneTarget, PageCache};

    /// A study plan as `hiops iozone --study` makes it, on a file larger
    /// than the cache.
    fn study() -> Plan {
        Plan {
            targets: vec![IozoneTarget {
                label: "fs".into(),
                path: "/mnt/f".into(),
                writes: true,
                device_allowed: false,
            }],
            sizes: ["4k", "8k", "16k", "32k", "64k"].map(String::from).to_vec(),
            threads: 1,
            base: [
                "--direct=0",
                "--end_fsync=1",
                "--invalidate=1",
                "--norandommap=0",
            ]
            .map(String::from)
            .to_vec(),
            rounds: 5,
            costs: vec![],
            precondition: true,
            study: true,
            file_bytes: 4 << 30,
            page_cache: Some(PageCache::FileLarger {
                file: 4 << 30,
                available: 2 << 30,
            }),
        }
    }

    fn of(plan: &Plan, item: &str) -> ClaimRow {
        claims(plan).into_iter().find(|c| c.item == item).unwrap()
    }

    #[test]
    fn the_papers_command_is_followed_parameter_by_parameter() {
        let c = of(&study(), "iozone-method-command");
        assert_eq!(c.verdict, Verdict::Reproduced, "{}", c.why);
        assert!(c.rule.ends_with("8 of 8 as the paper's"), "{}", c.rule);
        // Two sizes and a file that fits: the scale differs.
        let mut quick = study();
        quick.sizes = vec!["4k".into(), "64k".into()];
        quick.page_cache = Some(PageCache::FileFits {
            file: 256 << 20,
            available: 20 << 30,
            why: "no cgroup v2 is mounted here (cgroup v1 only)".into(),
        });
        let c = of(&quick, "iozone-method-command");
        assert_eq!(c.verdict, Verdict::Partly);
        assert!(
            c.why.contains("request sizes 4k,64k") && c.why.contains("no cgroup v2"),
            "{}",
            c.why
        );
    }

    #[test]
    fn reads_drawn_with_replacement_or_direct_io_fail_the_method() {
        let mut p = study();
        p.base.retain(|a| a != "--norandommap=0");
        let c = of(&p, "iozone-method-command");
        assert_eq!(c.verdict, Verdict::NotReproduced);
        assert!(c.why.contains("drawn with replacement"), "{}", c.why);
        let mut p = study();
        p.base = vec!["--direct=1".into()];
        p.threads = 4;
        let c = of(&p, "iozone-method-command");
        assert_eq!(c.verdict, Verdict::NotReproduced);
        assert!(
            c.why.contains("O_DIRECT") && c.why.contains("4 threads"),
            "{}",
            c.why
        );
    }

    #[test]
    fn preconditioning_a_file_is_partly_the_papers_and_none_is_not() {
        let c = of(&study(), "iozone-method-precondition");
        assert_eq!(c.verdict, Verdict::Partly);
        let mut p = study();
        p.precondition = false;
        let c = of(&p, "iozone-method-precondition");
        assert_eq!(c.verdict, Verdict::NotReproduced);
        assert!(c.why.contains("--precondition"), "{}", c.why);
    }

    #[test]
    fn five_runs_are_the_papers_three_are_partly_one_is_not() {
        assert_eq!(
            of(&study(), "iozone-method-five-runs").verdict,
            Verdict::Reproduced
        );
        let mut p = study();
        p.rounds = 3;
        let c = of(&p, "iozone-method-five-runs");
        assert_eq!(c.verdict, Verdict::Partly);
        assert!(c.why.contains("3 runs, the study's 5"), "{}", c.why);
        p.rounds = 1;
        assert_eq!(
            of(&p, "iozone-method-five-runs").verdict,
            Verdict::NotReproduced
        );
    }
}
