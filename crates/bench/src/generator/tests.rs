use super::*;

fn gen(rw: RwMode, dist: Distribution, len: u64) -> IoGen {
    IoGen::new(
        7,
        rw,
        70,
        [&[(4096, 100)], &[(4096, 100)], &[(4096, 100)]],
        4096,
        vec![Region { start: 0, len }],
        &dist,
    )
}

#[test]
fn mixed_sizes_under_the_random_map_cover_each_block_once_per_pass() {
    let split: &[(u32, u32)] = &[(512, 10), (4096, 60), (65536, 30)];
    let len = 4 << 20;
    let mut g = IoGen::new(
        7,
        RwMode::RandRead,
        100,
        [split, split, split],
        512,
        vec![Region { start: 0, len }],
        &Distribution::Uniform,
    )
    .with_fio_options(0, 100, true);
    for _pass in 0..2 {
        let mut covered = vec![0u8; (len / 512) as usize];
        let (mut bytes, mut ios) = (0, 0);
        while bytes < len {
            let io = g.next_io();
            assert!(io.len > 0 && io.len.is_multiple_of(512) && io.offset + io.len as u64 <= len);
            for b in io.offset / 512..(io.offset + io.len as u64) / 512 {
                covered[b as usize] += 1;
            }
            (bytes, ios) = (bytes + io.len as u64, ios + 1);
        }
        assert_eq!(bytes, len, "the pass ends on the region's end");
        assert!(covered.iter().all(|&c| c == 1), "each block once");
        // Cut to the gaps: well under the split's own mean of 22 KiB.
        assert!(bytes / ios < 12 << 10, "mean block {}", bytes / ios);
    }
}

#[test]
fn sequential_reads_walk_the_region_and_wrap() {
    let mut g = gen(RwMode::Read, Distribution::Uniform, 3 * 4096);
    let offs: Vec<u64> = (0..4).map(|_| g.next_io().offset).collect();
    assert_eq!(offs, vec![0, 4096, 8192, 0]);
}

#[test]
fn a_negative_gap_walks_backwards_and_wraps_to_the_end_as_fio() {
    // fio 3.33, rw=read:-8k bs=4k size=64k: 0, 56k, 52k, ..., 4k, 0, 56k.
    let mut g =
        gen(RwMode::Read, Distribution::Uniform, 64 << 10).with_fio_options(-8192, 100, false);
    let offs: Vec<u64> = (0..17).map(|_| g.next_io().offset >> 10).collect();
    let mut want = vec![0];
    want.extend((1..=14).rev().map(|k| k * 4));
    want.extend([0, 56]);
    assert_eq!(offs, want);
}

#[test]
fn random_offsets_are_aligned_in_range_and_cover_it() {
    let mut g = gen(RwMode::RandRead, Distribution::Uniform, 64 * 4096);
    let mut seen = [false; 64];
    for _ in 0..5000 {
        let io = g.next_io();
        assert_eq!(io.offset % 4096, 0);
        assert!(io.offset + 4096 <= 64 * 4096);
        seen[(io.offset / 4096) as usize] = true;
    }
    assert!(
        seen.iter().all(|&s| s),
        "uniform offsets left blocks untouched"
    );
}

#[test]
fn mix_follows_rwmixread() {
    let mut g = gen(RwMode::RandRw, Distribution::Uniform, 1 << 20);
    let reads = (0..20_000).filter(|_| g.next_io().op == Op::Read).count();
    assert!(
        (13_400..14_600).contains(&reads),
        "70% reads expected, got {reads} of 20000"
    );
}

#[test]
fn same_seed_same_stream() {
    let a: Vec<NextIo> = {
        let mut g = gen(RwMode::RandRw, Distribution::Zipf(1.1), 1 << 24);
        (0..100).map(|_| g.next_io()).collect()
    };
    let mut g = gen(RwMode::RandRw, Distribution::Zipf(1.1), 1 << 24);
    assert!(a.iter().all(|io| *io == g.next_io()));
}

