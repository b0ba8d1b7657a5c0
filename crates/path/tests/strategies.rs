//! Every strategy moves the right bytes for many threads, loses no I/O and
//! completes none twice, never blocks an issuer on a full device queue, and
//! shuts down cleanly with I/O in flight.

use hiops_hal::backends::mem::MemDevice;
use hiops_hal::ramdev::RamDevice;
use hiops_hal::{EngineKind, Target};
use hiops_path::{AlignedBuf, CoopParts, CoopWait, IoPath, PathConfig, Strategy, ThreadStats};
use proptest::prelude::*;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on a thread and fails the test if it takes longer than `secs`
/// (a lost completion shows up as a hang).
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(_) => panic!("no answer within {secs} s: an I/O was lost or a thread hangs"),
    }
}

fn fill(buf: &mut [u8], thread: u64, block: u64, round: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (thread
            .wrapping_mul(31)
            .wrapping_add(block.wrapping_mul(7))
            .wrapping_add(round.wrapping_mul(13))
            .wrapping_add(i as u64 / 3)) as u8;
    }
}

/// A target for a test: a file (O_DIRECT where the filesystem allows it)
/// or a RAM device; the file handle is kept alive with the target.
struct TestTarget {
    _dir: Option<tempfile::TempDir>,
    _file: Option<std::fs::File>,
    target: Target,
}

fn file_target(bytes: u64) -> TestTarget {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("data");
    std::fs::File::create(&p).unwrap().set_len(bytes).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&p)
        .or_else(|_| std::fs::OpenOptions::new().read(true).write(true).open(&p))
        .unwrap();
    TestTarget {
        target: Target::from_file(&file),
        _file: Some(file),
        _dir: Some(dir),
    }
}

/// [`file_target`] with its blocks written (and synced), so direct reads
/// go to the device and complete asynchronously, where the holes of a new
/// file complete inside the submission.
fn written_file_target(bytes: u64) -> TestTarget {
    use std::io::Write;
    let t = file_target(0);
    let p = t._dir.as_ref().unwrap().path().join("data");
    let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    let chunk = vec![0x5au8; 1 << 20];
    for _ in 0..bytes.div_ceil(1 << 20) {
        f.write_all(&chunk).unwrap();
    }
    f.sync_all().unwrap();
    t
}

/// One 4 KiB read of a block chosen from `x` (a generator state it moves
/// on) among the first `blocks` of target 0.
fn read_a_random_block(path: &IoPath, buf: &mut AlignedBuf, x: &mut u64, blocks: u64) {
    *x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    let block = (*x >> 40) % blocks * 4096;
    assert_eq!(path.read_at(0, buf, block).unwrap(), 4096);
}

/// A coop ring shared by every thread (coop-shared, no spinning) over a
/// written file of `bytes`; the target lives as long as the path needs it.
fn shared_ring_on_a_file(depth: u32, bytes: u64) -> (TestTarget, IoPath) {
    let t = written_file_target(bytes);
    let mut cfg = config(Strategy::Coop, EngineKind::IoUring, depth);
    cfg.spin_ns = 0;
    let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
    (t, path)
}

/// Every one of `reads` was issued and reaped exactly once (commands io_uring
/// canceled and the path sent again aside).
fn assert_each_read_once(path: &IoPath, reads: u64) {
    let c = path.counters();
    assert_eq!(
        (c.issued - c.resent, c.reaped - c.resent),
        (reads, reads),
        "{c:?}"
    );
}

fn mem_target(bytes: u64) -> TestTarget {
    TestTarget {
        target: Target::Mem(MemDevice::new(bytes).unwrap()),
        _file: None,
        _dir: None,
    }
}

/// Each thread writes its own blocks, reads them back and compares; half
/// the threads use unaligned buffers (the bounce path). Returns the threads'
/// stats merged.
fn exercise(path: &IoPath, threads: u64, blocks: u64, bs: usize, rounds: u64) -> ThreadStats {
    exercise_on(path, 0, threads, blocks, bs, rounds)
}

/// [`exercise`] on target `target` of the path.
fn exercise_on(
    path: &IoPath,
    target: u32,
    threads: u64,
    blocks: u64,
    bs: usize,
    rounds: u64,
) -> ThreadStats {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut stats = ThreadStats::default();
                    let mut aligned = AlignedBuf::new(bs);
                    let mut back = AlignedBuf::new(bs);
                    let mut unaligned_store = vec![0u8; bs + 1];
                    for round in 0..rounds {
                        for b in 0..blocks {
                            let offset = (t * blocks + b) * bs as u64;
                            let w: &mut [u8] = if t % 2 == 0 {
                                &mut aligned
                            } else {
                                &mut unaligned_store[1..]
                            };
                            fill(w, t, b, round);
                            let n = path
                                .write_at_with_stats(target, w, offset, &mut stats)
                                .unwrap();
                            assert_eq!(n, bs);
                            let r: &mut [u8] = if t % 2 == 0 {
                                &mut back
                            } else {
                                &mut unaligned_store[1..]
                            };
                            r.fill(0);
                            let n = path
                                .read_at_with_stats(target, r, offset, &mut stats)
                                .unwrap();
                            assert_eq!(n, bs);
                            let mut expect = vec![0u8; bs];
                            fill(&mut expect, t, b, round);
                            assert!(
                                r == &expect[..],
                                "thread {t} block {b} round {round}: read back other bytes"
                            );
                        }
                    }
                    stats
                })
            })
            .collect();
        let mut all = ThreadStats::default();
        for h in handles {
            all.merge(&h.join().unwrap());
        }
        all
    })
}

fn config(strategy: Strategy, engine: EngineKind, depth: u32) -> PathConfig {
    PathConfig {
        strategy,
        engine,
        depth,
        max_io: 64 * 1024,
        spin_ns: 2_000,
        poll_interval: Duration::from_micros(20),
        ..PathConfig::default()
    }
}

