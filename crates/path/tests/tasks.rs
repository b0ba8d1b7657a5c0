//! The task path: futures over one ring per executor thread.

use hiops_hal::backends::mem::MemDevice;
use hiops_hal::ramdev::RamDevice;
use hiops_hal::{EngineKind, Op, Target};
use hiops_path::{tokio_driver, AlignedBuf, TaskConfig, TaskRing};
use proptest::prelude::*;
use std::future::Future;
use std::os::unix::fs::OpenOptionsExt;
use std::rc::Rc;
use std::task::{Context, Waker};

/// A file of `bytes` zeroes (or `fill`) in `dir`, opened O_DIRECT.
fn direct_file(dir: &tempfile::TempDir, bytes: usize, fill: u8) -> std::fs::File {
    let path = dir.path().join("data");
    std::fs::write(&path, vec![fill; bytes]).unwrap();
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap()
}

/// Runs `tasks` on a current-thread runtime beside the ring's driver.
fn with_driver<F, T>(ring: Rc<TaskRing>, body: impl FnOnce(Rc<TaskRing>) -> F) -> T
where
    F: Future<Output = T> + 'static,
    T: 'static,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
        let out = body(ring.clone()).await;
        ring.close();
        driver.await.unwrap().unwrap();
        out
    })
}

fn pattern(task: u64, len: usize) -> AlignedBuf {
    let mut b = AlignedBuf::new(len);
    for (i, x) in b.iter_mut().enumerate() {
        *x = (task as usize * 31 + i * 7) as u8;
    }
    b
}

/// Each task writes its own block, reads it back and checks it.
async fn write_then_check(ring: Rc<TaskRing>, tasks: u64, bs: usize) -> u64 {
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let ring = ring.clone();
            tokio::task::spawn_local(async move {
                let (w, _) = ring.write_at(0, pattern(t, bs), t * bs as u64).await;
                assert_eq!(w.unwrap(), bs);
                let (r, got) = ring.read_at(0, AlignedBuf::new(bs), t * bs as u64).await;
                assert_eq!(r.unwrap(), bs);
                assert!(
                    got[..] == pattern(t, bs)[..],
                    "task {t} read back other data"
                );
                1u64
            })
        })
        .collect();
    let mut n = 0;
    for h in handles {
        n += h.await.unwrap();
    }
    n
}

#[test]
fn a_thousand_tasks_write_and_read_back_through_io_uring() {
    let dir = tempfile::tempdir().unwrap();
    let file = direct_file(&dir, 1024 * 4096, 0);
    for tasks in [1, 8, 1024] {
        let config = TaskConfig {
            depth: 64,
            ..TaskConfig::default()
        };
        let ring = Rc::new(TaskRing::open(&config, &[Target::from_file(&file)]).unwrap());
        let done = with_driver(ring.clone(), move |r| write_then_check(r, tasks, 4096));
        assert_eq!(done, tasks);
        let c = ring.counters();
        assert_eq!((c.issued, c.reaped), (2 * tasks, 2 * tasks), "{c:?}");
        if tasks == 1024 {
            assert!(
                c.fifo_queued > 0,
                "1024 tasks on 64 tags wait in the FIFO: {c:?}"
            );
        }
        assert_eq!(ring.in_flight(), 0);
    }
}

/// Staged reads go to the kernel once `submit_batch` of them wait, before
/// the driver's turn; with 0 they wait for the turn.
#[test]
fn staged_commands_go_out_once_a_batch_waits() {
    let dir = tempfile::tempdir().unwrap();
    let file = direct_file(&dir, 64 * 4096, 0);
    let mut cx = Context::from_waker(Waker::noop());
    for (batch, issued_after) in [(2u32, [0u64, 2, 2, 4]), (0, [0, 0, 0, 0])] {
        let config = TaskConfig {
            depth: 16,
            submit_batch: batch,
            ..TaskConfig::default()
        };
        let ring = TaskRing::open(&config, &[Target::from_file(&file)]).unwrap();
        let mut reads: Vec<_> = (0..4u64)
            .map(|i| Box::pin(ring.read_at(0, AlignedBuf::new(4096), i * 4096)))
            .collect();
        for (f, &want) in reads.iter_mut().zip(&issued_after) {
            assert!(f.as_mut().poll(&mut cx).is_pending());
            assert_eq!(ring.counters().issued, want, "submit_batch {batch}");
        }
        // The turn sends what is left, and the reads complete (each future
        // polled until it is ready, never after).
        let mut done = [false; 4];
        while done.contains(&false) {
            ring.turn();
            for (f, d) in reads.iter_mut().zip(&mut done) {
                *d = *d || f.as_mut().poll(&mut cx).is_ready();
            }
        }
        assert_eq!(ring.counters().issued, 4);
    }
}

