//! Every backend writes distinct blocks through a queue and reads them back.

use hiops_hal::backends::mem::MemDevice;
use hiops_hal::{Command, Completion, EngineKind, EngineOptions, HalError, Op, Queue, Target};
use std::os::unix::fs::OpenOptionsExt;

const BS: usize = 4096;
const BLOCKS: u64 = 64;

fn pattern(block: u64, i: usize) -> u8 {
    (block.wrapping_mul(131) as usize ^ i.wrapping_mul(7)) as u8
}

/// Runs `op` on every block with up to `depth` in flight; checks each
/// completion's result and, for reads, the data.
fn pass(queue: &mut Queue, op: Op, verify: bool) -> Result<(), HalError> {
    let mut next = 0u64;
    let mut done = 0u64;
    let mut out = [Completion::EMPTY; 64];
    let mut block_of_tag = vec![u64::MAX; queue.depth() as usize];
    while done < BLOCKS {
        while next < BLOCKS {
            let Some(tag) = queue.get_free_tag() else {
                break;
            };
            if op == Op::Write {
                let buf = queue.buffer_mut(tag);
                for (i, b) in buf[..BS].iter_mut().enumerate() {
                    *b = pattern(next, i);
                }
            }
            block_of_tag[tag as usize] = next;
            queue.bind(
                tag,
                Command {
                    op,
                    target: 0,
                    offset: next * BS as u64,
                    len: BS as u32,
                },
                next,
            )?;
            next += 1;
        }
        let n = queue.issue_and_reap(1, &mut out)?;
        for c in &out[..n] {
            // The queue hands back the command and the caller's value: the
            // caller keeps no copy of its own.
            assert_eq!(c.user, block_of_tag[c.tag as usize]);
            assert_eq!((c.cmd.op, c.cmd.offset), (op, c.user * BS as u64));
            assert!(c.issued_ns > 0);
            assert_eq!(
                c.result,
                BS as i64,
                "{op:?} of block {} failed: {:?}",
                block_of_tag[c.tag as usize],
                c.errno()
            );
            if verify {
                let block = block_of_tag[c.tag as usize];
                let buf = queue.buffer(c.tag);
                assert!(
                    (0..BS).all(|i| buf[i] == pattern(block, i)),
                    "block {block} read back wrong"
                );
            }
        }
        done += n as u64;
    }
    assert_eq!(queue.busy(), 0);
    Ok(())
}

fn round_trip(kind: EngineKind, opts: &EngineOptions, direct: bool, depth: u32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let mut oo = std::fs::OpenOptions::new();
    oo.read(true).write(true).create(true);
    if direct {
        oo.custom_flags(libc::O_DIRECT);
    }
    let file = oo.open(&path).unwrap();
    file.set_len(BLOCKS * BS as u64).unwrap();
    let targets = [Target::from_file(&file)];
    let mut queue = match Queue::open(kind, opts, &targets, depth, BS) {
        Ok(q) => q,
        Err(e) => panic!("{kind} failed to open: {e}"),
    };
    pass(&mut queue, Op::Write, false).unwrap();
    // Flushes go through the queue like any command and succeed; a ranged
    // one reaches the kernel, which refuses a flag it does not know.
    let written = (BLOCKS * BS as u64) as u32;
    let wait_write_wait = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // fio's mmap engine msyncs the map for every kind of flush.
    let refused_flag = match kind {
        EngineKind::Mmap => 0,
        _ => -(libc::EINVAL as i64),
    };
    for (op, len, want) in [
        (Op::Fsync, 0, 0),
        (Op::Fdatasync, 0, 0),
        (Op::SyncRange(wait_write_wait), written, 0),
        (Op::SyncRange(0x100), written, refused_flag),
    ] {
        let tag = queue.get_free_tag().unwrap();
        let cmd = Command {
            op,
            target: 0,
            offset: 0,
            len,
        };
        queue.bind(tag, cmd, 0).unwrap();
        let mut out = [Completion::EMPTY; 1];
        let n = queue.issue_and_reap(1, &mut out).unwrap();
        assert_eq!((n, out[0].result), (1, want), "{kind}: {op:?}");
    }
    // Read back through the same engine, and independently through std.
    pass(&mut queue, Op::Read, true).unwrap();
    drop(queue);
    let bytes = std::fs::read(&path).unwrap();
    for block in 0..BLOCKS {
        let b = &bytes[(block as usize * BS)..][..BS];
        assert!(
            (0..BS).all(|i| b[i] == pattern(block, i)),
            "{kind}: block {block} on disk is wrong"
        );
    }
}

