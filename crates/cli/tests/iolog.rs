//! fio's I/O logs through the binary: write_iolog in
//! fio's v3 text, read_iolog replay of fio's and hiops' traces (v2, v3,
//! blktrace), both ways with fio where it is installed, through the queue
//! engines, the coop path and the task path. Each replay is checked by the
//! I/Os it issued: hiops' own write_iolog of the replay, or fio's latency
//! log with log_offset=1.

mod common;

use common::{ios_in, log_lines, run_json, run_json_in};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// fio, or None (with the reason printed) where it is not installed.
fn fio() -> Option<Command> {
    match Command::new("fio").arg("--version").output() {
        Ok(o) if o.status.success() => Some(Command::new("fio")),
        _ => {
            eprintln!("skipping the fio half: fio is not installed (.ci/setup installs it)");
            None
        }
    }
}

/// A trace's I/Os in order: (file, action, offset, length), without its
/// header, file actions and times.
fn ios_of(path: &Path) -> Vec<(String, String, u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let version = match lines.next() {
        Some("fio version 3 iolog") => 3,
        Some("fio version 2 iolog") => 2,
        other => panic!("{}: header {other:?}", path.display()),
    };
    lines
        .filter_map(|l| {
            let w: Vec<&str> = l
                .split_whitespace()
                .skip(usize::from(version == 3))
                .collect();
            (w.len() == 4).then(|| {
                (
                    w[0].to_string(),
                    w[1].to_string(),
                    w[2].parse().unwrap(),
                    w[3].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// Writes a 1 MiB file of data.
fn data_file(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, vec![0x5au8; 1 << 20]).unwrap();
    p
}

fn total_ios(v: &serde_json::Value) -> u64 {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| ios_in(j, "read") + ios_in(j, "write"))
        .sum()
}

/// Records a random mixed job with hiops; returns the trace.
fn hiops_trace(dir: &Path, data: &Path) -> PathBuf {
    let trace = dir.join("hiops.iolog");
    let file = format!("--filename={}", data.display());
    let log = format!("--write_iolog={}", trace.display());
    let v = run_json(
        dir,
        &[
            "--name=rec",
            &file,
            "--size=1m",
            "--bs=4k",
            "--rw=randrw",
            &log,
        ],
    );
    assert_eq!(total_ios(&v), 256);
    trace
}

#[test]
fn write_iolog_is_fios_v3_with_every_io() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_file(tmp.path(), "data");
    let trace = hiops_trace(tmp.path(), &data);
    let text = std::fs::read_to_string(&trace).unwrap();
    let name = data.display().to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "fio version 3 iolog");
    assert_eq!(lines[1], format!("0 {name} add"));
    assert_eq!(lines[2], format!("0 {name} open"));
    assert!(lines.last().unwrap().ends_with(&format!(" {name} close")));
    let ios = ios_of(&trace);
    assert_eq!(ios.len(), 256);
    // randrw with the random map: every block once.
    let mut offsets: Vec<u64> = ios.iter().map(|io| io.2).collect();
    offsets.sort();
    assert_eq!(offsets, (0..256).map(|b| b * 4096).collect::<Vec<_>>());
    let times: Vec<u64> = lines[3..lines.len() - 1]
        .iter()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "times in µs, in order"
    );
}

/// hiops replays its own trace through each driver and path strategy,
/// issuing the same I/Os in the same order (one thread, depth 1) or the
/// same set (a deeper queue reorders nothing but completions).
#[test]
fn replay_through_engines_coop_and_tasks_issues_the_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = data_file(dir, "data");
    let trace = hiops_trace(dir, &data);
    let want = ios_of(&trace);
    let read = format!("--read_iolog={}", trace.display());
    for (i, extra) in [
        &["--ioengine=psync"][..],
        &["--ioengine=io_uring", "--iodepth=8"],
        &["--strategy=coop"],
        &["--strategy=coop", "--tasks=1"],
        &["--replay_no_stall=1", "--ioengine=libaio", "--iodepth=4"],
    ]
    .iter()
    .enumerate()
    {
        let again = dir.join(format!("replay{i}.iolog"));
        let write = format!("--write_iolog={}", again.display());
        let mut args = vec!["--name=replay", &read, &write];
        args.extend_from_slice(extra);
        let v = run_json(dir, &args);
        assert_eq!(total_ios(&v), 256, "{extra:?}");
        assert_eq!(
            ios_of(&again),
            want,
            "{extra:?}: the trace's I/Os in its order"
        );
    }
}

