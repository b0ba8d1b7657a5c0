//! fio 3.33's splice, netsplice and e4defrag engines through `hiops fio`:
//! the bytes each moves, what a file holds after its writes, and beside
//! fio 3.33 (skipped, with a printed reason, where it is absent) the same
//! I/O counts, bytes and errors.

mod common;

use common::{have_fio, hiops_fio, is_root, text, FIO};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `bin` with `args` and `--output-format=json` in `dir`: the first
/// job's JSON (fio writes lines before it on error) and the output.
fn run(mut bin: Command, dir: &Path, args: &[String]) -> (Value, Output) {
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("--output-format=json")
        .args(args)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {}", text(&o)));
    let v: Value = serde_json::from_str(&out[start..]).expect("JSON");
    (v["jobs"][0].clone(), o)
}

/// A job's error and (io_bytes, total_ios) in direction `dir`.
fn figures(j: &Value, dir: &str) -> (u64, u64, u64) {
    let n = |k: &str| j[dir][k].as_u64().unwrap();
    (j["error"].as_u64().unwrap(), n("io_bytes"), n("total_ios"))
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// 1 MiB in blocks of 96 KiB (more than the pipe's 64 KiB, and not a
/// multiple of it): 10 I/Os of 983040 bytes.
const SPLICE_JOB: &[&str] = &["--name=s", "--size=1m", "--bs=96k", "--filename=f"];

#[test]
fn splice_writes_the_bytes_psync_writes_and_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = |engine: &str| {
        let mut a = args(SPLICE_JOB);
        a.extend(args(&["--rw=write", &format!("--ioengine={engine}")]));
        let (j, o) = run(hiops_fio(), dir.path(), &a);
        assert!(o.status.success(), "{engine}: {}", text(&o));
        assert_eq!(figures(&j, "write"), (0, 983_040, 10), "{engine}");
        std::fs::read(dir.path().join("f")).unwrap()
    };
    let (spliced, written) = (file("splice"), file("psync"));
    assert!(spliced[..983_040].iter().any(|&b| b != 0), "data written");
    assert!(
        spliced == written,
        "the file holds the bytes psync writes for the same job"
    );
    // Random writes verified by reads: both directions through the pipe.
    let mut a = args(SPLICE_JOB);
    a.extend(args(&[
        "--rw=randwrite",
        "--ioengine=splice",
        "--verify=md5",
    ]));
    let (j, o) = run(hiops_fio(), dir.path(), &a);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(figures(&j, "write"), (0, 983_040, 10));
    assert_eq!(
        figures(&j, "read"),
        (0, 983_040, 10),
        "every block verified"
    );
}

#[test]
fn splice_counts_as_fio_counts() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for rw in ["write", "read", "randrw"] {
        let mut a = args(SPLICE_JOB);
        a.extend(args(&[
            &format!("--rw={rw}"),
            "--ioengine=splice",
            "--randrepeat=1",
        ]));
        let (h, o) = run(hiops_fio(), dir.path(), &a);
        assert!(o.status.success(), "hiops {rw}: {}", text(&o));
        let (f, o) = run(Command::new(FIO), dir.path(), &a);
        assert!(o.status.success(), "fio {rw}: {}", text(&o));
        let both = |j: &Value| (figures(j, "read"), figures(j, "write"));
        if rw == "randrw" {
            // The mix is drawn: each tool's split differs, the sum does not.
            let sum = |j: &Value| figures(j, "read").1 + figures(j, "write").1;
            assert_eq!(sum(&h), sum(&f), "{rw}");
        } else {
            assert_eq!(both(&h), both(&f), "{rw}: hiops, fio");
        }
        // fio times no submission of a synchronous engine (FIO_SYNCIO).
        let slat = |j: &Value| j["write"]["slat_ns"]["N"].as_u64();
        assert_eq!((slat(&h), slat(&f)), (Some(0), Some(0)), "{rw}");
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Waits until something is bound to `port` (/proc/net/tcp or udp); a
/// probe connection would be taken as the peer.
fn wait_bound(port: u16, udp: bool) {
    let table = if udp {
        "/proc/net/udp"
    } else {
        "/proc/net/tcp"
    };
    let needle = format!(":{port:04X}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let t = std::fs::read_to_string(table).unwrap_or_default();
        if t.lines().any(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|a| a.ends_with(&needle))
        }) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("nothing bound port {port} within 30 s");
}