#[test]
fn kernel_engines_round_trip_buffered_and_direct() {
    for kind in [
        EngineKind::Psync,
        EngineKind::Pvsync2,
        EngineKind::Libaio,
        EngineKind::IoUring,
        EngineKind::PosixAio,
        EngineKind::Mmap,
    ] {
        for direct in [false, true] {
            round_trip(kind, &EngineOptions::default(), direct, 8);
        }
    }
}

#[test]
fn io_uring_modes_round_trip() {
    let modes = [
        EngineOptions {
            fixedbufs: true,
            registerfiles: true,
            ..Default::default()
        },
        EngineOptions {
            defer_taskrun: hiops_hal::Feature::Off,
            coop_taskrun: hiops_hal::Feature::Off,
            ..Default::default()
        },
        EngineOptions {
            sqpoll: true,
            sqpoll_idle_ms: 10,
            ..Default::default()
        },
    ];
    for opts in &modes {
        round_trip(EngineKind::IoUring, opts, true, 16);
    }
}

/// A SINGLE_ISSUER ring is entered by its index in its thread's table of
/// registered rings: reads and writes go through it as through the
/// descriptor, a thread with its table full enters by the descriptor, and
/// a dropped ring gives its slot back.
#[test]
fn a_single_issuer_ring_is_entered_by_its_registered_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let file = (std::fs::OpenOptions::new().read(true).write(true))
        .create(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap();
    file.set_len(BLOCKS * BS as u64).unwrap();
    let targets = [Target::from_file(&file)];
    let opts = EngineOptions {
        defer_taskrun: hiops_hal::Feature::On,
        ..EngineOptions::default()
    };
    let registered = |q: &Queue| q.description().contains("registered ring");
    let open_many = || -> Option<Vec<Queue>> {
        (0..20)
            .map(|_| Queue::open(EngineKind::IoUring, &opts, &targets, 4, BS).ok())
            .collect()
    };
    let Some(mut rings) = open_many() else {
        eprintln!("skipped: this kernel refuses SINGLE_ISSUER + DEFER_TASKRUN");
        return;
    };
    let first = rings.iter().filter(|q| registered(q)).count();
    if first == 0 {
        eprintln!("skipped: this kernel has no registered ring descriptors (Linux 5.18)");
        return;
    }
    assert!(
        first < rings.len(),
        "a thread's table holds 16 rings, not 20"
    );
    // Each ring, by index or by descriptor, writes and reads its blocks.
    for q in rings.iter_mut() {
        pass(q, Op::Write, false).unwrap();
        pass(q, Op::Read, true).unwrap();
    }
    drop(rings);
    let again = open_many().unwrap();
    let second = again.iter().filter(|q| registered(q)).count();
    assert_eq!(second, first, "dropped rings left their slots taken");
}

#[test]
fn mem_device_round_trips_and_null_completes() {
    let dev = MemDevice::new(BLOCKS * BS as u64).unwrap();
    let targets = [Target::Mem(dev)];
    let mut q = Queue::open(EngineKind::Mem, &EngineOptions::default(), &targets, 4, BS).unwrap();
    pass(&mut q, Op::Write, false).unwrap();
    pass(&mut q, Op::Read, true).unwrap();

    let mut null =
        Queue::open(EngineKind::Null, &EngineOptions::default(), &targets, 4, BS).unwrap();
    pass(&mut null, Op::Write, false).unwrap();
}

#[test]
fn mem_device_refuses_out_of_range() {
    let dev = MemDevice::new(BS as u64).unwrap();
    let mut q = Queue::open(
        EngineKind::Mem,
        &EngineOptions::default(),
        &[Target::Mem(dev)],
        2,
        BS,
    )
    .unwrap();
    let tag = q.get_free_tag().unwrap();
    q.bind(
        tag,
        Command {
            op: Op::Read,
            target: 0,
            offset: BS as u64,
            len: BS as u32,
        },
        0,
    )
    .unwrap();
    let mut out = [Completion::EMPTY; 2];
    let n = q.issue_and_reap(1, &mut out).unwrap();
    assert_eq!(n, 1);
    assert_eq!(out[0].errno(), Some(libc::EINVAL));
}

