//! Futex wakes carried by an io_uring queue beside its commands
//! (`EngineOptions::futex_wakes`): they wake their sleepers in the system
//! call that sends the commands, and are never counted as I/Os.

use hiops_hal::{Command, Completion, EngineKind, EngineOptions, Op, Queue, Target, WakeRing};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

const BS: usize = 4096;

/// A file of `blocks` blocks in a temporary directory, and a queue of
/// `depth` tags on it that carries wakes; None (with the reason printed)
/// where the kernel has no io_uring futex wake.
fn queue_on_file(depth: u32) -> Option<(tempfile::TempDir, std::fs::File, Queue)> {
    if WakeRing::new(8).is_err() {
        eprintln!("skipped: this kernel has no io_uring futex wake (Linux 6.7)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("f.dat");
    std::fs::write(&name, vec![7u8; 8 * BS]).unwrap();
    let file = std::fs::File::open(&name).unwrap();
    let opts = EngineOptions {
        futex_wakes: true,
        ..Default::default()
    };
    let queue = Queue::open(
        EngineKind::IoUring,
        &opts,
        &[Target::from_file(&file)],
        depth,
        BS,
    )
    .unwrap();
    Some((dir, file, queue))
}

fn read(queue: &mut Queue, block: u64) -> u32 {
    let tag = queue.get_free_tag().expect("a free tag");
    let cmd = Command {
        op: Op::Read,
        target: 0,
        offset: block * BS as u64,
        len: BS as u32,
    };
    queue.bind(tag, cmd, block).unwrap();
    tag
}

/// A wake the kernel fails (a misaligned word) posts a completion; the
/// queue drops it: a reap returns only the commands', and counts it.
#[test]
fn a_failed_wake_is_never_reaped_as_an_io() {
    let Some((_dir, _file, queue)) = queue_on_file(4) else {
        return;
    };
    // Not dropped if an assertion fails: a queue drops by waiting for what
    // it counts in flight, which a miscounted completion would never end.
    let mut queue = std::mem::ManuallyDrop::new(queue);
    let words = [AtomicU32::new(0), AtomicU32::new(0)];
    let odd = (words.as_ptr() as usize + 1) as *const AtomicU32;
    assert!(queue.stage_wake(odd), "the queue carries wakes");
    let tag = read(&mut queue, 3);
    assert_eq!(queue.issue().unwrap(), 1, "one command sent, not the wake");
    assert_eq!(queue.wakes_unsent(), 0);
    let mut out = [Completion::EMPTY; 4];
    let n = queue.reap(1, &mut out).unwrap();
    assert_eq!(n, 1, "{:?}", &out[..n]);
    assert_eq!((out[0].tag, out[0].user), (tag, 3));
    assert_eq!(out[0].result, BS as i64);
    assert_eq!(queue.in_flight(), 0);
    // The wake's completion, posted with the read's, was taken apart.
    assert_eq!(queue.wake_failures(), 1);
    assert_eq!(queue.reap(0, &mut out).unwrap(), 0);
    drop(std::mem::ManuallyDrop::into_inner(queue));
}

/// Sleepers on futex words are woken by wakes staged on the queue: with
/// commands, and alone (an issue with no command staged still sends them).
#[test]
fn carried_wakes_reach_their_sleepers_with_and_without_commands() {
    let Some((_dir, _file, mut queue)) = queue_on_file(4) else {
        return;
    };
    for with_command in [true, false] {
        let words: Arc<Vec<AtomicU32>> = Arc::new((0..3).map(|_| AtomicU32::new(0)).collect());
        let sleepers: Vec<_> = (0..3)
            .map(|i| {
                let words = words.clone();
                std::thread::spawn(move || sleep_until_set(&words[i]))
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        for w in words.iter() {
            w.store(1, Ordering::SeqCst);
            assert!(queue.stage_wake(w));
        }
        let sent = if with_command {
            read(&mut queue, 1);
            1
        } else {
            0
        };
        assert_eq!(queue.issue().unwrap(), sent);
        assert_eq!(queue.wakes_unsent(), 0);
        for s in sleepers {
            assert!(
                !s.join().unwrap(),
                "a sleeper was not woken ({with_command})"
            );
        }
        let mut out = [Completion::EMPTY; 4];
        assert_eq!(queue.reap(sent, &mut out).unwrap(), sent as usize);
    }
    assert_eq!(queue.wake_failures(), 0);
}

/// A ring holds only so many wakes: past its room `stage_wake` says no,
/// and the caller wakes that sleeper itself.
#[test]
fn wakes_beyond_the_rings_room_are_refused() {
    let Some((_dir, _file, mut queue)) = queue_on_file(4) else {
        return;
    };
    let word = AtomicU32::new(0);
    let staged = (0..64).take_while(|_| queue.stage_wake(&word)).count();
    assert!((4..64).contains(&staged), "{staged} wakes staged");
    assert_eq!(queue.wakes_unsent(), staged as u32);
    assert_eq!(queue.issue().unwrap(), 0);
    assert_eq!(queue.wakes_unsent(), 0);
    assert!(queue.stage_wake(&word), "room again once sent");
}

/// Sleeps on `word` while it is 0; true if a sleep ended by its timeout
/// (10 s: a wake lost).
fn sleep_until_set(word: &AtomicU32) -> bool {
    let limit = libc::timespec {
        tv_sec: 10,
        tv_nsec: 0,
    };
    while word.load(Ordering::SeqCst) == 0 {
        // SAFETY: FUTEX_WAIT_PRIVATE on a live word with a live timeout.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word as *const AtomicU32,
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                0u32,
                &limit as *const libc::timespec,
            )
        };
        if rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT) {
            return true;
        }
    }
    false
}