#[test]
fn every_strategy_verifies_from_1_8_and_256_threads() {
    within(240, || {
        for strategy in Strategy::ALL {
            for threads in [1u64, 8, 256] {
                let blocks = if threads == 256 { 2 } else { 8 };
                let t = file_target(threads * blocks * 4096);
                let path = IoPath::open(
                    config(strategy, EngineKind::IoUring, 32),
                    vec![t.target.clone()],
                )
                .unwrap();
                let stats = exercise(&path, threads, blocks, 4096, 2);
                assert_eq!(stats.ios, threads * blocks * 2 * 2, "{strategy}");
                let c = path.counters();
                if strategy.is_shared() {
                    assert_eq!(
                        c.issued - c.resent,
                        stats.ios,
                        "{strategy}: issued vs completed"
                    );
                    assert_eq!(
                        c.reaped - c.resent,
                        stats.ios,
                        "{strategy}: reaped vs completed"
                    );
                }
                drop(path);
            }
        }
    });
}

/// Fig 8's ablation: each part of coop verifies, and the counters show which
/// threads did the completion work.
#[test]
fn coop_parts_verify_and_each_changes_who_reaps() {
    within(120, || {
        for parts in CoopParts::ALL {
            let (threads, blocks) = (16u64, 8u64);
            let t = file_target(threads * blocks * 4096);
            let mut cfg = config(Strategy::Coop, EngineKind::IoUring, 8);
            cfg.coop_parts = parts;
            cfg.spin_ns = 0;
            let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
            let stats = exercise(&path, threads, blocks, 4096, 2);
            assert_eq!(stats.ios, threads * blocks * 2 * 2, "{parts:?}");
            let c = path.counters();
            assert_eq!(
                c.reaped - c.resent,
                stats.ios,
                "{parts:?}: reaped vs completed"
            );
            let passes = path.completion_passes();
            assert!(passes.count() > 0, "{parts:?}: no completion pass booked");
            assert!(
                passes.count() <= c.reaped,
                "{parts:?}: a pass reaps at least one"
            );
            match parts {
                // The completion thread reaps everything; owners never peek.
                CoopParts::Issue => {
                    assert_eq!(c.reaped_for_others, c.reaped - c.resent, "{parts:?}");
                    assert_eq!(stats.doorbell_sleeps, 0, "{parts:?}");
                }
                // Only a thread woken from the doorbell peeks.
                CoopParts::Lazy => assert_eq!(c.peeks, c.doorbell_wakes, "{parts:?}: {c:?}"),
                // The threads entering the path peek (whoever holds the
                // ring, for a batch of submissions at a time); nobody
                // sleeps on the doorbell.
                CoopParts::All => {
                    assert!(c.peeks > 0, "{parts:?}: {c:?}");
                    assert_eq!(c.doorbell_wakes, 0, "{parts:?}: {c:?}");
                    assert_eq!(stats.doorbell_sleeps, 0, "{parts:?}: {stats:?}");
                }
            }
            path.restart_completion_passes();
            assert_eq!(path.completion_passes().count(), 0);
        }
    });
}

/// coop's own-completion wait: a lone thread is woken by nothing but its own
/// completion (io_uring posts it as work in the submitting thread), so if
/// that wake-up did not come the test would hang. The doorbell wait sleeps
/// on the eventfd instead.
#[test]
fn coop_waits_for_its_own_completion_or_on_the_doorbell() {
    within(60, || {
        for wait in CoopWait::ALL {
            let t = file_target(64 * 4096);
            let mut cfg = config(Strategy::Coop, EngineKind::IoUring, 8);
            cfg.coop_wait = wait;
            cfg.spin_ns = 0;
            let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
            let alone = exercise(&path, 1, 32, 4096, 2);
            let c1 = path.counters();
            assert_eq!(c1.reaped - c1.resent, alone.ios, "{wait:?}");
            let shared = exercise(&path, 2, 32, 4096, 2);
            let c = path.counters();
            assert_eq!(c.reaped - c.resent, alone.ios + shared.ios, "{wait:?}");
            match wait {
                CoopWait::Own => {
                    // Alone on its ring, a thread submits and waits in one
                    // call: every I/O solo, no futex sleep, nobody to wake.
                    assert_eq!(c1.solo, alone.ios, "{c1:?}");
                    assert_eq!(alone.parks, 0, "{alone:?}");
                    assert_eq!(c1.wakeups, 0, "{c1:?}");
                    // Three threads have joined: none goes solo any more,
                    // each sleeps until its own completion is posted.
                    assert_eq!(c.solo, c1.solo, "{c:?}");
                    assert!(shared.parks > 0, "they never slept: {shared:?}");
                    assert_eq!(c.doorbell_wakes, 0, "{c:?}");
                }
                CoopWait::Doorbell => {
                    assert_eq!(c.solo, 0, "{c:?}");
                    assert!(alone.doorbell_sleeps > 0, "{alone:?}");
                    assert_eq!(
                        alone.parks, 0,
                        "alone, it sleeps on the doorbell: {alone:?}"
                    );
                }
            }
        }
    });
}

/// A trim completes inside the issue, outside io_uring's CQ (and with no
/// iocb on libaio, so nothing signals its owner), so no completion work
/// wakes its owner: every shared strategy must still return from it (under
/// coop's own wait the issuer reaps it at once).
#[test]
fn trims_return_on_every_shared_strategy() {
    within(60, || {
        let strategies = [
            Strategy::Coop,
            Strategy::CompletionThread,
            Strategy::Poll,
            Strategy::Hybrid,
        ];
        let engines = [EngineKind::IoUring, EngineKind::Libaio];
        for (strategy, engine) in strategies.into_iter().flat_map(|s| engines.map(|e| (s, e))) {
            // Named here: a hang shows only as the timeout.
            eprintln!("{strategy} on {engine:?}");
            let t = file_target(8 * 65536);
            let path = IoPath::open(config(strategy, engine, 4), vec![t.target.clone()]).unwrap();
            std::thread::scope(|s| {
                for th in 0..2u64 {
                    let path = &path;
                    s.spawn(move || {
                        let mut stats = ThreadStats::default();
                        for b in 0..4u64 {
                            let off = (th * 4 + b) * 65536;
                            let n = path.trim_at_with_stats(0, 65536, off, &mut stats).unwrap();
                            assert_eq!(n, 65536, "{strategy}");
                        }
                        assert_eq!(stats.ios, 4, "{strategy}");
                    });
                }
            });
        }
    });
}

