//! fio 3.33's thinktime options, run by `hiops fio` and, where it is
//! installed, by fio on the same job file: when a think is due
//! (thinktime_blocks counted as I/Os complete or are issued,
//! thinktime_iotime), that the queue drains before it (the depths each
//! I/O was issued at), and how it is spent (thinktime_spin, on the CPU).
//! A think shows as runtime: only lower bounds on time are asserted,
//! except where the gap is a whole think against none.

mod common;

use common::{have_fio, hiops_fio, log_lines, run_job_file, text, FIO};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The job's JSON under hiops and, where installed, fio; each run in a
/// directory of its own, which `check` may read after the run.
fn both(job: &str, check: impl Fn(&str, &Value, &Path)) {
    let mut runs = vec![("hiops", hiops_fio())];
    if have_fio() {
        runs.push(("fio", Command::new(FIO)));
    }
    for (who, bin) in runs {
        let dir = tempfile::tempdir().unwrap();
        let (j, o) = run_job_file(bin, dir.path(), job, &[]);
        assert!(o.status.success(), "{who}: {}", text(&o));
        check(who, &j, dir.path());
    }
}

/// A job on the null engine: 64 reads of 4 KiB at iodepth 16, and `more`.
fn null_job(more: &str) -> String {
    format!("[x]\nioengine=null\nsize=256k\nbs=4k\nrw=read\niodepth=16\n{more}")
}

/// The share (%) of I/Os issued with 8 or more in flight.
fn deep_share(j: &Value) -> f64 {
    ["8", "16", "32", ">=64"]
        .iter()
        .map(|k| j["iodepth_level"][k].as_f64().unwrap_or(0.0))
        .sum()
}

fn runtime_ms(j: &Value) -> u64 {
    j["job_runtime"].as_u64().unwrap()
}

fn reads(j: &Value) -> u64 {
    j["read"]["total_ios"].as_u64().unwrap()
}

