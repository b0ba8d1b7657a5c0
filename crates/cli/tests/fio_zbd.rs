//! zonemode=zbd is refused before any I/O with what the target is, read
//! from sysfs: a loop device this test sets up (root only; its queue/zoned
//! is none) and a regular file.

mod common;

use common::{hiops, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a file of the test's, detached on drop.
struct Loop(String);

impl Loop {
    fn over(backing: &Path) -> Option<Loop> {
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .ok()?;
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        (o.status.success() && !dev.is_empty()).then_some(Loop(dev))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

fn zbd_job(dir: &Path, target: &str) -> Output {
    hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .args([
            "fio",
            "--name=z",
            "--rw=read",
            "--size=1m",
            "--zonemode=zbd",
        ])
        .arg(format!("--filename={target}"))
        .output()
        .unwrap()
}

/// The run failed before any I/O with one line holding `says`.
fn refused_saying(o: &Output, says: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(o));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(says), "{err}");
}

#[test]
fn a_device_without_zones_is_named_with_its_queue() {
    if !is_root() {
        eprintln!("skipped: needs root to set up a loop device");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("disk.img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let Some(dev) = Loop::over(&backing) else {
        eprintln!("skipped: losetup found no free loop device");
        return;
    };
    let o = zbd_job(tmp.path(), &dev.0);
    let says = format!(
        "{} is not a zoned block device (queue/zoned is none)",
        dev.0
    );
    refused_saying(&o, &says);
}

#[test]
fn a_file_is_no_zoned_device() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f"), vec![0u8; 1 << 20]).unwrap();
    let o = zbd_job(tmp.path(), "f");
    refused_saying(&o, "f is not a block device");
}