#[test]
fn shared_strategies_work_over_libaio_and_the_ram_device() {
    within(120, || {
        for strategy in [
            Strategy::CompletionThread,
            Strategy::Coop,
            Strategy::Poll,
            Strategy::Hybrid,
        ] {
            let t = file_target(16 * 4 * 4096);
            let path = IoPath::open(
                config(strategy, EngineKind::Libaio, 8),
                vec![t.target.clone()],
            )
            .unwrap();
            let s = exercise(&path, 16, 4, 4096, 2);
            assert_eq!(s.ios, 16 * 4 * 4);
            let m = mem_target(16 * 4 * 8192);
            let path =
                IoPath::open(config(strategy, EngineKind::Mem, 8), vec![m.target.clone()]).unwrap();
            let s = exercise(&path, 16, 4, 8192, 2);
            assert_eq!(s.ios, 16 * 4 * 4);
        }
        let m = mem_target(8 * 4096);
        let path = IoPath::open(
            config(Strategy::Pread, EngineKind::Mem, 8),
            vec![m.target.clone()],
        )
        .unwrap();
        assert_eq!(exercise(&path, 4, 2, 4096, 1).ios, 16);
    });
}

/// A depth-1 queue under 32 threads: all but one command wait in the FIFO at
/// times, yet every issuer returns and every I/O completes.
#[test]
fn a_full_device_queue_never_blocks_an_issuer() {
    within(60, || {
        for strategy in [
            Strategy::Coop,
            Strategy::CompletionThread,
            Strategy::Poll,
            Strategy::Hybrid,
        ] {
            let t = file_target(32 * 4 * 4096);
            let path = IoPath::open(
                config(strategy, EngineKind::IoUring, 1),
                vec![t.target.clone()],
            )
            .unwrap();
            let s = exercise(&path, 32, 4, 4096, 2);
            let c = path.counters();
            assert_eq!(c.reaped - c.resent, s.ios, "{strategy}");
            assert!(
                c.fifo_queued > 0,
                "{strategy}: nothing ever waited for a tag"
            );
            assert!(
                c.fifo_max > 1,
                "{strategy}: the FIFO never held two commands"
            );
        }
    });
}

/// The paper's own design (`--strategy=coop-shared`): 128 threads on one
/// ring, where whoever holds the queue sends the others' commands and reaps
/// their completions. Every thread reads back its own bytes, every I/O is
/// issued and reaped exactly once, and the commands that found no tag
/// waited in the FIFO instead of blocking their issuer.
#[test]
fn coop_shared_hands_every_completion_to_its_owner_under_128_threads() {
    within(120, || {
        let (threads, blocks) = (128u64, 4u64);
        let t = file_target(threads * blocks * 4096);
        let mut cfg = config(Strategy::Coop, EngineKind::IoUring, 16);
        cfg.spin_ns = 0;
        let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
        // Every thread's command names the file by its index in the ring:
        // no shared file reference taken and dropped per I/O.
        let d = path.description();
        assert!(d.contains("registered files"), "{d}");
        let s = exercise(&path, threads, blocks, 4096, 2);
        assert_eq!(s.ios, threads * blocks * 2 * 2);
        let c = path.counters();
        assert_eq!(c.issued - c.resent, s.ios, "issued once each: {c:?}");
        assert_eq!(c.reaped - c.resent, s.ios, "reaped once each: {c:?}");
        assert!(c.fifo_max > 1, "the FIFO never held two commands: {c:?}");
        // Owners with nothing they sent in flight sleep on their own word
        // alone; the others also watch the completion queue's tail.
        assert!(c.word_sleeps > 0, "every sleep watched the tail: {c:?}");
        // A thread that found the ring to itself (before the others joined)
        // did its I/O alone, with no hand-off; every other one has one.
        assert_eq!(s.handoff.count() + c.solo, s.ios, "{c:?}");
        // Owners woken by another thread's pass are woken together, one
        // system call per pass, where the kernel has io_uring futex wakes.
        if hiops_hal::WakeRing::new(8).is_ok() {
            assert!(c.wakeups > 0, "nobody slept for a completion: {c:?}");
            assert!(
                (1..=c.wakeups).contains(&c.wake_batches),
                "wake-ups not sent by the ring: {c:?}"
            );
        }
    });
}

/// On libaio each command names its owner's eventfd, which the interrupt
/// that completes it signals: the owner is woken by its own completion,
/// with no doorbell and nobody asleep on the ring for everybody. Every
/// read still reaches its owner once, with its bytes, under 128 threads.
#[test]
fn coop_shared_on_libaio_wakes_each_owner_by_its_own_signal() {
    within(120, || {
        let (threads, blocks) = (128u64, 4u64);
        let t = written_file_target(threads * blocks * 4096);
        let mut cfg = config(Strategy::Coop, EngineKind::Libaio, 16);
        cfg.spin_ns = 0;
        let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
        let d = path.description();
        assert!(d.ends_with("woken by its own completion's signal"), "{d}");
        let s = exercise(&path, threads, blocks, 4096, 2);
        assert_eq!(s.ios, threads * blocks * 2 * 2);
        let c = path.counters();
        assert_eq!((c.issued, c.reaped), (s.ios, s.ios), "once each: {c:?}");
        assert_eq!(c.doorbell_wakes, 0, "a doorbell rang: {c:?}");
        assert!(s.parks > 0, "nobody slept for a completion: {s:?}");
        assert_eq!(s.doorbell_sleeps, 0, "{s:?}");
        assert!(c.fifo_max > 1, "the FIFO never held two commands: {c:?}");
    });
}