#[test]
fn hiops_replays_a_trace_fio_wrote() {
    let Some(mut fio) = fio() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = data_file(dir, "data");
    let trace = dir.join("fio.iolog");
    let o = fio
        .current_dir(dir)
        .args([
            "--name=rec",
            "--size=1m",
            "--bs=4k",
            "--rw=randrw",
            "--output=/dev/null",
        ])
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", trace.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want = ios_of(&trace);
    assert_eq!(want.len(), 256, "fio's trace of 1 MiB in 4 KiB I/Os");
    let again = dir.join("replay.iolog");
    let v = run_json(
        dir,
        &[
            "--name=replay",
            &format!("--read_iolog={}", trace.display()),
            &format!("--write_iolog={}", again.display()),
            "--strategy=coop",
        ],
    );
    assert_eq!(total_ios(&v), 256);
    assert_eq!(ios_of(&again), want);
}

#[test]
fn fio_replays_a_trace_hiops_wrote() {
    let Some(mut fio) = fio() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = data_file(dir, "data");
    let trace = hiops_trace(dir, &data);
    // fio drops write_iolog when it replays: its latency log with
    // log_offset=1 names each I/O (time, lat, direction, bytes, offset, prio).
    let o = fio
        .current_dir(dir)
        .args([
            "--name=replay",
            "--write_lat_log=fio",
            "--log_offset=1",
            "--output=/dev/null",
        ])
        .arg(format!("--read_iolog={}", trace.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut got: Vec<(u64, u64, u64)> = log_lines(&dir.join("fio_lat.1.log"))
        .iter()
        .map(|c| (c[2], c[4], c[3]))
        .collect();
    let mut want: Vec<(u64, u64, u64)> = ios_of(&trace)
        .into_iter()
        .map(|(_, act, off, len)| (u64::from(act == "write"), off, len))
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got.len(), 256, "fio replayed every I/O");
    assert_eq!(got, want, "the same directions, offsets and sizes");
}

#[test]
fn a_v2_trace_maps_its_files_to_the_jobs_by_name_or_redirect() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (a, b) = (data_file(dir, "a"), data_file(dir, "b"));
    let trace = dir.join("v2.iolog");
    let (an, bn) = (a.display(), b.display());
    std::fs::write(
        &trace,
        format!(
            "fio version 2 iolog\n{an} add\n{bn} add\n{an} open\n{bn} open\n\
             {bn} write 8192 4096\n{an} read 0 512\n{bn} sync 0 0\n{an} wait 1 0\n\
             {an} read 65536 8192\n{an} close\n{bn} close\n"
        ),
    )
    .unwrap();
    let read = format!("--read_iolog={}", trace.display());
    // The job names the files in the other order: I/Os follow the names.
    let again = dir.join("again.iolog");
    let write = format!("--write_iolog={}", again.display());
    let files = format!("--filename={bn}:{an}");
    let v = run_json(dir, &["--name=r", &read, &write, &files]);
    assert_eq!(total_ios(&v), 3);
    let s = |x: &dyn std::fmt::Display| x.to_string();
    let want = vec![
        (s(&bn), s(&"write"), 8192, 4096),
        (s(&an), s(&"read"), 0, 512),
        (s(&bn), s(&"sync"), 0, 0),
        (s(&an), s(&"read"), 65536, 8192),
    ];
    assert_eq!(ios_of(&again), want);
    // replay_redirect: everything on one file.
    let c = data_file(dir, "c");
    let redirect = format!("--replay_redirect={}", c.display());
    run_json(dir, &["--name=r", &read, &write, &redirect]);
    let cn = c.display().to_string();
    assert!(ios_of(&again).iter().all(|io| io.0 == cn));
    // A file the job does not have is refused by name.
    let only_a = format!("--filename={an}");
    let o = run_json_in(dir, &["--name=r", &read, &only_a]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("names the file {bn}")), "{err}");
}

