//! fio's mmap engine through the binary: data written through the mapping
//! verifies and reads back through pread, a job file counts the I/Os and
//! bytes fio 3.33 counts, and a block device holding data is refused for
//! mmap writes exactly as for psync.

mod common;

use common::{fio_in, have_fio, ios_in, job, json_of, run_in, run_json_in, text};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn ios(j: &Value) -> (u64, u64) {
    (ios_in(j, "read"), ios_in(j, "write"))
}

fn io_bytes(j: &Value) -> (u64, u64) {
    let b = |d: &str| j[d]["io_bytes"].as_u64().unwrap();
    (b("read"), b("write"))
}

/// Random writes through mmap with crc32c verify: every block is written
/// once and read back through the mapping; then the same file read with
/// psync (pread, no mapping) verifies too, so the bytes reached the file.
#[test]
fn mmap_writes_verify_and_read_back_through_pread() {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--name=mm",
        "--ioengine=mmap",
        "--rw=randwrite",
        "--bs=4k",
        "--size=2m",
        "--filename=data",
        "--direct=0",
        "--verify=crc32c",
    ];
    let w = json_of(&run_json_in(dir.path(), &common));
    let j = job(&w, "mm");
    assert_eq!(ios(j), (512, 512), "512 writes, each read back");
    assert_eq!(io_bytes(j), (2 << 20, 2 << 20));
    assert!(
        j["hiops"]["engine"].as_str().unwrap().contains("mmap"),
        "{j}"
    );
    assert_eq!(j["hiops"]["verify"]["blocks_checked"], 512);
    assert_eq!(j["hiops"]["verify"]["bad_blocks"], 0);

    let mut psync = common.to_vec();
    psync[1] = "--ioengine=psync";
    psync.push("--verify_only");
    let r = json_of(&run_json_in(dir.path(), &psync));
    let j = job(&r, "mm");
    assert_eq!(j["hiops"]["verify"]["blocks_checked"], 512);
    assert_eq!(j["hiops"]["verify"]["bad_blocks"], 0);

    // A block changed behind hiops' back is caught by reads through mmap.
    let path = dir.path().join("data");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[7 * 4096..8 * 4096].fill(0x3c);
    std::fs::write(&path, bytes).unwrap();
    let mut again = common.to_vec();
    again.push("--verify_only");
    let o = run_json_in(dir.path(), &again);
    assert!(!o.status.success(), "a bad block passed: {}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        job(&v, "mm")["hiops"]["verify"]["first_bad_offset"],
        7 * 4096
    );
}

const MMAP_JOB: &str = "\
[global]
ioengine=mmap
bs=4k
size=1m
filename=data

[w]
rw=write
fsync=16

[r]
stonewall
rw=randread

[rw]
stonewall
rw=randrw
rwmixread=50
";

/// The same mmap job file counts the same I/Os and bytes in hiops as the
/// job's size says, and as fio 3.33 counts.
#[test]
fn mmap_job_file_counts_what_fio_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mm.fio"), MMAP_JOB).unwrap();
    let h = json_of(&run_json_in(dir.path(), &["mm.fio"]));
    assert_eq!(ios(job(&h, "w")), (0, 256));
    assert_eq!(io_bytes(job(&h, "w")), (0, 1 << 20));
    assert_eq!(ios(job(&h, "r")), (256, 0));
    assert_eq!(io_bytes(job(&h, "r")), (1 << 20, 0));
    let (r, w) = ios(job(&h, "rw"));
    assert_eq!(r + w, 256);
    if !have_fio() {
        return;
    }
    let o = fio_in(
        dir.path(),
        &["--output-format=json".into(), "mm.fio".into()],
    );
    assert!(o.status.success(), "fio: {}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let f: Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    for name in ["w", "r"] {
        assert_eq!(ios(job(&h, name)), ios(job(&f, name)), "job {name}");
        assert_eq!(
            io_bytes(job(&h, name)),
            io_bytes(job(&f, name)),
            "job {name}"
        );
        assert_eq!(job(&f, name)["error"], 0);
    }
    let (fr, fw) = ios(job(&f, "rw"));
    assert_eq!(fr + fw, 256);
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a file of the test's, detached on drop.
struct Loop(String);

impl Loop {
    fn new(backing: &Path) -> Option<Loop> {
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| Loop(String::from_utf8_lossy(&o.stdout).trim().to_string()))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// mmap writes to a block device carrying a filesystem signature are
/// refused (exit 3) with psync's one line; reads through mmap are allowed.
#[test]
fn mmap_writes_to_a_device_holding_data_are_refused_like_psync() {
    if !is_root() {
        eprintln!("skipped: needs root to set up a loop device");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let backing = tmp.path().join("disk.img");
    let mut img = vec![0u8; 8 << 20];
    img[1080] = 0x53; // ext2/3/4 superblock magic 0xEF53 at byte 1080
    img[1081] = 0xEF;
    std::fs::write(&backing, &img).unwrap();
    let Some(dev) = Loop::new(&backing) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let fname = format!("--filename={}", dev.0);
    let write = |engine: &str| {
        let eng = format!("--ioengine={engine}");
        run_in(
            tmp.path(),
            &[&fname, &eng, "--rw=randwrite", "--size=1m", "--bs=4k"],
        )
    };
    let (m, p) = (write("mmap"), write("psync"));
    assert_eq!(m.status.code(), Some(3), "mmap: {}", text(&m));
    assert_eq!(p.status.code(), Some(3), "psync: {}", text(&p));
    let err = String::from_utf8_lossy(&m.stderr);
    assert!(err.contains("carries an ext2 filesystem"), "{err}");
    assert_eq!(
        err,
        String::from_utf8_lossy(&p.stderr),
        "mmap refused otherwise than psync"
    );
    assert_eq!(
        std::fs::read(&backing).unwrap(),
        img,
        "the device was written"
    );
    let eng = "--ioengine=mmap";
    let r = run_json_in(
        tmp.path(),
        &[
            &fname,
            eng,
            "--rw=randread",
            "--size=1m",
            "--bs=4k",
            "--name=r",
        ],
    );
    let v = json_of(&r);
    assert_eq!(ios(job(&v, "r")), (256, 0));
}