#[test]
fn iopoll_without_poll_queues_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("f")).unwrap();
    let Some(dev) = hiops_hal::device::BlockDev::of_path(dir.path()) else {
        eprintln!("skipped: the temp dir has no block device behind it");
        return;
    };
    if dev.has_poll_queues() {
        eprintln!(
            "skipped: {} has poll queues, IOPOLL is legitimately available",
            dev.name
        );
        return;
    }
    let opts = EngineOptions {
        iopoll: true,
        ..Default::default()
    };
    let err = Queue::open(
        EngineKind::IoUring,
        &opts,
        &[Target::from_file(&file)],
        4,
        BS,
    )
    .err()
    .expect("IOPOLL must be refused");
    let msg = err.to_string();
    assert!(
        msg.contains("no poll queues") && msg.contains("drop --hipri"),
        "unclear refusal: {msg}"
    );
}

#[test]
fn kernel_engine_on_ram_device_is_refused() {
    let dev = MemDevice::new(BS as u64).unwrap();
    let err = Queue::open(
        EngineKind::IoUring,
        &EngineOptions::default(),
        &[Target::Mem(dev)],
        2,
        BS,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("--ioengine=mem"), "{err}");
}

/// POSIX AIO has no completion descriptor: a doorbell (shared queues,
/// tasks) is refused with what to use instead, never silently left out.
#[test]
fn posixaio_refuses_a_doorbell_and_says_what_to_use() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("f")).unwrap();
    let opts = EngineOptions {
        doorbell: true,
        ..EngineOptions::default()
    };
    let err = Queue::open(
        EngineKind::PosixAio,
        &opts,
        &[Target::from_file(&file)],
        4,
        BS,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("--ioengine=libaio"), "{err}");
}

/// A doorbell rings after a completion is ready and is readable from a thread
/// that does not own the queue; a caller's own buffer (bind_external) is
/// filled in place, also on a ring with registered buffers.
#[test]
fn doorbell_rings_on_completion_and_external_buffers_are_filled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let data: Vec<u8> = (0..BS * 4).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let targets = [Target::from_file(&file)];
    let uring_fixed = EngineOptions {
        doorbell: true,
        fixedbufs: true,
        defer_taskrun: hiops_hal::Feature::Off,
        ..EngineOptions::default()
    };
    let plain = EngineOptions {
        doorbell: true,
        ..EngineOptions::default()
    };
    for (kind, opts) in [
        (EngineKind::IoUring, &uring_fixed),
        (EngineKind::IoUring, &plain),
        (EngineKind::Libaio, &plain),
    ] {
        let mut q = Queue::open(kind, opts, &targets, 4, BS).unwrap();
        let bell = q.doorbell().expect("asked for a doorbell");
        let mut mine = vec![0u8; BS];
        let tag = q.get_free_tag().unwrap();
        let cmd = Command {
            op: Op::Read,
            target: 0,
            offset: 2 * BS as u64,
            len: BS as u32,
        };
        // SAFETY: `mine` outlives the command, which is reaped below.
        unsafe { q.bind_external(tag, cmd, mine.as_mut_ptr(), 0) }.unwrap();
        q.issue().unwrap();
        let rang = std::thread::scope(|s| s.spawn(|| bell.wait().unwrap()).join().unwrap());
        assert!(rang >= 1, "{kind}: doorbell count {rang}");
        let mut out = [Completion::EMPTY; 4];
        let n = q.reap(0, &mut out).unwrap();
        assert_eq!(n, 1, "{kind}: the rung completion is there to peek");
        assert_eq!(out[0].result, BS as i64);
        assert_eq!(&mine[..], &data[2 * BS..3 * BS], "{kind}");
    }
}

/// The queue's depth account: per command, the commands in flight once the
/// call that issued it returned (fio's IO depths), and the time integral of
/// the depth.
#[test]
fn depth_account_counts_each_issued_command_at_its_depth() {
    let mut q = Queue::open(
        EngineKind::Null,
        &EngineOptions::default(),
        &[Target::Mem(MemDevice::new(1 << 20).unwrap())],
        8,
        4096,
    )
    .unwrap();
    let before = q.depth_stats();
    for round in 0..3u64 {
        while let Some(tag) = q.get_free_tag() {
            let cmd = Command {
                op: Op::Read,
                target: 0,
                offset: 0,
                len: 4096,
            };
            q.bind(tag, cmd, round).unwrap();
        }
        assert_eq!(q.issue().unwrap(), 8);
        let mut out = [Completion::EMPTY; 8];
        assert_eq!(q.reap(8, &mut out).unwrap(), 8);
        assert!(out.iter().all(|c| c.user == round));
    }
    let w = q.depth_stats().since(&before);
    assert_eq!(w.issued, 24);
    // Each round issues 8 in one call: each counts at depth 8 (fio's way).
    assert_eq!(w.mean_at_issue, 8.0);
    assert_eq!(w.levels, [0, 0, 0, 24, 0, 0, 0]);
    assert!(w.mean_in_flight >= 0.0 && w.mean_in_flight <= 8.0);
}

