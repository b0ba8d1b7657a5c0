//! A read job with verify checks each block it reads, as fio's read verify
//! does: blocks fio writes check in hiops' read job and blocks hiops writes
//! in fio's, for every checksum fio has; a flipped byte fails both; fio's
//! write-then-stonewall-read job files and its surface-scan example run;
//! verify_state_load limits a read job to the completed writes, and
//! --aux-path holds the state files. Tests needing fio are skipped (with a
//! line saying so) without /usr/bin/fio.

mod common;

use common::{
    blocks_written, fio_in as fio, have_fio, hiops_json_in as hiops, text, zero_file, VERIFY_CASES,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("hiops JSON: {e}: {}", text(o)))
}

/// hiops' verify figures (checked, bad, first reason) of job `i`.
fn verify_of(o: &Output, i: usize) -> (u64, u64, String) {
    let v = json(o);
    let ver = &v["jobs"][i]["hiops"]["verify"];
    (
        ver["blocks_checked"].as_u64().unwrap_or(0),
        ver["bad_blocks"].as_u64().unwrap_or(0),
        ver["first_bad_reason"].as_str().unwrap_or("").to_string(),
    )
}

fn args(list: &str) -> Vec<String> {
    list.split_whitespace().map(String::from).collect()
}

fn with(list: &str, more: &[&str]) -> Vec<String> {
    let mut a = args(list);
    a.extend(more.iter().map(|s| s.to_string()));
    a
}

fn flip(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x20;
    f.write_all_at(&b, at).unwrap();
}

/// fio's run passed without a verify error. fio 3.33 returns only its
/// last chunk's verdict for a block: a bad chunk before it is reported
/// ("verify failed") with exit status 0, so the text is read too.
fn fio_clean(o: &Output) -> bool {
    let t = text(o);
    o.status.success()
        && !t.contains("verify:")
        && !t.contains("verify failed")
        && !t.contains("err=84")
}

/// verify_read's own case beside the shared ones: a verify interval
/// smaller than the block.
const OWN_CASES: &[(&str, u64)] = &[("--verify=crc32c --verify_interval=512", 3000)];

