//! The gate's exclusive hold on loop devices over files these tests make:
//! kept after the check, shared by later checks and by plain opens, given
//! back by `release`; a device another descriptor holds with O_EXCL is
//! refused; a disk and its partition cannot both be held. Needs root and
//! losetup; skips with a reason without them.

use hiops_hal::ramdev::RamDevice;
use hiops_safety::{check_write, is_held, release, Grants, Refusal};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;

fn loop_device(dir: &Path) -> Option<RamDevice> {
    match RamDevice::loop_on(dir, 16 << 20) {
        Ok(d) => Some(d),
        Err(why) => {
            eprintln!("skipped: no loop device ({why})");
            None
        }
    }
}

fn exclusive(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
}

#[test]
fn a_passed_device_stays_held_until_released() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(dev) = loop_device(tmp.path()) else {
        return;
    };
    let p = dev.path.as_path();
    assert!(!is_held(p));
    assert_eq!(check_write(p, &Grants::default()), Ok(()));
    assert!(is_held(p), "the gate keeps its exclusive descriptor");
    let other = exclusive(p).expect_err("nothing else may claim a held device");
    assert_eq!(other.raw_os_error(), Some(libc::EBUSY));
    // Checked again (another job of the run), and opened to write.
    assert_eq!(check_write(p, &Grants::default()), Ok(()));
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(p)
        .expect("the holder opens its device to write");
    assert!(release(p));
    assert!(!is_held(p) && !release(p));
    drop(exclusive(p).expect("released: others may claim it"));
}

#[test]
fn a_device_held_elsewhere_is_refused_as_in_use() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(dev) = loop_device(tmp.path()) else {
        return;
    };
    let p = dev.path.as_path();
    let holder = exclusive(p).expect("the loop device opens exclusively");
    let named = Grants::device(p);
    match check_write(p, &named) {
        Err(Refusal::InUse { what, todo, .. }) => {
            assert!(what.contains("opened exclusively"), "{what}");
            assert!(todo.contains("allow_mounted_write=1"), "{todo}");
        }
        other => panic!("a held device passed the gate: {other:?}"),
    }
    assert!(!is_held(p));
    // Both grants: written in use, and not held (that would fail).
    let both = Grants {
        devices: vec![p.to_path_buf()],
        mounted: vec![p.to_path_buf()],
    };
    assert_eq!(check_write(p, &both), Ok(()));
    assert!(!is_held(p));
    drop(holder);
}

/// A loop device with a partition table read (`p1`), detached on drop.
struct Partitioned {
    dev: String,
}

impl Partitioned {
    fn new(img: &Path) -> Option<Partitioned> {
        File::create(img).ok()?.set_len(16 << 20).ok()?;
        let mut sfdisk = Command::new("sfdisk")
            .args(["-q"])
            .arg(img)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()?;
        std::io::Write::write_all(&mut sfdisk.stdin.take()?, b"label: dos\n,8M\n").ok()?;
        sfdisk.wait().ok()?.success().then_some(())?;
        let o = Command::new("losetup")
            .args(["--find", "--show", "--partscan"])
            .arg(img)
            .output()
            .ok()?;
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let made = Partitioned { dev };
        let p1 = format!("{}p1", made.dev);
        if o.status.success() && !Path::new(&p1).exists() {
            // A kernel without the dos partition parser: add it by hand.
            let _ = Command::new("partx").args(["-a", &made.dev]).status();
        }
        (o.status.success() && Path::new(&p1).exists()).then_some(made)
    }
}

impl Drop for Partitioned {
    fn drop(&mut self) {
        release(Path::new(&self.dev));
        release(Path::new(&format!("{}p1", self.dev)));
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn a_disk_and_its_partition_are_not_both_held() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return eprintln!("skipped: needs root for loop devices");
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(disk) = Partitioned::new(&tmp.path().join("disk.img")) else {
        return eprintln!("skipped: sfdisk, losetup --partscan or partx is not available");
    };
    let (whole, part) = (Path::new(&disk.dev), format!("{}p1", disk.dev));
    let part = Path::new(&part);
    assert_eq!(check_write(part, &Grants::device(part)), Ok(()));
    match check_write(whole, &Grants::device(whole)) {
        Err(Refusal::InUse { what, .. }) => {
            assert!(what.contains("this run already writes"), "{what}");
        }
        other => panic!("the disk of a held partition passed: {other:?}"),
    }
}