/// The CQ counters: an interrupt-driven io_uring without DEFER_TASKRUN
/// exposes them, they move by one per completion posted, and reaping brings
/// the consumed count up to the posted one. A ring whose completions are
/// posted only inside the waiter's call (DEFER_TASKRUN) has none.
#[test]
fn posted_counter_counts_completions_and_reaps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    std::fs::write(&path, vec![7u8; BS * 8]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let targets = [Target::from_file(&file)];
    let deferred = EngineOptions {
        defer_taskrun: hiops_hal::Feature::On,
        ..EngineOptions::default()
    };
    let q = Queue::open(EngineKind::IoUring, &deferred, &targets, 4, BS).unwrap();
    assert!(
        q.posted_counter().is_none(),
        "DEFER_TASKRUN posts in the waiter"
    );
    let q = Queue::open(
        EngineKind::Libaio,
        &EngineOptions::default(),
        &targets,
        4,
        BS,
    )
    .unwrap();
    // libaio's ring has the same two counters, moved from the interrupt.
    let aio = q.posted_counter().expect("libaio's ring has counters");
    assert_eq!(aio.posted(), aio.consumed());
    let plain = EngineOptions {
        defer_taskrun: hiops_hal::Feature::Off,
        ..EngineOptions::default()
    };
    let mut q = Queue::open(EngineKind::IoUring, &plain, &targets, 4, BS).unwrap();
    let counter = q
        .posted_counter()
        .expect("an interrupt-driven ring has CQ counters");
    let before = counter.posted();
    assert_eq!(before, counter.consumed());
    for b in 0..3u64 {
        let tag = q.get_free_tag().unwrap();
        let cmd = Command {
            op: Op::Read,
            target: 0,
            offset: b * BS as u64,
            len: BS as u32,
        };
        q.bind(tag, cmd, 0).unwrap();
    }
    q.issue().unwrap();
    let mut out = [Completion::EMPTY; 4];
    let mut n = 0;
    while n < 3 {
        // Completions are posted when this thread enters the kernel (its
        // task work), so wait on the ring itself.
        let got = q.reap(1, &mut out[n..]).unwrap();
        n += got;
    }
    assert_eq!(
        counter.posted().wrapping_sub(before),
        3,
        "three completions posted"
    );
    assert_eq!(counter.consumed(), counter.posted(), "all three reaped");
    drop(q);
    // The counters' own mapping outlives the queue.
    assert_eq!(counter.consumed(), counter.posted());
}

/// Commands a failed io_uring_enter did not take are taken back out of the
/// ring and complete with the error, their tags free; the next issue sends
/// only what was staged after, so the withdrawn never reach the kernel.
#[test]
fn withdrawn_commands_fail_and_are_never_sent() {
    within_60_s(withdraw_and_reissue);
}

/// Runs `body` on a thread of its own and fails if it has not answered in
/// 60 s: a command booked wrongly after a failed submission can leave a
/// reap (or the queue's drop, which drains what it thinks is in flight)
/// waiting for a completion that never comes.
fn within_60_s(body: fn()) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(()) => {}
        // The body panicked (its message is above).
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("the body panicked"),
        Err(e) => panic!("no answer within 60 s ({e})"),
    }
}