/// For each checksum: fio writes and hiops' read job (rw=read, or
/// randread every other case) checks all 64 blocks (their 512 chunks with
/// verify_interval=512); hiops writes and
/// fio's read job checks them; then a byte flipped in block 5 of each
/// file fails hiops' read job (exit 4, one bad block, named on stderr;
/// it stops there) and fio's.
#[test]
fn a_read_job_checks_every_checksum_across_tools_and_catches_a_flipped_byte() {
    if !have_fio() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (i, (opts, flip_at)) in VERIFY_CASES.iter().chain(OWN_CASES).enumerate() {
        let common = format!("--name=v --bs=4k --size=256k --ioengine=psync {opts}");
        let write = format!("{common} --rw=write --do_verify=0");
        let read_rw = if i % 2 == 0 { "read" } else { "randread" };
        let read = format!("{common} --rw={read_rw}");
        let (by_fio, by_hiops) = (format!("--filename=fio{i}"), format!("--filename=hiops{i}"));
        // Each chunk of the verify interval is checked on its own.
        let chunks = if opts.contains("verify_interval=512") {
            512
        } else {
            64
        };

        let o = fio(dir, &with(&write, &[&by_fio]));
        assert!(o.status.success(), "{opts}: fio write: {}", text(&o));
        let o = hiops(dir, &with(&read, &[&by_fio]));
        assert!(
            o.status.success(),
            "{opts}: hiops reads fio's: {}",
            text(&o)
        );
        let (checked, bad, why) = verify_of(&o, 0);
        assert_eq!((checked, bad), (chunks, 0), "{opts}: {why}");

        let o = hiops(dir, &with(&write, &[&by_hiops]));
        assert!(o.status.success(), "{opts}: hiops write: {}", text(&o));
        let o = fio(dir, &with(&read, &[&by_hiops]));
        assert!(fio_clean(&o), "{opts}: fio reads hiops': {}", text(&o));

        for file in [&by_fio, &by_hiops] {
            let name = file.trim_start_matches("--filename=");
            flip(&dir.join(name), 5 * 4096 + flip_at);
            let o = hiops(dir, &with(&read, &[file]));
            assert_eq!(o.status.code(), Some(4), "{opts} {name}: {}", text(&o));
            // The job stops at block 5, as fio's: in order, with its
            // chunks and those before it checked.
            let (checked, bad, why) = verify_of(&o, 0);
            let stop = if read_rw == "read" {
                6 * chunks / 64
            } else {
                checked
            };
            assert_eq!((checked, bad), (stop, 1), "{opts} {name}: {why}");
            assert!(checked <= chunks, "{opts} {name}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("verify failed in job v"), "{opts}: {err}");
            let o = fio(dir, &with(&read, &[file]));
            assert!(!fio_clean(&o), "{opts} {name}: fio missed it: {}", text(&o));
        }
    }
}

const WRITE_THEN_READ: &str = "[global]
filename=data
bs=4k
size=1m
ioengine=psync
verify=crc32c

[writer]
rw=randwrite
do_verify=0

[reader]
stonewall
rw=read
";

/// fio's write-then-verify idiom: a write job with do_verify=0, then a
/// stonewalled read job with verify that checks every block; the reader
/// alone (--section) then catches a flipped byte, on the job's thread and
/// on verify_async's, and fio runs the same file clean over hiops' blocks.
#[test]
fn the_write_then_stonewall_read_job_file_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("wr.fio"), WRITE_THEN_READ).unwrap();
    let o = hiops(dir, &args("wr.fio"));
    assert!(o.status.success(), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 256, "{v}");
    assert_eq!(v["jobs"][1]["read"]["total_ios"], 256, "{v}");
    let (checked, bad, why) = verify_of(&o, 1);
    assert_eq!((checked, bad), (256, 0), "{why}");
    if have_fio() {
        let o = fio(dir, &args("--section=reader wr.fio"));
        assert!(
            fio_clean(&o),
            "fio's reader over hiops' blocks: {}",
            text(&o)
        );
    }
    flip(&dir.join("data"), 77 * 4096 + 2000);
    let o = hiops(dir, &args("--section=reader wr.fio"));
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    // The job stops at block 77, as fio's.
    let (checked, bad, why) = verify_of(&o, 0);
    assert_eq!((checked, bad), (78, 1), "{why}");
    assert!(why.contains("crc32c checksum mismatch"), "{why}");
    assert_eq!(
        json(&o)["jobs"][0]["hiops"]["verify"]["first_bad_offset"],
        77 * 4096
    );
    // verify_async's threads find the same.
    let o = hiops(dir, &args("--section=reader --verify_async=2 wr.fio"));
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    // The verdict comes back a few reads later: those are checked too.
    let (checked, bad, async_why) = verify_of(&o, 0);
    assert_eq!((bad, async_why), (1, why));
    assert!((78..=256).contains(&checked), "{checked}");
}

