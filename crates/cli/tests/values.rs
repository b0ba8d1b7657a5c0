//! Option values at their edges through the binary: numbers past what
//! hiops keeps are refused in one line (exit 2) naming the largest, what
//! fio 3.33 takes as a default or "off" is taken with fio's meaning, hiops'
//! switches take fio's boolean values, and a missing argument is named.

mod common;

use common::{hiops, ios_in, job, run_in, run_json, text};

/// The null engine over 1 MiB (256 I/Os of 4 KiB): a run that is over at once.
const NULL_JOB: [&str; 4] = ["--name=x", "--ioengine=null", "--size=1m", "--bs=4k"];

fn refused(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(tmp.path(), args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn a_runtime_past_u64_nanoseconds_is_refused_with_the_longest() {
    // fio refuses the numeral past i64 ("failed parsing") and wraps a
    // product past u64: 214000d ran one I/O and exited 0 here before.
    for runtime in ["214000d", "99999999999999999999", "18446744074"] {
        let arg = format!("--runtime={runtime}");
        let err = refused(&[&NULL_JOB[..], &["--time_based", &arg]].concat());
        assert!(
            err.contains("--runtime") && err.contains("18446744073s"),
            "{runtime}: {err}"
        );
    }
}

#[test]
fn the_longest_runtime_runs_until_the_job_is_done() {
    // 213503 days fit u64 nanoseconds: the deadline is centuries away (it
    // must not wrap to the past), so the size-based job runs its 100 I/Os
    // (a time-based one would run the centuries: fio 3.33 ignores
    // number_ios there).
    let tmp = tempfile::tempdir().unwrap();
    for runtime in ["213503d", "18446744073"] {
        let arg = format!("--runtime={runtime}");
        let args = [&NULL_JOB[..], &["--number_ios=100", &arg]].concat();
        let v = run_json(tmp.path(), &args);
        assert_eq!(ios_in(job(&v, "x"), "read"), 100, "{runtime}");
    }
}

#[test]
fn sizes_and_counts_past_u64_are_refused_with_the_largest() {
    for (opt, value) in [
        ("size", "16384p"),
        ("size", "18446744073709551616"),
        ("number_ios", "99999999999999999999"),
        ("offset", "0x10000000000000000"),
        ("rate", "20000p"),
    ] {
        let arg = format!("--{opt}={value}");
        let err = refused(&[&NULL_JOB[..], &[&arg]].concat());
        assert!(
            err.contains(&format!("--{opt}")) && err.contains("18446744073709551615"),
            "{arg}: {err}"
        );
    }
    let err = refused(&[&NULL_JOB[..], &["--numjobs=4294967296"]].concat());
    assert!(
        err.contains("--numjobs") && err.contains("4294967295"),
        "{err}"
    );
}

/// fio 3.33's default or "off" value of each option hiops reads or names,
/// where fio's parser takes it (options.c's `.def`; for numbers without
/// one, 0 where options.c's `.minval` allows it and fio's code reads 0 as
/// not set: init.c's fixup_options for iodepth_low and openfiles, iolog.c
/// for replay_scale, backend.c's ioprio_set for prio). Each checked with
/// `fio --parse-only` on 3.33 (the engine options with their engine).
/// stats=0 is honoured, and judged apart: its job leaves the report.
const FIO_OFF_VALUES: &[(&str, &str)] = &[
    // Values of options hiops implements.
    ("rate_iops", "0"),
    ("rate", "0"),
    ("rate_min", "0"),
    ("rate_iops_min", "0"),
    ("rate_iops", "0,0"),
    ("number_ios", "0"),
    ("io_size", "0"),
    ("openfiles", "0"),
    ("zonesize", "0"),
    ("zonerange", "0"),
    ("zoneskip", "0"),
    ("loops", "0"),
    ("loops", "1"),
    ("latency_window", "0"),
    ("latency_percentile", "100"),
    ("latency_run", "0"),
    ("ss", "iops_slope:0.01%"),
    ("ss_dur", "0"),
    ("ss_ramp", "0"),
    ("replay_scale", "0"),
    ("replay_scale", "1"),
    ("nonvectored", "-1"),
    ("thinktime", "0"),
    ("iodepth_batch_submit", "1"),
    ("iodepth_batch_complete_min", "1"),
    ("offset", "0"),
    ("offset_increment", "0"),
    ("fsync", "0"),
    ("fdatasync", "0"),
    ("flow", "0"),
    ("flow_id", "0"),
    ("flow_sleep", "0"),
    ("startdelay", "0"),
    ("ramp_time", "0"),
    ("runtime", "0"),
    ("verify", "0"),
    ("verify_backlog", "0"),
    ("trim_percentage", "0"),
    ("trim_backlog", "0"),
    ("verify_async", "0"),
    ("iomem_align", "0"),
    ("log_avg_msec", "0"),
    ("log_hist_msec", "0"),
    ("log_hist_coarseness", "0"),
    ("rate_cycle", "1000"),
    ("create_fsync", "1"),
    ("create_fsync", "0"),
    ("allow_file_create", "1"),
    ("stats", "1"),
    ("fadvise_hint", "1"),
    ("unified_rw_reporting", "none"),
    ("io_submit_mode", "inline"),
    ("unit_base", "0"),
    ("randrepeat", "1"),
    ("invalidate", "1"),
    ("percentage_random", "100"),
    // zonemode=zbd's options without zonemode=zbd.
    ("zonecapacity", "0"),
    ("read_beyond_wp", "0"),
    ("max_open_zones", "0"),
    ("job_max_open_zones", "0"),
    ("ignore_zone_limits", "0"),
    // Options hiops does not implement, at the value that is what it does.
    ("block_error_percentiles", "0"),
    ("rate_ignore_thinktime", "0"),
    ("thinktime_blocks", "1"),
    ("thinktime_blocks_type", "complete"),
    ("thinktime_iotime", "0"),
    ("thinktime_spin", "0"),
    ("iodepth_low", "0"),
    ("max_latency", "0"),
    ("bwavgtime", "500"),
    ("iopsavgtime", "500"),
    ("buffer_compress_percentage", "0"),
    ("buffer_compress_chunk", "512"),
    ("refill_buffers", "0"),
    ("scramble_buffers", "1"),
    ("dedupe_percentage", "0"),
    ("dedupe_mode", "repeat"),
    ("dedupe_working_set_percentage", "5"),
    ("dedupe_global", "0"),
    ("zero_buffers", "0"),
    ("filename_format", "$jobname.$jobnum.$filenum"),
    ("file_append", "0"),
    ("offset_align", "0"),
    ("lockfile", "none"),
    ("exitall_on_error", "0"),
    ("continue_on_error", "none"),
    ("continue_on_error", "0"),
    ("mem", "malloc"),
    ("iomem", "malloc"),
    ("lockmem", "0"),
    ("bs_unaligned", "0"),
    ("blocksize_unaligned", "0"),
    ("bs_is_seq_rand", "0"),
    ("rw_sequencer", "sequential"),
    ("nice", "0"),
    ("prio", "0"),
    ("prioclass", "0"),
    ("sync", "none"),
    ("sync", "0"),
    ("write_barrier", "0"),
    ("write_hint", "none"),
    ("fsync_on_close", "0"),
    ("create_only", "0"),
    ("unlink_each_loop", "0"),
    ("overwrite", "0"),
    ("pre_read", "0"),
    ("atomic", "0"),
    ("hipri_percentage", "100"),
    ("uncached", "0"),
    ("force_async", "0"),
    ("userspace_reap", "0"),
    ("cmd_type", "nvme"),
];

#[test]
fn every_fio_default_or_off_value_is_taken() {
    let tmp = tempfile::tempdir().unwrap();
    for (opt, value) in FIO_OFF_VALUES {
        let arg = format!("--{opt}={value}");
        let v = run_json(tmp.path(), &[&NULL_JOB[..], &[&arg]].concat());
        // Off changes nothing: one pass over the 1 MiB, as without it.
        assert_eq!(ios_in(job(&v, "x"), "read"), 256, "{arg}");
    }
}

#[test]
fn fio_defaults_of_unimplemented_options_refuse_other_values_still() {
    for arg in ["--cmd_type=zns", "--cmd_type=1"] {
        let tmp = tempfile::tempdir().unwrap();
        let o = run_in(tmp.path(), &[&NULL_JOB[..], &[arg]].concat());
        assert_eq!(o.status.code(), Some(2), "{arg}: {}", text(&o));
        assert!(
            text(&o).contains("does not implement"),
            "{arg}: {}",
            text(&o)
        );
    }
    // --cmdhelp says which value is taken.
    let o = hiops()
        .args(["run", "--cmdhelp=cmd_type"])
        .output()
        .unwrap();
    assert!(
        text(&o).contains("accepted at nvme, fio's default"),
        "{}",
        text(&o)
    );
}

/// `--parse-only`'s resolved word `key` of the one job.
fn resolved(dir: &std::path::Path, args: &[&str], key: &str) -> String {
    let o = run_in(dir, &[&["--parse-only"], args].concat());
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("resolved: "));
    let word = line.and_then(|l| {
        l.split(' ')
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
    });
    word.unwrap_or_else(|| panic!("no {key} in {out}"))
        .to_string()
}

#[test]
fn a_job_lifts_a_global_rate_with_fio_s_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let file = |body: &str| {
        let path = tmp.path().join("rated.fio");
        std::fs::write(&path, format!("[global]\nioengine=null\nsize=1m\n{body}")).unwrap();
        path.display().to_string()
    };
    let rated = file("rate_iops=1\n[x]\n");
    assert_eq!(resolved(tmp.path(), &[&rated], "rate_iops"), "1,1");
    let lifted = file("rate_iops=1\n[x]\nrate_iops=0\n");
    assert_eq!(resolved(tmp.path(), &[&lifted], "rate_iops"), "-,-");
    let write_only = file("rate_iops=1\n[x]\nrate_iops=0,\n");
    assert_eq!(resolved(tmp.path(), &[&write_only], "rate_iops"), "-,1");
    // Unrated, the job's 256 I/Os are done at once (rated, they take 256 s).
    let v = run_json(tmp.path(), &[&lifted]);
    assert_eq!(ios_in(job(&v, "x"), "read"), 256);
    let bw = file("rate=4k\n[x]\nrate=0\n");
    assert_eq!(resolved(tmp.path(), &[&bw], "rate_iops"), "-,-");
}