/// One side of a netsplice pair: `size` bytes in blocks of `bs`, with
/// `extra` options (udp: the reader binds, as fio 3.33 takes it).
fn side(
    fio: bool,
    rx: bool,
    port: u16,
    (bs, size): (u64, u64),
    dir: &Path,
    extra: &[&str],
) -> Child {
    let mut c = if fio { Command::new(FIO) } else { hiops_fio() };
    let mut a = args(&["--ioengine=netsplice", "--output-format=json"]);
    a.extend([
        format!("--port={port}"),
        format!("--bs={bs}"),
        format!("--size={size}"),
    ]);
    match rx {
        true => a.extend(args(&["--name=rx", "--rw=read"])),
        false => a.extend(args(&["--name=tx", "--rw=write", "--hostname=127.0.0.1"])),
    }
    if rx && !extra.contains(&"--protocol=udp") {
        a.push("--listen".into());
    }
    a.extend(args(extra));
    c.current_dir(dir)
        .args(a)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A side's (read bytes, write bytes, read I/Os, write I/Os) once it ended.
fn ended(mut c: Child, who: &str) -> [u64; 4] {
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = c.kill();
            panic!("{who} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{who}: {}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let v: Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0, "{who}");
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
    let desc = j["hiops"]["engine"].as_str().unwrap_or("netsplice");
    assert!(desc.contains("netsplice"), "{who}: {desc}");
    [
        n("read", "io_bytes"),
        n("write", "io_bytes"),
        n("read", "total_ios"),
        n("write", "total_ios"),
    ]
}

/// A receiver and a sender on 127.0.0.1 (tcp unless `extra` says): each
/// moves `size` bytes in size/bs I/Os.
fn pair(rx_fio: bool, tx_fio: bool, bs: u64, size: u64, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let rx = side(rx_fio, true, port, (bs, size), dir.path(), extra);
    wait_bound(port, extra.contains(&"--protocol=udp"));
    let tx = side(tx_fio, false, port, (bs, size), dir.path(), extra);
    let (t, r) = (ended(tx, "sender"), ended(rx, "receiver"));
    let ios = size / bs;
    assert_eq!(t, [0, size, 0, ios], "sender (fio: {tx_fio}) {extra:?}");
    assert_eq!(r, [size, 0, ios, 0], "receiver (fio: {rx_fio}) {extra:?}");
}

#[test]
fn netsplice_moves_the_jobs_bytes_in_blocks_larger_than_the_pipe() {
    // fio 3.33 itself stalls here (it fills the pipe with the whole block
    // before draining it): hiops to hiops only.
    pair(false, false, 128 << 10, 8 << 20, &[]);
    pair(false, false, 4096, 1 << 20, &[]);
    // Each message echoed back through the pipe both ways.
    pair(false, false, 128 << 10, 2 << 20, &["--pingpong"]);
    // udp sends and receives as net, as fio's netsplice: 64 datagrams of
    // 1 KiB, which a loopback socket's default buffer holds whole.
    pair(false, false, 1024, 64 << 10, &["--protocol=udp"]);
}

#[test]
fn netsplice_talks_to_fio_both_ways() {
    if !have_fio() {
        return;
    }
    pair(false, true, 32 << 10, 4 << 20, &[]);
    pair(true, false, 32 << 10, 4 << 20, &[]);
    pair(false, true, 1024, 64 << 10, &["--protocol=udp"]);
}

/// EXT4_SUPER_MAGIC (include/uapi/linux/magic.h).
const EXT4_MAGIC: i64 = 0xef53;

/// The magic number of the file system holding `dir`.
fn fs_magic(dir: &Path) -> i64 {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statfs fills the zeroed struct it is given; c is a live C string.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        assert_eq!(
            libc::statfs(c.as_ptr(), &mut s),
            0,
            "statfs {}",
            dir.display()
        );
        s.f_type as i64
    }
}

/// 256 KiB of a pattern no layout writes, in `dir/f`.
fn patterned_file(dir: &Path) -> Vec<u8> {
    let data: Vec<u8> = (0..256u32 << 10).map(|i| (i % 251) as u8 ^ 0x5a).collect();
    std::fs::write(dir.join("f"), &data).unwrap();
    data
}

/// An e4defrag job on `dir/f` with donor `dir/d`: the job's JSON and
/// output, and the file's bytes before and after.
fn defrag(bin: Command, dir: &Path, extra: &[&str]) -> (Value, Output, Vec<u8>, Vec<u8>) {
    let _ = std::fs::remove_file(dir.join("d"));
    let before = patterned_file(dir);
    let mut a = args(&[
        "--name=e",
        "--ioengine=e4defrag",
        "--filename=f",
        "--donorname=d",
        "--size=256k",
        "--filesize=256k",
        "--bs=32k",
        "--rw=write",
    ]);
    a.push(format!("--directory={}", dir.display()));
    a.extend(args(extra));
    let (j, o) = run(bin, dir, &a);
    let after = std::fs::read(dir.join("f")).unwrap();
    (j, o, before, after)
}

/// hiops and fio on the same e4defrag job in `dir`: the same error,
/// bytes and I/Os, and the file's bytes unchanged by either. Returns
/// hiops' figures.
fn defrag_beside_fio(dir: &Path, extra: &[&str]) -> (u64, u64, u64) {
    let (h, o, before, after) = defrag(hiops_fio(), dir, extra);
    assert!(
        before == after,
        "hiops changed the file's bytes: {}",
        text(&o)
    );
    let hf = figures(&h, "write");
    assert_eq!(o.status.success(), hf.0 == 0, "{}", text(&o));
    if have_fio() {
        let (f, fo, before, after) = defrag(Command::new(FIO), dir, extra);
        assert!(
            before == after,
            "fio changed the file's bytes: {}",
            text(&fo)
        );
        assert_eq!(
            hf,
            figures(&f, "write"),
            "hiops, fio {extra:?}: {}",
            text(&o)
        );
    }
    hf
}

#[test]
fn e4defrag_on_var_tmp_does_what_fio_does() {
    let base = Path::new("/var/tmp");
    if fs_magic(base) != EXT4_MAGIC {
        eprintln!("skipped: /var/tmp is not ext4 here");
        return;
    }
    let dir = tempfile::tempdir_in(base).unwrap();
    for extra in [&[][..], &["--inplace=1"][..]] {
        let (err, bytes, ios) = defrag_beside_fio(dir.path(), extra);
        // Some ext4 mounts refuse the move (EPERM, fio's too); where it
        // runs, every byte is moved.
        match err {
            0 => assert_eq!((bytes, ios), (256 << 10, 8), "{extra:?}"),
            _ => assert_eq!((bytes, ios), (0, 1), "the first write fails: {extra:?}"),
        }
    }
}

/// A fresh 64 MiB ext4 loop-mounted in `dir/mnt`, unmounted on drop.
struct LoopExt4(PathBuf);

impl LoopExt4 {
    fn mount_or_skip(dir: &Path) -> Option<LoopExt4> {
        if !is_root() {
            eprintln!("skipped: needs root to mount a loop ext4");
            return None;
        }
        let (img, mnt) = (dir.join("img"), dir.join("mnt"));
        std::fs::File::create(&img)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        std::fs::create_dir(&mnt).unwrap();
        let ok = |c: &mut Command| c.output().is_ok_and(|o| o.status.success());
        if !ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img)) {
            eprintln!("skipped: mkfs.ext4 failed or is absent");
            return None;
        }
        if !ok(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&img)
            .arg(&mnt))
        {
            eprintln!("skipped: mounting a loop device failed here");
            return None;
        }
        Some(LoopExt4(mnt))
    }
}

