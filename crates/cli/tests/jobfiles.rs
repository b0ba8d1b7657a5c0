//! fio job files and fio's command-line form through the binary, and fio's
//! own JSON tooling reading hiops' output.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn hiops(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("hiops starts")
}

fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/jobs")
        .join(name)
        .display()
        .to_string()
}

fn json_of(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "hiops failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not pure JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

fn write_job(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn stonewalled_phases_run_in_order_and_groups_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops(
        tmp.path(),
        &[
            "run",
            "--output-format=json",
            "--no-progress",
            &corpus("phases.fio"),
        ],
    );
    let v = json_of(&o);
    let jobs = v["jobs"].as_array().unwrap();
    // w1, w2, then r1+r2 merged by group_reporting, then r3.
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["w1", "w2", "r1", "r3"]);
    let groups: Vec<u64> = jobs
        .iter()
        .map(|j| j["groupid"].as_u64().unwrap())
        .collect();
    assert_eq!(groups, [0, 1, 2, 3]);
    // Size-based: each job moves exactly its 64 MiB (16384 blocks of 4 KiB).
    assert_eq!(jobs[0]["write"]["total_ios"], 16384);
    assert_eq!(jobs[2]["read"]["total_ios"], 2 * 16384, "two jobs merged");
    assert_eq!(jobs[2]["hiops"]["threads"], 2);
    assert_eq!(v["hiops"]["phases"].as_array().unwrap().len(), 3);
    assert_eq!(v["global options"]["ioengine"], "null");
    // wait_for_previous (fio's stonewall) given with no value: fio 3.33
    // leaves such a flag out of its JSON option lists.
    assert_eq!(jobs[3]["job options"].get("stonewall"), None);
    assert_eq!(jobs[3]["job options"]["rw"], "read", "{}", jobs[3]);
}

#[test]
fn command_line_jobs_use_fio_defaults_and_per_clone_files() {
    let tmp = tempfile::tempdir().unwrap();
    let v = json_of(&hiops(
        tmp.path(),
        &[
            "run",
            "--output-format=json",
            "--size=1m",
            "--bs=4k",
            "--name=seq",
            "--rw=write",
            "--numjobs=2",
            "--name=rand",
            "--rw",
            "randread",
            "--size=512k",
        ],
    ));
    let jobs = v["jobs"].as_array().unwrap();
    // Without group_reporting, fio lists each clone.
    assert_eq!(jobs.len(), 3);
    assert_eq!(jobs[0]["jobname"], "seq");
    assert_eq!(jobs[1]["jobname"], "seq");
    assert_eq!(jobs[0]["write"]["io_bytes"], 1 << 20);
    assert_eq!(jobs[2]["read"]["io_bytes"], 512 << 10);
    // fio's defaults: psync, one file per clone in the current directory.
    assert!(jobs[0]["hiops"]["engine"]
        .as_str()
        .unwrap()
        .starts_with("psync"));
    for f in ["seq.0.0", "seq.1.0", "rand.0.0"] {
        assert!(tmp.path().join(f).exists(), "{f} was not created");
    }
    assert_eq!(v["global options"]["size"], "1m");
}

#[test]
fn offsets_gaps_flushes_and_loops_do_what_fio_says() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("data");
    let job = write_job(
        tmp.path(),
        "flush.fio",
        &format!(
            "[global]\nfilename={}\nbs=4k\nsize=64k\noffset=32k\n\n[gapped]\nrw=write:4k\nfsync=4\nend_fsync=1\n\n[looped]\nstonewall\nrw=read\nloops=3\n",
            f.display()
        ),
    );
    let v = json_of(&hiops(tmp.path(), &["run", "--output-format=json", &job]));
    let jobs = v["jobs"].as_array().unwrap();
    // 64 KiB range with a 4 KiB gap after each block: 8 writes of 4 KiB, then
    // the pass is done (fio counts the range, not the bytes).
    let gapped = &jobs[0];
    let writes = gapped["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(writes, 8);
    // One fsync per 4 writes but after the last (fio makes a flush before
    // a next I/O: 8 writes, 1 fsync, as fio 3.33's count), plus end_fsync.
    let syncs = gapped["sync"]["total_ios"].as_u64().unwrap();
    assert_eq!(syncs, (writes - 1) / 4 + 1);
    // The file holds offset + size.
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 96 << 10);
    // loops=3 reads the 64 KiB range three times.
    assert_eq!(jobs[1]["read"]["io_bytes"], 3 * (64 << 10));
}