#[test]
fn without_thinktime_the_queue_goes_deep() {
    // The control of the tests below: their depth caps come from the think.
    let dir = tempfile::tempdir().unwrap();
    let (j, o) = run_job_file(hiops_fio(), dir.path(), &null_job(""), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(reads(&j), 64);
    assert!(deep_share(&j) > 0.0, "{}", j["iodepth_level"]);
}

#[test]
fn thinktime_blocks_issued_caps_the_queue_and_thinks_every_n() {
    let job = null_job("thinktime=2ms\nthinktime_blocks=4\nthinktime_blocks_type=issue\n");
    both(&job, |who, j, _| {
        assert_eq!(reads(j), 64, "{who}");
        // A think every 4 issues, the queue drained before it: never 8 deep.
        assert_eq!(deep_share(j), 0.0, "{who}: {}", j["iodepth_level"]);
        // 16 thinks of 2 ms.
        assert!(runtime_ms(j) >= 32, "{who}: {} ms", runtime_ms(j));
    });
}

/// 8 reads of 4 KiB with psync (fio's synchronous engine: an I/O is
/// done when its issue returns) from a file on tmpfs, and `more`.
fn psync_job(more: &str) -> String {
    format!("[x]\nioengine=psync\nfilename=f\nsize=32k\nbs=4k\nrw=read\n{more}")
}

/// Within a think of `n` thinks of `ms` each: at least them, less than
/// one more (the 8 reads themselves take microseconds).
fn thinks(who: &str, j: &Value, n: u64, ms: u64) {
    let took = runtime_ms(j);
    assert!(
        took >= n * ms && took < (n + 1) * ms,
        "{who}: {n} thinks of {ms} ms, {took} ms"
    );
}

#[test]
fn thinktime_blocks_counts_completed_io_by_default() {
    // fio's default thinktime_blocks=1: a think after each of the 8.
    both(&psync_job("thinktime=50ms\n"), |who, j, _| {
        assert_eq!(reads(j), 8, "{who}");
        assert!(runtime_ms(j) >= 400, "{who}: {} ms", runtime_ms(j));
    });
    // Every 4th: after the 4th and the 8th.
    both(
        &psync_job("thinktime=50ms\nthinktime_blocks=4\n"),
        |who, j, _| thinks(who, j, 2, 50),
    );
    // Counted as issued: after the 3rd and the 6th (no 9th).
    let issued = "thinktime=50ms\nthinktime_blocks=3\nthinktime_blocks_type=issue\n";
    both(&psync_job(issued), |who, j, _| thinks(who, j, 2, 50));
}

#[test]
fn thinktime_spin_spends_the_think_on_the_cpu() {
    let cpu = |j: &Value| j["usr_cpu"].as_f64().unwrap() + j["sys_cpu"].as_f64().unwrap();
    let spun =
        "[x]\nioengine=null\nsize=32k\nbs=4k\nrw=read\nthinktime=40ms\nthinktime_spin=40ms\n";
    both(spun, |who, j, _| {
        assert_eq!(reads(j), 8, "{who}");
        assert!(runtime_ms(j) >= 320, "{who}: {} ms", runtime_ms(j));
        assert!(cpu(j) >= 25.0, "{who}: 8 spins of 40 ms: {} % CPU", cpu(j));
    });
    let slept = "[x]\nioengine=null\nsize=32k\nbs=4k\nrw=read\nthinktime=40ms\n";
    both(slept, |who, j, _| {
        assert!(runtime_ms(j) >= 320, "{who}: {} ms", runtime_ms(j));
        assert!(cpu(j) < 25.0, "{who}: 8 sleeps of 40 ms: {} % CPU", cpu(j));
    });
    // A spin longer than the think is the think (fio's init.c): 4 of 10 ms,
    // where 4 spins of 5 s would take 20 s.
    let clamped =
        "[x]\nioengine=null\nsize=16k\nbs=4k\nrw=read\nthinktime=10ms\nthinktime_spin=5s\n";
    both(clamped, |who, j, _| {
        assert_eq!(reads(j), 4, "{who}");
        assert!(runtime_ms(j) < 5_000, "{who}: {} ms", runtime_ms(j));
    });
}

#[test]
fn thinktime_iotime_alone_thinks_on_time_only() {
    // 60 s of I/O time before the first think: the 8 I/Os never reach it.
    let timed = psync_job("thinktime=300ms\nthinktime_iotime=60\n");
    both(&timed, |who, j, _| {
        assert_eq!(reads(j), 8, "{who}");
        assert!(runtime_ms(j) < 300, "{who}: no think, {} ms", runtime_ms(j));
    });
    // With thinktime_blocks given too, whichever comes first: 2 thinks.
    let both_rules = psync_job("thinktime=300ms\nthinktime_iotime=60\nthinktime_blocks=4\n");
    both(&both_rules, |who, j, _| {
        assert_eq!(reads(j), 8, "{who}");
        assert!(runtime_ms(j) >= 600, "{who}: {} ms", runtime_ms(j));
    });
}

#[test]
fn thinktime_iotime_repeats_io_then_think() {
    // 100 ms of I/O, a 200 ms think, over a second: the per-I/O log shows
    // a gap of a think between the bursts.
    let job = "[x]\nioengine=null\nsize=1m\nbs=4k\nrw=read\ntime_based=1\nruntime=1\n\
        rate_iops=500\nthinktime=200ms\nthinktime_iotime=100ms\nwrite_iops_log=x\n";
    both(job, |who, _, dir| {
        let lines = log_lines(&dir.join("x_iops.1.log"));
        let gaps = lines
            .windows(2)
            .filter(|w| w[1][0] >= w[0][0] + 190)
            .count();
        assert!((2..=4).contains(&gaps), "{who}: {gaps} gaps of a think");
    });
}

/// rate_ignore_thinktime: 100 IOPS with a 500 ms think after every 50
/// I/Os, for 2 s. Catching up after each think (the default), the job
/// keeps its rate: about 200 I/Os. Ignoring the thinks, the rate goes on
/// from where it was: about half as many.
#[test]
fn rate_ignore_thinktime_does_not_catch_up_the_time_thought() {
    let job = |ignore: u8| {
        format!(
            "[x]\nioengine=null\nsize=1g\nbs=4k\nrw=read\ntime_based=1\nruntime=2\n\
             rate_iops=100\nthinktime=500ms\nthinktime_blocks=50\nrate_ignore_thinktime={ignore}\n"
        )
    };
    let ios = |who: &str, ignore: u8| {
        let bin = if who == "fio" {
            Command::new(FIO)
        } else {
            hiops_fio()
        };
        let dir = tempfile::tempdir().unwrap();
        let (j, o) = run_job_file(bin, dir.path(), &job(ignore), &[]);
        assert!(o.status.success(), "{who}: {}", text(&o));
        reads(&j)
    };
    let mut who = vec!["hiops"];
    if have_fio() {
        who.push("fio");
    }
    for w in who {
        let (caught_up, ignored) = (ios(w, 0), ios(w, 1));
        assert!(caught_up >= 150, "{w}: {caught_up} I/Os keeping the rate");
        assert!(
            ignored * 4 < caught_up * 3,
            "{w}: {ignored} ignoring the thinks, {caught_up} catching up"
        );
    }
}
