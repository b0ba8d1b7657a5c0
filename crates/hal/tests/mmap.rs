//! The mmap engine: writes through the mapping land in the file as read(2)
//! sees it, reads through it see what write(2) put there, also when the
//! file is larger than one mapping window and the engine remaps.

use hiops_hal::backends::mmap::{Advice, MmapOptions};
use hiops_hal::{Command, Completion, EngineKind, EngineOptions, Op, Queue, Target};
use std::fs::{File, OpenOptions};

const BS: usize = 4096;

fn opts(mmap: MmapOptions) -> EngineOptions {
    EngineOptions {
        mmap,
        ..Default::default()
    }
}

/// Runs one command to completion; returns its result.
fn one(q: &mut Queue, op: Op, offset: u64, len: u32, fill: Option<u8>) -> (i64, Vec<u8>) {
    let tag = q.get_free_tag().expect("depth-1 queue has its tag back");
    if let Some(v) = fill {
        q.buffer_mut(tag)[..len as usize].fill(v);
    }
    let cmd = Command {
        op,
        target: 0,
        offset,
        len,
    };
    q.bind(tag, cmd, 0).unwrap();
    let mut out = [Completion::EMPTY; 1];
    let n = q.issue_and_reap(1, &mut out).unwrap();
    assert_eq!(n, 1);
    let data = q.buffer(out[0].tag)[..len as usize].to_vec();
    (out[0].result, data)
}

fn file_of(len: u64, dir: &tempfile::TempDir) -> (File, std::path::PathBuf) {
    let path = dir.path().join("m.dat");
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.set_len(len).unwrap();
    (f, path)
}

#[test]
fn writes_across_windows_land_in_the_file_and_reads_see_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let len = 1 << 20;
    let (f, path) = file_of(len, &dir);
    let window = MmapOptions {
        window: Some(64 << 10),
        advice: Some(Advice::Random),
        ..Default::default()
    };
    let mut q = Queue::open(
        EngineKind::Mmap,
        &opts(window),
        &[Target::from_file(&f)],
        1,
        BS,
    )
    .unwrap();
    assert!(q.description().contains("64 KiB") && q.description().contains("MADV_RANDOM"));
    // Every fourth block, backwards, so each window is mapped more than once.
    for block in (0..len / BS as u64).rev().step_by(4) {
        let (r, _) = one(
            &mut q,
            Op::Write,
            block * BS as u64,
            BS as u32,
            Some(block as u8 ^ 0x5a),
        );
        assert_eq!(r, BS as i64, "write of block {block}");
    }
    assert_eq!(one(&mut q, Op::Fsync, 0, 0, None).0, 0);
    let on_disk = std::fs::read(&path).unwrap();
    for block in 0..len / BS as u64 {
        let want = if (len / BS as u64 - 1 - block).is_multiple_of(4) {
            block as u8 ^ 0x5a
        } else {
            0
        };
        let got = &on_disk[(block as usize) * BS..][..BS];
        assert!(got.iter().all(|&b| b == want), "block {block} on disk");
    }
    // And the other way: bytes written with write(2) read through the mapping.
    std::fs::write(&path, vec![0xc3u8; len as usize]).unwrap();
    for block in [0u64, 17, 100, 255] {
        let (r, data) = one(&mut q, Op::Read, block * BS as u64, BS as u32, None);
        assert_eq!(r, BS as i64);
        assert!(
            data.iter().all(|&b| b == 0xc3),
            "block {block} read through the mapping"
        );
    }
}

#[test]
fn sync_writes_and_drop_pages_still_move_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let (f, path) = file_of(256 << 10, &dir);
    let mmap = MmapOptions {
        sync_writes: true,
        drop_pages: true,
        advice: Some(Advice::Sequential),
        window: None,
    };
    let mut q = Queue::open(
        EngineKind::Mmap,
        &opts(mmap),
        &[Target::from_file(&f)],
        1,
        BS,
    )
    .unwrap();
    let d = q.description();
    assert!(
        d.contains("msync per write")
            && d.contains("MADV_DONTNEED")
            && d.contains("MADV_SEQUENTIAL"),
        "{d}"
    );
    assert_eq!(one(&mut q, Op::Write, 8192, 2048, Some(9)).0, 2048);
    assert_eq!(one(&mut q, Op::Fdatasync, 0, 0, None).0, 0);
    let on_disk = std::fs::read(&path).unwrap();
    assert!(on_disk[8192..10240].iter().all(|&b| b == 9));
    assert!(on_disk[10240..12288].iter().all(|&b| b == 0));
    let (r, data) = one(&mut q, Op::Read, 8192, 2048, Some(0));
    assert_eq!(r, 2048);
    assert!(data.iter().all(|&b| b == 9));
}

#[test]
fn out_of_range_and_too_large_commands_fail_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (f, _) = file_of(1 << 20, &dir);
    let small = MmapOptions {
        window: Some(16 << 10),
        ..Default::default()
    };
    let mut q = Queue::open(
        EngineKind::Mmap,
        &opts(small),
        &[Target::from_file(&f)],
        1,
        64 << 10,
    )
    .unwrap();
    // Past the end of the file: no mapping is made there (it would SIGBUS).
    assert_eq!(
        one(&mut q, Op::Read, 1 << 20, BS as u32, None).0,
        -(libc::EINVAL as i64)
    );
    // Larger than one window (fio: "bs too big for mmap engine").
    assert_eq!(
        one(&mut q, Op::Read, 0, 32 << 10, None).0,
        -(libc::EINVAL as i64)
    );
    // The queue goes on.
    assert_eq!(one(&mut q, Op::Read, 0, 16 << 10, None).0, 16 << 10);
}

#[test]
fn a_read_only_descriptor_is_mapped_for_reads_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = file_of(64 << 10, &dir);
    let ro = File::open(&path).unwrap();
    let mut q = Queue::open(
        EngineKind::Mmap,
        &EngineOptions::default(),
        &[Target::from_file(&ro)],
        1,
        BS,
    )
    .unwrap();
    assert_eq!(one(&mut q, Op::Read, 0, BS as u32, None).0, BS as i64);
    assert_eq!(
        one(&mut q, Op::Write, 0, BS as u32, Some(1)).0,
        -(libc::EBADF as i64)
    );
}