/// A future dropped with its read at the device: the ring keeps the
/// buffer until the completion is reaped, and the tag comes back.
#[test]
fn a_dropped_future_leaks_no_tag_and_keeps_its_buffer_until_reaped() {
    let dir = tempfile::tempdir().unwrap();
    // O_DIRECT: each read goes to the device and takes its time, so a
    // future dropped right after its submission leaves it in flight.
    let file = direct_file(&dir, 64 * 4096, 7);
    let config = TaskConfig {
        depth: 4,
        ..TaskConfig::default()
    };
    let ring = TaskRing::open(&config, &[Target::from_file(&file)]).unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let mut dropped_in_flight = 0;
    for round in 0..16u64 {
        let mut f = Box::pin(ring.read_at(0, AlignedBuf::new(4096), round * 4096));
        assert!(f.as_mut().poll(&mut cx).is_pending());
        ring.submit_staged(); // the kernel owns the buffer now
        drop(f);
        // Still at the device: the ring holds the slot and its buffer.
        dropped_in_flight += ring.orphans();
        assert_eq!(ring.orphans(), ring.in_flight(), "round {round}");
    }
    if ring.counters().inline == 0 {
        assert!(
            dropped_in_flight > 0,
            "no read was still at the device when dropped"
        );
    }
    // Also one dropped while it still waits in the FIFO (4 tags).
    let mut held: Vec<_> = (0..5)
        .map(|i| Box::pin(ring.read_at(0, AlignedBuf::new(4096), i * 4096)))
        .collect();
    for f in &mut held {
        let _ = f.as_mut().poll(&mut cx);
    }
    drop(held.pop());
    drop(held);
    for _ in 0..1000 {
        ring.turn();
        if ring.in_flight() == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(ring.in_flight(), 0, "every orphan's completion was reaped");
    assert_eq!(ring.orphans(), 0, "and its buffer freed");
    let c = ring.counters();
    assert_eq!(c.issued, c.reaped, "{c:?}");
    // All tags are free again: a full batch goes straight to the device.
    let n = with_driver(Rc::new(ring), |r| write_then_check(r, 4, 4096));
    assert_eq!(n, 4);
}

#[test]
fn an_io_error_fails_that_io_and_the_ring_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    drop(direct_file(&dir, 16 * 4096, 1));
    // Opened for reading only: a write is EBADF on every file system.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(dir.path().join("data"))
        .unwrap();
    let ring =
        Rc::new(TaskRing::open(&TaskConfig::default(), &[Target::from_file(&file)]).unwrap());
    let (bad, good) = with_driver(ring, |r| async move {
        let (bad, _) = r.io(Op::Write, 0, 0, 4096, AlignedBuf::new(4096)).await;
        let (good, _) = r.read_at(0, AlignedBuf::new(4096), 4096).await;
        (bad, good)
    });
    assert_eq!(bad.unwrap_err().raw_os_error(), Some(libc::EBADF));
    assert_eq!(good.unwrap(), 4096);
}

/// A submission the kernel refuses for now (EAGAIN) is sent again on a
/// later turn: every task's I/O completes, whichever way the driver sleeps.
#[test]
fn a_refused_submission_is_sent_again() {
    for sleep_in_ring in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let file = direct_file(&dir, 8 * 4096, 0);
        let refusals = hiops_hal::SubmitFaults::new();
        refusals.refuse_next(6);
        let mut config = TaskConfig {
            sleep_in_ring,
            ..TaskConfig::default()
        };
        config.engine_opts.faults = Some(refusals.clone());
        let ring = Rc::new(TaskRing::open(&config, &[Target::from_file(&file)]).unwrap());
        let done = with_driver(ring.clone(), |r| write_then_check(r, 8, 4096));
        assert_eq!(done, 8, "sleep_in_ring={sleep_in_ring}");
        assert_eq!(refusals.refusals_left(), 0);
        let c = ring.counters();
        assert!(c.ring_errors >= 1, "{c:?}");
        assert_eq!(c.reaped, 16, "{c:?}");
    }
}

