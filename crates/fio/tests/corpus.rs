//! Parses every job file of the corpus (tests/jobs) and checks the plan it
//! makes: offsets, sizes, mixes, phases and groups. No I/O runs here.

use hiops_fio::{plan_files, FioPlan};
use hiops_hal::EngineKind;
use hiops_job::spec::Amount;
use hiops_job::{Bytes, Distribution, JobSpec, RwMode, TargetSpec, VerifyMode};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/jobs")
        .join(name)
}

fn plan(name: &str) -> FioPlan {
    plan_files(&[&corpus(name)], false).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn job<'a>(p: &'a FioPlan, name: &str) -> &'a JobSpec {
    p.jobs
        .iter()
        .find(|j| j.name == name)
        .unwrap_or_else(|| panic!("no job {name}"))
}

fn paths(j: &JobSpec) -> Vec<String> {
    match &j.target.targets {
        TargetSpec::Paths(p) => p.iter().map(|p| p.display().to_string()).collect(),
        TargetSpec::Ram => vec![],
    }
}

#[test]
fn every_corpus_file_but_the_refused_one_plans() {
    std::env::set_var("HIOPS_CORPUS_FILE", "/tmp/hiops-corpus-env");
    std::env::set_var("HIOPS_CORPUS_SIZE", "24m");
    let dir = corpus("");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("fio") {
            continue;
        }
        let r = plan_files(&[&p], false);
        let refused = ["unsupported.fio", "typo.fio", "global_unsupported.fio"];
        if refused.iter().any(|f| p.file_name().unwrap() == *f) {
            assert!(r.is_err());
        } else {
            let plan = r.unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(!plan.jobs.is_empty());
            n += 1;
        }
    }
    assert!(n >= 12, "only {n} job files found in {}", dir.display());
}

#[test]
fn basic_globals_reach_the_job() {
    let p = plan("basic.fio");
    let j = job(&p, "randread");
    assert_eq!(j.io.engine, EngineKind::Libaio);
    assert!(j.target.direct && j.timing.time_based);
    assert_eq!(j.workload.rw, RwMode::RandRead);
    assert_eq!(j.workload.bs.max(), 4096);
    assert_eq!((j.io.iodepth.get(), j.numjobs), (32, 2));
    assert_eq!(
        (
            j.io.iodepth_batch_submit,
            j.io.iodepth_batch_complete_min.get()
        ),
        (8, 4)
    );
    assert_eq!(j.timing.runtime, Some(Duration::from_secs(10)));
    assert_eq!(j.timing.ramp, Duration::from_secs(2));
    assert_eq!(
        j.meta.description.as_deref(),
        Some("4k random reads at QD32")
    );
    assert!(j.meta.group_reporting);
    // Without filename each clone has its own file, named as fio names them.
    assert_eq!(paths(j), vec!["randread.0.0", "randread.1.0"]);
    assert_eq!(j.target.files_per_clone, Some(1));
    assert_eq!(j.target.size, Some(Bytes::new(64 << 20)));
    assert!(j.workload.random_map, "fio's random map is on by default");
    // The JSON's "job options" are the job's own, as written.
    assert!(j.meta.options.contains(&("numjobs".into(), "2".into())));
    assert!(!j.meta.options.iter().any(|(k, _)| k == "ioengine"));
    assert!(p
        .global_options
        .contains(&("ioengine".into(), "libaio".into())));
}

#[test]
fn kb_base_switches_the_meaning_of_k_and_kib() {
    let p = plan("kb_base.fio");
    let compat = job(&p, "compat");
    assert_eq!(compat.workload.bs.max(), 4096);
    assert_eq!(
        compat.target.size,
        Some(Bytes::new(1_000_000)),
        "MiB is 1000-based in compatibility mode"
    );
    let si = job(&p, "si");
    assert_eq!(si.workload.bs.max(), 4096);
    assert_eq!(si.target.size, Some(Bytes::new(1 << 20)));
    assert_eq!(si.target.offset, Amount::Bytes(Bytes::new(4000)));
}