#[test]
fn a_malformed_trace_is_refused_with_its_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = data_file(dir, "data");
    let trace = dir.join("bad.iolog");
    let d = data.display();
    for (body, line, what) in [
        (
            format!("0 {d} add\n5 {d} read 0 4096\n7 {d} read 4096\n"),
            4,
            "'read' with 1 values",
        ),
        (
            format!("0 {d} add\n5 {d} frob 0 4096\n"),
            3,
            "unknown action 'frob'",
        ),
        (
            format!("0 {d} add\nsoon {d} read 0 4096\n"),
            3,
            "'soon' is not a time",
        ),
        (
            format!("0 {d} add\n5 {d} read 4096 x\n"),
            3,
            "'x' is not a length",
        ),
    ] {
        std::fs::write(&trace, format!("fio version 3 iolog\n{body}")).unwrap();
        let o = run_json_in(
            dir,
            &["--name=r", &format!("--read_iolog={}", trace.display())],
        );
        assert!(!o.status.success(), "{body}");
        let err = String::from_utf8_lossy(&o.stderr);
        let place = format!("{}:{line}: ", trace.display());
        assert!(
            err.contains(&place) && err.contains(what),
            "{place} {what}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    std::fs::write(&trace, "fio version 1 iolog\n").unwrap();
    let o = run_json_in(
        dir,
        &["--name=r", &format!("--read_iolog={}", trace.display())],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(":1: not a fio iolog"), "{err}");
}

/// One blktrace event (blktrace_api.h, `struct blk_io_trace`: 48 bytes in
/// the recording machine's order, here this one's).
fn blk_event(time_ns: u64, sector: u64, bytes: u32, action: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(48);
    b.extend(0x6561_7407u32.to_ne_bytes()); // magic | version 7
    b.extend(0u32.to_ne_bytes()); // sequence
    b.extend(time_ns.to_ne_bytes());
    b.extend(sector.to_ne_bytes());
    b.extend(bytes.to_ne_bytes());
    b.extend(action.to_ne_bytes());
    b.extend([0u8; 12]); // pid, device, cpu
    b.extend([0u8; 4]); // error, pdu_len
    b
}

const TA_QUEUE: u32 = 1;
const TA_COMPLETE: u32 = 8;
const TC_READ: u32 = 1 << 16;
const TC_WRITE: u32 = 2 << 16;
const TC_QUEUE: u32 = 16 << 16;

/// The queue events of a blktrace file: (write, offset, bytes).
fn blk_queued(path: &Path) -> Vec<(u64, u64, u64)> {
    let b = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while at + 48 <= b.len() {
        let u32_at = |i: usize| u32::from_ne_bytes(b[at + i..at + i + 4].try_into().unwrap());
        let sector = u64::from_ne_bytes(b[at + 16..at + 24].try_into().unwrap());
        let (bytes, action) = (u32_at(24), u32_at(28));
        let pdu = u16::from_ne_bytes(b[at + 46..at + 48].try_into().unwrap()) as usize;
        let data = action & ((1 << 2 | 1 << 10 | 1 << 13) << 16) == 0; // no flush, notify, discard
        if action & 0xffff == TA_QUEUE && data && bytes > 0 {
            out.push((
                u64::from(action & TC_WRITE != 0),
                sector * 512,
                bytes as u64,
            ));
        }
        at += 48 + pdu;
    }
    out
}

/// Replays `trace` (a blktrace) onto `data` with hiops and, where it is
/// installed, fio; each must issue exactly the trace's queued I/Os.
fn replay_blktrace(dir: &Path, trace: &Path, data: &Path) {
    let mut want = blk_queued(trace);
    want.sort();
    let again = dir.join("blk-again.iolog");
    let v = run_json(
        dir,
        &[
            "--name=blk",
            &format!("--read_iolog={}", trace.display()),
            &format!("--replay_redirect={}", data.display()),
            &format!("--write_iolog={}", again.display()),
            "--strategy=coop",
        ],
    );
    assert_eq!(total_ios(&v), want.len() as u64);
    let mut got: Vec<(u64, u64, u64)> = ios_of(&again)
        .into_iter()
        .map(|(_, act, off, len)| (u64::from(act == "write"), off, len))
        .collect();
    got.sort();
    assert_eq!(got, want, "hiops replays the trace's queued I/Os");
    let Some(mut fio) = fio() else { return };
    let o = fio
        .current_dir(dir)
        .args([
            "--name=blk",
            "--write_lat_log=fioblk",
            "--log_offset=1",
            "--output=/dev/null",
        ])
        .arg(format!("--read_iolog={}", trace.display()))
        .arg(format!("--replay_redirect={}", data.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut fio_got: Vec<(u64, u64, u64)> = log_lines(&dir.join("fioblk_lat.1.log"))
        .iter()
        .map(|c| (c[2], c[4], c[3]))
        .collect();
    fio_got.sort();
    assert_eq!(fio_got, want, "fio replays the same I/Os");
}

/// A trace built here from the documented struct: blktrace cannot record
/// on a kernel in lockdown (debugfs is closed to it), as on the machine
/// this was written on.
#[test]
fn a_blktrace_replays_its_queued_ios() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = data_file(dir, "data");
    let mut t = Vec::new();
    t.extend(blk_event(1_000, 8, 4096, TA_QUEUE | TC_QUEUE | TC_READ));
    t.extend(blk_event(2_000, 8, 4096, TA_COMPLETE | TC_READ));
    t.extend(blk_event(3_000, 64, 8192, TA_QUEUE | TC_QUEUE | TC_WRITE));
    t.extend(blk_event(3_500, 72, 0, TA_QUEUE | TC_QUEUE | TC_READ)); // 0 bytes: skipped
    t.extend(blk_event(4_000, 1024, 512, TA_QUEUE | TC_QUEUE | TC_READ));
    let trace = dir.join("synthetic.blktrace.0");
    std::fs::write(&trace, &t).unwrap();
    assert_eq!(blk_queued(&trace).len(), 3);
    replay_blktrace(dir, &trace, &data);
    // Device numbers name no file: the replay needs a target.
    let o = run_json_in(
        dir,
        &["--name=blk", &format!("--read_iolog={}", trace.display())],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("replay_redirect"),
        "{err}"
    );
}

/// Records reads on a loop device over a file made here with blktrace, and
/// replays the trace. Needs root, blktrace, losetup and a kernel that lets
/// blktrace read debugfs; skips with the reason otherwise.
#[test]
fn a_recorded_blktrace_replays() {
    let skip = |why: &str| eprintln!("skipping the blktrace recording: {why}");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip("needs root");
    }
    if Command::new("blktrace").arg("-v").output().is_err() {
        return skip("blktrace is not installed (.ci/setup installs it)");
    }
    if !Path::new("/sys/kernel/debug/block").exists() {
        return skip("debugfs is not mounted at /sys/kernel/debug");
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let backing = dir.join("loop.img");
    std::fs::write(&backing, vec![0u8; 8 << 20]).unwrap();
    let Some(dev) = losetup(&backing) else {
        return skip("losetup could not attach a loop device");
    };
    let recorded = record_reads(dir, &dev);
    let _ = Command::new("losetup").arg("-d").arg(&dev).status();
    let trace = match recorded {
        Ok(t) => t,
        Err(why) => return skip(&why),
    };
    let queued = blk_queued(&trace);
    for b in [3u64, 17, 100] {
        assert!(
            queued.contains(&(0, b * 4096, 4096)),
            "the read of block {b} was traced"
        );
    }
    let data = dir.join("replay.data");
    std::fs::write(&data, vec![0u8; 8 << 20]).unwrap();
    replay_blktrace(dir, &trace, &data);
}

fn losetup(file: &Path) -> Option<String> {
    let o = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(file)
        .output()
        .ok()?;
    let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (o.status.success() && !dev.is_empty()).then_some(dev)
}

/// blktrace of `dev`'s queue events to one file while dd reads three
/// blocks with O_DIRECT.
fn record_reads(dir: &Path, dev: &str) -> Result<PathBuf, String> {
    let trace = dir.join("rec.blktrace.0");
    let bt = Command::new("blktrace")
        .args(["-d", dev, "-a", "queue", "-o", "-"])
        .stdout(std::fs::File::create(&trace).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("blktrace: {e}"))?;
    std::thread::sleep(std::time::Duration::from_millis(500));
    for block in [3, 17, 100] {
        let _ = Command::new("dd")
            .arg(format!("if={dev}"))
            .args(["of=/dev/null", "bs=4k", "count=1", "iflag=direct"])
            .arg(format!("skip={block}"))
            .stderr(Stdio::null())
            .status();
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill with a pid of a child this test started and has not reaped.
    unsafe { libc::kill(bt.id() as i32, libc::SIGINT) };
    let out = bt
        .wait_with_output()
        .map_err(|e| format!("blktrace: {e}"))?;
    let events = std::fs::metadata(&trace).map(|m| m.len()).unwrap_or(0);
    if events < 48 {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("no events");
        return Err(format!(
            "blktrace recorded nothing ({first}); a kernel in lockdown keeps debugfs from it"
        ));
    }
    Ok(trace)
}

/// (total_ios, io_bytes) of read, write and trim, summed over the jobs of
/// hiops' or fio's JSON.
fn direction_counts(v: &serde_json::Value) -> [(u64, u64); 3] {
    ["read", "write", "trim"].map(|d| {
        v["jobs"].as_array().unwrap().iter().fold((0, 0), |a, j| {
            (
                a.0 + j[d]["total_ios"].as_u64().unwrap(),
                a.1 + j[d]["io_bytes"].as_u64().unwrap(),
            )
        })
    })
}

/// A 1 MiB file of bytes that are never zero, on disk (allocated).
fn nonzero_file(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let data: Vec<u8> = (0..1usize << 20).map(|i| (i % 251) as u8 | 1).collect();
    std::fs::write(&p, data).unwrap();
    std::fs::File::open(&p).unwrap().sync_all().unwrap();
    p
}

/// 512-byte blocks the file has allocated.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks()
}

/// fio's version as (major, minor), e.g. (3, 33) for "fio-3.33".
fn fio_version() -> (u32, u32) {
    let o = Command::new("fio").arg("--version").output().unwrap();
    let v = String::from_utf8_lossy(&o.stdout);
    let mut n = v.trim().trim_start_matches("fio-").split(['.', '-']);
    let mut next = || n.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    (next(), next())
}

/// fio replays `args` with its falloc engine (the one that punches holes
/// for trims in a regular file: fio's other engines trim with BLKDISCARD,
/// which a regular file refuses); returns its JSON and stderr.
fn fio_falloc(fio: &mut Command, dir: &Path, args: &[String]) -> (serde_json::Value, String) {
    let out = dir.join("fio.json");
    let o = fio
        .current_dir(dir)
        .args(["--name=replay", "--ioengine=falloc", "--output-format=json"])
        .arg(format!("--output={}", out.display()))
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "fio: {err}");
    let v = serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("fio's JSON");
    (v, err)
}

/// A v3 trace's trims replay as trims (fio's read_iolog since 3.34):
/// through each engine and path strategy the JSON's trim direction counts
/// them, the file gets holes there and the rest keeps its data.
#[test]
fn a_v3_trace_replays_its_trims() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let trace = dir.join("trims.iolog");
    let d = dir.join("data");
    let d = d.display();
    std::fs::write(
        &trace,
        format!(
            "fio version 3 iolog\n0 {d} add\n0 {d} open\n1 {d} read 0 4096\n\
             2 {d} write 4096 4096\n3 {d} trim 65536 65536\n4 {d} read 8192 4096\n\
             5 {d} trim 262144 4096\n6 {d} write 12288 8192\n7 {d} trim 524288 131072\n\
             8 {d} read 786432 4096\n9 {d} close\n"
        ),
    )
    .unwrap();
    let want = [(3, 12288), (2, 12288), (3, 200704)];
    let holes = [(65536, 65536), (262144, 4096), (524288, 131072)];
    let read = format!("--read_iolog={}", trace.display());
    for extra in [
        &["--ioengine=psync"][..],
        &["--ioengine=io_uring", "--iodepth=4"],
        &["--ioengine=libaio", "--iodepth=2", "--replay_no_stall=1"],
        &["--strategy=coop"],
        &["--strategy=coop", "--tasks=1"],
    ] {
        let data = nonzero_file(dir, "data");
        let before = allocated(&data);
        let again = dir.join("again.iolog");
        let mut args = vec!["--name=r", &read];
        let write = format!("--write_iolog={}", again.display());
        args.push(&write);
        args.extend_from_slice(extra);
        let v = run_json(dir, &args);
        assert_eq!(direction_counts(&v), want, "{extra:?}");
        let trims: Vec<(u64, u64)> = ios_of(&again)
            .into_iter()
            .filter(|io| io.1 == "trim")
            .map(|io| (io.2, io.3))
            .collect();
        assert_eq!(trims, holes, "{extra:?}: the trims, in the trace's order");
        assert_eq!(before - allocated(&data), 200704 / 512, "{extra:?}");
        let back = std::fs::read(&data).unwrap();
        let within =
            |r: &[(u64, u64)], i: usize| r.iter().any(|&(o, l)| (o..o + l).contains(&(i as u64)));
        for (i, &b) in back.iter().enumerate() {
            if within(&holes, i) {
                assert_eq!(b, 0, "{extra:?}: byte {i} of a hole");
            } else if !within(&[(4096, 4096), (12288, 8192)], i) {
                assert_eq!(b, (i % 251) as u8 | 1, "{extra:?}: byte {i} kept");
            }
        }
    }
    // replay_skip=trim leaves them out, as in fio.
    let data = nonzero_file(dir, "data");
    let v = run_json(dir, &["--name=r", &read, "--replay_skip=trim"]);
    assert_eq!(direction_counts(&v), [want[0], want[1], (0, 0)]);
    let back = std::fs::read(&data).unwrap();
    for (o, l) in holes {
        let (o, l) = (o as usize, l as usize);
        assert!(back[o..o + l].iter().all(|&b| b != 0), "{o}: not trimmed");
    }
    readonly_refuses_the_trims(dir, &read);
    fio_replays_the_text_trims(dir, &read, want);
}

