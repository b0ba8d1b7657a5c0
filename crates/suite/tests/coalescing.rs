//! ADMS'10 Fig 6 on this machine's disk: a point that asks for an NVMe
//! controller's interrupt coalescing on a target that is no NVMe namespace
//! fails before it runs, naming the disk's driver and what would show the
//! paper's coalescing; without the flag the same point runs as before.
//! Skipped where /var/tmp is on an NVMe namespace: no test sends a real
//! admin command.

use hiops_suite::irq::coalescing::controller::{self, SYS};
use hiops_suite::irq::coalescing::point::{Coalesced, FLAG};
use hiops_suite::runner::BenchRunner;
use hiops_suite::sweep::{RunFailure, Runner};
use std::path::Path;
use std::sync::atomic::AtomicBool;

#[test]
fn a_point_on_a_disk_without_coalescing_fails_unrun_and_names_its_driver() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let Some(dev) = hiops_suite::irq::knobs::device_of(dir.path().to_str().unwrap()) else {
        eprintln!("skipped: /var/tmp is on no block device");
        return;
    };
    if controller::find(Path::new(SYS), &dev.disk).is_ok() {
        eprintln!(
            "skipped: /var/tmp is on the NVMe namespace {}, and this test sends no admin command",
            dev.disk
        );
        return;
    }
    let interrupt = AtomicBool::new(false);
    let mut runner = Coalesced::new(BenchRunner {
        interrupt: &interrupt,
        progress: None,
    });
    let file = dir.path().join("data");
    let job: Vec<String> = [
        format!("--filename={}", file.display()),
        "--size=1m".into(),
        "--rw=randread".into(),
        "--runtime=200ms".into(),
        "--ramp_time=0".into(),
        "--time_based=1".into(),
    ]
    .into();
    let asked: Vec<String> = job
        .iter()
        .cloned()
        .chain([format!("{FLAG}=16x200us")])
        .collect();
    let Err(RunFailure::Failed(why)) = runner.run(&asked) else {
        panic!(
            "a point set coalescing on {}, which is no NVMe namespace",
            dev.disk
        );
    };
    eprintln!("the point refused: {why}");
    assert!(why.contains(&dev.disk), "{why}");
    assert!(why.contains("an NVMe SSD on PCIe would show it"), "{why}");
    if dev.disk.starts_with("vd") {
        assert!(why.contains("driver virtio_blk"), "{why}");
    }
    assert!(
        !file.exists(),
        "the point did not run: its file was never made"
    );
    let m = runner.run(&job).map_err(|e| format!("{e:?}")).unwrap();
    assert!(m.metrics.iops.is_some_and(|iops| iops > 0.0));
    assert!(
        m.notes.iter().all(|n| !n.contains("coalescing")),
        "{:?}",
        m.notes
    );
}