/// On a busy ring a thread whose own request is done hands the combining,
/// after a stint, to an owner asleep on the ring (woken to look in its
/// place) instead of combining for as long as others publish. The owner woken so looks even
/// if its own request is done by the time it runs: else what was published
/// meanwhile is never sent, and every thread sleeps for good.
#[test]
fn a_thread_handing_off_the_combining_strands_no_request() {
    within(120, || {
        let (threads, reads) = (128u64, 1000u64);
        let (_t, path) = shared_ring_on_a_file(128, 64 << 20);
        std::thread::scope(|s| {
            for i in 0..threads {
                let path = &path;
                s.spawn(move || {
                    let mut buf = AlignedBuf::new(4096);
                    let mut x = i + 1;
                    for _ in 0..reads {
                        read_a_random_block(path, &mut buf, &mut x, 16384);
                    }
                });
            }
        });
        assert_each_read_once(&path, threads * reads);
        let c = path.counters();
        // Hand-offs happen where a thread combines for longer than its
        // stint (a slow device, many threads); elsewhere this test is the
        // count above alone.
        if c.promotions == 0 {
            eprintln!("note: no thread stayed long enough to hand the combining on");
        }
    });
}

/// Threads that stop together, as at a timed job's end, and then wait off
/// the path (at a barrier, for all the others) never strand another's
/// completion: the commands a thread sent for others are posted only
/// through its own task work, so it must see them reaped before it
/// leaves. Owners sleep with no timer, so a stranded one would sleep
/// until the test's limit.
#[test]
fn threads_that_stop_together_on_a_shared_ring_strand_nobody() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    within(120, || {
        let threads = 64usize;
        let (_t, path) = shared_ring_on_a_file(32, 16 << 20);
        let all_done = std::sync::Barrier::new(threads);
        let reads = AtomicU64::new(0);
        for round in 0..10u64 {
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                for i in 0..threads as u64 {
                    let (path, all_done, stop, reads) = (&path, &all_done, &stop, &reads);
                    s.spawn(move || {
                        let mut buf = AlignedBuf::new(4096);
                        let mut x = i + round * 1000 + 1;
                        while !stop.load(Ordering::Relaxed) {
                            read_a_random_block(path, &mut buf, &mut x, 4096);
                            // The stop comes in the middle of a busy ring.
                            if reads.fetch_add(1, Ordering::Relaxed) % 2000 == 1999 {
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                        all_done.wait();
                    });
                }
            });
        }
        assert_each_read_once(&path, reads.load(Ordering::Relaxed));
    });
}

/// A thread outside the path that reads its counters (the run's watcher
/// at the end of the ramp) takes the ring's lock and then does what a
/// holder must: look again for what others published while it held it.
/// Commands it sends so are posted only through its own task work, so it
/// must see them reaped before it goes back to its own business: else
/// their owners, asleep with nothing they sent in flight, wait for a wake
/// nobody sends (here the reader then waits for them to stop).
#[test]
fn a_counter_reader_strands_no_owner_of_a_shared_ring() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    within(120, || {
        let threads = 3u64;
        let (_t, path) = shared_ring_on_a_file(32, 16 << 20);
        let reads = AtomicU64::new(0);
        for round in 0..400u64 {
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                for i in 0..threads {
                    let (path, stop, reads) = (&path, &stop, &reads);
                    s.spawn(move || {
                        let mut buf = AlignedBuf::new(4096);
                        let mut x = i + round * 1000 + 1;
                        while !stop.load(Ordering::Relaxed) {
                            read_a_random_block(path, &mut buf, &mut x, 4096);
                            reads.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
                std::thread::sleep(Duration::from_millis(2));
                for _ in 0..20 {
                    let _ = path.counters();
                }
                std::thread::sleep(Duration::from_millis(3));
                stop.store(true, Ordering::Relaxed);
            });
        }
        assert_each_read_once(&path, reads.load(Ordering::Relaxed));
    });
}

/// io_uring cancels a command that waits for an io-wq worker when the
/// thread that submitted it exits; on a shared ring that thread may have
/// sent it for another (btrfs punts direct writes to io-wq). Such a command
/// is sent again, and its owner never sees ECANCELED.
#[test]
fn a_command_io_uring_canceled_is_sent_again() {
    within(120, || {
        let t = file_target(16 * 4 * 4096);
        let faults = hiops_hal::SubmitFaults::new();
        let mut cfg = config(Strategy::Coop, EngineKind::IoUring, 16);
        cfg.spin_ns = 0;
        cfg.engine_opts.faults = Some(faults.clone());
        let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
        // This thread joins first, alone (its I/O goes through a ring of
        // its own, which no other thread sends on): the faults are for the
        // shared ring, which every later thread uses.
        let mut buf = AlignedBuf::new(4096);
        assert_eq!(path.read_at(0, &mut buf, 0).unwrap(), 4096);
        faults.cancel_next(7);
        let s = exercise(&path, 16, 4, 4096, 2);
        assert_eq!(s.ios, 16 * 4 * 2 * 2);
        assert_eq!(faults.cancels_left(), 0);
        let c = path.counters();
        // At least the injected 7: where io-wq serves this file system's
        // writes (btrfs), threads that end first cause real ones too.
        assert!(c.resent >= 7 && c.solo == 1, "{c:?}");
        assert_eq!(
            c.issued,
            s.ios + 1 + c.resent,
            "sent again, once each: {c:?}"
        );
    });
}

#[test]
fn shutdown_with_io_in_flight_completes_or_fails_each_io_cleanly() {
    within(60, || {
        for strategy in Strategy::ALL {
            let t = file_target(16 * 4096);
            let path = IoPath::open(
                config(strategy, EngineKind::IoUring, 4),
                vec![t.target.clone()],
            )
            .unwrap();
            let mut seed = AlignedBuf::new(4096);
            for b in 0..16u64 {
                fill(&mut seed, 0, b, 0);
                path.write_at(0, &seed, b * 4096).unwrap();
            }
            let (ok, refused) = std::thread::scope(|s| {
                let workers: Vec<_> = (0..16u64)
                    .map(|t| {
                        let path = &path;
                        s.spawn(move || {
                            let mut buf = AlignedBuf::new(4096);
                            let mut expect = vec![0u8; 4096];
                            let mut ok = 0u64;
                            let mut i = 0u64;
                            loop {
                                let b = (t + i) % 16;
                                i += 1;
                                match path.read_at(0, &mut buf, b * 4096) {
                                    Ok(n) => {
                                        assert_eq!(n, 4096);
                                        fill(&mut expect, 0, b, 0);
                                        assert!(buf[..] == expect[..], "{strategy}: bad data");
                                        ok += 1;
                                    }
                                    Err(e) => {
                                        assert!(e.to_string().contains("shut down"), "{e}");
                                        return (ok, 1u64);
                                    }
                                }
                            }
                        })
                    })
                    .collect();
                std::thread::sleep(Duration::from_millis(30));
                path.shutdown();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap())
                    .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
            });
            assert_eq!(refused, 16, "{strategy}: every thread sees the shutdown");
            assert!(ok > 0, "{strategy}: no I/O completed before the shutdown");
            if strategy.is_shared() {
                let c = path.counters();
                assert_eq!(
                    c.issued, c.reaped,
                    "{strategy}: an accepted I/O never completed"
                );
            }
            drop(path);
        }
    });
}