/// A submission that fails for good (EIO) fails the I/Os it carried, with
/// that error, and the ring serves on: the next reads of every task return
/// their data (before, the ring failed every later I/O at once).
#[test]
fn a_failed_submission_fails_its_ios_and_the_ring_serves_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let blocks: Vec<u8> = (0..8 * 4096).map(|i| (i / 4096) as u8 + 1).collect();
    std::fs::write(&path, &blocks).unwrap();
    let file = open_direct(&path);
    let failures = hiops_hal::SubmitFaults::new();
    failures.fail_next(2);
    let mut config = TaskConfig::default();
    config.engine_opts.faults = Some(failures.clone());
    let ring = Rc::new(TaskRing::open(&config, &[Target::from_file(&file)]).unwrap());
    let (failed, second) = with_driver(ring.clone(), |r| async move {
        let read_all = |r: Rc<TaskRing>| async move {
            let handles: Vec<_> = (0..8u64)
                .map(|t| {
                    let r = r.clone();
                    tokio::task::spawn_local(async move {
                        let (n, buf) = r.read_at(0, AlignedBuf::new(4096), t * 4096).await;
                        n.map(|n| {
                            assert_eq!(n, 4096);
                            assert!(buf.iter().all(|&b| b == t as u8 + 1), "block {t}");
                        })
                    })
                })
                .collect();
            let mut failed = 0;
            for h in handles {
                if let Err(e) = h.await.unwrap() {
                    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
                    failed += 1;
                }
            }
            failed
        };
        let failed = read_all(r.clone()).await;
        let failed = failed + read_all(r.clone()).await;
        let second = read_all(r).await;
        (failed, second)
    });
    assert_eq!(failures.failures_left(), 0);
    assert!((2..=16).contains(&failed), "{failed} reads failed");
    assert_eq!(second, 0, "the ring serves on");
    let c = ring.counters();
    let done = 24 - failed as u64;
    assert_eq!((c.issued, c.reaped), (done, done), "{c:?}");
    assert!(c.ring_errors >= 2, "{c:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Tasks, sizes and depths mixed on the RAM device: every I/O completes
    /// exactly once and with its own data.
    #[test]
    fn no_io_is_lost_or_completed_twice(depth in 1u32..16, tasks in 1u64..64, kb in 1usize..17) {
        let bs = kb * 512;
        let dev = MemDevice::new(64 * 17 * 512).unwrap();
        let config = TaskConfig { engine: EngineKind::Mem, depth, ..TaskConfig::default() };
        let ring = Rc::new(TaskRing::open(&config, &[Target::Mem(dev)]).unwrap());
        let done = with_driver(ring.clone(), move |r| write_then_check(r, tasks, bs));
        prop_assert_eq!(done, tasks);
        let c = ring.counters();
        prop_assert_eq!((c.issued, c.reaped), (2 * tasks, 2 * tasks));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// The same through io_uring on an O_DIRECT file, with some futures
    /// dropped just after their read started: every kept I/O completes
    /// once with its own data, and every dropped one that reached the ring
    /// is reaped and gives back its slot.
    #[test]
    fn no_io_is_lost_or_completed_twice_through_io_uring(
        depth in 1u32..16, tasks in 1u64..64, kb in 1usize..17, drop_every in 0u64..4,
    ) {
        let bs = kb * 512;
        let dir = tempfile::tempdir().unwrap();
        let file = direct_file(&dir, 64 * 17 * 512, 0);
        let config = TaskConfig { depth, ..TaskConfig::default() };
        let ring = Rc::new(TaskRing::open(&config, &[Target::from_file(&file)]).unwrap());
        let done = with_driver(ring.clone(), move |r| async move {
            let dropping = drop_some_reads(r.clone(), tasks, bs, drop_every);
            let checking = write_then_check(r, tasks, bs);
            dropping.await;
            checking.await
        });
        prop_assert_eq!(done, tasks);
        for _ in 0..1000 {
            ring.turn();
            if ring.in_flight() == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        prop_assert_eq!((ring.in_flight(), ring.orphans()), (0, 0));
        let c = ring.counters();
        let dropped = tasks.checked_div(drop_every).unwrap_or(0);
        prop_assert_eq!(c.issued, c.reaped, "{:?}", c);
        prop_assert!(c.reaped >= 2 * tasks && c.reaped <= 2 * tasks + dropped, "{:?}", c);
    }
}

/// Starts a read of every `every`-th task's block (0: none), polls it once
/// and drops it: it goes to the device or waits in the FIFO for a tag.
async fn drop_some_reads(ring: Rc<TaskRing>, tasks: u64, bs: usize, every: u64) {
    for t in (0..tasks).filter(|t| every > 0 && (t + 1) % every == 0) {
        let mut f = Box::pin(ring.read_at(0, AlignedBuf::new(bs), t * bs as u64));
        std::future::poll_fn(|cx| {
            let _ = f.as_mut().poll(cx);
            std::task::Poll::Ready(())
        })
        .await;
        drop(f);
    }
}

/// The driver may block the thread in the ring only once every owner it
/// woke has taken its result: a woken owner starts the next I/O, and a
/// driver that slept first would keep it waiting a whole device latency.
#[test]
fn a_woken_owner_holds_the_driver_awake_until_it_runs() {
    let dev = MemDevice::new(4 * 4096).unwrap();
    let config = TaskConfig {
        engine: EngineKind::Mem,
        sleep_in_ring: true,
        ..TaskConfig::default()
    };
    let ring = TaskRing::open(&config, &[Target::Mem(dev)]).unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let mut reads: Vec<_> = (0..3u64)
        .map(|i| Box::pin(ring.read_at(0, AlignedBuf::new(4096), i * 4096)))
        .collect();
    for r in &mut reads {
        assert!(r.as_mut().poll(&mut cx).is_pending());
    }
    assert!(ring.may_sleep(), "nobody was woken yet");
    // The first turn submits (the RAM device completes at once), the second reaps.
    ring.turn();
    ring.turn();
    assert_eq!(ring.counters().reaped, 3);
    for (i, r) in reads.iter_mut().enumerate() {
        assert!(!ring.may_sleep(), "{} woken owners have not run", 3 - i);
        assert!(r.as_mut().poll(&mut cx).is_ready());
    }
    assert!(ring.may_sleep());
    // An owner dropped after its wake-up no longer holds the driver.
    let mut dropped = Box::pin(ring.read_at(0, AlignedBuf::new(4096), 0));
    assert!(dropped.as_mut().poll(&mut cx).is_pending());
    ring.turn();
    ring.turn();
    assert!(!ring.may_sleep());
    drop(dropped);
    assert!(ring.may_sleep());
}

/// The embedder's gate is obeyed: while it says others are about to run,
/// the driver never blocks in the ring (it yields to the executor), and
/// every I/O still completes; with the gate open it sleeps there.
#[test]
fn the_driver_sleeps_in_the_ring_only_when_the_gate_allows() {
    for open in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let file = direct_file(&dir, 64 * 4096, 0);
        let config = TaskConfig {
            sleep_in_ring: true,
            ..TaskConfig::default()
        };
        let ring = Rc::new(TaskRing::open(&config, &[Target::from_file(&file)]).unwrap());
        ring.set_sleep_gate(Box::new(move || open));
        // One I/O at a time: a turn right after a submission finds nothing
        // to reap, so an open gate lets the driver sleep (with many I/Os in
        // flight every turn may find a completion and never need to).
        let done = with_driver(ring.clone(), |r| async move {
            let mut n = 0;
            for _ in 0..32 {
                n += write_then_check(r.clone(), 1, 4096).await;
            }
            n
        });
        assert_eq!(done, 32);
        let c = ring.counters();
        assert_eq!(c.reaped, 64, "{c:?}");
        if open {
            assert!(c.doorbell_wakes > 0, "never slept in the ring: {c:?}");
        } else {
            assert_eq!(c.doorbell_wakes, 0, "slept against the gate: {c:?}");
        }
    }
}

/// A task ring registers its files with io_uring: no shared file reference
/// is taken and dropped per I/O.
#[test]
fn a_task_ring_registers_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = direct_file(&dir, 8 * 4096, 0);
    let ring =
        Rc::new(TaskRing::open(&TaskConfig::default(), &[Target::from_file(&file)]).unwrap());
    let d = ring.description();
    if !d.contains("io_uring") {
        eprintln!("skipped: not on io_uring here ({d})");
        return;
    }
    assert!(d.contains("registered files"), "{d}");
    assert_eq!(with_driver(ring, |r| write_then_check(r, 8, 4096)), 8);
}

