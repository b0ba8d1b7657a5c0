//! What the binary's tests share: the binary, runs of `hiops run` and
//! their JSON, the corpus' job files, fio's logs, a key-value server on a
//! free port, and the descriptor limit. (Each test file uses a part of it.)
#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub fn hiops() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hiops"))
}

/// `hiops run --no-progress <args>` in `dir`, with no stdin.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    hiops()
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(["run", "--no-progress"])
        .args(args)
        .output()
        .expect("hiops starts")
}

/// [`run_in`] with JSON output.
pub fn run_json_in(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["--output-format=json"];
    all.extend(args);
    run_in(dir, &all)
}

/// [`run_json_in`]'s JSON; the run must succeed.
pub fn run_json(dir: &Path, args: &[&str]) -> Value {
    let o = run_json_in(dir, args);
    assert!(o.status.success(), "hiops {args:?}: {}", text(&o));
    serde_json::from_slice(&o.stdout).expect("the output is JSON")
}

/// The JSON of a run that must have succeeded.
pub fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "hiops failed: {}", text(o));
    serde_json::from_slice(&o.stdout).expect("hiops' output is JSON")
}

/// Every key path of a JSON value (to compare hiops' JSON with fio's), arrays read through their first entry;
/// the percentile lists (whose keys are the percentiles asked for) left out.
pub fn key_paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                if !k.starts_with("percentile") && k != "bins" {
                    key_paths(x, &p, out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(first) = a.first() {
                key_paths(first, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

pub fn keys(v: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    key_paths(v, "", &mut out);
    out
}

/// fio 3.33 as Debian installs it: the tests that compare with fio.
pub const FIO: &str = "/usr/bin/fio";

/// Whether fio is here; says why the test is skipped when it is not.
pub fn have_fio() -> bool {
    if Path::new(FIO).exists() {
        return true;
    }
    eprintln!("skipped: {FIO} is not installed");
    false
}

/// fio with `args` in `dir`, with no stdin.
pub fn fio_in(dir: &Path, args: &[String]) -> Output {
    Command::new(FIO)
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("fio starts")
}

/// [`run_json_in`] with owned arguments, the run's outcome not judged.
pub fn hiops_json_in(dir: &Path, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json_in(dir, &args)
}

/// fio's checksums and patterns as verify options, each with a byte of
/// block 5 whose change the algorithm catches (meta checks the header
/// alone; fio's sha512 compares copies of some payload bytes only: the
/// 100th is one). The verify tests add cases of their own.
pub const VERIFY_CASES: &[(&str, u64)] = &[
    ("--verify=md5", 1000),
    ("--verify=crc64", 1000),
    ("--verify=crc32", 1000),
    ("--verify=crc32c", 1000),
    ("--verify=crc32c-intel", 1000),
    ("--verify=crc16", 1000),
    ("--verify=crc7", 1000),
    ("--verify=sha1", 1000),
    ("--verify=sha256", 1000),
    ("--verify=sha512", 40 + 128 + 100),
    ("--verify=sha3-224", 1000),
    ("--verify=sha3-256", 1000),
    ("--verify=sha3-384", 1000),
    ("--verify=sha3-512", 1000),
    ("--verify=xxhash", 1000),
    ("--verify=meta", 10),
    ("--verify_pattern=0xdeadbeef", 1000),
    ("--verify=pattern --verify_pattern=\"hiops\"", 1000),
    ("--verify=meta --verify_pattern=%o", 1000),
    ("--verify=md5 --verify_pattern=0x5a%o", 1000),
    ("--verify=sha256 --verify_offset=1024", 1000),
];

/// A process's stdout then stderr, for failure messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The path of a job file of the corpus (tests/jobs).
pub fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/jobs")
        .join(name)
        .display()
        .to_string()
}

/// The job named `name` in a run's JSON.
pub fn job<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {v}"))
}

/// A job's total_ios in direction `dir` ("read", "write").
pub fn ios_in(j: &Value, dir: &str) -> u64 {
    j[dir]["total_ios"].as_u64().unwrap()
}

/// A log's lines, each column a number (fio's `a, b, c` format).
pub fn log_lines(path: &Path) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            l.split(", ")
                .map(|c| {
                    c.parse()
                        .unwrap_or_else(|_| panic!("{}: '{c}' in '{l}'", path.display()))
                })
                .collect()
        })
        .collect()
}