/// --readonly refuses a replay that would trim (fio's read-only mode drops
/// the trace's trims and writes; hiops refuses the job, as it refuses any
/// job that writes).
fn readonly_refuses_the_trims(dir: &Path, read: &str) {
    let o = run_json_in(
        dir,
        &["--readonly", "--name=r", read, "--replay_skip=write"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("trace it replays trims"),
        "{err}"
    );
}

/// fio replays the trace of [`a_v3_trace_replays_its_trims`]: the same
/// reads and writes, and its trims from fio 3.34 on (fio 3.33's read_iolog
/// logs each trim line as "bad ddir: 2" and drops it; fio 3.34 added
/// trims, commit dd6500e9).
fn fio_replays_the_text_trims(dir: &Path, read: &str, want: [(u64, u64); 3]) {
    let Some(mut fio) = fio() else { return };
    nonzero_file(dir, "data");
    let (v, err) = fio_falloc(&mut fio, dir, &[read.to_string()]);
    let got = direction_counts(&v);
    assert_eq!(&got[..2], &want[..2], "fio reads and writes the same");
    if fio_version() >= (3, 34) {
        assert_eq!(got[2], want[2], "fio replays the same trims");
    } else {
        eprintln!(
            "fio {:?} drops a text trace's trims: compared reads and writes",
            fio_version()
        );
        assert_eq!(got[2], (0, 0));
        assert_eq!(err.matches("bad ddir: 2").count(), 3, "{err}");
    }
}

const TC_DISCARD: u32 = 1 << (13 + 16);

/// A blktrace's discards replay as trims, by hiops and by fio (3.33 does,
/// blktrace.c `handle_trace_discard`), with the same counts and holes.
#[test]
fn a_blktraces_discards_replay_as_trims_as_in_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut t = Vec::new();
    // The kernel marks a discard as a write too (blk_add_trace_rq).
    let discard = TA_QUEUE | TC_QUEUE | TC_WRITE | TC_DISCARD;
    t.extend(blk_event(1_000, 8, 4096, TA_QUEUE | TC_QUEUE | TC_READ));
    t.extend(blk_event(2_000, 64, 8192, TA_QUEUE | TC_QUEUE | TC_WRITE));
    t.extend(blk_event(3_000, 256, 65536, discard));
    t.extend(blk_event(
        3_500,
        256,
        65536,
        TA_COMPLETE | TC_WRITE | TC_DISCARD,
    ));
    t.extend(blk_event(4_000, 1024, 4096, discard));
    let trace = dir.join("discard.blktrace.0");
    std::fs::write(&trace, &t).unwrap();
    let want = [(1, 4096), (1, 8192), (2, 69632)];
    let data = nonzero_file(dir, "data");
    let before = allocated(&data);
    let args = [
        format!("--read_iolog={}", trace.display()),
        format!("--replay_redirect={}", data.display()),
    ];
    let mut all = vec!["--name=blk", "--strategy=coop"];
    all.extend(args.iter().map(String::as_str));
    let v = run_json(dir, &all);
    assert_eq!(direction_counts(&v), want);
    let punched = before - allocated(&data);
    assert_eq!(punched, 69632 / 512, "hiops punched the discarded ranges");
    let skip: Vec<&str> = all.iter().copied().chain(["--replay_skip=trim"]).collect();
    let v = run_json(dir, &skip);
    assert_eq!(direction_counts(&v)[2], (0, 0), "replay_skip=trim");

    let Some(mut fio) = fio() else { return };
    let data = nonzero_file(dir, "data");
    let (v, _) = fio_falloc(&mut fio, dir, &args);
    assert_eq!(direction_counts(&v), want, "fio counts the same");
    assert_eq!(before - allocated(&data), punched, "fio punched the same");
}

