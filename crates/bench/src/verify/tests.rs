use super::tracker::{BlockMap, Knows};
use super::verdict::verdict;
use super::*;
use crate::spec::{JobBuilder, VerifyMode};

const ALL: [VerifyMode; 15] = [
    VerifyMode::Meta,
    VerifyMode::Md5,
    VerifyMode::Crc64,
    VerifyMode::Crc32,
    VerifyMode::Crc32c,
    VerifyMode::Crc16,
    VerifyMode::Crc7,
    VerifyMode::Sha256,
    VerifyMode::Sha512,
    VerifyMode::Sha3_224,
    VerifyMode::Sha3_256,
    VerifyMode::Sha3_384,
    VerifyMode::Sha3_512,
    VerifyMode::Xxhash,
    VerifyMode::Sha1,
];

fn stamp_of(seq: u32) -> Stamp {
    Stamp {
        rand_seed: 0x1234_5678_9abc ^ seq as u64,
        numberio: seq as u16,
        seq,
    }
}

/// Flips a byte in each place a checksum covers (and, for meta, in the
/// header) and expects the check to fail.
fn flips_are_caught(stamper: &Stamper, bs: usize) {
    let mut buf = vec![0u8; bs];
    stamper.stamp(&mut buf, 8192, &stamp_of(5));
    let f = stamper.check(&buf, 8192, 0, 8192).unwrap();
    assert_eq!(f.hiops, Some((stamper.pass(), 5)), "{stamper:?}");
    assert_eq!(
        stamper.check(&buf, 4096, 0, 4096),
        Err(BadBlock::WrongOffset { found: 8192 })
    );
    let payload_checked = stamper.mode() != VerifyMode::Meta || stamper.pattern.is_some();
    let hs = hdr_size(stamper.mode());
    let mut places = vec![0usize, 3, 9, 17, 30, 37];
    if stamper.mode() == VerifyMode::Sha512 {
        // fio's sha512 keeps copies of some payload bytes only (here the
        // last 88 and bytes 88..128).
        places.extend([hs + 100, bs - 1]);
    } else if payload_checked {
        places.extend([hs, hs + 1000 % (bs - hs), bs - 1]);
    }
    if stamper.mode() != VerifyMode::Meta {
        places.push(HEADER_LEN);
    }
    for pos in places {
        let mut bad = buf.clone();
        bad[pos] ^= 0x10;
        assert!(
            stamper.check(&bad, 8192, 0, 8192).is_err(),
            "{stamper:?}: flip at {pos} not caught"
        );
    }
    assert!(matches!(
        stamper.check(&vec![0u8; bs], 0, 0, 0),
        Err(BadBlock::NoStamp { .. })
    ));
}

#[test]
fn every_algorithm_checks_its_stamp_and_catches_flipped_bytes() {
    for mode in ALL {
        flips_are_caught(&Stamper::new(mode, None, 4096).with_pass(7), 4096);
        let p = Pattern::new(b"\xde\xad".to_vec(), vec![]);
        flips_are_caught(&Stamper::new(mode, Some(p), 512), 512);
    }
    let p = Pattern::new(vec![0xab], vec![]);
    flips_are_caught(&Stamper::new(VerifyMode::Pattern, Some(p), 4096), 4096);
}