#[test]
fn size_zero_is_the_file_s_size_as_in_fio() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.dat"), vec![7u8; 2 << 20]).unwrap();
    let base = [
        "--name=x",
        "--ioengine=psync",
        "--filename=f.dat",
        "--rw=read",
        "--bs=4k",
    ];
    let v = run_json(tmp.path(), &[&base[..], &["--size=0"]].concat());
    assert_eq!(ios_in(job(&v, "x"), "read"), 512, "2 MiB in 4 KiB reads");
    // A job's size=0 lifts a [global] size; number_ios=0 a global count.
    let path = tmp.path().join("sized.fio");
    std::fs::write(
        &path,
        "[global]\nioengine=psync\nfilename=f.dat\nrw=read\nbs=4k\nsize=1m\nnumber_ios=10\n[x]\nsize=0\nnumber_ios=0\n",
    )
    .unwrap();
    let v = run_json(tmp.path(), &[&path.display().to_string()]);
    assert_eq!(ios_in(job(&v, "x"), "read"), 512);
}

#[test]
fn hiops_switches_take_fio_s_boolean_values() {
    let tmp = tempfile::tempdir().unwrap();
    for on in [
        "--timeline=1",
        "--timeline=0",
        "--ignore-unsupported=1",
        "--stonewall-ranks=0",
    ] {
        let o = run_in(tmp.path(), &[&["--parse-only", on], &NULL_JOB[..]].concat());
        assert!(o.status.success(), "{on}: {}", text(&o));
    }
    // --ignore-unsupported=1 skips what hiops does not implement; =0 does not.
    let skip = |v: &str| {
        run_in(
            tmp.path(),
            &[&[v, "--thinkcycles=100"], &NULL_JOB[..]].concat(),
        )
    };
    assert!(skip("--ignore-unsupported=1").status.success());
    assert_eq!(skip("--ignore-unsupported=0").status.code(), Some(2));
    let err = refused(&[&["--timeline=maybe"], &NULL_JOB[..]].concat());
    assert!(
        err.contains("--timeline is on or off") && !err.contains("neither"),
        "{err}"
    );
}