/// On a ring over a file and zram (which completes a bio in the
/// submitting call), zram's I/Os are done at once in their task's poll (no
/// io-wq worker), the file's go through io_uring, and both read back what
/// was written.
#[test]
fn a_target_that_completes_in_the_submitter_is_served_in_the_tasks_poll() {
    let zram = match RamDevice::zram("16M") {
        Ok(z) => z,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let file = direct_file(&dir, 1 << 20, 0);
    let dev = open_direct(&zram.path);
    let targets = [Target::from_file(&file), Target::from_file(&dev)];
    let ring = Rc::new(TaskRing::open(&TaskConfig::default(), &targets).unwrap());
    assert!(
        ring.description().contains("io_uring"),
        "the file keeps io_uring: {}",
        ring.description()
    );
    let tasks = 32u64;
    let done = with_driver(ring.clone(), move |ring| {
        each_target_round_trip(ring, 2, tasks)
    });
    assert_eq!(done, tasks);
    let c = ring.counters();
    assert_eq!(c.inline, 2 * tasks, "zram's writes and reads: {c:?}");
    assert_eq!(c.issued, 4 * tasks, "every I/O counted once: {c:?}");
    assert_eq!(c.reaped, 4 * tasks, "{c:?}");
    assert_eq!(ring.in_flight(), 0);
}

/// A loop device over tmpfs is not read in the task's poll: the loop's
/// worker does its reads, and the executor must not block on them (128
/// tasks ran 4x faster through io_uring).
#[test]
fn a_loop_device_over_tmpfs_stays_on_io_uring_for_tasks() {
    let lo = match RamDevice::loop_on(std::path::Path::new("/dev/shm"), 1 << 20) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dev = open_direct(&lo.path);
    let targets = [Target::from_file(&dev)];
    let ring = Rc::new(TaskRing::open(&TaskConfig::default(), &targets).unwrap());
    assert!(
        ring.description().contains("io_uring"),
        "{}",
        ring.description()
    );
    let done = with_driver(ring.clone(), move |ring| each_target_round_trip(ring, 1, 8));
    assert_eq!(done, 8);
    let c = ring.counters();
    assert_eq!((c.inline, c.issued), (0, 16), "{c:?}");
}

fn open_direct(path: &std::path::Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .unwrap()
}

/// Each task writes a block of its own to each of the ring's `targets`, then
/// reads each back and checks it. Returns the tasks that finished.
async fn each_target_round_trip(ring: Rc<TaskRing>, targets: u32, tasks: u64) -> u64 {
    let bs = 4096;
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let ring = ring.clone();
            tokio::task::spawn_local(async move {
                let at = t * bs as u64;
                for target in 0..targets {
                    let data = pattern(t + 100 * target as u64, bs);
                    let (w, _) = ring.write_at(target, data, at).await;
                    assert_eq!(w.unwrap(), bs);
                }
                for target in 0..targets {
                    let (r, got) = ring.read_at(target, AlignedBuf::new(bs), at).await;
                    assert_eq!(r.unwrap(), bs);
                    let want = pattern(t + 100 * target as u64, bs);
                    assert!(got[..] == want[..], "task {t} target {target}: other data");
                }
            })
        })
        .collect();
    let mut n = 0;
    for h in handles {
        h.await.unwrap();
        n += 1;
    }
    n
}