#[test]
fn chunks_carry_their_own_headers_and_the_pattern_runs_across_them() {
    // A 16 KiB write in 4 KiB chunks, pattern "abc" then %o.
    let p = Pattern::new(b"abc\0\0\0\0\0\0\0\0".to_vec(), vec![3]);
    let s = Stamper::new(VerifyMode::Crc32c, Some(p.clone()), 4096);
    let mut buf = vec![0u8; 16384];
    s.stamp(&mut buf, 1 << 20, &stamp_of(2));
    for k in 0..4 {
        let chunk = &buf[k * 4096..(k + 1) * 4096];
        let at = (1 << 20) + (k * 4096) as u64;
        assert!(s.check(chunk, at, k, 1 << 20).is_ok(), "chunk {k}");
    }
    // The pattern starts at the block's first byte: the write's offset
    // follows "abc" at 3, 14, 25, ... (4194 = 381 * 11 + 3, in chunk 1).
    assert_eq!(&buf[4194..4197], &(1u64 << 20).to_le_bytes()[..3]);
    // meta and pattern check the payload against the pattern itself.
    let m = Stamper::new(VerifyMode::Pattern, Some(p), 4096);
    m.stamp(&mut buf, 1 << 20, &stamp_of(3));
    assert!(m
        .check(&buf[8192..12288], (1 << 20) + 8192, 2, 1 << 20)
        .is_ok());
    // Read as if it were its own block, chunk 2 is off phase.
    assert!(matches!(
        m.check(&buf[8192..12288], (1 << 20) + 8192, 0, (1 << 20) + 8192),
        Err(BadBlock::Pattern { .. })
    ));
}

#[test]
fn without_a_pattern_the_payload_is_fios_fill_from_rand_seed() {
    let s = Stamper::new(VerifyMode::Md5, None, 4096);
    let mut buf = vec![0u8; 8192];
    s.stamp(&mut buf, 0, &stamp_of(9));
    let mut fill = vec![0u8; 8192];
    fiorand::fill_random(&mut fill, stamp_of(9).rand_seed);
    assert_eq!(&buf[56..4096], &fill[56..4096]);
    assert_eq!(&buf[4096 + 56..], &fill[4096 + 56..]);
    // The expected chunk of a corrupted read is what was written.
    let mut bad = buf[4096..].to_vec();
    bad[1000] ^= 1;
    assert_eq!(
        s.check(&bad, 4096, 1, 0),
        Err(BadBlock::Checksum { kind: "md5" })
    );
    assert_eq!(s.expected(&bad, 4096, 1, 0), &buf[4096..]);
}

#[test]
fn a_pattern_block_is_not_passed_without_the_pattern() {
    let p = Pattern::new(b"abc".to_vec(), vec![]);
    let mut buf = vec![0u8; 512];
    Stamper::new(VerifyMode::Pattern, Some(p), 512).stamp(&mut buf, 512, &stamp_of(1));
    let plain = Stamper::new(VerifyMode::Crc32c, None, 512);
    assert_eq!(
        plain.check(&buf, 512, 0, 512),
        Err(BadBlock::Algorithm { id: 17 })
    );
    // Blocks written with md5 are checked by a crc32c job (verify_only).
    Stamper::new(VerifyMode::Md5, None, 512).stamp(&mut buf, 512, &stamp_of(7));
    assert_eq!(plain.check(&buf, 512, 0, 512).unwrap().hiops, Some((0, 7)));
}

#[test]
fn report_keeps_the_lowest_bad_offset() {
    let mut r = VerifyReport::default();
    r.record_bad(8192, BadBlock::Checksum { kind: "crc32c" });
    r.record_bad(4096, BadBlock::HeaderCrc);
    let mut other = VerifyReport::default();
    other.record_bad(12288, BadBlock::HeaderCrc);
    r.merge(&other);
    assert_eq!(r.bad_blocks, 3);
    assert_eq!(r.first_bad.unwrap().0, 4096);
}

#[test]
fn intervals_follow_fios_rules() {
    let mut spec = JobBuilder::default_for("x".into());
    spec.workload.bs = crate::spec::BlockSizes::fixed(16384);
    assert_eq!(interval_of(&spec.clone().build().unwrap()), 16384);
    spec.verify.interval = Some(crate::Bytes::new(4096));
    assert_eq!(interval_of(&spec.clone().build().unwrap()), 4096);
    spec.verify.interval = Some(crate::Bytes::new(3000));
    assert_eq!(
        interval_of(&spec.clone().build().unwrap()),
        16384,
        "an interval that does not divide is dropped"
    );
    spec.verify.interval = None;
    spec.workload.bs = crate::spec::BlockSizes::equal(&[4096, 8192, 12288]);
    assert_eq!(interval_of(&spec.build().unwrap()), 4096);
}

