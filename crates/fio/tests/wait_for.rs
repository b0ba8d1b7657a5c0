//! fio's wait_for: a job starts after the earlier job it names. hiops runs
//! jobs in phases, so the waiter goes to the phase after its waitee's;
//! jobs after it without a stonewall still start at once, as in fio, and a
//! stonewall waits for every job before it, the waiter too.

use hiops_fio::{plan_text, Defaults};

fn phases(text: &str) -> Vec<u32> {
    plan_text(text, Defaults::Fio).unwrap().phases
}

const JOB: &str = "ioengine=null\nsize=1m\n";

#[test]
fn a_chain_of_waiters_runs_one_after_the_other() {
    // fio's examples/waitfor.fio, each waiting for the one before.
    let text = format!(
        "[global]\n{JOB}[writers]\n[readers]\nwait_for=writers\n\
         [writers2]\nwait_for=readers\n[readers2]\nwait_for=writers2\n"
    );
    assert_eq!(phases(&text), [0, 1, 2, 3]);
}

#[test]
fn a_job_after_a_waiter_starts_at_once_and_a_stonewall_waits_for_all() {
    let text = format!("[global]\n{JOB}[a]\n[b]\nwait_for=a\n[c]\n[d]\nstonewall\n");
    // c starts with a; d waits for everything before it, b included.
    assert_eq!(phases(&text), [0, 1, 0, 2]);
}

#[test]
fn a_waitee_must_come_first_and_have_a_name_of_its_own() {
    let forward = format!("[global]\n{JOB}[a]\nwait_for=b\n[b]\n");
    let e = plan_text(&forward, Defaults::Fio)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("wait_for=b: no earlier job"), "{e}");
    let shared = format!("[global]\n{JOB}[a]\n[a]\n[b]\nwait_for=a\n");
    let e = plan_text(&shared, Defaults::Fio).err().unwrap().to_string();
    assert!(e.contains("several jobs have that name"), "{e}");
}