/// The hybrid: the driver busy-peeks while at least `poll_min_depth`
/// commands are out (or owners were just woken), and sleeps on the
/// eventfd below that. Reads of an empty pipe stay out until it is
/// written, so each turn sees exactly the depth the test set.
#[test]
fn the_driver_peeks_while_the_queue_is_deep_and_sleeps_when_it_is_shallow() {
    use hiops_path::task::Wait;
    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two descriptors into the array we own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (rd, wr) = (fds[0], fds[1]);
    let config = TaskConfig {
        depth: 8,
        poll_min_depth: 3,
        ..TaskConfig::default()
    };
    let ring = TaskRing::open(&config, &[Target::Fd(rd)]).unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let mut reads = Vec::new();
    let mut start = |reads: &mut Vec<_>| {
        let mut f = Box::pin(ring.read_at(0, AlignedBuf::new(4096), 0));
        assert!(f.as_mut().poll(&mut cx).is_pending());
        reads.push(f);
    };
    assert_eq!(ring.turn(), Wait::Idle, "nothing out");
    start(&mut reads);
    start(&mut reads);
    assert_eq!(
        ring.turn(),
        Wait::Bell,
        "2 out, under the depth of 3: sleep"
    );
    start(&mut reads);
    assert_eq!(ring.turn(), Wait::Busy, "3 out: peek");
    // Data for every read: they complete, their owners are woken (Busy),
    // and once they have taken their results nothing is out (Idle).
    let data = [5u8; 3 * 4096];
    // SAFETY: a write of our own buffer to the pipe we opened.
    let n = unsafe { libc::write(wr, data.as_ptr().cast(), data.len()) };
    assert_eq!(n, data.len() as isize);
    let mut got = 0;
    for _ in 0..1000 {
        ring.turn();
        reads.retain_mut(|f| match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready((r, _)) => {
                got += r.unwrap();
                false
            }
            std::task::Poll::Pending => true,
        });
        if reads.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(got, 3 * 4096);
    assert_eq!(ring.turn(), Wait::Idle);
    drop(reads);
    drop(ring);
    // SAFETY: closing the descriptors pipe gave us, once.
    unsafe { (libc::close(rd), libc::close(wr)) };
}