const TBS: u32 = 4096;
const TBLOCKS: u64 = 64;

/// A thread's books after a write job of 64 blocks with trim_percentage=50
/// and trim_backlog=1: the books, the "disk" and the blocks trimmed.
fn trim_books(zero: bool) -> (VerifyState, Vec<u8>, Vec<u64>) {
    use crate::generator::Region;
    use hiops_hal::Op;
    let stamper = Stamper::new(VerifyMode::Crc32c, None, TBS as usize);
    let mut v = VerifyState::new(stamper, 0x89, 1, true);
    let region = Region {
        start: 0,
        len: TBLOCKS * TBS as u64,
    };
    v.maps = BlockMap::for_regions(&[region], TBS);
    v.knows = Knows::Run { check_seq: true };
    let t = crate::spec::VerifyTrim {
        percentage: crate::Percent::HALF,
        every: 1,
        batch: 0,
        zero,
    };
    v.trim = Some(trim::TrimBacklog::new(&t, 0x89, 1));
    let mut disk = vec![0u8; (TBLOCKS * TBS as u64) as usize];
    let mut trimmed = Vec::new();
    for b in 0..TBLOCKS {
        let off = b * TBS as u64;
        let s = v.claim(Op::Write, 0, off, TBS).unwrap();
        v.stamper.stamp(block_mut(&mut disk, off), off, &s);
        v.settle(Op::Write, 0, off, TBS, true, &[]);
        while let Some(io) = v.trim_next() {
            assert_eq!((io.op, io.len), (Op::Trim, TBS));
            v.claim(io.op, 0, io.offset, io.len).unwrap();
            block_mut(&mut disk, io.offset).fill(0);
            v.settle(io.op, 0, io.offset, io.len, true, &[]);
            trimmed.push(io.offset / TBS as u64);
        }
    }
    (v, disk, trimmed)
}

fn block_mut(disk: &mut [u8], off: u64) -> &mut [u8] {
    &mut disk[off as usize..off as usize + TBS as usize]
}

/// Reads back `blocks` (those still in the check) into a fresh report.
fn check_blocks(v: &mut VerifyState, disk: &[u8], blocks: &[u64]) -> VerifyReport {
    use hiops_hal::Op;
    v.report = VerifyReport::default();
    for &b in blocks {
        let off = b * TBS as u64;
        if v.maps[0].chunks[b as usize].seq == 0 {
            continue; // out of the check
        }
        v.claim(Op::Read, 0, off, TBS).unwrap();
        let blk = &disk[off as usize..(off + TBS as u64) as usize];
        v.settle(Op::Read, 0, off, TBS, true, blk);
    }
    v.report.clone()
}

/// trim_percentage in a thread's books: picked writes are trimmed between
/// the workload's I/Os; the check takes zeroes for a trimmed block, catches
/// a byte that is not zero there and a flipped byte in a block kept, and
/// with trim_verify_zero=0 leaves trimmed blocks out.
#[test]
fn trimmed_blocks_check_as_zeroes_and_flips_elsewhere_are_caught() {
    let all: Vec<u64> = (0..TBLOCKS).collect();
    let (mut v, mut disk, trimmed) = trim_books(true);
    let n = trimmed.len() as u64;
    assert!((20..=44).contains(&n), "{n} of {TBLOCKS} trimmed at 50%");
    let r = check_blocks(&mut v, &disk, &all);
    assert_eq!((r.blocks_checked, r.bad_blocks), (TBLOCKS, 0), "{r:?}");
    let t = trimmed[0];
    let k = (0..TBLOCKS).find(|b| !trimmed.contains(b)).unwrap();
    disk[(t * TBS as u64) as usize + 100] = 7; // a trimmed block not zero
    disk[(k * TBS as u64) as usize + 1000] ^= 0x20; // a flip in a block kept
    let r = check_blocks(&mut v, &disk, &all);
    assert_eq!(r.bad_blocks, 2, "{r:?}");
    let mut why = |b| check_blocks(&mut v, &disk, &[b]).first_bad.unwrap().1;
    let (wt, wk) = (why(t), why(k));
    assert!(wt.contains("byte 100 is not zero"), "{wt}");
    assert!(wk.contains("crc32c checksum mismatch"), "{wk}");

    // trim_verify_zero=0: trimmed blocks are out of the check.
    let (mut v, disk, trimmed) = trim_books(false);
    let r = check_blocks(&mut v, &disk, &all);
    assert_eq!(r.blocks_checked, TBLOCKS - trimmed.len() as u64);
    assert_eq!(r.bad_blocks, 0);
}

