//! ADMS Table 1 on one device hiops sets up (a loop device with ext4 made
//! on it): four distinct cells, direct/buffered x block/file, plus the
//! buffered hit path, all read from that one device. Root only: skipped
//! with the reason otherwise.

use hiops_report::figures::Figure;
use hiops_suite::papers::table1::{measure, Table1};
use hiops_suite::runner::BenchRunner;
use hiops_suite::sweep::RunFailure;
use std::sync::atomic::AtomicBool;

fn metric(t: &Table1, mode: &str, path: &str, key: Figure) -> f64 {
    let c = t
        .cell(mode, path)
        .unwrap_or_else(|| panic!("no {mode} {path} cell: {t:?}"));
    *c.metrics
        .figure(key)
        .unwrap_or_else(|| panic!("{mode} {path}: no {}: {:?}", key.key(), c.metrics))
}

#[test]
fn the_two_by_two_reads_one_device_four_ways() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let stop = AtomicBool::new(false);
    let mut runner = BenchRunner {
        interrupt: &stop,
        progress: None,
    };
    let t = match measure(dir.path(), "1", "0", 2, &mut runner) {
        Ok(t) => t,
        Err(RunFailure::Failed(why)) if why.contains("root") => {
            eprintln!("skipped: {why}");
            return;
        }
        Err(e) => panic!("{e:?}"),
    };
    assert!(t.device.starts_with("/dev/loop"), "{t:?}");
    assert!(
        t.cells.iter().all(|c| c.rounds == 2),
        "every cell in both rounds"
    );
    for c in &t.cells {
        let m = |k: Figure| c.metrics.figure(k).copied().unwrap_or(f64::NAN);
        eprintln!(
            "{:<14} {:<5} {:>8.0} IOPS {:>8.1} us {:>8.0} clocks/IO {:>5.2} device reads/IO",
            c.mode,
            c.path,
            m(Figure::Iops),
            m(Figure::LatMeanUs),
            m(Figure::ProcessClocksPerIo),
            m(Figure::DeviceIosPerIo)
        );
    }
    for f in hiops_suite::papers::table1::findings(&t) {
        eprintln!("{f}");
    }
    // Four distinct Table 1 rows (and the hit path beside them).
    let mut keys: Vec<(String, String)> = t
        .cells
        .iter()
        .map(|c| (c.mode.clone(), c.path.clone()))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 6, "{keys:?}");
    for mode in ["direct", "buffered miss"] {
        let block = t.cell(mode, "block").unwrap();
        let file = t.cell(mode, "file").unwrap();
        assert_eq!(block.target, t.device, "the block cell reads the device");
        assert_ne!(file.target, t.device, "the file cell reads a file");
        for path in ["block", "file"] {
            assert!(metric(&t, mode, path, Figure::Iops) > 0.0);
            assert!(metric(&t, mode, path, Figure::ProcessClocksPerIo) > 0.0);
            // Every read of these reaches the device (1.00 here: no
            // readahead, fadvise_hint's random, and each block once per
            // pass); a miss path that hit the cache would show near 0.
            let reads = metric(&t, mode, path, Figure::DeviceIosPerIo);
            assert!(reads > 0.9, "{mode} {path}: {reads} device reads per I/O");
        }
    }
    // The file cells were served by the same device: its diskstats moved.
    for path in ["block", "file"] {
        let hits = metric(&t, "buffered hit", path, Figure::DeviceIosPerIo);
        assert!(
            hits < 0.2,
            "buffered hit {path}: {hits} device reads per I/O"
        );
    }
    // Mounted and attached only while measured.
    assert!(!dir.path().join("table1-mnt").exists());
    assert!(!dir.path().join("table1-device.img").exists());
}