#[test]
fn mixes_and_distributions() {
    let p = plan("mixes.fio");
    let m = job(&p, "mix70");
    assert_eq!(
        (m.workload.rw, m.workload.rwmixread.get()),
        (RwMode::RandRw, 70)
    );
    assert_eq!(m.workload.bs.split, vec![(4096, 80), (65536, 20)]);
    assert_eq!(m.workload.block_align, Some(4096));
    assert_eq!(m.workload.percentage_random.get(), 90);
    assert_eq!(m.workload.distribution, Distribution::Zipf(1.2));
    assert!(!m.workload.random_map, "norandommap");
    let r = job(&p, "range");
    assert_eq!(r.workload.rwmixread.get(), 50);
    assert_eq!(
        r.workload.bs.split.iter().map(|s| s.0).collect::<Vec<_>>(),
        vec![4096, 8192, 12288, 16384]
    );
    assert!((r.workload.bs.mean() - 10240.0).abs() < 1e-9);
    assert_eq!(r.workload.distribution, Distribution::Pareto(0.9));
    let n = job(&p, "normal");
    assert_eq!(n.workload.rw, RwMode::RandRead);
    assert_eq!(n.workload.distribution, Distribution::Normal(10.0));
    assert_eq!(n.workload.randseed, 42);
    assert_eq!(
        job(&p, "zones").workload.distribution,
        Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)])
    );
    assert_eq!(
        job(&p, "zones_abs").workload.distribution,
        Distribution::ZonedAbs(vec![(80.0, 16 << 20), (20.0, 240 << 20)])
    );
}

#[test]
fn stonewall_makes_phases_and_new_group_makes_groups() {
    let p = plan("phases.fio");
    let names: Vec<&str> = p.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["w1", "w2", "r1", "r2", "r3"]);
    assert_eq!(p.phases, vec![0, 0, 1, 1, 2]);
    let groups: Vec<u32> = p.jobs.iter().map(|j| j.meta.group).collect();
    assert_eq!(groups, vec![0, 1, 2, 2, 3]);
    assert!(p.jobs.iter().all(|j| j.target.targets == TargetSpec::Ram));
}

#[test]
fn offsets_sizes_and_files() {
    let p = plan("offsets.fio");
    let s = job(&p, "slices");
    // fio's size is the job's total, divided among its files.
    assert_eq!(s.target.size, Some(Bytes::new(64 << 20)));
    assert_eq!(s.target.offset, Amount::Bytes(Bytes::new(1 << 20)));
    assert_eq!(
        s.target.offset_increment,
        Amount::Bytes(Bytes::new(32 << 20))
    );
    assert_eq!(paths(s), vec!["/tmp/hiops-corpus-a", "/tmp/hiops-corpus-b"]);
    assert_eq!(s.target.files_per_clone, None, "clones share named files");
    let sh = job(&p, "share");
    assert_eq!((sh.target.size, sh.target.size_pct), (None, Some(50.0)));
    assert_eq!(sh.target.offset, Amount::Percent(10.0));
    let pc = job(&p, "perclone");
    assert_eq!(pc.target.files_per_clone, Some(4));
    assert_eq!(pc.target.size, Some(Bytes::new(16 << 20)));
    assert_eq!(paths(pc).len(), 8);
    assert_eq!(paths(pc)[5], "/tmp/perclone.1.1");
    let ff = job(&p, "fixedfiles");
    assert_eq!(ff.target.size, Some(Bytes::new(8 << 20)));
    assert_eq!(
        paths(ff),
        vec!["/tmp/fixedfiles.0.0", "/tmp/fixedfiles.0.1"]
    );
}