fn withdraw_and_reissue() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let data: Vec<u8> = (0..BS * 8).map(|i| (i / BS) as u8 + 1).collect();
    std::fs::write(&path, &data).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let targets = [Target::from_file(&file)];
    for defer in [hiops_hal::Feature::Off, hiops_hal::Feature::On] {
        let failures = hiops_hal::SubmitFaults::new();
        failures.fail_next(1);
        let opts = EngineOptions {
            defer_taskrun: defer,
            faults: Some(failures.clone()),
            ..EngineOptions::default()
        };
        let mut q = Queue::open(EngineKind::IoUring, &opts, &targets, 8, BS).unwrap();
        let read = |block: u64| Command {
            op: Op::Read,
            target: 0,
            offset: block * BS as u64,
            len: BS as u32,
        };
        for b in 0..3u64 {
            let tag = q.get_free_tag().unwrap();
            q.bind(tag, read(b), 100 + b).unwrap();
        }
        let e = q.issue().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
        let mut out = [Completion::EMPTY; 8];
        assert_eq!(q.withdraw_staged(libc::EIO, &mut out), 3, "{defer:?}");
        for (b, c) in out[..3].iter().enumerate() {
            assert_eq!((c.user, c.result), (100 + b as u64, -(libc::EIO as i64)));
        }
        assert_eq!(
            (q.staged(), q.in_flight(), q.busy()),
            (0, 0, 0),
            "{defer:?}"
        );
        // Two new reads into the freed tags: only they complete.
        for b in 5..7u64 {
            let tag = q.get_free_tag().unwrap();
            q.bind(tag, read(b), b).unwrap();
        }
        assert_eq!(q.issue().unwrap(), 2);
        let mut n = 0;
        while n < 2 {
            n += q.reap(1, &mut out[n..]).unwrap();
        }
        for c in &out[..2] {
            assert_eq!(c.result, BS as i64);
            assert!(q.buffer(c.tag).iter().all(|&x| x == c.user as u8 + 1));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(
            q.reap(0, &mut out).unwrap(),
            0,
            "{defer:?}: a withdrawn read was sent"
        );
        assert_eq!(failures.failures_left(), 0);
    }
}

/// A trim staged beside a read on a ring whose submission fails is not
/// done: both are taken back and fail, and the trimmed range keeps its
/// data (a trim run before the failed submission destroyed it, and its
/// completion then came for a tag that had been given back).
#[test]
fn a_failed_submission_does_no_trim_of_its_batch() {
    within_60_s(fail_a_read_and_a_trim);
}

fn fail_a_read_and_a_trim() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    std::fs::write(&path, vec![9u8; BS * 4]).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let targets = [Target::from_file(&file)];
    let failures = hiops_hal::SubmitFaults::new();
    failures.fail_next(1);
    let opts = EngineOptions {
        faults: Some(failures.clone()),
        ..EngineOptions::default()
    };
    let mut q = Queue::open(EngineKind::IoUring, &opts, &targets, 4, BS).unwrap();
    let cmd = |op, block: u64| Command {
        op,
        target: 0,
        offset: block * BS as u64,
        len: BS as u32,
    };
    for (op, block) in [(Op::Read, 0), (Op::Trim, 2)] {
        let tag = q.get_free_tag().unwrap();
        q.bind(tag, cmd(op, block), block).unwrap();
    }
    let mut out = [Completion::EMPTY; 4];
    let e = q.issue_and_reap(1, &mut out).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
    assert_eq!(q.withdraw_staged(libc::EIO, &mut out), 2);
    assert_eq!((q.staged(), q.in_flight(), q.busy()), (0, 0, 0));
    let on_disk = std::fs::read(&path).unwrap();
    assert!(
        on_disk[2 * BS..3 * BS].iter().all(|&b| b == 9),
        "the trim ran"
    );
    // Nothing of the failed batch comes back later.
    assert_eq!(q.reap(0, &mut out).unwrap(), 0);
    let tag = q.get_free_tag().unwrap();
    q.bind(tag, cmd(Op::Read, 1), 1).unwrap();
    assert_eq!(q.issue_and_reap(1, &mut out).unwrap(), 1);
    assert_eq!((out[0].user, out[0].result), (1, BS as i64));
}

#[test]
fn a_reap_batch_shares_one_completion_time_after_its_issue() {
    let dev = MemDevice::new(BLOCKS * BS as u64).unwrap();
    let targets = [Target::Mem(dev)];
    let mut q = Queue::open(EngineKind::Null, &EngineOptions::default(), &targets, 4, BS).unwrap();
    assert_eq!(q.reaped_ns(), 0, "nothing reaped yet");
    for i in 0..4u64 {
        let tag = q.get_free_tag().unwrap();
        let cmd = Command {
            op: Op::Read,
            target: 0,
            offset: i * BS as u64,
            len: BS as u32,
        };
        q.bind(tag, cmd, i).unwrap();
    }
    q.issue().unwrap();
    let mut out = [Completion::EMPTY; 4];
    let n = q.reap(4, &mut out).unwrap();
    assert_eq!(n, 4);
    let reaped = q.reaped_ns();
    assert!(reaped <= hiops_hal::now_ns());
    for c in &out[..n] {
        assert!(
            c.issued_ns <= reaped,
            "issued at {} after the batch's reap at {reaped}",
            c.issued_ns
        );
    }
    // A reap that finds nothing leaves the last batch's time.
    assert_eq!(q.reap(0, &mut out).unwrap(), 0);
    assert_eq!(q.reaped_ns(), reaped);
}