impl Drop for LoopExt4 {
    fn drop(&mut self) {
        // The loop device goes with the mount (mount -o loop sets autoclear).
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn e4defrag_on_a_fresh_ext4_moves_every_block_and_keeps_the_bytes() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let Some(fs) = LoopExt4::mount_or_skip(dir.path()) else {
        return;
    };
    assert_eq!(fs_magic(&fs.0), EXT4_MAGIC);
    assert_eq!(defrag_beside_fio(&fs.0, &[]), (0, 256 << 10, 8));
    // The donor was preallocated over the file, once.
    assert_eq!(std::fs::metadata(fs.0.join("d")).unwrap().len(), 256 << 10);
    assert_eq!(
        defrag_beside_fio(&fs.0, &["--inplace=1"]),
        (0, 256 << 10, 8)
    );
    // In place: each write's donor blocks freed after it.
    assert_eq!(std::fs::metadata(fs.0.join("d")).unwrap().len(), 0);
}

#[test]
fn e4defrag_off_ext4_fails_the_first_write_saying_why_as_fio() {
    let Some(dir) = ["/dev/shm", "/run"]
        .iter()
        .map(Path::new)
        .find(|d| d.is_dir() && fs_magic(d) != EXT4_MAGIC)
    else {
        eprintln!("skipped: no file system other than ext4 at /dev/shm or /run");
        return;
    };
    let dir = tempfile::tempdir_in(dir).unwrap();
    let (h, o, before, after) = defrag(hiops_fio(), dir.path(), &[]);
    assert!(!o.status.success() && before == after);
    assert_eq!(figures(&h, "write"), (libc::ENOTTY as u64, 0, 1));
    assert!(
        text(&o).contains("Inappropriate ioctl for device"),
        "{}",
        text(&o)
    );
    if have_fio() {
        let (f, _, _, _) = defrag(Command::new(FIO), dir.path(), &[]);
        assert_eq!(figures(&f, "write"), (libc::ENOTTY as u64, 0, 1), "fio");
    }
}

#[test]
fn e4defrag_reads_fail_with_einval_as_fio() {
    let dir = tempfile::tempdir().unwrap();
    let (h, o, before, after) = defrag(hiops_fio(), dir.path(), &["--rw=read"]);
    assert!(!o.status.success() && before == after, "{}", text(&o));
    assert_eq!(figures(&h, "read"), (libc::EINVAL as u64, 0, 1));
    if have_fio() {
        let (f, _, _, _) = defrag(Command::new(FIO), dir.path(), &["--rw=read"]);
        assert_eq!(figures(&f, "read"), figures(&h, "read"), "fio, hiops");
    }
}

#[test]
fn e4defrag_needs_a_donor_file_and_its_options_need_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = hiops_fio()
        .current_dir(dir.path())
        .args([
            "--name=e",
            "--ioengine=e4defrag",
            "--filename=f",
            "--size=64k",
            "--rw=write",
        ])
        .output()
        .unwrap();
    assert!(
        !o.status.success() && text(&o).contains("needs donorname=FILE"),
        "{}",
        text(&o)
    );
    let o = hiops_fio()
        .current_dir(dir.path())
        .args([
            "--name=e",
            "--ioengine=psync",
            "--filename=f",
            "--size=64k",
            "--donorname=d",
        ])
        .output()
        .unwrap();
    assert!(
        !o.status.success() && text(&o).contains("add ioengine=e4defrag"),
        "{}",
        text(&o)
    );
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads the live C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let o = hiops_fio()
        .current_dir(dir.path())
        .args([
            "--name=e",
            "--ioengine=e4defrag",
            "--filename=f",
            "--size=64k",
            "--rw=write",
        ])
        .arg("--donorname=fifo")
        .output()
        .unwrap();
    assert!(
        !o.status.success() && text(&o).contains("not a regular file"),
        "{}",
        text(&o)
    );
}

/// A loop device over a file of ours, detached on drop.
struct LoopDev(String);

impl LoopDev {
    fn attach(img: &Path) -> Option<LoopDev> {
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(img)
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| LoopDev(String::from_utf8_lossy(&o.stdout).trim().to_string()))
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn e4defrag_on_a_device_holding_a_file_system_is_refused_as_a_write() {
    if !is_root() {
        eprintln!("skipped: needs root for a loop device");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&img)
        .output();
    if !made.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: mkfs.ext4 failed or is absent");
        return;
    }
    let Some(dev) = LoopDev::attach(&img) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let before = std::fs::read(&img).unwrap();
    let o = hiops_fio()
        .current_dir(dir.path())
        .args([
            "--name=e",
            "--ioengine=e4defrag",
            "--donorname=d",
            "--size=1m",
        ])
        .args(["--rw=write", "--bs=64k"])
        .arg(format!("--filename={}", dev.0))
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("ext4") && text(&o).contains("--allow-write-device="),
        "{}",
        text(&o)
    );
    assert!(
        std::fs::read(&img).unwrap() == before,
        "the device was written"
    );
    assert!(
        !dir.path().join("d").exists(),
        "no donor made for a refused job"
    );
}
