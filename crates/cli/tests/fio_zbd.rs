//! zonemode=zbd through `hiops fio`, beside fio 3.33 where it is
//! installed: zones emulated on a file (and on a loop device this test
//! sets up, root only), as fio emulates them on targets without zones of
//! their own. Each run's write_iolog is replayed against a model of the
//! zones: every write at its zone's write pointer (or the start of a zone
//! reset), never more zones partly written than max_open_zones, reads
//! below what was written.

mod common;

use common::{have_fio, hiops, is_root, text, FIO};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const ZONE: u64 = 1 << 20;

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

/// An 8 MiB file of zeros in `dir`, as both tools need it to exist.
fn eight_mib(dir: &Path) -> String {
    let f = dir.join("data");
    std::fs::write(&f, vec![0u8; 8 << 20]).unwrap();
    f.display().to_string()
}

fn run(tool: &str, dir: &Path, args: &[String]) -> Output {
    let mut c = match tool {
        "fio" => Command::new(FIO),
        _ => {
            let mut c = hiops();
            c.arg("fio");
            c
        }
    };
    c.current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .unwrap()
}

/// A job of zones of 1 MiB on `file`, with `extra` options.
fn zbd_args(file: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "--name=z".to_string(),
        format!("--filename={file}"),
        "--zonemode=zbd".into(),
        "--zonesize=1m".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// hiops, and fio beside it where it is installed.
fn tools() -> &'static [&'static str] {
    match have_fio() {
        true => &["hiops", "fio"],
        false => &["hiops"],
    }
}

/// (op, offset, len) of each I/O an iolog holds.
fn logged(path: &Path) -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let io = |l: &str| {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f[..] {
            [_, _, op @ ("read" | "write" | "trim"), off, len] => {
                Some((op.to_string(), off.parse().unwrap(), len.parse().unwrap()))
            }
            _ => None,
        }
    };
    text.lines().filter_map(io).collect()
}

/// Replays writes against write pointers: each at its zone's pointer (or
/// at the start of a zone it resets), at most `max_open` zones partly
/// written at once. Returns the zones written.
fn check_writes(ios: &[(String, u64, u64)], zones: usize, max_open: usize) -> BTreeSet<u64> {
    let mut wp: Vec<u64> = (0..zones as u64).map(|z| z * ZONE).collect();
    let mut written = BTreeSet::new();
    for (op, off, len) in ios.iter().filter(|io| io.0 == "write") {
        let z = off / ZONE;
        let at = wp[z as usize];
        assert!(
            *off == at || *off == z * ZONE,
            "{op} at {off} in zone {z} whose pointer is {at}"
        );
        assert!(off + len <= (z + 1) * ZONE, "{off}+{len} leaves zone {z}");
        wp[z as usize] = off + len;
        written.insert(z);
        let partly = (0..zones).filter(|&i| !wp[i].is_multiple_of(ZONE)).count();
        assert!(partly <= max_open, "{partly} zones partly written");
    }
    written
}

#[test]
fn random_writes_keep_to_write_pointers_and_the_open_zone_limit() {
    let tmp = tempfile::tempdir().unwrap();
    for tool in tools() {
        let f = eight_mib(tmp.path());
        let job = [
            "--max_open_zones=2",
            "--rw=randwrite",
            "--bs=64k",
            "--size=8m",
        ];
        let args = zbd_args(&f, &[&job[..], &["--write_iolog=w.log"]].concat());
        let o = run(tool, tmp.path(), &args);
        assert!(o.status.success(), "{tool}: {}", text(&o));
        let ios = logged(&tmp.path().join("w.log"));
        let bytes: u64 = ios.iter().map(|io| io.2).sum();
        assert_eq!(bytes, 8 << 20, "{tool}: 8 MiB written");
        let zones = check_writes(&ios, 8, 2);
        assert!(zones.len() > 2, "{tool}: zones turn over: {zones:?}");
        std::fs::remove_file(tmp.path().join("w.log")).unwrap();
    }
}