#[test]
fn an_untimed_queue_stamps_nothing_and_keeps_its_counts() {
    let dev = MemDevice::new(BLOCKS * BS as u64).unwrap();
    let targets = [Target::Mem(dev)];
    let q = Queue::open(EngineKind::Null, &EngineOptions::default(), &targets, 4, BS).unwrap();
    let mut q = q.untimed();
    let before = q.depth_stats();
    let mut out = [Completion::EMPTY; 4];
    let mut stamps = Vec::new();
    for round in 0..3u64 {
        for i in 0..4u64 {
            let tag = q.get_free_tag().unwrap();
            let cmd = Command {
                op: Op::Read,
                target: 0,
                offset: i * BS as u64,
                len: BS as u32,
            };
            q.bind(tag, cmd, round * 4 + i).unwrap();
        }
        q.issue().unwrap();
        assert_eq!(q.reap(4, &mut out).unwrap(), 4);
        // Every stamp, of every batch, is one constant: no clock was read.
        stamps.extend(out.iter().map(|c| c.issued_ns));
        stamps.push(q.reaped_ns());
        assert!(stamps.iter().all(|&s| s == stamps[0]), "{stamps:?}");
        assert_eq!(out[3].user, round * 4 + 3);
    }
    let w = q.depth_stats().since(&before);
    assert_eq!(w.issued, 12);
    assert_eq!(
        w.mean_at_issue, 4.0,
        "each batch of 4 brought the queue to 4"
    );
    assert!(w.mean_in_flight.is_nan(), "not measured");
}

/// Commands taken out of a libaio queue count as in flight at once; sent
/// by their taker, they complete as any other; refused by the kernel (a
/// read of a descriptor open for writing only), they come back through
/// `fail_detached` with its error and their tags free, and the queue holds
/// nothing in flight.
#[test]
fn detached_libaio_commands_complete_or_fail_back_to_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    std::fs::write(&path, vec![9u8; BS * 4]).unwrap();
    let readable = std::fs::File::open(&path).unwrap();
    let write_only = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let targets = [Target::from_file(&readable), Target::from_file(&write_only)];
    let opts = EngineOptions {
        aio_userspace_reap: true,
        ..EngineOptions::default()
    };
    let mut q = Queue::open(EngineKind::Libaio, &opts, &targets, 4, BS).unwrap();
    let mut batch = hiops_hal::DetachedBatch::default();
    let bind_two = |q: &mut Queue, target: u32| {
        for b in 0..2u64 {
            let tag = q.get_free_tag().unwrap();
            let cmd = Command {
                op: Op::Read,
                target,
                offset: b * BS as u64,
                len: BS as u32,
            };
            q.bind(tag, cmd, b).unwrap();
        }
    };
    bind_two(&mut q, 0);
    assert_eq!(q.detach_staged(&mut batch), 2);
    assert_eq!((q.staged(), q.in_flight()), (0, 2));
    assert_eq!(q.issue().unwrap(), 0, "nothing left for issue to send");
    // SAFETY: the queue lives on; nothing was failed back.
    unsafe { batch.send() }.unwrap();
    let mut out = [Completion::EMPTY; 4];
    let mut got = 0;
    while got < 2 {
        got += q.reap(1, &mut out[got..]).unwrap();
    }
    assert!(out[..2].iter().all(|c| c.result == BS as i64), "{out:?}");
    assert!(q.buffer(out[0].tag).iter().all(|&b| b == 9));
    batch.clear();
    bind_two(&mut q, 1);
    assert_eq!(q.detach_staged(&mut batch), 2);
    // SAFETY: as above.
    let e = unsafe { batch.send() }.unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EBADF), "{e}");
    let n = q.fail_detached(batch.unsent(), libc::EBADF, &mut out);
    assert_eq!(n, 2);
    assert!(out[..2].iter().all(|c| c.result == -libc::EBADF as i64));
    assert_eq!(q.in_flight(), 0);
    assert!((0..4).all(|_| q.get_free_tag().is_some()), "every tag free");
}