/// fio's merge_blktrace_file: two traces merged in time order, the first
/// at half time and run twice, then replayed from the merged file. (fio
/// 3.33's own merge reads each event short and writes an empty file.)
#[test]
fn blktraces_merge_by_scaled_time_and_passes_then_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = data_file(dir, "data");
    let (a, b) = (dir.join("a.blktrace"), dir.join("b.blktrace"));
    let mut ta = Vec::new();
    let mut tb = Vec::new();
    for i in 0..4u64 {
        ta.extend(blk_event(
            i * 1_000,
            i * 8,
            4096,
            TA_QUEUE | TC_QUEUE | TC_READ,
        ));
        tb.extend(blk_event(
            i * 1_000 + 100,
            512 + i * 8,
            4096,
            TA_QUEUE | TC_QUEUE | TC_WRITE,
        ));
    }
    tb.extend(blk_event(9_000, 0, 4096, TA_COMPLETE | TC_WRITE)); // no I/O: left out
    std::fs::write(&a, ta).unwrap();
    std::fs::write(&b, tb).unwrap();
    let merged = dir.join("merged.blktrace");
    let v = run_json(
        dir,
        &[
            "--name=m",
            &format!("--read_iolog={}:{}", a.display(), b.display()),
            &format!("--merge_blktrace_file={}", merged.display()),
            "--merge_blktrace_scalars=50:100",
            "--merge_blktrace_iters=2:1",
            &format!("--replay_redirect={}", data.display()),
        ],
    );
    assert_eq!(total_ios(&v), 12, "a twice, b once");
    let bytes = std::fs::read(&merged).unwrap();
    assert_eq!(bytes.len(), 12 * 48, "queued I/Os alone, no payload");
    let times: Vec<u64> = bytes
        .chunks(48)
        .map(|e| u64::from_ne_bytes(e[8..16].try_into().unwrap()))
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "in time order: {times:?}"
    );
    // a at half time: 0, 500, 1000, 1500; its second pass 1500 later.
    assert_eq!(
        times
            .iter()
            .filter(|&&t| t >= 2_000 && t % 500 == 0)
            .count(),
        3,
        "{times:?}"
    );
    let o = run_json_in(
        dir,
        &[
            "--name=m",
            &format!("--read_iolog={}:{}", a.display(), b.display()),
            &format!("--merge_blktrace_file={}", merged.display()),
            "--merge_blktrace_iters=2",
            &format!("--replay_redirect={}", data.display()),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("1 values for 2 traces"),
        "{err}"
    );
    // fio's --merge-blktrace-only: the merged file, and no I/O.
    let only = dir.join("only.blktrace");
    let o = run_json_in(
        dir,
        &[
            "--merge-blktrace-only",
            "--name=m",
            &format!("--read_iolog={}:{}", a.display(), b.display()),
            &format!("--merge_blktrace_file={}", only.display()),
            &format!("--replay_redirect={}", data.display()),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty(), "nothing ran, nothing reported");
    assert_eq!(std::fs::read(&only).unwrap().len(), 8 * 48);
    // A trace that is missing: refused before the output is emptied.
    std::fs::write(&only, b"keep me").unwrap();
    let o = run_json_in(
        dir,
        &[
            "--name=m",
            &format!(
                "--read_iolog={}:{}",
                a.display(),
                dir.join("missing").display()
            ),
            &format!("--merge_blktrace_file={}", only.display()),
            &format!("--replay_redirect={}", data.display()),
        ],
    );
    assert!(!o.status.success());
    assert_eq!(
        std::fs::read(&only).unwrap(),
        b"keep me",
        "the output is left as it was"
    );
}

/// fio's t0038: a trace's trims far larger than its writes take no buffer
/// memory (a trim moves no data), so 128 commands of 2 GiB trims are no
/// 256 GiB of buffers: the replay runs, every trim and write counted.
#[test]
fn trims_larger_than_memory_in_a_trace_need_no_buffers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut trace = String::from("fio version 3 iolog\n30 /dev/null add\n40 /dev/null open\n");
    for i in 0..5u64 {
        trace += &format!("{} /dev/null trim 0 2147483648\n", 50 + i * 20);
        trace += &format!("{} /dev/null write {} 4096\n", 60 + i * 20, i * 4096);
        trace += &format!("{} /dev/null write {} 4096\n", 65 + i * 20, (i + 8) * 4096);
    }
    trace += "200 /dev/null close\n";
    std::fs::write(tmp.path().join("big-trims.iolog"), trace).unwrap();
    let v = run_json(
        tmp.path(),
        &[
            "--name=t",
            "--read_iolog=big-trims.iolog",
            "--ioengine=null",
            "--iodepth=128",
        ],
    );
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0, "{j}");
    assert_eq!((ios_in(j, "trim"), ios_in(j, "write")), (5, 10), "{j}");
}
