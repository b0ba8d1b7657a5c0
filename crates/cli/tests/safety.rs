//! The safety gate end to end: every signature family libblkid knows is
//! refused on a loop device by `hiops run` and `hiops iozone --allow-write`
//! and the device is left bit for bit as it was; a device in use (mounted
//! ext4, xfs or btrfs, a btrfs' other device, active swap, another
//! program's exclusive open) is refused even when named, and written only
//! with allow_mounted_write=1 too; the jobs of one run share the gate's
//! hold; a killed default run leaves nothing in TMPDIR;
//! filedelete never unlinks a device node; exec's output files pass the
//! output gate; a bad option exits 2 in every
//! subcommand. Device tests need root and the
//! mkfs tools (.ci/run installs them) and skip with a reason without them.
//! Only loop devices over files these tests create are ever touched.

use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn hiops() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiops"));
    c.stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> Output {
    hiops().args(args).output().expect("hiops starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn ok(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A loop device over a file of ours, detached (and unmounted, or its
/// swap turned off) on drop, whatever the test did.
struct Loop {
    dev: String,
    mounted: Option<PathBuf>,
    swap: bool,
}

impl Loop {
    fn new(backing: &Path, partscan: bool) -> Option<Loop> {
        let mut c = Command::new("losetup");
        c.args(["--find", "--show"]);
        if partscan {
            c.arg("--partscan");
        }
        let o = c.arg(backing).output().ok()?;
        o.status.success().then(|| Loop {
            dev: String::from_utf8_lossy(&o.stdout).trim().to_string(),
            mounted: None,
            swap: false,
        })
    }

    fn mount(&mut self, at: &Path) -> bool {
        self.mount_with(at, "rw")
    }

    /// Mounts with `-o options` (`ro`: the filesystem itself then writes
    /// nothing, so any change to the device is someone else's).
    fn mount_with(&mut self, at: &Path, options: &str) -> bool {
        let done = ok(Command::new("mount")
            .args(["-o", options])
            .arg(&self.dev)
            .arg(at));
        if done {
            self.mounted = Some(at.to_path_buf());
        }
        done
    }

    /// mkswap and swapon, at the lowest priority.
    fn swapon(&mut self) -> Result<(), String> {
        tool("mkswap", &[], Path::new(&self.dev))?;
        tool("swapon", &["--priority=0"], Path::new(&self.dev))?;
        self.swap = true;
        Ok(())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = &self.mounted {
            let _ = Command::new("umount").arg(m).status();
        }
        if self.swap {
            let _ = Command::new("swapoff").arg(&self.dev).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A checksum of every byte of a device.
fn checksum(dev: &str) -> (u64, u64) {
    let mut f = std::fs::File::open(dev).expect("the loop device reads");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf).expect("the loop device reads");
        if n == 0 {
            return (h.finish(), total);
        }
        h.write(&buf[..n]);
        total += n as u64;
    }
}

type Make = fn(&Path, &Path) -> Result<(), String>;

fn tool(name: &str, args: &[&str], img: &Path) -> Result<(), String> {
    let st = Command::new(name)
        .args(args)
        .arg(img)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{name} is not available ({e})"))?;
    st.success()
        .then_some(())
        .ok_or_else(|| format!("{name} failed ({st})"))
}

fn sfdisk(img: &Path, script: &str) -> Result<(), String> {
    use std::io::Write;
    let mut c = Command::new("sfdisk")
        .args(["-q"])
        .arg(img)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("sfdisk is not available ({e})"))?;
    c.stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let st = c.wait().unwrap();
    st.success()
        .then_some(())
        .ok_or_else(|| format!("sfdisk failed ({st})"))
}

/// A read-only image (cramfs, squashfs) of a small tree, padded to `len`.
fn packed(name: &str, args: &[&str], img: &Path, tmp: &Path, len: u64) -> Result<(), String> {
    let src = tmp.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a"), b"hiops").unwrap();
    let _ = std::fs::remove_file(img);
    let st = Command::new(name)
        .arg(&src)
        .arg(img)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{name} is not available ({e})"))?;
    if !st.success() {
        return Err(format!("{name} failed ({st})"));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(img)
        .and_then(|f| f.set_len(len))
        .map_err(|e| e.to_string())
}

/// An md RAID member with a 0.90 superblock, which lives at the device's
/// end: at the size rounded down to 64 KiB, less 64 KiB (the md on-disk
/// format; `mdadm --create` needs the md module, which this machine may
/// lack, so the superblock is written as mdadm would).
fn md090(img: &Path) -> Result<(), String> {
    use std::io::{Seek, SeekFrom, Write};
    let len = std::fs::metadata(img).unwrap().len();
    let off = (len & !0xFFFF) - 0x10000;
    let mut sb = Vec::new();
    // md_magic, major, minor, patch, gvalid_words, set_uuid0, ctime,
    // level, size (KiB), nr_disks, raid_disks
    for v in [
        0xa92b_4efc,
        0,
        90,
        0,
        0,
        0x4849_4f50,
        0,
        1,
        (off / 1024) as u32,
        2,
        2,
    ] {
        sb.extend_from_slice(&u32::to_le_bytes(v));
    }
    let mut f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.seek(SeekFrom::Start(off)).unwrap();
    f.write_all(&sb).map_err(|e| e.to_string())
}

/// Makes an image with `make`, puts a loop device over it, and shows that
/// `hiops run --rw=write` and `hiops iozone --allow-write` refuse it (exit
/// 3, naming `kind`) and leave every byte as it was.
fn refused_and_untouched(kind: &str, size_mib: u64, partscan: bool, make: Make) {
    if !is_root() {
        eprintln!("skipped: needs root for loop devices");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("disk.img");
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(size_mib << 20).unwrap();
    drop(f);
    if let Err(why) = make(&img, tmp.path()) {
        eprintln!("skipped: cannot make a {kind} image: {why}");
        return;
    }
    let Some(dev) = Loop::new(&img, partscan) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let found = hiops_bench::safety::find_signature(Path::new(&dev.dev))
        .expect("libblkid probes the device")
        .unwrap_or_else(|| panic!("libblkid finds nothing on the {kind} device"));
    assert!(found.describe().contains(kind), "{found:?}");
    let before = checksum(&dev.dev);
    let fname = format!("--filename={}", dev.dev);
    // A trim destroys data as a write does: the same gate refuses it.
    for rw in ["--rw=write", "--rw=trim"] {
        let o = run(&["run", &fname, rw, "--size=1m", "--runtime=1"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "hiops run {rw}: {err}");
        assert!(
            err.contains(kind) && err.contains("--allow-write-device="),
            "{err}"
        );
    }
    let io_dir = tmp.path().join("iozone");
    let target = format!("x={}", dev.dev);
    let o = run(&[
        "iozone",
        &target,
        "--allow-write",
        "--dir",
        io_dir.to_str().unwrap(),
        "--sizes=4k",
        "--size=1m",
        "--runtime=1",
        "--ramp=0",
        "--no-progress",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "hiops iozone: {err}");
    assert!(err.contains(kind), "{err}");
    assert!(!io_dir.exists(), "a refused iozone makes nothing");
    assert_eq!(checksum(&dev.dev), before, "the {kind} device was written");
}

macro_rules! family {
    ($test:ident, $kind:literal, $mib:literal, $partscan:literal, $make:expr) => {
        #[test]
        fn $test() {
            refused_and_untouched($kind, $mib, $partscan, $make);
        }
    };
}

family!(ext4_is_refused, "ext4", 64, false, |i, _| tool(
    "mkfs.ext4",
    &["-q", "-F"],
    i
));
family!(xfs_is_refused, "xfs", 320, false, |i, _| tool(
    "mkfs.xfs",
    &["-q", "-f"],
    i
));
family!(btrfs_is_refused, "btrfs", 128, false, |i, _| tool(
    "mkfs.btrfs",
    &["-q", "-f"],
    i
));
family!(exfat_is_refused, "exfat", 64, false, |i, _| tool(
    "mkfs.exfat",
    &[],
    i
));
family!(vfat_is_refused, "vfat", 64, false, |i, _| tool(
    "mkfs.vfat",
    &[],
    i
));
family!(swap_is_refused, "swap", 64, false, |i, _| tool(
    "mkswap",
    &[],
    i
));
family!(minix_is_refused, "minix", 64, false, |i, _| tool(
    "mkfs.minix",
    &[],
    i
));
family!(bfs_is_refused, "bfs", 64, false, |i, _| tool(
    "mkfs.bfs",
    &[],
    i
));
family!(gpt_is_refused, "gpt", 64, false, |i, _| sfdisk(
    i,
    "label: gpt\n"
));
family!(partitioned_is_refused, "dos", 64, true, |i, _| sfdisk(
    i,
    "label: dos\n,16M\n"
));
family!(cramfs_is_refused, "cramfs", 64, false, |i, t| packed(
    "mkfs.cramfs",
    &[],
    i,
    t,
    64 << 20
));
family!(squashfs_is_refused, "squashfs", 64, false, |i, t| packed(
    "mksquashfs",
    &["-quiet", "-noappend"],
    i,
    t,
    64 << 20
));
family!(
    md_090_member_is_refused,
    "linux_raid_member",
    64,
    false,
    |i, _| md090(i)
);
family!(luks_is_refused, "crypto_LUKS", 64, false, |i, _| {
    let st = Command::new("cryptsetup")
        .args([
            "luksFormat",
            "-q",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
        ])
        .arg(i)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cryptsetup is not available ({e})"))
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"hiops").unwrap();
            c.wait().map_err(|e| e.to_string())
        })?;
    st.success()
        .then_some(())
        .ok_or_else(|| format!("cryptsetup luksFormat failed ({st})"))
});

#[test]
fn a_blank_device_is_written_and_a_named_one_too() {
    if !is_root() {
        eprintln!("skipped: needs root for loop devices");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let Some(dev) = Loop::new(&img, false) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let fname = format!("--filename={}", dev.dev);
    let args = [
        "run",
        &fname,
        "--rw=write",
        "--size=1m",
        "--runtime=1",
        "--ramp_time=0",
    ];
    let o = run(&args);
    assert!(
        o.status.success(),
        "a blank device is writable: {}",
        stderr(&o)
    );
    if tool("mkfs.minix", &[], Path::new(&dev.dev)).is_err() {
        eprintln!("skipped the named part: mkfs.minix is not available");
        return;
    }
    let before = checksum(&dev.dev);
    let named = format!("--allow-write-device={}", dev.dev);
    let o = run(&[&args[..], &[named.as_str()]].concat());
    assert!(
        o.status.success(),
        "a named device is writable: {}",
        stderr(&o)
    );
    assert_ne!(checksum(&dev.dev), before, "the named device was written");
}

#[test]
fn a_mounted_device_is_refused_even_when_named() {
    if !is_root() {
        eprintln!("skipped: needs root to mount a loop device");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("fs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    if let Err(why) = tool("mkfs.ext4", &["-q", "-F"], &img) {
        eprintln!("skipped: {why}");
        return;
    }
    let Some(mut dev) = Loop::new(&img, false) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !dev.mount(&mnt) {
        eprintln!("skipped: mount failed (no permission to mount here)");
        return;
    }
    let named = format!("--allow-write-device={}", dev.dev);
    let io_dir = tmp.path().join("iozone");
    let target = format!("x={}", dev.dev);
    let o = run(&[
        "iozone",
        &target,
        "--allow-write",
        &named,
        "--dir",
        io_dir.to_str().unwrap(),
        "--sizes=4k",
        "--size=1m",
        "--runtime=1",
        "--ramp=0",
        "--no-progress",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "hiops iozone: {err}");
    assert!(
        err.contains("is mounted") && err.contains("umount"),
        "{err}"
    );
    let fname = format!("--filename={}", dev.dev);
    let o = run(&[
        "run",
        &fname,
        "--rw=write",
        "--size=1m",
        "--runtime=1",
        &named,
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "hiops run: {err}");
    assert!(err.contains("allow_mounted_write=1"), "{err}");
}

/// Bytes this process has written, from /proc/PID/io.
fn wchar(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("wchar: "))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn a_killed_default_run_leaves_nothing_in_tmpdir() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = hiops()
        .args(["run", "--size=32m", "--runtime=30", "--ramp_time=0"])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Measuring starts once the 32 MiB file is laid out.
    let t0 = std::time::Instant::now();
    while wchar(child.id()) < 32 << 20 {
        assert!(t0.elapsed().as_secs() < 60, "the layout never finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert!(child.try_wait().unwrap().is_none(), "the run ended early");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "while running, TMPDIR holds {left:?}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "after SIGKILL, TMPDIR holds {left:?}");
}

#[test]
fn a_bad_option_exits_2_everywhere_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |name: &str| tmp.path().join(name).display().to_string();
    let (kv, dir) = (t("kv.dat"), t("out"));
    let cases: Vec<Vec<String>> = [
        vec!["run", "--iodepth=0"],
        vec![
            "run",
            "--allow-write-device=/dev/does-not-exist",
            "--rw=write",
        ],
        vec!["kv", "serve", "--path", &kv, "--max-clients", "0"],
        vec!["kv", "serve", "--path", &kv, "--bind", "999.1.1.1"],
        vec![
            "kv",
            "serve",
            "--path",
            &kv,
            "--allow-write-device=/dev/does-not-exist",
        ],
        vec!["kv", "ycsb", "--path", &kv, "--workload", "Z"],
        vec!["kv", "fig10", "--path", &kv, "--clients", "0", "-o", &dir],
        vec![
            "sweep",
            "--dir",
            &dir,
            "--over",
            "bs=4k,huge",
            "--",
            "--runtime=1",
        ],
        vec!["characterize", "--dir", &dir, "--size=huge"],
        vec!["iozone", "--dir", &dir, "--sizes=4k,huge"],
        vec![
            "iozone",
            "--dir",
            &dir,
            "--allow-write",
            "--allow-write-device=/dev/does-not-exist",
        ],
        vec!["experiment", "hiops", "--dir", &dir, "--runtime=huge"],
        vec!["report", &dir],
        vec!["compare", &t("a.json"), &t("b.json")],
    ]
    .iter()
    .map(|c| c.iter().map(|s| s.to_string()).collect())
    .collect();
    for args in &cases {
        let o = hiops()
            .args(args)
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

/// A file of `mib` MiB of zeros in `dir`.
fn blank_image(dir: &Path, name: &str, mib: u64) -> PathBuf {
    let img = dir.join(name);
    std::fs::File::create(&img)
        .unwrap()
        .set_len(mib << 20)
        .unwrap();
    img
}

/// `hiops run --rw=write` with `--allow-write-device` naming the device
/// (so the signature check is lifted and being in use is what refuses):
/// exit 3, a message holding each of `want`, and not a byte changed.
fn refused_in_use(dev: &str, want: &[&str]) {
    let before = checksum(dev);
    let fname = format!("--filename={dev}");
    let named = format!("--allow-write-device={dev}");
    let o = run(&[
        "run",
        &fname,
        "--rw=write",
        "--size=1m",
        "--runtime=1",
        "--ramp_time=0",
        &named,
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "hiops run: {err}");
    for w in want {
        assert!(err.contains(w), "no '{w}' in: {err}");
    }
    assert_eq!(checksum(dev), before, "the device in use was written");
}

/// Makes a `kind` filesystem on an image with `mkfs args`, mounts it
/// read-only over a loop device and shows it refused in use.
fn mounted_is_refused(kind: &str, mib: u64, args: &[&str]) {
    if !is_root() {
        return eprintln!("skipped: needs root to mount a loop device");
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = blank_image(tmp.path(), "fs.img", mib);
    if let Err(why) = tool(&format!("mkfs.{kind}"), args, &img) {
        return eprintln!("skipped: {why}");
    }
    let Some(mut dev) = Loop::new(&img, false) else {
        return eprintln!("skipped: losetup is missing or no loop device is free");
    };
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !dev.mount_with(&mnt, "ro") {
        return eprintln!("skipped: mounting {kind} failed (no {kind} in this kernel?)");
    }
    let at = mnt.display().to_string();
    refused_in_use(&dev.dev, &["is mounted", &at, "allow_mounted_write=1"]);
}

#[test]
fn a_mounted_btrfs_is_refused_even_when_named() {
    // btrfs shows an anonymous 0:N in mountinfo, not the device's number.
    mounted_is_refused("btrfs", 128, &["-q", "-f"]);
}

#[test]
fn a_mounted_xfs_is_refused_even_when_named() {
    mounted_is_refused("xfs", 320, &["-q", "-f"]);
}

#[test]
fn the_other_device_of_a_mounted_btrfs_is_refused_even_when_named() {
    if !is_root() {
        return eprintln!("skipped: needs root for loop devices");
    }
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (
        blank_image(tmp.path(), "a.img", 128),
        blank_image(tmp.path(), "b.img", 128),
    );
    // Dropped in reverse: the mount goes before the second device.
    let Some(second) = Loop::new(&b, false) else {
        return eprintln!("skipped: losetup is missing or no loop device is free");
    };
    let Some(mut first) = Loop::new(&a, false) else {
        return eprintln!("skipped: no second loop device is free");
    };
    let both = ["-q", "-f", "-d", "single", "-m", "single", &first.dev];
    if let Err(why) = tool("mkfs.btrfs", &both, Path::new(&second.dev)) {
        return eprintln!("skipped: {why}");
    }
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !first.mount_with(&mnt, &format!("ro,device={}", second.dev)) {
        return eprintln!("skipped: mounting btrfs failed (no btrfs in this kernel?)");
    }
    // mountinfo names only the first device: btrfs' own list names this one.
    let at = mnt.display().to_string();
    refused_in_use(&second.dev, &["btrfs filesystem", &at, "umount"]);
}

#[test]
fn an_active_swap_is_refused_even_when_named() {
    if !is_root() {
        return eprintln!("skipped: needs root for swap on a loop device");
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = blank_image(tmp.path(), "swap.img", 16);
    let Some(mut dev) = Loop::new(&img, false) else {
        return eprintln!("skipped: losetup is missing or no loop device is free");
    };
    if let Err(why) = dev.swapon() {
        return eprintln!("skipped: {why}");
    }
    refused_in_use(&dev.dev, &["in use as swap", "swapoff"]);
}

#[test]
fn a_device_another_program_holds_exclusively_is_refused_even_when_named() {
    use std::os::unix::fs::OpenOptionsExt;
    if !is_root() {
        return eprintln!("skipped: needs root for loop devices");
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = blank_image(tmp.path(), "disk.img", 16);
    let Some(dev) = Loop::new(&img, false) else {
        return eprintln!("skipped: losetup is missing or no loop device is free");
    };
    // This test process is the other program, as mkfs or a VM monitor.
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&dev.dev)
        .expect("the loop device opens exclusively");
    let me = format!("{} (", std::process::id());
    refused_in_use(&dev.dev, &["opened exclusively", &me, "fuser"]);
    drop(holder);
}

#[test]
fn a_mounted_device_is_written_with_allow_mounted_write_and_the_device_named() {
    if !is_root() {
        return eprintln!("skipped: needs root to mount a loop device");
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = blank_image(tmp.path(), "fs.img", 32);
    if let Err(why) = tool("mkfs.ext4", &["-q", "-F"], &img) {
        return eprintln!("skipped: {why}");
    }
    let Some(mut dev) = Loop::new(&img, false) else {
        return eprintln!("skipped: losetup is missing or no loop device is free");
    };
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !dev.mount_with(&mnt, "ro") {
        return eprintln!("skipped: mount failed (no permission to mount here)");
    }
    let before = checksum(&dev.dev);
    let fname = format!("--filename={}", dev.dev);
    let named = format!("--allow-write-device={}", dev.dev);
    let o = run(&[
        "run",
        &fname,
        "--rw=write",
        "--size=1m",
        "--runtime=1",
        "--ramp_time=0",
        &named,
        "--allow_mounted_write=1",
    ]);
    let err = stderr(&o);
    if o.status.code() != Some(3) && err.contains("busy") {
        return eprintln!("skipped: this kernel refuses writes to mounted devices: {err}");
    }
    assert!(
        o.status.success(),
        "both grants: the write goes ahead: {err}"
    );
    assert_ne!(checksum(&dev.dev), before, "the mounted device was written");
}

#[test]
fn a_gated_device_is_written_by_several_jobs_of_one_run() {
    if !is_root() {
        return eprintln!("skipped: needs root for loop devices");
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = blank_image(tmp.path(), "disk.img", 16);
    let Some(dev) = Loop::new(&img, false) else {
        return eprintln!("skipped: losetup is missing or no loop device is free");
    };
    let before = checksum(&dev.dev);
    let fname = format!("--filename={}", dev.dev);
    // Each job passes the gate: the second reuses the first's hold (a
    // second exclusive open would fail with EBUSY).
    let o = run(&[
        "run",
        &fname,
        "--rw=write",
        "--numjobs=2",
        "--size=1m",
        "--runtime=1",
        "--ramp_time=0",
    ]);
    assert!(o.status.success(), "two jobs on one device: {}", stderr(&o));
    assert_ne!(checksum(&dev.dev), before, "the jobs wrote the device");
}

/// fio's filedelete unlinks its files: a device node is refused before
/// anything runs, and is still there after. As root: a blank loop device
/// over a file of ours (one the gate would let a job write) and a node of
/// our own with /dev/null's numbers (never the real /dev/null: were the
/// check missing, the test would remove it).
#[test]
fn filedelete_never_removes_a_device_node() {
    if !is_root() {
        return eprintln!("skipped: needs root for loop devices and mknod");
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = blank_image(tmp.path(), "disk.img", 16);
    let Some(dev) = Loop::new(&img, false) else {
        return eprintln!("skipped: losetup is missing or no loop device is free");
    };
    let null_copy = tmp.path().join("null-copy");
    assert!(ok(Command::new("mknod")
        .arg(&null_copy)
        .args(["c", "1", "3"])));
    for node in [Path::new(&dev.dev), null_copy.as_path()] {
        let name = node.to_str().unwrap();
        let o = run(&[
            "fio",
            "--name=del",
            "--ioengine=filedelete",
            "--filename",
            name,
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(name), "{}", stderr(&o));
        assert!(
            std::fs::symlink_metadata(node).is_ok(),
            "{name} is still there"
        );
    }
    // A regular file is still deleted, as fio deletes it.
    let file = tmp.path().join("file");
    std::fs::write(&file, [0u8; 4096]).unwrap();
    let name = file.to_str().unwrap();
    let o = run(&[
        "fio",
        "--name=del",
        "--ioengine=filedelete",
        "--filename",
        name,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!file.exists(), "filedelete unlinked the file");
}

/// The exec engine's program output (`NAME.stdout`, `NAME.stderr`) goes
/// past the output gate as every file hiops writes: where `NAME.stdout`
/// is a FIFO, the job is refused before the program starts and the FIFO
/// is left as it was.
#[test]
fn exec_output_files_pass_the_output_gate() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("mon.stdout");
    assert!(ok(Command::new("mkfifo").arg(&fifo)), "mkfifo works");
    let marker = dir.path().join("ran");
    let touch = format!("--arguments={}", marker.display());
    let o = hiops()
        .current_dir(dir.path())
        .args([
            "fio",
            "--name=mon",
            "--ioengine=exec",
            "--program=touch",
            &touch,
        ])
        .args(["--runtime=1", "--time_based"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("mon.stdout"), "{}", stderr(&o));
    assert!(!marker.exists(), "the program never started");
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(t.is_fifo(), "the FIFO is left as it was");
}
