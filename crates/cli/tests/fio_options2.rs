//! fio options checked against fio 3.33 itself where they decide
//! something observable (the files a job makes, their sizes, the bytes it
//! moves), run on tmpfs so neither run touches a disk.

mod common;

use common::{fio_in, have_fio, hiops, hiops_json_in, json_of, keys, text, FIO};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A directory on tmpfs (/dev/shm) where there is one, else in $TMPDIR.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::tempdir_in(shm).unwrap(),
        false => tempfile::tempdir().unwrap(),
    }
}

/// Every file under `dir` (relative name, size), sorted; `skip` left out.
fn files_under(dir: &Path, skip: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let path: PathBuf = e.path();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                todo.push(path);
                continue;
            }
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if rel != skip {
                out.push((rel, m.len()));
            }
        }
    }
    out.sort();
    out
}

/// Each job's (name, bytes read, bytes written), in the JSON's order.
fn moved(v: &Value) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["read"]["io_bytes"].as_u64().unwrap(),
                j["write"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What fio and hiops leave after the same command line, each in a
/// directory of its own: (files and sizes, bytes each job moved).
type Outcome = (Vec<(String, u64)>, Vec<(String, u64, u64)>);

/// Lays out what a run starts from: a file `name` of `len` bytes (a hole).
type Setup = Option<(&'static str, u64)>;

fn prepare(dir: &Path, setup: Setup) {
    if let Some((name, len)) = setup {
        let f = std::fs::File::create(dir.join(name)).unwrap();
        f.set_len(len).unwrap();
    }
}

fn fio_outcome(args: &[&str], setup: Setup) -> Outcome {
    let dir = scratch();
    prepare(dir.path(), setup);
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.push("--output-format=json".into());
    all.push("--output=fio.json".into());
    let o = fio_in(dir.path(), &all);
    assert!(o.status.success(), "fio {args:?}: {}", text(&o));
    let json = std::fs::read(dir.path().join("fio.json")).unwrap();
    let v: Value = serde_json::from_slice(&json).expect("fio's output is JSON");
    (files_under(dir.path(), "fio.json"), moved(&v))
}

fn hiops_outcome(args: &[&str], setup: Setup) -> Outcome {
    let dir = scratch();
    prepare(dir.path(), setup);
    let all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let v = json_of(&hiops_json_in(dir.path(), &all));
    (files_under(dir.path(), ""), moved(&v))
}

/// fio and hiops make the same files, of the same sizes, and their jobs
/// move the same bytes.
fn same_as_fio(args: &[&str]) {
    same_as_fio_from(args, None);
}

/// [`same_as_fio`] from a file laid out first.
fn same_as_fio_from(args: &[&str], setup: Setup) {
    if !have_fio() {
        return;
    }
    let fio = fio_outcome(args, setup);
    assert!(!fio.0.is_empty(), "fio made no file for {args:?}");
    assert_eq!(hiops_outcome(args, setup), fio, "{args:?}");
}

/// Each job's read I/Os, sorted.
fn read_ios(v: &Value) -> Vec<u64> {
    let mut ios: Vec<u64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .collect();
    ios.sort();
    ios
}

const WRITE_64K: [&str; 5] = [
    "--directory=.",
    "--size=64k",
    "--rw=write",
    "--bs=4k",
    "--name=jb",
];

#[test]
fn filename_format_names_files_as_fio_does() {
    let formats = [
        "--filename_format=$jobname.f$filenum.c$jobnum",
        "--filename_format=data.$JOBNUM-$FileNum$clientuid",
        "--filename_format=$jobname.$jobnum",
    ];
    for format in formats {
        let mut args = WRITE_64K.to_vec();
        args.extend([format, "--numjobs=2", "--nrfiles=2"]);
        same_as_fio(&args);
    }
}

#[test]
fn filename_format_may_name_a_shared_file_for_one_clone() {
    let mut args = WRITE_64K.to_vec();
    args.extend(["--filename_format=shared.$filenum", "--nrfiles=3"]);
    same_as_fio(&args);
}

#[test]
fn filename_format_refuses_clones_fio_leaves_without_files() {
    let dir = scratch();
    let mut args: Vec<String> = WRITE_64K.iter().map(|a| a.to_string()).collect();
    args.extend(["--filename_format=shared".into(), "--numjobs=3".into()]);
    let o = hiops_json_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("$jobnum"), "{}", text(&o));
    assert!(files_under(dir.path(), "").is_empty(), "nothing is made");
}

#[test]
fn file_append_writes_after_the_end_of_an_existing_file() {
    let args = [
        "--name=a",
        "--filename=g",
        "--file_append=1",
        "--size=64k",
        "--rw=write",
        "--bs=4k",
    ];
    // 100 KiB + 64 KiB appended, as fio leaves it.
    same_as_fio_from(&args, Some(("g", 100 << 10)));
    let dir = scratch();
    prepare(dir.path(), Some(("g", 100 << 10)));
    let all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    json_of(&hiops_json_in(dir.path(), &all));
    assert_eq!(
        std::fs::metadata(dir.path().join("g")).unwrap().len(),
        164 << 10
    );
}

#[test]
fn offset_align_rounds_a_percentage_start_as_fio() {
    // 33% of 1 MiB rounded up to 4 KiB leaves 171 blocks, to 64 KiB 160;
    // the second clone starts at 43%, rounded to 64 KiB: 144 blocks.
    let cases: [(&[&str], Vec<u64>); 3] = [
        (&[], vec![171]),
        (&["--offset_align=64k"], vec![160]),
        (
            &[
                "--offset_align=64k",
                "--offset_increment=10%",
                "--numjobs=2",
            ],
            vec![144, 160],
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec![
            "--name=j",
            "--filename=f",
            "--offset=33%",
            "--rw=read",
            "--bs=4k",
        ];
        args.extend(extra);
        let owned: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let dir = scratch();
        prepare(dir.path(), Some(("f", 1 << 20)));
        assert_eq!(
            read_ios(&json_of(&hiops_json_in(dir.path(), &owned))),
            want,
            "{args:?}"
        );
        if have_fio() {
            let dir = scratch();
            prepare(dir.path(), Some(("f", 1 << 20)));
            owned_fio_check(dir.path(), &owned, &want);
        }
    }
}

/// fio's read I/Os per job for `args` in `dir` are `want`.
fn owned_fio_check(dir: &Path, args: &[String], want: &[u64]) {
    let mut all = args.to_vec();
    all.push("--output-format=json".into());
    let o = fio_in(dir, &all);
    assert!(o.status.success(), "fio {args:?}: {}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(read_ios(&v), want, "fio {args:?}");
}

#[test]
fn offset_align_off_the_block_alignment_is_refused() {
    let dir = scratch();
    let args = [
        "--name=j",
        "--filename=f",
        "--size=1m",
        "--offset=33%",
        "--offset_align=6k",
        "--bs=4k",
    ]
    .map(String::from);
    let o = hiops_json_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("multiple of 4096"), "{}", text(&o));
}

#[test]
fn iomem_takes_fio_s_types_and_refuses_huge_pages() {
    let dir = scratch();
    for mem in [
        "--iomem=malloc",
        "--mem=shm",
        "--iomem=mmap",
        "--iomem=mmapshared",
    ] {
        let args = ["--name=j", "--ioengine=null", "--size=1m", mem].map(String::from);
        json_of(&hiops_json_in(dir.path(), &args));
    }
    // mem=mmap:FILE maps from a file: crates/cli/tests/fio_mem_file.rs.
    let mem = "--iomem=mmaphuge";
    let args = ["--name=j", "--ioengine=null", "--size=1m", mem].map(String::from);
    let o = hiops_json_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{mem}: {}", text(&o));
    assert!(text(&o).contains("huge pages"), "{mem}: {}", text(&o));
}

#[test]
fn exitall_on_error_stops_the_group_when_a_job_fails() {
    // `bad` reads a file of zeros with verify: its first block is bad (fio
    // stops it there with EILSEQ); `long` would run 30 s at 1000 IOPS.
    let dir = scratch();
    prepare(dir.path(), Some(("z", 1 << 20)));
    let job = "[global]\nexitall_on_error=1\n[bad]\nfilename=z\nrw=read\nbs=4k\nverify=crc32c\nverify_fatal=1\n[long]\nioengine=null\nsize=1g\ntime_based=1\nruntime=30\nrate_iops=1000\n";
    std::fs::write(dir.path().join("e.fio"), job).unwrap();
    let o = hiops_json_in(dir.path(), &["e.fio".to_string()]);
    assert_ne!(o.status.code(), Some(0), "the bad block fails the run");
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let long = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "long")
        .unwrap();
    let ios = long["read"]["total_ios"].as_u64().unwrap();
    assert!(ios < 15_000, "long was not stopped: {ios} reads");
}

/// fio's iodepth_level of a run: the share of commands (%) issued at
/// depths 8 to 15, and at 16 to 31.
fn levels_8_and_16(v: &Value) -> (f64, f64) {
    let l = &v["jobs"][0]["iodepth_level"];
    (l["8"].as_f64().unwrap(), l["16"].as_f64().unwrap())
}

#[test]
fn iodepth_low_lets_a_full_queue_drain_before_it_is_refilled() {
    // Direct reads of a file on disk, so commands stay in flight; without
    // io_uring here, the job fails and the test says so.
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args: Vec<String> = [
            "--name=j",
            "--filename=f",
            "--ioengine=io_uring",
            "--direct=1",
            "--iodepth=16",
            "--size=8m",
            "--bs=4k",
            "--rw=randread",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        let o = hiops_json_in(dir.path(), &args);
        if !o.status.success() {
            eprintln!(
                "skipped: io_uring with O_DIRECT did not run here: {}",
                text(&o)
            );
            return None;
        }
        Some(levels_8_and_16(&json_of(&o)))
    };
    let Some((_, full)) = run(&[]) else { return };
    // Refilled as completions come, commands go out with the queue full.
    assert!(full > 90.0, "without iodepth_low: {full}% at depth 16");
    let (eight, sixteen) = run(&["--iodepth_low=4"]).expect("ran once");
    // Drained to 4, refilled a quarter (4) at a time: depths 8, 12, 16.
    assert!(
        eight > 50.0 && sixteen < 50.0,
        "8: {eight}%, 16: {sixteen}%"
    );
}

/// The job files of tests/data/jobs, written as fio users write them
/// (sections, include, ${VAR}, fio's built-in $pagesize, `%%`), each with
/// the environment it reads.
const JOB_FILES: [&str; 2] = ["null_mix.fio", "files.fio"];

fn job_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/jobs")
        .join(name)
}