#[test]
fn zoned_puts_the_access_share_in_the_zone() {
    let mut g = gen(
        RwMode::RandRead,
        Distribution::Zoned(vec![(80.0, 10.0), (20.0, 90.0)]),
        1000 * 4096,
    );
    let hot = (0..20_000)
        .filter(|_| g.next_io().offset < 100 * 4096)
        .count();
    assert!(
        (15_400..16_600).contains(&hot),
        "80% of accesses in the first 10% expected, got {hot}"
    );
}

#[test]
fn skewed_distributions_concentrate_accesses() {
    for dist in [Distribution::Zipf(1.2), Distribution::Pareto(0.2)] {
        let mut g = gen(RwMode::RandRead, dist.clone(), 10_000 * 4096);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..50_000 {
            *counts.entry(g.next_io().offset).or_insert(0u32) += 1;
        }
        let mut c: Vec<u32> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = c.iter().take(100).sum();
        assert!(
            top > 20_000,
            "{dist:?}: top 1% of blocks got only {top} of 50000"
        );
    }
}

#[test]
fn scatter_is_a_permutation() {
    for n in [1u64, 2, 7, 100, 1000, 65536] {
        let s = Scatter::new(n);
        let mut seen: Vec<u64> = (0..n).map(|x| s.apply(x)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
    }
}

/// Two threads of a job (seeds one apart) walking a random map do not
/// read the same blocks in the same order: before, the second walked the
/// first's permutation one step behind.
#[test]
fn clones_walk_random_maps_of_their_own() {
    let n = 65536u64;
    let (a, b) = (Shuffle::new(n, 100), Shuffle::new(n, 101));
    let first: std::collections::HashSet<u64> =
        (100..100 + n / 4).map(|i| a.apply(i % n)).collect();
    let shared = (101..101 + n / 4)
        .filter(|i| first.contains(&b.apply(i % n)))
        .count() as f64;
    // Independent quarters of the blocks share about a quarter.
    let share = shared / (n / 4) as f64;
    assert!((0.15..0.35).contains(&share), "{share}");
}

#[test]
fn raid0_spreads_chunks_round_robin_and_never_crosses_one() {
    let members = vec![
        Region {
            start: 0,
            len: 1 << 20,
        },
        Region {
            start: 4096,
            len: (1 << 20) + 8192,
        },
        Region {
            start: 0,
            len: 3 << 20,
        },
    ];
    let st = Stripe {
        chunk: 64 << 10,
        members: members.clone(),
    };
    assert_eq!(
        st.volume_len(),
        3 << 20,
        "whole chunks of the smallest member, times 3"
    );
    assert_eq!(st.map(0), (0, 0));
    assert_eq!(st.map(64 << 10), (1, 4096));
    assert_eq!(st.map((128 << 10) + 5), (2, 5));
    assert_eq!(st.map(192 << 10), (0, 64 << 10));
    for (rw, name) in [(RwMode::RandRead, "random"), (RwMode::Read, "sequential")] {
        let mut g = IoGen::striped(
            7,
            rw,
            100,
            [&[(16384, 100)], &[(16384, 100)], &[(16384, 100)]],
            16384,
            st.clone(),
            &Distribution::Uniform,
        );
        let mut per = [0u32; 3];
        for _ in 0..30_000 {
            let io = g.next_io();
            let m = &members[io.target as usize];
            assert!(
                io.offset >= m.start && io.offset + io.len as u64 <= m.start + m.len,
                "{name}: {io:?}"
            );
            assert!(
                (io.offset - m.start) % (64 << 10) + io.len as u64 <= 64 << 10,
                "{name}: crosses a chunk: {io:?}"
            );
            per[io.target as usize] += 1;
        }
        for n in per {
            assert!(
                (9_000..11_000).contains(&n),
                "{name}: members share I/O evenly: {per:?}"
            );
        }
    }
}

#[test]
fn reads_and_writes_take_their_own_block_sizes() {
    let mut g = IoGen::new(
        3,
        RwMode::RandRw,
        50,
        [&[(4096, 100)], &[(65536, 100)], &[(65536, 100)]],
        4096,
        vec![Region {
            start: 0,
            len: 1 << 20,
        }],
        &Distribution::Uniform,
    );
    let (mut reads, mut writes) = (0, 0);
    for _ in 0..1000 {
        let io = g.next_io();
        match io.op {
            Op::Read => (reads += 1, assert_eq!(io.len, 4096)).1,
            _ => (writes += 1, assert_eq!(io.len, 65536)).1,
        }
        assert!(io.offset + io.len as u64 <= 1 << 20);
    }
    assert!(
        reads > 400 && writes > 400,
        "{reads} reads, {writes} writes"
    );
}

#[test]
fn trim_modes_trim_where_writes_would_go() {
    let mut g = gen(RwMode::Trim, Distribution::Uniform, 64 * 4096);
    let offsets: Vec<u64> = (0..64)
        .map(|_| g.next_io())
        .inspect(|io| assert_eq!((io.op, io.len), (Op::Trim, 4096)))
        .map(|io| io.offset)
        .collect();
    assert_eq!(offsets, (0..64).map(|i| i * 4096).collect::<Vec<_>>());
    let mut g = gen(RwMode::RandTrim, Distribution::Uniform, 64 * 4096);
    assert!((0..64).all(|_| g.next_io().op == Op::Trim));
}

#[test]
fn trimwrite_writes_each_block_it_trimmed_next() {
    for rw in [RwMode::TrimWrite, RwMode::RandTrimWrite] {
        let mut g = gen(rw, Distribution::Uniform, 64 * 4096);
        let mut trimmed = Vec::new();
        for _ in 0..64 {
            let (trim, write) = (g.next_io(), g.next_io());
            assert_eq!(trim.op, Op::Trim, "{rw:?}");
            assert_eq!(
                write,
                NextIo {
                    op: Op::Write,
                    ..trim
                },
                "{rw:?}"
            );
            trimmed.push(trim.offset);
        }
        trimmed.sort();
        trimmed.dedup();
        if rw == RwMode::TrimWrite {
            assert_eq!(trimmed.len(), 64, "sequential: every block once");
        }
    }
}

#[test]
fn trims_take_their_own_size_and_trimwrite_writes_it() {
    // fio's bs=4k,4k,8k: trims of 8k, and each write after one as large.
    let sizes: [&[(u32, u32)]; 3] = [&[(4096, 100)], &[(4096, 100)], &[(8192, 100)]];
    for rw in [RwMode::RandTrimWrite, RwMode::TrimWrite, RwMode::RandTrim] {
        let region = vec![Region {
            start: 0,
            len: 1 << 20,
        }];
        let mut g = IoGen::new(5, rw, 0, sizes, 4096, region, &Distribution::Uniform)
            .with_fio_options(0, 100, false);
        for _ in 0..200 {
            let io = g.next_io();
            assert_eq!(io.len, 8192, "{rw:?}: {io:?}");
            assert!(io.offset + 8192 <= 1 << 20, "{rw:?}: {io:?}");
        }
    }
    // A job that does not trim keeps its write size.
    let region = vec![Region {
        start: 0,
        len: 1 << 20,
    }];
    let mut g = IoGen::new(
        5,
        RwMode::RandWrite,
        0,
        sizes,
        4096,
        region,
        &Distribution::Uniform,
    );
    assert!((0..100).all(|_| g.next_io().len == 4096));
}

fn strided(z: StridedZones, rw: RwMode, len: u64) -> Vec<u64> {
    strided_map(z, rw, len, false)
}

fn strided_map(z: StridedZones, rw: RwMode, len: u64, map: bool) -> Vec<u64> {
    let mut g = IoGen::new(
        1,
        rw,
        0,
        [&[(16384, 100)], &[(16384, 100)], &[(16384, 100)]],
        16384,
        vec![Region { start: 0, len }],
        &Distribution::Uniform,
    )
    .with_fio_options(0, 100, map)
    .with_strided_zones(z);
    (0..(len / 16384) as usize)
        .map(|_| g.next_io().offset / 1024)
        .collect()
}

/// The offsets fio 3.33 reads (its write_iolog) for the same options.
#[test]
fn strided_zones_walk_as_fio_does() {
    let k = 1024;
    let z = |size, range, skip| StridedZones { size, range, skip };
    // zonesize=64k zonerange=128k zoneskip=128k: 64k of each 256k.
    let got = strided(z(64 * k, 128 * k, 128 * k), RwMode::Read, 1 << 20);
    let zone = |at: u64| (0..4).map(move |i| at + i * 16);
    let want: Vec<u64> = [0, 256, 512, 768]
        .repeat(4)
        .into_iter()
        .flat_map(zone)
        .collect();
    assert_eq!(got, want);
    // zonerange=32k below zonesize=64k: each zone gone over twice.
    let got = strided(z(64 * k, 32 * k, 0), RwMode::Read, 1 << 20);
    assert_eq!(&got[..8], &[0, 16, 0, 16, 32, 48, 32, 48]);
    assert_eq!(got.last(), Some(&496));
    // Random: each zone's offsets stay inside it.
    let got = strided(z(64 * k, 128 * k, 128 * k), RwMode::RandRead, 1 << 20);
    for (i, chunk) in got.chunks(4).enumerate() {
        let base = (i as u64 % 4) * 256;
        assert!(
            chunk.iter().all(|&o| o >= base && o < base + 128),
            "{i}: {chunk:?}"
        );
    }
}

/// fio's t/strided.py with the random map: each pass over a zone's
/// range takes every block of it once, and a zone gone over twice
/// (zonesize twice zonerange) is shuffled anew the second time.
#[test]
fn strided_random_map_takes_each_block_of_a_zone_once_per_pass() {
    let k = 1024;
    let z = StridedZones {
        size: 256 * k,
        range: 128 * k,
        skip: 0,
    };
    let got = strided_map(z, RwMode::RandRead, 1 << 20, true);
    let passes: Vec<Vec<u64>> = got.chunks(8).map(|c| c.to_vec()).collect();
    for (i, pass) in passes.iter().enumerate() {
        let base = (i as u64 / 2) * 128;
        let mut sorted = pass.clone();
        sorted.sort();
        let every: Vec<u64> = (0..8).map(|b| base + b * 16).collect();
        assert_eq!(sorted, every, "pass {i}: {pass:?}");
    }
    assert_ne!(passes[0], passes[1], "the second pass is shuffled anew");
}

#[test]
fn a_block_sequence_counts_each_direction_on_its_own() {
    // fio indexes the pattern by the direction's own issue count: reads and
    // writes of a randrw job each walk it from its start.
    let seq = hiops_job::BlockSequence::parse("3,1,2").unwrap();
    let mut g = gen(RwMode::RandRw, Distribution::Sequence(seq), 8 * 4096);
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for _ in 0..60 {
        let io = g.next_io();
        match io.op {
            Op::Read => reads.push(io.offset / 4096),
            _ => writes.push(io.offset / 4096),
        }
    }
    assert!(!reads.is_empty() && !writes.is_empty());
    let pattern = |n: usize| [3, 1, 2].into_iter().cycle().take(n).collect::<Vec<u64>>();
    assert_eq!(reads, pattern(reads.len()));
    assert_eq!(writes, pattern(writes.len()));
    assert!(!g.exhausted(), "a pattern without stride never ends");
}

#[test]
fn a_striding_block_sequence_is_exhausted_past_the_region() {
    let seq = hiops_job::BlockSequence::parse("1,0")
        .unwrap()
        .with_stride(true);
    let mut g = gen(RwMode::RandRead, Distribution::Sequence(seq), 5 * 4096);
    let offs: Vec<u64> = (0..4).map(|_| g.next_io().offset / 4096).collect();
    assert_eq!(offs, [1, 0, 3, 2]);
    assert!(!g.exhausted());
    // Round three: block 5 is past the five blocks.
    g.next_io();
    assert!(g.exhausted());
}