/// A read job's verify judges blocks of another pass (randseed) and
/// do_verify=0 as fio does: it passes any block whose header and payload
/// agree, and checks every read whatever do_verify says.
#[test]
fn a_read_job_passes_blocks_of_any_seed_and_ignores_do_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let common = "--name=v --bs=8k --size=512k --verify=xxhash --filename=s";
    let o = hiops(dir, &with(common, &["--rw=write", "--randseed=77"]));
    assert!(o.status.success(), "{}", text(&o));
    let o = hiops(
        dir,
        &with(common, &["--rw=randread", "--randseed=5", "--do_verify=0"]),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(verify_of(&o, 0), (64, 0, String::new()));
    // verify_only keeps its stricter rule: another pass is a lost write.
    let o = hiops(
        dir,
        &with(common, &["--rw=read", "--randseed=5", "--verify_only=1"]),
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(verify_of(&o, 0).2.contains("pass"), "{}", text(&o));
}

const CUT_WRITER: &str = "--name=k --rw=write --bs=4k --size=64m --verify=crc32c --rate_iops=2000 --iodepth=4 --ioengine=libaio --direct=1 --verify_state_save=1 --runtime=1 --do_verify=0";
const STATE_READER: &str = "--name=k --rw=read --bs=4k --size=64m --verify=crc32c --iodepth=4 --ioengine=libaio --direct=1 --verify_state_load=1";

/// A writer cut by its runtime leaves fio's state file; a read job with
/// verify_state_load reads and checks exactly the writes it completed
/// (hiops' and fio's files both), without it the unwritten rest fails,
/// and fio's read job takes hiops' state file the same way.
#[test]
fn a_read_job_with_verify_state_load_checks_exactly_the_completed_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    zero_file(&dir.join("h"), 64 << 20);
    let o = hiops(dir, &with(CUT_WRITER, &["--filename=h"]));
    assert!(o.status.success(), "{}", text(&o));
    let in_window = json(&o)["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    let written = blocks_written(&dir.join("h"));
    assert!(in_window > 0 && written < 16384, "{written} writes");
    assert!(
        (in_window..in_window + 4).contains(&written),
        "{written} {in_window}"
    );
    let o = hiops(dir, &with(STATE_READER, &["--filename=h"]));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(verify_of(&o, 0), (written, 0, String::new()));
    assert_eq!(json(&o)["jobs"][0]["read"]["total_ios"], written);
    let unlimited: Vec<String> = with(STATE_READER, &["--filename=h"])
        .into_iter()
        .filter(|a| a != "--verify_state_load=1")
        .collect();
    let o = hiops(dir, &unlimited);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(verify_of(&o, 0).1 > 0, "the unwritten rest is judged");
    flip(&dir.join("h"), 3 * 4096 + 500);
    let o = hiops(dir, &with(STATE_READER, &["--filename=h"]));
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert_eq!(verify_of(&o, 0).1, 1);
    flip(&dir.join("h"), 3 * 4096 + 500);
    if !have_fio() {
        return;
    }
    let o = fio(dir, &with(STATE_READER, &["--filename=h"]));
    assert!(fio_clean(&o), "fio with hiops' state file: {}", text(&o));
    assert!(
        text(&o).contains(&format!("total={written},0,0,0")),
        "fio read {written} blocks: {}",
        text(&o)
    );
    let o = fio(dir, &with(CUT_WRITER, &["--filename=f"]));
    assert!(o.status.success(), "{}", text(&o));
    let o = hiops(dir, &with(STATE_READER, &["--filename=f"]));
    assert!(
        o.status.success(),
        "hiops with fio's state file: {}",
        text(&o)
    );
    let (checked, bad, why) = verify_of(&o, 0);
    assert!(
        checked > 0 && checked < 16384 && bad == 0,
        "{checked} {bad} {why}"
    );
}

/// --aux-path puts the state file there (not in the current directory),
/// a reader given it finds it (hiops' and fio's), a reader without it
/// says where it looked; verify_dump's files go there too.
#[test]
fn aux_path_holds_the_verify_state_files_and_dumps() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let aux = dir.join("aux");
    std::fs::create_dir(&aux).unwrap();
    let aux_flag = format!("--aux-path={}", aux.display());
    zero_file(&dir.join("a"), 64 << 20);
    let o = hiops(dir, &with(CUT_WRITER, &["--filename=a", &aux_flag]));
    assert!(o.status.success(), "{}", text(&o));
    assert!(aux.join("local-k-0-verify.state").exists());
    assert!(!dir.join("local-k-0-verify.state").exists());
    let written = blocks_written(&dir.join("a"));
    let o = hiops(dir, &with(STATE_READER, &["--filename=a", &aux_flag]));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(verify_of(&o, 0).0, written);
    let o = hiops(dir, &with(STATE_READER, &["--filename=a"]));
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("local-k-0-verify.state"), "{}", text(&o));
    flip(&dir.join("a"), 2 * 4096 + 600);
    let o = hiops(
        dir,
        &with(
            STATE_READER,
            &["--filename=a", &aux_flag, "--verify_dump=1"],
        ),
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(aux.join("a.8192.received").exists() && aux.join("a.8192.expected").exists());
    flip(&dir.join("a"), 2 * 4096 + 600);
    if have_fio() {
        let o = fio(dir, &with(STATE_READER, &["--filename=a", &aux_flag]));
        assert!(fio_clean(&o), "fio with --aux-path: {}", text(&o));
    }
    let o = hiops(
        dir,
        &with(STATE_READER, &["--filename=a", "--aux-path=missing"]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--aux-path=missing"), "{}", text(&o));
}

/// A loop device over a file, detached on drop (after any mount on it).
struct Loop {
    dev: String,
    mount: Option<PathBuf>,
}

impl Loop {
    fn new(backing: &Path) -> Option<Loop> {
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .ok()?;
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        o.status.success().then_some(Loop { dev, mount: None })
    }

    /// A fresh ext4 filesystem on the device, mounted at `at`.
    fn mount_ext4(&mut self, at: &Path) -> bool {
        let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
        std::fs::create_dir_all(at).unwrap();
        if !ok(Command::new("mkfs.ext4").args(["-q", "-F", &self.dev])) {
            return false;
        }
        if !ok(Command::new("mount").arg(&self.dev).arg(at)) {
            return false;
        }
        self.mount = Some(at.to_path_buf());
        true
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = &self.mount {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// Runs a job file with hiops in `dir`, killed (and failed) after a minute.
fn hiops_bounded(dir: &Path, job: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .args(["run", "--no-progress", "--output-format=json", job])
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    panic!("{job} did not end within a minute: {}", text(&o));
}

/// Sectors written to a block device so far (/sys/block/NAME/stat).
fn sectors_written(dev: &str) -> u64 {
    let _ = Command::new("sync").status();
    let name = dev.trim_start_matches("/dev/");
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(6).unwrap().parse().unwrap()
}

const SURFACE_SCAN: &str = "/var/tmp/fio-src/examples/surface-scan.fio";

/// Checks a surface-scan run: the write phase filled the target, the
/// verify phase read back all of it and found every 512-byte chunk good.
fn assert_scanned(o: &Output, at_least: u64) {
    assert!(o.status.success(), "{}", text(o));
    let v = json(o);
    let written = v["jobs"][0]["write"]["io_bytes"].as_u64().unwrap();
    let read = v["jobs"][1]["read"]["io_bytes"].as_u64().unwrap();
    assert!(written >= at_least, "{written} bytes written");
    assert_eq!(read, written, "the verify phase reads what was written");
    assert_eq!(verify_of(o, 1), (written / 512, 0, String::new()));
}

/// fio's examples/surface-scan.fio (fill_device, verify=meta with a
/// pattern, verify_interval=512, then a stonewalled read job) ends as in
/// fio: on a small ext4 filesystem the writes stop at its free space and
/// the read job checks every 512-byte chunk; with its filename pointed at
/// a loop device the device is filled whole (fill_device sized a device
/// from the filesystem its /dev node is on before). The file is written
/// once, by the job, as fio writes it (hiops laid it out first, so a fill
/// of a large filesystem took twice fio's time). Needs root.
#[test]
fn fios_surface_scan_example_ends_and_verifies() {
    let Ok(example) = std::fs::read_to_string(SURFACE_SCAN) else {
        eprintln!("skipped: {SURFACE_SCAN} (fio's source) is not here");
        return;
    };
    if !is_root() {
        eprintln!("skipped: needs root to set up a loop device");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("fs.img");
    std::fs::write(&img, vec![0u8; 24 << 20]).unwrap();
    let Some(mut fs) = Loop::new(&img) else {
        eprintln!("skipped: losetup is missing or no loop device is free");
        return;
    };
    let mnt = tmp.path().join("mnt");
    if !fs.mount_ext4(&mnt) {
        eprintln!("skipped: mkfs.ext4 or mount failed");
        return;
    }
    std::fs::write(mnt.join("scan.fio"), &example).unwrap();
    let before = sectors_written(&fs.dev);
    let o = hiops_bounded(&mnt, "scan.fio");
    assert_scanned(&o, 8 << 20);
    // As fio, the file is written once, by the job (no layout first).
    let file = json(&o)["jobs"][0]["write"]["io_bytes"].as_u64().unwrap();
    let device = (sectors_written(&fs.dev) - before) * 512;
    assert!(
        device < file + file / 4,
        "{device} bytes reached the device for a {file}-byte fill"
    );

    let raw = tmp.path().join("raw.img");
    std::fs::write(&raw, vec![0u8; 16 << 20]).unwrap();
    let Some(dev) = Loop::new(&raw) else {
        eprintln!("skipped: no second loop device is free");
        return;
    };
    let on_dev = example.replace("datafile.tmp", &dev.dev);
    std::fs::write(tmp.path().join("dev.fio"), on_dev).unwrap();
    let o = hiops_bounded(tmp.path(), "dev.fio");
    assert_scanned(&o, 16 << 20);
    assert_eq!(json(&o)["jobs"][0]["write"]["io_bytes"], 16 << 20);
}

const OPENFILES: &str = "--name=o --rw=rw --rwmixread=0 --bs=4k --filesize=64k --nrfiles=3 --openfiles=2 --verify=crc32c";

/// openfiles=2 of 3 files serves the first two until they are done, then
/// the third, as fio does: the write order decides the rand_seed fio
/// checks in a job that reads and writes, so hiops' files pass fio's
/// verify_only with openfiles=2 and fail it with all three open, fio's
/// files pass hiops', a write-and-check run with two clones is clean, and
/// a read job checks fio's files. A random file service with it is refused.
#[test]
fn openfiles_below_nrfiles_writes_in_fios_order_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let (by_hiops, by_fio) = (tmp.path().join("h"), tmp.path().join("f"));
    std::fs::create_dir(&by_hiops).unwrap();
    std::fs::create_dir(&by_fio).unwrap();
    let o = hiops(&by_hiops, &with(OPENFILES, &["--do_verify=0"]));
    assert!(o.status.success(), "{}", text(&o));
    let o = hiops(&by_hiops, &with(OPENFILES, &["--verify_only=1"]));
    assert_eq!(verify_of(&o, 0), (48, 0, String::new()), "{}", text(&o));
    let all_open = OPENFILES.replace("--openfiles=2", "--openfiles=3");
    let o = hiops(&by_hiops, &with(&all_open, &["--verify_only=1"]));
    assert!(verify_of(&o, 0).2.contains("rand_seed"), "{}", text(&o));
    let o = hiops(
        &by_hiops,
        &with(
            OPENFILES,
            &["--numjobs=2", "--ioengine=libaio", "--iodepth=8"],
        ),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(verify_of(&o, 1), (48, 0, String::new()));
    let o = hiops(&by_hiops, &with(OPENFILES, &["--file_service_type=random"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("openfiles=2"), "{}", text(&o));
    if !have_fio() {
        return;
    }
    let o = fio(&by_hiops, &with(OPENFILES, &["--verify_only=1"]));
    assert!(fio_clean(&o), "fio checks hiops' order: {}", text(&o));
    let o = fio(&by_hiops, &with(&all_open, &["--verify_only=1"]));
    assert!(text(&o).contains("bad header rand_seed"), "{}", text(&o));
    let o = fio(&by_fio, &with(OPENFILES, &["--do_verify=0"]));
    assert!(o.status.success(), "{}", text(&o));
    let o = hiops(&by_fio, &with(OPENFILES, &["--verify_only=1"]));
    assert_eq!(verify_of(&o, 0), (48, 0, String::new()), "{}", text(&o));
    let read = OPENFILES.replace("--rw=rw --rwmixread=0", "--rw=randread");
    let o = hiops(&by_fio, &args(&read));
    assert_eq!(verify_of(&o, 0), (48, 0, String::new()), "{}", text(&o));
}

/// fio's t/verify.py runs six jobs on one command line for each checksum:
/// a layout write, a verify_only and a read job that pass, a random write
/// of one block without verify, then the verify_only and the read job
/// again, which must fail with fio's verify errno (EILSEQ, 84) as the
/// jobs' `error` in the JSON; the others' is 0.
#[test]
fn fios_verify_script_phases_pass_and_fail_as_it_expects() {
    let tmp = tempfile::tempdir().unwrap();
    let base = "--fallocate=truncate --filename=verify --stonewall --ioengine=psync";
    for csum in [
        "md5", "crc64", "crc32", "crc32c", "crc16", "crc7", "sha1", "sha256", "sha512", "sha3-224",
        "sha3-256", "sha3-384", "sha3-512", "xxhash", "meta",
    ] {
        let only =
            format!("--verify_only --rw=write --verify={csum} {base} --filesize=1M --bs=4096");
        let read = format!("--rw=read --verify={csum} {base} --filesize=1M --bs=4096");
        let line = format!(
            "--name=layout --rw=write --verify={csum} {base} --filesize=1M --bs=4096 \
             --name=success_only {only} --name=success_read {read} \
             --name=mangle --rw=randwrite --randrepeat=0 --bs=4096 --number_ios=1 {base} --filesize=1M \
             --name=failure_only {only} --name=failure_read {read}"
        );
        let o = hiops(tmp.path(), &args(&line));
        assert_eq!(o.status.code(), Some(4), "{csum}: {}", text(&o));
        let v = json(&o);
        let errors: Vec<(String, u64)> = v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["jobname"].as_str().unwrap().into(),
                    j["error"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, u64)> = [
            ("layout", 0),
            ("success_only", 0),
            ("success_read", 0),
            ("mangle", 0),
            ("failure_only", 84),
            ("failure_read", 84),
        ]
        .map(|(n, e)| (n.to_string(), e))
        .into();
        assert_eq!(errors, want, "{csum}");
    }
}