#[test]
fn reads_after_a_write_job_stay_below_what_it_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let f = eight_mib(tmp.path());
    let job = format!(
        "[global]\nfilename={f}\nzonemode=zbd\nzonesize=1m\nbs=64k\n\n[w]\nrw=write\nsize=2m\nwrite_iolog=w.log\n\n[r]\nstonewall\nrw=randread\nsize=8m\nwrite_iolog=r.log\n"
    );
    std::fs::write(tmp.path().join("j.fio"), job).unwrap();
    let mut read_bytes = Vec::new();
    for tool in tools() {
        let o = run(tool, tmp.path(), &["j.fio".to_string()]);
        assert!(o.status.success(), "{tool}: {}", text(&o));
        check_writes(&logged(&tmp.path().join("w.log")), 8, 8);
        let reads = logged(&tmp.path().join("r.log"));
        assert!(!reads.is_empty(), "{tool}: the reads found data");
        for (_, off, len) in &reads {
            assert!(off + len <= 2 * ZONE, "{tool}: a read at {off}+{len}");
        }
        read_bytes.push(reads.iter().map(|r| r.2).sum::<u64>());
        for log in ["w.log", "r.log"] {
            std::fs::remove_file(tmp.path().join(log)).unwrap();
        }
    }
    // fio reads the job's size (8 MiB) from the 2 MiB that hold data.
    assert!(
        read_bytes.iter().all(|&b| b == read_bytes[0]),
        "{read_bytes:?}"
    );
}

