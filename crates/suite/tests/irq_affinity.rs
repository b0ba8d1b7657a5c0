//! A CPU-scaling point moves its device's interrupts to the CPUs it
//! allows and puts them back after (ADMS'10 Fig 8, 9 count the whole
//! platform's work). Needs root and a device whose interrupts the kernel
//! lets user space move: skipped with the reason otherwise.

use hiops_suite::irq::affinity::{self as irq_affinity, AffinityGuard, IrqFiles, Vector};
use hiops_suite::runner::BenchRunner;
use hiops_suite::sweep::Runner;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

fn affinity(irq: u32) -> String {
    std::fs::read_to_string(format!("/proc/irq/{irq}/smp_affinity_list"))
        .unwrap()
        .trim()
        .to_string()
}

/// The last online CPU: a set the vectors are least likely to hold already.
fn last_cpu() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
}

/// Why the vectors cannot be moved here, if so.
fn why_not_movable(vectors: &[Vector]) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    if !irq_affinity::is_root() {
        return Some("not root".into());
    }
    vectors.iter().find_map(|v| {
        let f = format!("/proc/irq/{}/smp_affinity_list", v.irq);
        let mode = std::fs::metadata(&f).ok()?.permissions().mode();
        (mode & 0o222 == 0).then(|| format!("{v} is managed by the kernel"))
    })
}

#[test]
fn a_point_moves_its_devices_interrupts_and_puts_them_back() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file: PathBuf = dir.path().join("data");
    std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
    let cpu = last_cpu();
    let args: Vec<String> = [
        format!("--filename={}", file.display()),
        "--size=8m".into(),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--ioengine=psync".into(),
        "--runtime=1".into(),
        "--time_based=1".into(),
        format!("--cpus_allowed={cpu}"),
        irq_affinity::FLAG.into(),
    ]
    .to_vec();
    let found = irq_affinity::vectors_of(std::slice::from_ref(&file));
    let movable = match &found {
        Ok((_, vs)) => why_not_movable(vs).map_or(Ok(vs.clone()), Err),
        Err(why) => Err(why.to_string()),
    };
    let before: Vec<(u32, String)> = match &movable {
        Ok(vs) => vs.iter().map(|v| (v.irq, affinity(v.irq))).collect(),
        Err(_) => Vec::new(),
    };
    let mut during: Vec<Vec<String>> = Vec::new();
    let mut hook = |_: &hiops_bench::Progress| {
        during.push(before.iter().map(|(irq, _)| affinity(*irq)).collect());
    };
    let stop = AtomicBool::new(false);
    let mut runner = BenchRunner {
        interrupt: &stop,
        progress: Some(&mut hook),
    };
    let m = runner.run(&args).unwrap_or_else(|e| panic!("{e:?}"));
    let note = m.notes.join("\n");
    assert_eq!(m.notes.len(), 1, "one line: {note}");
    let vectors = match movable {
        Ok(vs) => vs,
        Err(why) => {
            // Every point still says, in one line, why its interrupts stayed.
            assert!(note.starts_with("Interrupts not confined: "), "{note}");
            eprintln!("skipped: the device under {} cannot have its interrupts moved here ({why}); the point said: {note}", dir.path().display());
            return;
        }
    };
    assert!(note.starts_with("Interrupts confined: "), "{note}");
    assert!(!during.is_empty(), "the run reported progress");
    let want = cpu.to_string();
    assert!(
        during.iter().all(|d| d.iter().all(|a| *a == want)),
        "during the point: {during:?}"
    );
    for (irq, was) in &before {
        assert_eq!(affinity(*irq), *was, "IRQ {irq} put back");
    }
    eprintln!("{note} ({} vectors)", vectors.len());
}

/// The guard alone on an interrupt named by HIOPS_TEST_IRQ=N (any vector
/// of this machine the kernel lets user space move; a test does not pick
/// a system interrupt by itself).
#[test]
fn the_guard_moves_a_named_interrupt_and_puts_it_back() {
    let Some(irq) = std::env::var("HIOPS_TEST_IRQ")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    else {
        eprintln!("skipped: set HIOPS_TEST_IRQ=N to move interrupt N for a moment");
        return;
    };
    let v = Vector {
        irq,
        name: String::new(),
    };
    if let Some(why) = why_not_movable(std::slice::from_ref(&v)) {
        eprintln!("skipped: {why}");
        return;
    }
    let before = affinity(irq);
    let cpu = last_cpu();
    let files = IrqFiles::system();
    let guard = AffinityGuard::move_to(std::slice::from_ref(&v), &[cpu], &files)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(affinity(irq), cpu.to_string(), "while the guard lives");
    assert_eq!(guard.saved()[0].1, before);
    let journal = files.journal(std::process::id());
    assert!(journal.exists(), "what to put back is kept while moved");
    drop(guard);
    assert_eq!(affinity(irq), before, "put back");
    assert!(!journal.exists());
}