#[test]
fn a_missing_argument_is_named() {
    for (args, named) in [
        (&["sweep"][..], "--dir <DIR>, --over <NAME=VALUES>"),
        (&["compare", "a.json"][..], "<B>"),
        (&["completions"][..], "<SHELL>"),
    ] {
        let o = hiops().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("were not provided: {named}")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn allow_file_create_0_fails_a_job_whose_file_is_missing_as_fio_does() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--name=x",
        "--filename=f",
        "--size=1m",
        "--ioengine=psync",
        "--allow_file_create=0",
    ];
    let o = run_in(tmp.path(), &args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("file creation disallowed by allow_file_create=0"),
        "{}",
        text(&o)
    );
    assert!(!tmp.path().join("f").exists(), "nothing created");
    // The file there: the job runs on it, and create_fsync=0 lays out
    // another without syncing it.
    std::fs::write(tmp.path().join("f"), vec![7u8; 1 << 20]).unwrap();
    let v = run_json(tmp.path(), &args);
    assert_eq!(ios_in(job(&v, "x"), "read"), 256);
    let g = [
        "--name=y",
        "--filename=g",
        "--size=1m",
        "--ioengine=psync",
        "--create_fsync=0",
    ];
    let v = run_json(tmp.path(), &g);
    assert_eq!(ios_in(job(&v, "y"), "read"), 256);
}

/// fio 3.33's atomic=1 is O_DIRECT (its O_ATOMIC bit is no Linux flag),
/// set after direct and buffered are read, so it wins over both.
#[test]
fn atomic_means_direct_whatever_comes_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let base = ["--name=a", "--filename=f", "--size=64k"];
    let direct = |extra: &[&str]| resolved(tmp.path(), &[&base[..], extra].concat(), "direct");
    assert_eq!(direct(&["--atomic=1", "--buffered=1"]), "1");
    assert_eq!(direct(&["--direct=0", "--atomic=1"]), "1");
    assert_eq!(direct(&["--atomic=0", "--buffered=1"]), "0");
}