#[test]
fn fsync_on_close_zero_buffers_and_sync_do_what_fio_says() {
    let tmp = tempfile::tempdir().unwrap();
    let (zeros, plain) = (tmp.path().join("zeros"), tmp.path().join("plain"));
    let job = write_job(
        tmp.path(),
        "buffers.fio",
        &format!(
            "[global]\nbs=4k\nsize=64k\nrw=write\n\n[zeroed]\nfilename={}\nzero_buffers=1\nfsync_on_close=1\n\n[plain]\nfilename={}\nsync=dsync\n",
            zeros.display(),
            plain.display()
        ),
    );
    let v = json_of(&hiops(tmp.path(), &["run", "--output-format=json", &job]));
    let jobs = v["jobs"].as_array().unwrap();
    // fsync_on_close: one fsync as the job's files close, as end_fsync.
    assert_eq!(jobs[0]["sync"]["total_ios"], 1);
    assert_eq!(jobs[1]["sync"]["total_ios"], 0);
    let z = std::fs::read(&zeros).unwrap();
    assert_eq!(z.len(), 64 << 10);
    assert!(z.iter().all(|&b| b == 0), "zero_buffers writes zeros");
    let p = std::fs::read(&plain).unwrap();
    assert!(
        p.iter().any(|&b| b != 0),
        "without it hiops writes no zeros"
    );
    // sync takes fio's three values, and no other.
    let o = hiops(
        tmp.path(),
        &["run", "--ioengine=null", "--size=1m", "--sync=always"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("use none, sync or dsync"), "{err}");
}

/// The open flags of the fd process `pid` reads and writes `path` with,
/// once it is open (laying the file out first opens it write-only).
fn open_flags(pid: u32, path: &Path) -> Option<u32> {
    for _ in 0..400 {
        for e in std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
            if std::fs::read_link(e.path()).ok().as_deref() == Some(path) {
                let info = std::fs::read_to_string(format!(
                    "/proc/{pid}/fdinfo/{}",
                    e.file_name().to_string_lossy()
                ))
                .ok()?;
                let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
                let flags = u32::from_str_radix(flags.trim(), 8).ok()?;
                if flags & libc::O_ACCMODE as u32 == libc::O_RDWR as u32 {
                    return Some(flags);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    None
}

#[test]
fn sync_opens_the_files_with_o_sync_or_o_dsync() {
    for (value, flag) in [
        ("sync", libc::O_SYNC),
        ("dsync", libc::O_DSYNC),
        ("none", 0),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("data");
        let mut child = Command::new(env!("CARGO_BIN_EXE_hiops"))
            .current_dir(tmp.path())
            .args([
                "run",
                "--name=w",
                "--rw=randwrite",
                "--size=1m",
                "--time_based",
                "--runtime=3",
                "--no-progress",
            ])
            .arg(format!("--filename={}", f.display()))
            .arg(format!("--sync={value}"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let flags = open_flags(child.id(), &f);
        child.kill().unwrap();
        child.wait().unwrap();
        let flags = flags.expect("hiops opened the file within 4 s") as i32;
        assert_eq!(flags & libc::O_SYNC, flag, "sync={value}: flags {flags:o}");
    }
}

#[test]
fn a_name_in_global_names_no_job_as_in_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let job = write_job(
        tmp.path(),
        "names.fio",
        "[global]\nname=ignored\nioengine=null\nsize=1m\n\n[first]\n\n[second]\nname=explicit\n",
    );
    let v = json_of(&hiops(tmp.path(), &["run", "--output-format=json", &job]));
    let names: Vec<&str> = (v["jobs"].as_array().unwrap().iter())
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["first", "explicit"], "fio 3.33 names them so");
}

#[test]
fn overwrite_lays_a_new_file_out_whole_as_fio_does() {
    for value in ["0", "1"] {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("data");
        let job = write_job(
            tmp.path(),
            "over.fio",
            &format!(
                "[w]\nfilename={}\nrw=randwrite\nbs=4k\nsize=1m\nnumber_ios=10\noverwrite={value}\n",
                f.display()
            ),
        );
        let v = json_of(&hiops(tmp.path(), &["run", "--output-format=json", &job]));
        assert_eq!(v["jobs"][0]["write"]["total_ios"], 10);
        // 10 writes, a whole 1 MiB file: laid out first (fio 3.33 too).
        assert_eq!(
            std::fs::metadata(&f).unwrap().len(),
            1 << 20,
            "overwrite={value}"
        );
    }
}

#[test]
fn unsupported_options_stop_the_run_unless_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let o = hiops(tmp.path(), &["run", &corpus("unsupported.fio")]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unsupported.fio:6: option thinkcycles"),
        "{err}"
    );
    assert!(
        err.contains("unsupported.fio:8: unknown option frobnicate"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "no result without a run");
    assert!(
        !tmp.path().join("job.0.0").exists(),
        "nothing was written before refusing"
    );
    let o = hiops(
        tmp.path(),
        &[
            "run",
            "--ignore-unsupported",
            "--output-format=json",
            &corpus("unsupported.fio"),
        ],
    );
    let v = json_of(&o);
    assert_eq!(
        v["jobs"][0]["hiops"]["ignored_options"],
        serde_json::json!(["thinkcycles", "gpu_dev_id", "frobnicate"])
    );
    assert_eq!(v["hiops"]["ignored_options"].as_array().unwrap().len(), 3);
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: ignored"));
    let o = hiops(tmp.path(), &["run", "--name=x", "--frobnicate=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown option --frobnicate"));
}

#[test]
fn percentile_list_and_steady_state_appear_in_the_json() {
    let tmp = tempfile::tempdir().unwrap();
    let v = json_of(&hiops(
        tmp.path(),
        &[
            "run",
            "--output-format=json",
            "--name=ss",
            "--ioengine=null",
            "--size=64m",
            "--runtime=30",
            "--time_based",
            "--percentile_list=50:99.5",
            "--ss=iops:50%",
            "--ss_dur=2",
        ],
    ));
    let j = &v["jobs"][0];
    let p = j["read"]["clat_ns"]["percentile"].as_object().unwrap();
    let keys: Vec<&String> = p.keys().collect();
    assert_eq!(keys, ["50.000000", "99.500000"]);
    // The null engine is steady within 50% at once: the run stops long
    // before its 30 s.
    assert_eq!(j["steadystate"]["attained"], 1);
    assert_eq!(j["steadystate"]["ss"], "iops");
    assert!(j["read"]["runtime"].as_u64().unwrap() < 20_000);
}

/// fio's own `fio_jsonplus_clat2csv` (Debian's fio package) reads hiops'
/// json+ and writes the latency CDF; its last row must count every I/O.
#[test]
fn fio_jsonplus_clat2csv_reads_hiops_json_plus() {
    let Some(tool) = [
        "/usr/bin/fio_jsonplus_clat2csv",
        "/usr/local/bin/fio_jsonplus_clat2csv",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists()) else {
        eprintln!("skipped: fio_jsonplus_clat2csv not installed (Debian package fio)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = hiops(
        tmp.path(),
        &[
            "run",
            "--output-format=json+",
            "--name=lat",
            "--ioengine=mem",
            "--rw=randread",
            "--size=32m",
        ],
    );
    let v = json_of(&out);
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(ios, 8192);
    std::fs::write(tmp.path().join("lat.json"), &out.stdout).unwrap();
    let st = Command::new("python3")
        .arg(&tool)
        .arg(tmp.path().join("lat.json"))
        .arg(tmp.path().join("lat.csv"))
        .output()
        .expect("python3 runs the tool");
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let csv = std::fs::read_to_string(tmp.path().join("lat_job0.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(", ").collect();
    let cum = header
        .iter()
        .position(|h| *h == "read_clat_ns_cumulative")
        .unwrap();
    let pct = header
        .iter()
        .position(|h| *h == "read_clat_ns_percentile")
        .unwrap();
    let last: Vec<&str> = csv
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap()
        .split(", ")
        .collect();
    assert_eq!(last[cum].trim().parse::<u64>().unwrap(), ios);
    assert!((last[pct].trim().parse::<f64>().unwrap() - 1.0).abs() < 1e-9);
}

/// Flips one payload byte of the block at `offset` in `path`.
fn corrupt(path: &Path, offset: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, offset + 1000).unwrap();
    b[0] ^= 0x40;
    f.write_all_at(&b, offset + 1000).unwrap();
}

#[test]
fn every_verify_algorithm_checks_its_blocks_and_catches_a_flipped_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = dir.join("v.dat");
    let file = target.display();
    // Each job writes every 4 KiB block of 1 MiB once (rw=write) and checks
    // them; stamp_only writes md5 stamps without checking.
    let jobs = write_job(
        dir,
        "verify.fio",
        &format!(
            "[global]\nfilename={file}\nsize=1m\nbs=4k\nioengine=psync\nrw=write\n\
             [crc]\nverify=crc32c\n\
             [md5]\nstonewall\nverify=md5\n\
             [sha]\nstonewall\nverify=sha256\nverify_pattern=\"abc\"\n\
             [pat]\nstonewall\nverify_pattern=0xdeadbeef\n\
             [stamp_only]\nstonewall\nverify=md5\ndo_verify=0\n"
        ),
    );
    let v = json_of(&hiops(
        dir,
        &["run", "--output-format=json", "--no-progress", &jobs],
    ));
    for (i, name) in ["crc", "md5", "sha", "pat"].iter().enumerate() {
        let j = &v["jobs"][i];
        assert_eq!(j["jobname"], *name);
        let check = &j["hiops"]["verify"];
        assert_eq!(check["blocks_checked"], 256, "{name}: {check}");
        assert_eq!(check["bad_blocks"], 0, "{name}: {check}");
    }
    assert!(
        v["jobs"][4]["hiops"]["verify"].is_null(),
        "do_verify=0 checks nothing: {}",
        v["jobs"][4]["hiops"]["verify"]
    );

    // The md5 stamps left by stamp_only check clean, then one flipped
    // payload byte is found by a later verify_only pass.
    let check = |extra: &str| {
        let args = format!("--filename={file} --size=1m --bs=4k --rw=read --verify_only {extra}");
        let mut a = vec!["run", "--output-format=json", "--no-progress"];
        a.extend(args.split_whitespace());
        hiops(dir, &a)
    };
    let clean = json_of(&check("--verify=md5"));
    assert_eq!(clean["jobs"][0]["hiops"]["verify"]["bad_blocks"], 0);
    corrupt(&target, 40960);
    let o = check("--verify=md5");
    assert!(!o.status.success(), "a corrupted block must fail the run");
    let err = String::from_utf8_lossy(&o.stderr);
    // The job stops at the bad block, as fio's.
    assert!(
        err.contains(": 1 bad of ")
            && err.contains("offset 40960")
            && err.contains("checksum mismatch"),
        "{err}"
    );

    // A pattern run, then a byte of its payload changed: the pattern check
    // names the byte.
    let o = hiops(
        dir,
        &[
            "run",
            "--no-progress",
            "--output-format=json",
            &format!("--filename={file}"),
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--verify_pattern=0x5a",
        ],
    );
    json_of(&o);
    corrupt(&target, 8192);
    let o = check("--verify_pattern=0x5a");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("offset 8192")
            && err.contains("verify pattern at byte 1000"),
        "{err}"
    );
}

#[test]
fn every_strategy_verifies_from_1_8_and_256_threads_and_catches_a_flipped_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let target = dir.join("s.dat");
    let file = format!("--filename={}", target.display());
    for strategy in [
        "pread",
        "completion-thread",
        "per-thread-ring",
        "coop",
        "poll",
        "hybrid",
    ] {
        for threads in [1, 8, 256] {
            let nj = format!("--numjobs={threads}");
            let st = format!("--strategy={strategy}");
            let v = json_of(&hiops(
                dir,
                &[
                    "run",
                    "--output-format=json",
                    "--no-progress",
                    &file,
                    "--size=8m",
                    "--bs=4k",
                    "--rw=randrw",
                    "--verify=crc32c",
                    "--runtime=300ms",
                    "--ramp_time=0",
                    &nj,
                    &st,
                ],
            ));
            let check = &v["jobs"][0]["hiops"]["verify"];
            let checked = check["blocks_checked"].as_u64().unwrap_or(0);
            assert!(checked > 0, "{strategy} x {threads}: {check}");
            assert_eq!(check["bad_blocks"], 0, "{strategy} x {threads}: {check}");
        }
    }
    // Stamp every block through a path, flip a byte, and the path's
    // verify_only pass finds it.
    let write = hiops(
        dir,
        &[
            "run",
            "--output-format=json",
            "--no-progress",
            &file,
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--strategy=coop",
            "--numjobs=1",
        ],
    );
    json_of(&write);
    corrupt(&target, 12288);
    let o = hiops(
        dir,
        &[
            "run",
            "--no-progress",
            &file,
            "--size=1m",
            "--bs=4k",
            "--rw=read",
            "--verify=crc32c",
            "--verify_only",
            "--strategy=coop",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    // The job stops at the bad block, as fio's.
    assert!(
        err.contains(": 1 bad of ") && err.contains("offset 12288"),
        "{err}"
    );
}

#[test]
fn raid0_over_two_files_writes_and_verifies_and_refuses_blocks_that_cross_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let files = format!(
        "--filename={}:{}",
        dir.join("a").display(),
        dir.join("b").display()
    );
    let v = json_of(&hiops(
        dir,
        &[
            "run",
            "--output-format=json",
            "--no-progress",
            &files,
            "--size=2m",
            "--bs=16k",
            "--rw=randwrite",
            "--raid0=64k",
            "--verify=crc32c",
            "--runtime=300ms",
            "--ramp_time=0",
        ],
    ));
    let check = &v["jobs"][0]["hiops"]["verify"];
    assert!(check["blocks_checked"].as_u64().unwrap() > 0, "{check}");
    assert_eq!(check["bad_blocks"], 0, "{check}");
    let o = hiops(
        dir,
        &[
            "run",
            "--no-progress",
            &files,
            "--size=2m",
            "--bs=48k",
            "--rw=randread",
            "--raid0=64k",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("every block size must divide the chunk"),
        "{err}"
    );
}