#[test]
fn time_units_loops_and_rates() {
    let p = plan("timing.fio");
    let m = job(&p, "minutes");
    assert_eq!(m.timing.runtime, Some(Duration::from_secs(120)));
    assert_eq!(
        (m.timing.ramp, m.timing.startdelay),
        (Duration::from_millis(500), Duration::from_secs(3))
    );
    assert!(m.timing.time_based);
    let l = job(&p, "looped");
    assert_eq!(l.timing.loops, 3);
    assert_eq!(
        l.workload.thinktime,
        Duration::from_micros(250),
        "thinktime is in microseconds"
    );
    assert!(!l.timing.time_based && l.timing.runtime.is_none());
    assert_eq!(job(&p, "paced_iops").workload.rate_iops, [Some(500.0); 2]);
    // rate=1m at bs=8k: 128 I/Os per second, each direction.
    assert_eq!(job(&p, "paced_bw").workload.rate_iops, [Some(128.0); 2]);
    let d = job(&p, "per_direction");
    assert_eq!(d.workload.bs, hiops_job::BlockSizes::fixed(4096));
    assert_eq!(
        d.workload.bs_write,
        Some(hiops_job::BlockSizes::fixed(65536))
    );
    // 1m of 4k reads, 128k of 64k writes.
    assert_eq!(d.workload.rate_iops, [Some(256.0), Some(2.0)]);
    assert_eq!(
        d.workload.rate_min,
        [None, Some(hiops_job::spec::RateMin::Iops(1))]
    );
    // rate=1k at bs=4k: a quarter of an I/O per second, not rounded up to 1.
    assert_eq!(job(&p, "slow").workload.rate_iops, [Some(0.25); 2]);
}

#[test]
fn flushes_and_file_handling() {
    let p = plan("sync.fio");
    let a = job(&p, "fsync8");
    assert_eq!((a.workload.rw, a.workload.rw_gap), (RwMode::Write, 4096));
    assert_eq!((a.workload.fsync_every, a.workload.end_fsync), (8, true));
    assert!(a.target.unlink && !a.target.invalidate);
    let b = job(&p, "fdatasync4");
    assert_eq!(b.workload.fdatasync_every, 4);
    assert!(!b.target.direct);
}

#[test]
fn engine_knobs() {
    let p = plan("uring.fio");
    let u = job(&p, "uring");
    let o = &u.io.engine_opts;
    assert_eq!(u.io.engine, EngineKind::IoUring);
    assert!(o.iopoll && o.fixedbufs && o.registerfiles && o.sqpoll);
    assert_eq!(o.sqpoll_cpu, Some(0));
    assert_eq!(u.io.iodepth.get(), 64);
    let v = job(&p, "pv2");
    assert_eq!(v.io.engine, EngineKind::Pvsync2);
    assert!(v.io.engine_opts.hipri && v.io.engine_opts.nowait);
}

#[test]
fn verify_then_verify_only() {
    let p = plan("verify.fio");
    assert_eq!(p.phases, vec![0, 1, 2, 3, 4, 5]);
    let w = job(&p, "write_and_check");
    assert_eq!(w.verify.mode, VerifyMode::Crc32c);
    assert!(w.verify.do_verify && w.verify.pattern.is_none());
    let c = job(&p, "check_again");
    assert!(c.verify.only && c.verify.mode == VerifyMode::Crc32c);
    assert_eq!(job(&p, "md5").verify.mode, VerifyMode::Md5);
    let s = job(&p, "sha256_pattern");
    assert_eq!(s.verify.mode, VerifyMode::Sha256);
    assert_eq!(s.verify.pattern.as_deref(), Some(&b"hiops\xff"[..]));
    // A pattern alone means verify=pattern (fio's rule).
    let pt = job(&p, "pattern_only");
    assert_eq!(pt.verify.mode, VerifyMode::Pattern);
    assert_eq!(pt.verify.pattern, Some(vec![0x00, 0xfc, 0xff, 0xff]));
    let n = job(&p, "stamp_without_check");
    assert!(n.verify.mode == VerifyMode::Md5 && !n.verify.do_verify);
}

#[test]
fn cpu_placement() {
    let p = plan("cpus.fio");
    let l = job(&p, "list");
    if std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        >= 2
    {
        assert_eq!(l.cpus_allowed, Some(vec![0, 1]));
        assert!(l.cpus_split);
    }
    assert_eq!(job(&p, "mask").cpus_allowed, Some(vec![0]));
}