#[test]
fn errors_reach_their_owner_only() {
    within(30, || {
        for strategy in Strategy::ALL {
            let m = mem_target(4 * 4096);
            let path =
                IoPath::open(config(strategy, EngineKind::Mem, 4), vec![m.target.clone()]).unwrap();
            let mut buf = AlignedBuf::new(4096);
            assert!(path.read_at(0, &mut buf, 100 * 4096).is_err(), "{strategy}");
            assert_eq!(path.read_at(0, &mut buf, 4096).unwrap(), 4096, "{strategy}");
            assert!(
                path.read_at(3, &mut buf, 0).is_err(),
                "{strategy}: no such target"
            );
            path.sync(0).unwrap();
        }
    });
}

#[test]
fn shared_strategies_refuse_synchronous_engines_and_defer_taskrun() {
    let t = file_target(4096);
    let err = IoPath::open(
        config(Strategy::Coop, EngineKind::Psync, 4),
        vec![t.target.clone()],
    )
    .err()
    .expect("coop over psync must be refused");
    assert!(err.to_string().contains("--strategy=pread"), "{err}");
    let mut c = config(Strategy::Coop, EngineKind::IoUring, 4);
    c.engine_opts.defer_taskrun = hiops_hal::Feature::On;
    let err = IoPath::open(c, vec![t.target.clone()]).err().unwrap();
    assert!(err.to_string().contains("per-thread-ring"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random thread counts, I/O sizes, depths and strategies: every I/O
    /// returns its own bytes exactly once (a double completion trips the
    /// path's assertion; a lost one trips the watchdog).
    #[test]
    fn no_io_is_lost_or_completed_twice(
        strategy in prop::sample::select(Strategy::ALL.to_vec()),
        threads in 1u64..48,
        sectors in 1usize..32,
        depth in 1u32..40,
        on_file in any::<bool>(),
    ) {
        let bs = sectors * 512;
        let blocks = 3;
        let bytes = threads * blocks * bs as u64;
        let (t, engine) = if on_file {
            (file_target(bytes), EngineKind::IoUring)
        } else {
            (mem_target(bytes), EngineKind::Mem)
        };
        let cfg = config(strategy, engine, depth);
        let target = t.target.clone();
        let (ios, counters) = within(60, move || {
            let path = IoPath::open(cfg, vec![target]).unwrap();
            let s = exercise(&path, threads, blocks, bs, 2);
            let c = path.counters();
            drop(path);
            drop(t);
            (s.ios, c)
        });
        prop_assert_eq!(ios, threads * blocks * 2 * 2);
        if strategy.is_shared() {
            prop_assert_eq!(counters.issued - counters.resent, ios);
            prop_assert_eq!(counters.reaped - counters.resent, ios);
        }
    }
}

/// The key-value store's pattern: one thread writes large blocks and
/// fdatasyncs, while bursts of small reads from other threads come and go
/// (so the thread sleeping on the doorbell changes hands often, and at
/// times the writer is alone in the path).
#[test]
fn a_lone_writer_between_bursts_of_readers_is_never_stranded() {
    for strategy in [Strategy::Coop, Strategy::Hybrid, Strategy::Poll] {
        within(120, move || {
            let t = file_target(16 << 20);
            let path = IoPath::open(
                config(strategy, EngineKind::IoUring, 32),
                vec![t.target.clone()],
            )
            .unwrap();
            let done = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|s| {
                // A hang prints the queue's state to say where it stuck.
                s.spawn(|| {
                    for _ in 0..200 {
                        std::thread::sleep(Duration::from_millis(100));
                        if done.load(std::sync::atomic::Ordering::Relaxed) {
                            return;
                        }
                    }
                    eprintln!("{strategy} stuck: {:?}", path.debug_state());
                });
                for r in 0..8u64 {
                    let (path, done) = (&path, &done);
                    s.spawn(move || {
                        let mut buf = AlignedBuf::new(4096);
                        let mut x = r + 1;
                        while !done.load(std::sync::atomic::Ordering::Relaxed) {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                            for _ in 0..(x >> 60) {
                                let off = (x >> 20) % 4096 * 4096;
                                path.read_at(0, &mut buf, off).unwrap();
                            }
                            std::thread::sleep(Duration::from_micros((x >> 50) % 500));
                        }
                    });
                }
                let mut big = AlignedBuf::new(256 << 10);
                for i in 0..400u64 {
                    let len = 4096 * (1 + (i * 7919) % 64) as usize;
                    path.write_at(0, &big[..len], (i % 60) * (256 << 10))
                        .unwrap();
                    path.datasync(0).unwrap();
                    big[0] = i as u8;
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
        });
    }
}

/// A key-value store's compaction thread flushes while the ring's other
/// member (its flusher) reads now and then and sleeps off the ring: every
/// flush must end. (Its hang, once in hundreds of fig10 runs, was a flush
/// whose completion went to the other thread's task work while that thread
/// slept elsewhere; this pattern is the guard, and the fix that a thread
/// drains what it sent before it leaves the path, as timing rarely
/// reproduces it.)
#[test]
fn a_flush_of_a_thread_alone_on_a_shared_ring_ends() {
    within(120, || {
        let t = file_target(4 << 20);
        let path = IoPath::open(
            config(Strategy::Coop, EngineKind::IoUring, 8),
            vec![t.target.clone()],
        )
        .unwrap();
        let (tx, rx) = mpsc::channel::<()>();
        std::thread::scope(|s| {
            let path = &path;
            let idle = s.spawn(move || {
                // A read now and then, each followed by a sleep off the
                // ring: a flush this thread's call happened to submit is
                // completed in its task work, which leaves it asleep.
                let mut buf = AlignedBuf::new(4096);
                let mut x = 1u64;
                while rx.try_recv().is_err() {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    path.read_at(0, &mut buf, (x >> 40) % 1024 * 4096).unwrap();
                    std::thread::sleep(Duration::from_micros((x >> 50) % 300));
                }
            });
            let mut buf = AlignedBuf::new(4096);
            path.read_at(0, &mut buf, 0).unwrap();
            for i in 0..2000u64 {
                buf[0] = i as u8;
                path.write_at(0, &buf, (i % 1024) * 4096).unwrap();
                path.datasync(0).unwrap();
            }
            tx.send(()).unwrap();
            idle.join().unwrap();
        });
    });
}

/// An I/O error fails that I/O alone: every strategy returns it to its
/// caller and goes on serving the others (nothing panics, no lock poisoned).
#[test]
fn an_io_error_fails_only_its_io_on_every_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.dat");
    std::fs::write(&path, vec![3u8; 64 * 4096]).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap();
    for strategy in Strategy::ALL {
        let config = PathConfig {
            strategy,
            depth: 4,
            ..PathConfig::default()
        };
        let p = IoPath::open(config, vec![Target::from_file(&file)]).unwrap();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let p = &p;
                s.spawn(move || {
                    let mut buf = AlignedBuf::new(4096);
                    for i in 0..20u64 {
                        // A write to a file opened for reading: EBADF, on
                        // every file system (an unaligned O_DIRECT read is
                        // EINVAL on ext4 but done buffered on btrfs).
                        let bad = p.write_at(0, &buf, ((t * 20 + i) % 63) * 4096);
                        assert_eq!(
                            bad.unwrap_err().raw_os_error(),
                            Some(libc::EBADF),
                            "{strategy}"
                        );
                        let good = p.read_at(0, &mut buf, ((t * 20 + i) % 64) * 4096);
                        assert_eq!(good.unwrap(), 4096, "{strategy}");
                    }
                });
            }
        });
    }
}

