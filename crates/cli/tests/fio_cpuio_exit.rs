//! fio's cpuio with exit_on_io_done: the burning job ends once the jobs
//! beside it that move data have ended, not at its runtime; beside fio.

mod common;

use common::{have_fio, hiops_fio, run_job_file, text, FIO};
use serde_json::Value;
use std::process::Command;

/// A cpuio job with a 30 s runtime beside a 1 MiB read job (`exit` its
/// exit_on_io_done), and a third job in a later phase when `later`.
fn job_file(exit: u8, later: bool) -> String {
    let mut j = format!(
        "[burn]\nioengine=cpuio\ncpuload=10\ncpuchunks=1000\nruntime=30\nexit_on_io_done={exit}\n\n\
         [read]\nioengine=psync\nrw=read\nbs=4k\nsize=1m\nfilename=data\n"
    );
    if later {
        j.push_str(
            "\n[after]\nstonewall\nioengine=psync\nrw=read\nbs=4k\nsize=1m\nfilename=data\n",
        );
    }
    j
}

/// The burning job's runtime in ms, from the run's whole JSON.
fn burn_ms(out: &[u8]) -> u64 {
    let out = String::from_utf8_lossy(out);
    let v: Value = serde_json::from_str(&out[out.find('{').expect("JSON")..]).unwrap();
    let burn = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "burn");
    burn.expect("the burn job")["job_runtime"]
        .as_u64()
        .expect("job_runtime")
}

#[test]
fn the_cpuio_job_ends_with_the_io_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("data"), vec![1u8; 1 << 20]).unwrap();
    let (_, o) = run_job_file(hiops_fio(), tmp.path(), &job_file(1, false), &[]);
    assert!(o.status.success(), "{}", text(&o));
    let hiops = burn_ms(&o.stdout);
    assert!(
        hiops < 10_000,
        "ended with the read job, not at 30 s: {hiops} ms"
    );
    if have_fio() {
        let (_, f) = run_job_file(Command::new(FIO), tmp.path(), &job_file(1, false), &[]);
        let fio = burn_ms(&f.stdout);
        assert!(fio < 10_000, "fio's ends so too: {fio} ms");
    }
}

#[test]
fn a_later_phase_with_io_keeps_it_burning_to_its_runtime() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("data"), vec![1u8; 1 << 20]).unwrap();
    // runtime 30 s is long for a test: 2 s shows the same.
    let job = job_file(1, true).replace("runtime=30", "runtime=2");
    let (_, o) = run_job_file(hiops_fio(), tmp.path(), &job, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let ms = burn_ms(&o.stdout);
    assert!(
        ms >= 1_900,
        "the read job after the stonewall is still to come: {ms} ms"
    );
}