#[test]
fn environment_and_include() {
    std::env::set_var("HIOPS_CORPUS_FILE", "/tmp/hiops-corpus-env");
    std::env::set_var("HIOPS_CORPUS_SIZE", "24m");
    let p = plan("env_include.fio");
    let j = job(&p, "envjob");
    assert_eq!(paths(j), vec!["/tmp/hiops-corpus-env"]);
    assert_eq!(j.target.size, Some(Bytes::new(24 << 20)));
    assert_eq!(
        (j.workload.bs.max(), j.io.iodepth.get()),
        (8192, 16),
        "from common.inc"
    );
    let cpus = std::thread::available_parallelism().unwrap().get() as u32;
    assert_eq!(j.numjobs, cpus);
}

#[test]
fn engine_names_percentiles_and_filling() {
    let p = plan("engines.fio");
    assert_eq!(job(&p, "sync").io.engine, EngineKind::Psync);
    assert_eq!(job(&p, "pvsync").io.engine, EngineKind::Pvsync2);
    assert_eq!(job(&p, "ramdisk").target.targets, TargetSpec::Ram);
    assert_eq!(
        job(&p, "sync").meta.percentiles,
        Some(vec![50.0, 99.0, 99.9, 99.99])
    );
    let f = job(&p, "filler");
    let size = f.target.size.unwrap();
    assert!(size > Bytes::ZERO && size.is_multiple_of(4096));
    // allow_mounted_write names the job's files to the safety gate.
    assert!(f
        .target
        .allow_write_devices
        .contains(&hiops_safety::Grants::mounted_entry(&PathBuf::from(
            "/tmp/hiops-corpus-engines"
        ))));
}

#[test]
fn steady_state_options() {
    let p = plan("steady.fio");
    let ss = job(&p, "steady").timing.steady_state.unwrap();
    assert_eq!(ss.metric, hiops_job::spec::SsMetric::Iops);
    assert!(!ss.slope && ss.percent);
    assert_eq!(ss.limit, 5.0);
    assert_eq!(
        (ss.window, ss.ramp),
        (Duration::from_secs(30), Duration::from_secs(10))
    );
}

#[test]
fn unsupported_options_are_listed_with_their_lines() {
    let path = corpus("unsupported.fio");
    let e = plan_files(&[&path], false).unwrap_err().to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert!(lines[0].ends_with("unsupported.fio:6: option thinkcycles is an fio option hiops does not implement: fio 3.37 added it; use thinktime (microseconds)"), "{e}");
    assert!(
        lines[1].contains("unsupported.fio:7: option gpu_dev_id"),
        "{e}"
    );
    assert!(
        lines[2].contains(
            "unsupported.fio:8: unknown option frobnicate: neither fio 3.33 nor hiops has it"
        ),
        "{e}"
    );
    assert!(lines[3].contains("--ignore-unsupported"), "{e}");
    // With --ignore-unsupported the job plans, and says what it dropped.
    let p = plan_files(&[&path], true).unwrap();
    assert_eq!(p.ignored.len(), 3);
    assert_eq!(
        p.jobs[0].meta.ignored,
        vec!["thinkcycles", "gpu_dev_id", "frobnicate"]
    );
}

#[test]
fn several_files_run_in_order_with_their_own_globals() {
    let p = plan_files(&[&corpus("basic.fio"), &corpus("cpus.fio")], false).unwrap();
    assert_eq!(p.phases, vec![0, 1, 1]);
    assert_eq!(job(&p, "list").io.engine, EngineKind::Null);
    assert_eq!(job(&p, "randread").io.engine, EngineKind::Libaio);
    assert_eq!(
        job(&p, "list").workload.bs.max(),
        4096,
        "basic.fio's bs stays in basic.fio"
    );
}