/// A submission the kernel refuses (EAGAIN: the commands stay in the ring)
/// delays the I/Os it touches and loses none: every strategy sends them
/// again and goes on serving, for a lone thread (who has nobody else to
/// enter the path for it) and for several.
#[test]
fn a_refused_submission_is_sent_again_on_every_shared_strategy() {
    within(120, || {
        let cases = [
            (Strategy::Coop, CoopWait::Own),
            (Strategy::Coop, CoopWait::Doorbell),
            (Strategy::CompletionThread, CoopWait::Own),
            (Strategy::Poll, CoopWait::Own),
            (Strategy::Hybrid, CoopWait::Own),
        ];
        for (strategy, wait) in cases {
            for threads in [1u64, 4] {
                let t = file_target(threads * 16 * 4096);
                let mut cfg = config(strategy, EngineKind::IoUring, 4);
                cfg.coop_wait = wait;
                let refusals = hiops_hal::SubmitFaults::new();
                cfg.engine_opts.faults = Some(refusals.clone());
                let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
                refusals.refuse_next(6);
                // Named here too: a hang shows only as the timeout.
                eprintln!("{strategy} {wait:?} {threads} threads");
                let stats = exercise(&path, threads, 16, 4096, 2);
                let c = path.counters();
                let case = format!("{strategy} {wait:?} {threads} threads");
                assert_eq!(stats.ios, threads * 16 * 4, "{case}");
                assert_eq!(refusals.refusals_left(), 0, "{case}");
                assert!(c.ring_errors >= 1, "{case}: {c:?}");
                assert_eq!(c.reaped - c.resent, threads * 16 * 4, "{case}: {c:?}");
                if (strategy, wait, threads) == (Strategy::Coop, CoopWait::Own, 1) {
                    // Alone on its ring: the refusals hit the one-call way.
                    assert!(c.solo > 0, "{case}: {c:?}");
                }
            }
        }
    });
}

/// A submission that fails for good (EIO, not EAGAIN) fails the I/O it
/// touches; the thread's own ring serves its next I/Os with the right data
/// (before, the failed command kept the ring's one tag, and the thread's
/// next I/O panicked).
#[test]
fn a_failed_submission_fails_its_io_and_the_threads_ring_serves_on() {
    within(60, || {
        let dir = tempfile::tempdir().unwrap();
        let name = dir.path().join("f.dat");
        let data: Vec<u8> = (0..16 * 4096u32).map(|i| (i / 4096) as u8 + 1).collect();
        std::fs::write(&name, &data).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&name)
            .unwrap();
        let target = Target::from_file(&file);
        if let Some(why) = hiops_path::inline_reason(std::slice::from_ref(&target)) {
            eprintln!("skipped: the file completes inline ({why}): no ring");
            return;
        }
        for strategy in [Strategy::PerThreadRing, Strategy::Coop] {
            let failures = hiops_hal::SubmitFaults::new();
            let mut cfg = config(strategy, EngineKind::IoUring, 4);
            cfg.engine_opts.faults = Some(failures.clone());
            let p = IoPath::open(cfg, vec![target.clone()]).unwrap();
            let mut buf = AlignedBuf::new(4096);
            for block in 0..16u64 {
                failures.fail_next(1);
                let err = p.read_at(0, &mut buf, block * 4096).unwrap_err();
                assert_eq!(err.raw_os_error(), Some(libc::EIO), "{strategy}: {err}");
                assert_eq!(
                    failures.failures_left(),
                    0,
                    "{strategy}: the read reached the ring"
                );
                assert_eq!(p.read_at(0, &mut buf, block * 4096).unwrap(), 4096);
                assert!(
                    buf.iter().all(|&b| b == block as u8 + 1),
                    "{strategy} block {block}"
                );
            }
        }
    });
}