#[test]
fn zone_resets_are_counted_in_the_json_and_the_text() {
    let tmp = tempfile::tempdir().unwrap();
    let f = eight_mib(tmp.path());
    let args = zbd_args(
        &f,
        &["--rw=randwrite", "--bs=64k", "--size=8m", "--loops=3"],
    );
    let mut json_args = args.clone();
    json_args.push("--output-format=json".into());
    let o = run("hiops", tmp.path(), &json_args);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // 24 MiB into 8 MiB of zones: zones fill, and a full zone is reset
    // before it is written again.
    let resets = v["jobs"][0]["zone_resets"].as_u64().unwrap();
    assert!(resets >= 8, "{resets} resets");
    let o = run("hiops", tmp.path(), &args);
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().find(|l| l.contains("  write: IOPS=")).unwrap();
    let n: u64 = line
        .split("; ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(n >= 8 && line.ends_with(" zone resets"), "{line}");
}

#[test]
fn zones_are_emulated_on_a_loop_device_without_zones_of_its_own() {
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
    let job = [
        "--rw=write",
        "--bs=64k",
        "--direct=1",
        "--write_iolog=w.log",
    ];
    let args = zbd_args(&dev.0, &job);
    let o = run("hiops", tmp.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let ios = logged(&tmp.path().join("w.log"));
    assert_eq!(ios.iter().map(|io| io.2).sum::<u64>(), 4 << 20);
    assert_eq!(check_writes(&ios, 4, 4).len(), 4);
}

#[test]
fn what_fio_refuses_is_refused_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    let f = eight_mib(tmp.path());
    let small = tmp.path().join("small");
    std::fs::write(&small, vec![0u8; 4096]).unwrap();
    let file = format!("--filename={f}");
    let cases: [(&[&str], &str); 8] = [
        // fio 3.34's two refusals (its t/zbd tests 60 and 61).
        (
            &[
                &file,
                "--do_verify=1",
                "--verify=md5",
                "--experimental_verify=1",
            ],
            "zonemode=zbd does not support experimental verify",
        ),
        (
            &[
                &file,
                "--size=1m",
                "--numjobs=2",
                "--offset_increment=1m",
                "--zone_reset_threshold=0.1",
                "--zone_reset_frequency=1",
            ],
            "multi-jobs with different write ranges are not supported with zone_reset_threshold",
        ),
        (
            &["--filename=missing"],
            "file/device size 0 is smaller than zone size 1048576",
        ),
        (
            &["--filename=small"],
            "file/device size 4096 is smaller than zone size",
        ),
        (&[&file, "--zonesize=0"], "zonemode=zbd needs zonesize"),
        (
            &[&file, "--zoneskip=1m"],
            "zonemode=zbd with zoneskip is not implemented",
        ),
        (
            &[&file, "--job_max_open_zones=1"],
            "cannot be used without a global open zones limit",
        ),
        (&[&file, "--bs=2m"], "is larger than a zone's capacity"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["--name=z".to_string(), "--zonemode=zbd".into()];
        args.extend(["--zonesize=1m", "--rw=write"].map(String::from));
        args.extend(extra.iter().map(|s| s.to_string()));
        // A later zonesize=0 takes the zones away.
        let o = run("hiops", tmp.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{extra:?}: {}", text(&o));
        assert!(!tmp.path().join("missing").exists());
        assert_eq!(std::fs::metadata(&small).unwrap().len(), 4096);
    }
}

/// fio 3.36's open-zone accounting of a trim (its t/zbd test 65): four
/// zones opened up to max_open_zones=4, one of them trimmed, and a write
/// job then opens another zone and writes it whole (fio 3.33 still counted
/// the trimmed zone open, and the write job found no zone to write).
#[test]
fn a_trimmed_zone_is_no_longer_open() {
    let tmp = tempfile::tempdir().unwrap();
    let f = eight_mib(tmp.path());
    let args: Vec<String> = [format!("--filename={f}")]
        .into_iter()
        .chain(
            [
                "--zonemode=zbd",
                "--zonesize=1m",
                "--max_open_zones=4",
                "--group_reporting=1",
                "--ioengine=psync",
                "--output-format=json",
                "--name=prep",
                "--rw=randwrite",
                "--offset=0",
                "--size=4m",
                "--bs=4k",
                "--io_size=1m",
                "--name=trim",
                "--wait_for=prep",
                "--rw=trim",
                "--bs=1m",
                "--offset=0",
                "--size=1m",
                "--name=write",
                "--wait_for=trim",
                "--rw=write",
                "--bs=4k",
                "--offset=4m",
                "--size=1m",
            ]
            .map(String::from),
        )
        .collect();
    let o = run("hiops", tmp.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The write job writes its whole zone.
    let jobs = v["jobs"].as_array().unwrap();
    let write = jobs.iter().find(|j| j["jobname"] == "write").unwrap();
    assert_eq!(
        write["write"]["io_bytes"].as_u64(),
        Some(1 << 20),
        "{write}"
    );
}

/// Zone resets under verify (fio's t/zbd test 59): zones here are
/// emulated, so a reset moves a write pointer and loses no data, and the
/// verify pass reads every block's last write back without an error.
#[test]
fn zone_resets_beside_verify_lose_nothing_verify_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let f = eight_mib(tmp.path());
    for rw in ["write", "randwrite", "rw", "randrw"] {
        let extra = [
            &format!("--rw={rw}")[..],
            "--bs=256k",
            "--size=2m",
            "--loops=2",
            "--do_verify=1",
            "--verify=md5",
            "--zone_reset_frequency=.9",
            "--zone_reset_threshold=.1",
            "--output-format=json",
        ];
        let o = run("hiops", tmp.path(), &zbd_args(&f, &extra));
        assert!(o.status.success(), "{rw}: {}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let j = &v["jobs"][0];
        assert_eq!(j["error"], 0, "{rw}: {j}");
        assert!(
            j["zone_resets"].as_u64().unwrap() > 0,
            "{rw}: no reset happened: {j}"
        );
        assert!(
            j["read"]["io_bytes"].as_u64().unwrap() > 0,
            "{rw}: nothing was verified"
        );
    }
}