/// A job file of `text` in a temporary directory, planned.
fn plan_text(text: &str) -> FioPlan {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("j.fio");
    std::fs::write(&file, text).unwrap();
    plan_files(&[&file], false).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn fios_file_and_size_engines_and_priorities_plan() {
    use hiops_hal::backends::sync::PsyncCall;
    use hiops_job::spec::{FileOp, StatCall};
    let p = plan_text(
        "[global]\nfilename=f\nsize=1m\n[a]\nioengine=falloc\n[t]\nioengine=ftruncate\n\
         [s]\nioengine=filestat\nstat_type=lstat\n[d]\nioengine=filedelete\n\
         [p]\nprioclass=3\nprio=2\n[q]\nprio=5\n[v]\nioengine=vsync\n",
    );
    let call = |n: &str| job(&p, n).io.engine_opts.psync_call;
    assert_eq!(call("a"), PsyncCall::Fallocate);
    assert_eq!(call("t"), PsyncCall::Ftruncate);
    assert_eq!(call("s"), PsyncCall::Data);
    assert_eq!(job(&p, "a").io.engine, EngineKind::Psync);
    assert_eq!(job(&p, "s").io.file_op, Some(FileOp::Stat(StatCall::Lstat)));
    assert_eq!(job(&p, "d").io.file_op, Some(FileOp::Delete));
    assert_eq!(job(&p, "a").io.file_op, None);
    // fio's ioprio_value: class << 13 | level, class 0 read as best effort.
    assert_eq!(job(&p, "p").io.ioprio, Some((3 << 13) | 2));
    assert_eq!(job(&p, "q").io.ioprio, Some((2 << 13) | 5));
    assert_eq!(job(&p, "a").io.ioprio, None);
    assert_eq!(job(&p, "v").io.engine, EngineKind::Pvsync2);
}

#[test]
fn direct_and_buffered_are_one_setting_the_last_given_wins() {
    let p = plan_text(
        "[global]\nfilename=f\nsize=1m\ndirect=0\nbuffered=0\n[a]\n[b]\nbuffered=1\n[c]\ndirect=1\nbuffered=1\ndirect=1\n",
    );
    assert!(job(&p, "a").target.direct, "buffered=0 after direct=0");
    assert!(!job(&p, "b").target.direct);
    assert!(job(&p, "c").target.direct);
}

#[test]
fn with_filesize_size_is_what_the_job_moves_up_to_its_files() {
    let p = plan_text(
        "[global]\nfilesize=256k\n[below]\nfilename=f\nsize=128k\n[above]\nfilename=g\nsize=512k\n[two]\nnrfiles=2\nsize=384k\n",
    );
    assert_eq!(job(&p, "below").target.io_size, Some(Bytes::new(128 << 10)));
    assert_eq!(job(&p, "above").target.io_size, None, "no second round");
    assert_eq!(job(&p, "two").target.io_size, Some(Bytes::new(384 << 10)));
}

#[test]
fn fios_cpuio_and_exec_plan_their_burn_and_program() {
    let p = plan_text(
        "[global]\nruntime=3\n[c]\nioengine=cpuio\ncpuload=25\ncpuchunks=1000\n\
         [q]\nioengine=cpuio\ncpuload=200\ncpumode=qsort\n\
         [e]\nioengine=exec\nprogram=/bin/sleep\narguments=%r  %n\ngrace_time=0\nstd_redirect=0\n",
    );
    let c = job(&p, "c");
    let burn = c.io.cpuio.expect("a burn");
    assert_eq!(
        (burn.load_pct, burn.cycle, burn.qsort),
        (25, Duration::from_millis(1), false)
    );
    // fio's think: cycle x (100 - load) / load.
    assert_eq!(c.workload.thinktime, Duration::from_millis(3));
    assert!(c.timing.time_based && c.io.engine == EngineKind::Null);
    let q = job(&p, "q").io.cpuio.expect("a burn");
    assert_eq!(
        (q.load_pct, q.cycle, q.qsort),
        (100, Duration::from_millis(50), true)
    );
    let e = job(&p, "e");
    let x = e.io.exec.as_ref().expect("a program");
    assert_eq!(x.argv, ["/bin/sleep", "3", "e"]);
    assert_eq!((x.grace, x.redirect), (Duration::ZERO, false));
    assert_eq!(e.workload.thinktime, Duration::from_millis(50));
    let refused = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("j.fio");
        std::fs::write(&file, text).unwrap();
        match plan_files(&[&file], false) {
            Ok(_) => panic!("{text}: planned"),
            Err(e) => e.to_string(),
        }
    };
    assert!(refused("[c]\nioengine=cpuio\nruntime=1\n").contains("cpuload"));
    assert!(refused("[e]\nioengine=exec\nruntime=1\n").contains("program"));
}