/// On a shared ring too, a submission that fails for good (EIO) fails the
/// I/Os it carried with that error, and only those: they are taken back out
/// of the ring, so no later submission sends them into buffers already
/// given back (before, they stayed staged and were sent again). Every other
/// read returns its own data, and the ring serves on.
#[test]
fn a_failed_submission_fails_its_ios_on_every_shared_strategy() {
    within(120, || {
        use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
        const BLOCKS: u32 = 16;
        let dir = tempfile::tempdir().unwrap();
        let name = dir.path().join("f.dat");
        let block_byte = |b: u32| (b % 251) as u8 + 1;
        let data: Vec<u8> = (0..4 * BLOCKS * 4096)
            .map(|i| block_byte(i / 4096))
            .collect();
        std::fs::write(&name, &data).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&name)
            .unwrap();
        let target = Target::from_file(&file);
        if let Some(why) = hiops_path::inline_reason(std::slice::from_ref(&target)) {
            return eprintln!("skipped: the file completes inline ({why}): no ring");
        }
        let cases = [
            (Strategy::Coop, CoopWait::Own),
            (Strategy::Coop, CoopWait::Doorbell),
            (Strategy::CompletionThread, CoopWait::Own),
            (Strategy::Poll, CoopWait::Own),
            (Strategy::Hybrid, CoopWait::Own),
        ];
        for (strategy, wait) in cases {
            for threads in [1u32, 4] {
                let case = format!("{strategy} {wait:?} {threads} threads");
                eprintln!("{case}"); // a hang shows only as the timeout
                let failures = hiops_hal::SubmitFaults::new();
                let mut cfg = config(strategy, EngineKind::IoUring, 4);
                cfg.coop_wait = wait;
                cfg.engine_opts.faults = Some(failures.clone());
                let path = IoPath::open(cfg, vec![target.clone()]).unwrap();
                failures.fail_next(3);
                let failed = AtomicU32::new(0);
                std::thread::scope(|s| {
                    for t in 0..threads {
                        let (path, failed) = (&path, &failed);
                        s.spawn(move || {
                            let mut buf = AlignedBuf::new(4096);
                            for b in
                                (t * BLOCKS..(t + 1) * BLOCKS).chain(t * BLOCKS..(t + 1) * BLOCKS)
                            {
                                buf.fill(0);
                                match path.read_at(0, &mut buf, b as u64 * 4096) {
                                    Ok(n) => {
                                        assert_eq!(n, 4096);
                                        assert!(
                                            buf.iter().all(|&x| x == block_byte(b)),
                                            "block {b}"
                                        );
                                    }
                                    Err(e) => {
                                        assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
                                        failed.fetch_add(1, SeqCst);
                                    }
                                }
                            }
                        });
                    }
                });
                let (failed, c) = (failed.load(SeqCst), path.counters());
                assert_eq!(
                    failures.failures_left(),
                    0,
                    "{case}: every injected failure reached"
                );
                // Each failed submission carried at least one read, and
                // one thread has one read at a time.
                if threads == 1 {
                    assert_eq!(failed, 3, "{case}");
                } else {
                    assert!((3..=3 * threads).contains(&failed), "{case}: {failed}");
                }
                let done = (2 * BLOCKS * threads - failed) as u64;
                assert_eq!(
                    (c.issued - c.resent, c.reaped - c.resent),
                    (done, done),
                    "{case}: {c:?}"
                );
                assert!(c.ring_errors >= 3, "{case}: {c:?}");
            }
        }
    });
}

/// A thread alone on its ring copies small I/O through the ring's
/// registered buffer (the kernel pins no page of the caller's) and hands
/// the kernel the caller's pages above `BOUNCE_MAX` (64 KiB), where the
/// copy would cost more; the data is right either way.
#[test]
fn a_threads_own_ring_copies_small_io_through_its_registered_buffer() {
    within(60, || {
        for (strategy, bs, bounced) in [
            (Strategy::Coop, 4096, true),
            (Strategy::PerThreadRing, 4096, true),
            (Strategy::Coop, 256 << 10, false),
        ] {
            let t = file_target(8 * bs as u64);
            let mut cfg = config(strategy, EngineKind::IoUring, 8);
            cfg.max_io = 256 << 10;
            let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
            if let Some(why) = hiops_path::inline_reason(std::slice::from_ref(&t.target)) {
                eprintln!("skipped: the file completes inline ({why}): no ring");
                return;
            }
            let s = exercise(&path, 1, 8, bs, 2);
            let c = path.counters();
            let expect = if bounced { s.ios } else { 0 };
            assert_eq!(c.bounced, expect, "{strategy:?} {bs}: {c:?}");
        }
    });
}