/// A read job's check (any_pass) passes a whole block of another pass, as
/// fio's read verify does; verify_only's (this pass) reports it stale; a
/// flipped payload byte fails both.
#[test]
fn a_read_jobs_check_passes_any_pass_but_not_a_bad_payload() {
    let writer = Stamper::new(VerifyMode::Crc32c, None, 4096).with_pass(7);
    let mut buf = vec![0u8; 4096];
    writer.stamp(&mut buf, 8192, &stamp_of(3));
    let read_job = Stamper::new(VerifyMode::Crc32c, None, 4096)
        .with_pass(8)
        .any_pass();
    let verify_only = Stamper::new(VerifyMode::Crc32c, None, 4096).with_pass(8);
    let judge =
        |s: &Stamper, b: &[u8]| verdict(s.check(b, 8192, 0, 8192), s.checked_pass(), None, None);
    assert_eq!(judge(&read_job, &buf), Ok(()));
    assert_eq!(
        judge(&verify_only, &buf),
        Err(BadBlock::StalePass {
            found: 7,
            expected: 8
        })
    );
    buf[2000] ^= 1;
    for s in [&read_job, &verify_only] {
        assert_eq!(judge(s, &buf), Err(BadBlock::Checksum { kind: "crc32c" }));
    }
}

#[test]
fn a_pattern_interval_starts_the_pattern_anew_with_each_pieces_offset() {
    // fio 3.40's verify_pattern_interval=512 with verify_pattern=%o: a
    // 4 KiB block at 1 MiB holds 1 MiB in its first 512 bytes, 1 MiB +
    // 512 in the next, and so on.
    let p = Pattern::new(vec![0; 8], vec![0]).every(Some(512));
    for mode in [VerifyMode::PatternNoHeader, VerifyMode::Pattern] {
        let s = Stamper::new(mode, Some(p.clone()), 4096);
        let mut buf = vec![0u8; 4096];
        s.stamp(&mut buf, 1 << 20, &stamp_of(1));
        let piece = |k: usize| ((1u64 << 20) + 512 * k as u64).to_le_bytes();
        assert_eq!(&buf[4088..], &piece(7), "{mode:?}: the last piece");
        assert_eq!(&buf[1024..1032], &piece(2), "{mode:?}");
        assert!(s.check(&buf, 1 << 20, 0, 1 << 20).is_ok(), "{mode:?}");
        // A piece holding its neighbour's offset is caught at the first
        // byte that differs (0x0600 against 0x0800: the second).
        let mut bad = buf.clone();
        bad[2048..2056].copy_from_slice(&piece(3));
        let found = s.check(&bad, 1 << 20, 0, 1 << 20);
        assert!(
            matches!(found, Err(BadBlock::Pattern { at: 2049 })),
            "{found:?}"
        );
    }
    // Without the interval the block's offset runs through it all.
    let whole = Stamper::new(
        VerifyMode::PatternNoHeader,
        Some(Pattern::new(vec![0; 8], vec![0])),
        4096,
    );
    let mut buf = vec![0u8; 4096];
    whole.stamp(&mut buf, 1 << 20, &stamp_of(1));
    assert_eq!(&buf[4088..], &(1u64 << 20).to_le_bytes());
}