/// `program` (fio, or hiops run) on a job file in `dir`: its JSON.
fn run_job_file(mut cmd: std::process::Command, dir: &Path, file: &Path) -> Value {
    let o = cmd
        .current_dir(dir)
        .env("HIOPS_T_SIZE", "1m")
        .stdin(std::process::Stdio::null())
        .arg("--output-format=json")
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {}", file.display(), text(&o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// Per job name: (reads + writes, IOPS), clones summed.
fn per_job(v: &Value) -> std::collections::BTreeMap<String, (u64, f64)> {
    let mut out = std::collections::BTreeMap::new();
    for j in v["jobs"].as_array().unwrap() {
        let e: &mut (u64, f64) = out
            .entry(j["jobname"].as_str().unwrap().to_string())
            .or_default();
        for dir in ["read", "write"] {
            e.0 += j[dir]["total_ios"].as_u64().unwrap();
            e.1 += j[dir]["iops"].as_f64().unwrap();
        }
    }
    out
}

#[test]
fn job_files_in_fio_s_style_run_as_fio_runs_them() {
    if !have_fio() {
        return;
    }
    for name in JOB_FILES {
        let file = job_file(name);
        let (fio_dir, our_dir) = (scratch(), scratch());
        let fio = run_job_file(std::process::Command::new(FIO), fio_dir.path(), &file);
        let mut ours = hiops();
        ours.args(["run", "--no-progress"]);
        let ours = run_job_file(ours, our_dir.path(), &file);
        let count = |v: &Value| v["jobs"].as_array().unwrap().len();
        assert_eq!(count(&ours), count(&fio), "{name}: jobs");
        let missing: Vec<String> = keys(&fio).difference(&keys(&ours)).cloned().collect();
        assert!(
            missing.is_empty(),
            "{name}: keys fio writes and hiops does not: {missing:?}"
        );
        // fio keeps `%%` as written (3.33 has no value arithmetic).
        assert_eq!(ours["jobs"][0]["desc"], fio["jobs"][0]["desc"], "{name}");
        let (f, o) = (per_job(&fio), per_job(&ours));
        assert_eq!(
            f.keys().collect::<Vec<_>>(),
            o.keys().collect::<Vec<_>>(),
            "{name}"
        );
        for (job, &(fio_ios, fio_iops)) in &f {
            let (our_ios, our_iops) = o[job];
            if name == "null_mix.fio" {
                // Time-based on the null engine: the software's speed,
                // each within a factor of ten of fio's (a loose bound).
                let ratio = our_iops / fio_iops;
                assert!(
                    (0.1..10.0).contains(&ratio),
                    "{name} {job}: {our_iops} IOPS against fio's {fio_iops}"
                );
            } else {
                assert_eq!(our_ios, fio_ios, "{name} {job}: I/Os");
            }
        }
        if name == "files.fio" {
            assert_eq!(
                files_under(our_dir.path(), ""),
                files_under(fio_dir.path(), ""),
                "{name}"
            );
        }
    }
}

/// A file's 4 KiB blocks: (distinct contents, contents found more than once).
fn block_counts(path: &Path) -> (usize, usize) {
    let data = std::fs::read(path).unwrap();
    let mut seen = std::collections::HashMap::<&[u8], u32>::new();
    for b in data.chunks(4096) {
        *seen.entry(b).or_default() += 1;
    }
    (seen.len(), seen.values().filter(|&&n| n > 1).count())
}

#[test]
fn dedupe_working_set_repeats_blocks_of_a_set_as_fio() {
    // 1024 writes, half repeats: repeat mode copies ~256 different blocks,
    // working_set only its 102 (10% of 4 MiB in 4 KiB blocks).
    let run = |program: Option<&str>, mode: &str| {
        let dir = scratch();
        let args: Vec<String> = [
            "--name=d",
            "--filename=f",
            "--rw=write",
            "--size=4m",
            "--bs=4k",
            "--dedupe_percentage=50",
            &format!("--dedupe_mode={mode}"),
            "--dedupe_working_set_percentage=10",
        ]
        .map(String::from)
        .to_vec();
        let o = match program {
            Some(_) => fio_in(dir.path(), &args),
            None => hiops_json_in(dir.path(), &args),
        };
        assert!(o.status.success(), "{mode}: {}", text(&o));
        block_counts(&dir.path().join("f"))
    };
    let (distinct, repeated) = run(None, "working_set");
    assert!((400..650).contains(&distinct), "{distinct} distinct blocks");
    assert!((50..=102).contains(&repeated), "{repeated} blocks repeated");
    let (_, repeated) = run(None, "repeat");
    assert!(repeated > 150, "repeat mode: {repeated} blocks repeated");
    if have_fio() {
        let (_, repeated) = run(Some(FIO), "working_set");
        assert!(
            (50..=102).contains(&repeated),
            "fio: {repeated} blocks repeated"
        );
    }
}

#[test]
fn job_options_carry_fio_s_names_for_aliases() {
    if !have_fio() {
        return;
    }
    let dir = scratch();
    let args: Vec<String> = [
        "--name=j",
        "--ioengine=null",
        "--size=1m",
        "--blockalign=4k",
        "--iomem=malloc",
        "--readwrite=read",
        "--nr_files=1",
        "--iodepth_batch_submit=1",
        "--output-format=json",
    ]
    .map(String::from)
    .to_vec();
    let fio = fio_in(dir.path(), &args);
    assert!(fio.status.success(), "{}", text(&fio));
    let fio: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let ours = json_of(&hiops_json_in(dir.path(), &args[..args.len() - 1]));
    let names = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v["jobs"][0]["job options"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    // fio's: ba, mem, rw, nrfiles, iodepth_batch.
    assert_eq!(names(&ours), names(&fio));
}