/// `read_lent` on a thread's own ring hands the reader the bytes in the
/// ring's registered buffer and leaves the caller's buffer as it was; on
/// pread, for an I/O above a thread's own ring's 64 KiB and on a shared
/// ring whose I/O may be that large (it lends no buffers) the read fills
/// the caller's buffer and the reader reads that. The bytes are right
/// either way; an I/O from inside the reader fails on a thread's own ring
/// (the reader holds its buffer), not panics, and is served elsewhere.
#[test]
fn read_lent_reads_in_place_on_a_threads_own_ring_and_in_the_callers_buffer_elsewhere() {
    within(60, || {
        const UNTOUCHED: u8 = 0xEE;
        // Through a registered buffer: a thread's own ring copies its 8
        // writes and 8 reads there.
        for (strategy, bs, in_place, inner_fails, registered) in [
            (Strategy::Coop, 4096, true, true, 16),
            (Strategy::PerThreadRing, 4096, true, true, 16),
            (Strategy::Coop, 256 << 10, false, false, 0),
            (Strategy::Pread, 4096, false, false, 0),
            (Strategy::CompletionThread, 4096, false, false, 0),
        ] {
            let t = file_target(8 * bs as u64);
            if let Some(why) = hiops_path::inline_reason(std::slice::from_ref(&t.target)) {
                eprintln!("skipped: the file completes inline ({why}): no ring");
                return;
            }
            let mut cfg = config(strategy, EngineKind::IoUring, 8);
            cfg.max_io = 256 << 10;
            let p = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
            let mut buf = AlignedBuf::new(bs);
            for block in 0..8u64 {
                fill(&mut buf, 0, block, 0);
                p.write_at(0, &buf, block * bs as u64).unwrap();
            }
            let mut want = AlignedBuf::new(bs);
            for block in 0..8u64 {
                fill(&mut want, 0, block, 0);
                buf.fill(UNTOUCHED);
                let got = p.read_lent(0, &mut buf, block * bs as u64, |data| data == &want[..]);
                assert!(got.unwrap(), "{strategy} {bs}: block {block}'s bytes");
                let untouched = buf.iter().all(|&b| b == UNTOUCHED);
                assert_eq!(untouched, in_place, "{strategy} {bs}: block {block}");
            }
            let c = p.counters();
            assert_eq!(c.bounced, registered, "{strategy} {bs}: {c:?}");
            let mut other = AlignedBuf::new(bs);
            let inner = p.read_lent(0, &mut buf, 0, |_| p.read_at(0, &mut other, 0));
            match (inner_fails, inner.unwrap()) {
                (true, Err(e)) => assert!(e.to_string().contains("read_lent"), "{e}"),
                (false, Ok(n)) => assert_eq!(n, bs, "{strategy} {bs}"),
                (_, r) => panic!("{strategy} {bs}: an I/O inside the reader gave {r:?}"),
            }
            assert_eq!(
                p.read_at(0, &mut buf, 0).unwrap(),
                bs,
                "{strategy}: serves on"
            );
        }
    });
}

/// coop-shared's readers read in place from buffers the shared ring lends
/// them (registered with the kernel), one per read: under 128 threads and
/// a ring of 16 tags (16 buffers to lend), each read hands its reader the
/// bytes of its own block, in place or, where no buffer was free near the
/// thread's place, in its own buffer; the path counts the first kind.
#[test]
fn read_lent_on_a_shared_ring_hands_each_reader_its_own_bytes() {
    within(120, || {
        let (threads, blocks, bs) = (128u64, 4u64, 4096usize);
        let t = file_target(threads * blocks * bs as u64);
        let mut cfg = config(Strategy::Coop, EngineKind::IoUring, 16);
        cfg.spin_ns = 0;
        let path = IoPath::open(cfg, vec![t.target.clone()]).unwrap();
        let d = path.description();
        if !d.contains("fixed buffers") {
            return eprintln!("skipped: the ring registered no buffers here ({d})");
        }
        let in_place: u64 = std::thread::scope(|s| {
            let path = &path;
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let (mut buf, mut want) = (AlignedBuf::new(bs), AlignedBuf::new(bs));
                        for b in 0..blocks {
                            fill(&mut buf, t, b, 0);
                            path.write_at(0, &buf, (t * blocks + b) * bs as u64)
                                .unwrap();
                        }
                        let mut lent = 0;
                        for round in 0..4 {
                            for b in 0..blocks {
                                fill(&mut want, t, b, 0);
                                let mine = buf.as_ptr() as usize;
                                let off = (t * blocks + b) * bs as u64;
                                let (right, here) = path
                                    .read_lent(0, &mut buf, off, |data| {
                                        (data == &want[..], data.as_ptr() as usize != mine)
                                    })
                                    .unwrap();
                                assert!(right, "thread {t} block {b} round {round}: other bytes");
                                lent += here as u64;
                            }
                        }
                        lent
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let c = path.counters();
        // The I/Os of a thread alone on the ring (before the others came)
        // went through its own ring's registered buffer, counted too.
        assert!(
            (in_place..=in_place + c.solo).contains(&c.bounced),
            "{in_place} read in place: {c:?}"
        );
        assert!(in_place > 0, "no read was lent a buffer: {c:?}");
    });
}

/// On a path over zram and a file, each thread reads and writes zram with
/// its own pread (io_uring would hand zram's I/O to a worker thread), and
/// the file through the strategy's rings; both read back what was written.
#[test]
fn a_target_that_completes_inline_beside_a_file_is_read_with_pread() {
    let zram = match RamDevice::zram("16M") {
        Ok(z) => z,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dev = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&zram.path)
        .unwrap();
    within(60, move || {
        for strategy in [
            Strategy::Coop,
            Strategy::PerThreadRing,
            Strategy::CompletionThread,
        ] {
            let file = file_target(8 * 8 * 4096);
            let targets = vec![Target::from_file(&dev), file.target.clone()];
            let path = IoPath::open(config(strategy, EngineKind::IoUring, 16), targets).unwrap();
            assert!(
                path.description()
                    .contains("1 of 2 targets complete inline"),
                "{strategy:?}: {}",
                path.description()
            );
            let on_zram = exercise_on(&path, 0, 8, 8, 4096, 2);
            exercise_on(&path, 1, 8, 8, 4096, 2);
            let c = path.counters();
            assert_eq!(c.inline, on_zram.ios, "{strategy:?}: zram's I/Os: {c:?}");
        }
    });
}