/// Starts `hiops kv serve` on a free port over a 64 MiB store at `path`;
/// returns it, its address and the first line of its stderr.
pub fn kv_serve(path: &Path, extra: &[&str]) -> (Child, String, String) {
    // A small block unless the test names its own.
    let block = match extra.contains(&"--block-size") {
        true => &[][..],
        false => &["--block-size", "256k"][..],
    };
    let mut child = hiops()
        .args(["kv", "serve", "--port", "0", "--size", "64m"])
        .args(block)
        .arg("--path")
        .arg(path)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("no listening line: {line:?}"))
        .to_string();
    let mut err = String::new();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    stderr.read_line(&mut err).unwrap();
    (child, addr, err)
}

/// The value of `name:` in the text of a key-value server's INFO.
pub fn info_field(info: &str, name: &str) -> String {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO: {info}"))
        .trim()
        .to_string()
}

/// Lifts the soft limit on open files to the hard one (children inherit
/// it); returns the limit now in force.
pub fn raise_fd_limit() -> u64 {
    hiops_kv::server::raise_open_files(u64::MAX)
}

/// A file of `bytes` zeros (a hole), for a writer whose completed writes
/// [`blocks_written`] then counts: hiops, as fio, lays out a file it makes
/// with data, but writes one of the right size as it is.
pub fn zero_file(path: &Path, bytes: u64) {
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
}

/// The 4 KiB blocks of a file that hold anything but zeros: in a
/// [`zero_file`] a verifying writer wrote to (its blocks all carry a
/// header), the writes it completed, counted from the file itself. A
/// writer cut by its runtime completes the writes still in flight after
/// its measured window closed (on a slow file system, several), so this is
/// the exact count its verify state records, where the JSON's total_ios
/// counts the window.
pub fn blocks_written(path: &Path) -> u64 {
    let data = std::fs::read(path).unwrap();
    data.chunks(4096)
        .filter(|b| b.iter().any(|&x| x != 0))
        .count() as u64
}

/// `hiops fio`: hiops answering as fio.
pub fn hiops_fio() -> Command {
    let mut c = hiops();
    c.arg("fio");
    c
}

/// Runs `bin` (`hiops fio` or fio) on `job`, written as `j.fio` in `dir`,
/// with JSON output and `extra` flags: the first job's JSON (fio writes
/// lines before it on error) and the run's output.
pub fn run_job_file(mut bin: Command, dir: &Path, job: &str, extra: &[&str]) -> (Value, Output) {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .arg("--output-format=json")
        .args(extra)
        .arg("j.fio")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {}", text(&o)));
    let v: Value = serde_json::from_str(&out[start..]).expect("JSON");
    (v["jobs"][0].clone(), o)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A 256 KiB tmpfs mounted on a directory of its own, unmounted on drop.
pub struct SmallTmpfs(PathBuf);

impl SmallTmpfs {
    /// Mounts one in `dir`, or says why the test is skipped.
    pub fn mount_or_skip(dir: &Path) -> Option<SmallTmpfs> {
        if !is_root() {
            eprintln!("skipped: needs root to mount a small tmpfs");
            return None;
        }
        let fs = SmallTmpfs::mount(&dir.join("mnt"));
        if fs.is_none() {
            eprintln!("skipped: mounting a tmpfs failed here");
        }
        fs
    }

    fn mount(at: &Path) -> Option<SmallTmpfs> {
        std::fs::create_dir(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallTmpfs(at.to_path_buf()))
    }

    /// Where it is mounted.
    pub fn dir(&self) -> &Path {
        &self.0
    }

    /// A sparse 1 MiB file there: writes past the first 256 KiB find no
    /// room (ENOSPC), and neither hiops nor fio lays the file out.
    pub fn sparse_file(&self) -> PathBuf {
        let f = self.0.join("f");
        let _ = std::fs::remove_file(&f);
        let file = std::fs::File::create(&f).unwrap();
        file.set_len(1 << 20).unwrap();
        f
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}
