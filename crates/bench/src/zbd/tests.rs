use super::*;
use hiops_rng::FastRng;

const ZONE: u64 = 1 << 20;
const BS: u32 = 64 << 10;

fn spec(max_open: u32) -> ZbdSpec {
    ZbdSpec {
        zone_size: ZONE,
        capacity: ZONE,
        read_beyond_wp: false,
        max_open_zones: max_open,
        job_max_open_zones: 0,
        reset_threshold: 0.0,
        reset_frequency: 0.0,
    }
}

/// A thread over the whole of a fresh file of `zones` zones.
fn thread(zones: u64, spec: ZbdSpec, random: bool) -> (Zbd, Arc<Mutex<ZoneTable>>) {
    let len = zones * ZONE;
    let table = Arc::new(Mutex::new(ZoneTable::new(
        len,
        spec.zone_size,
        spec.capacity,
        spec.max_open_zones,
    )));
    let region = Region { start: 0, len };
    let target = ZonedTarget::new(table.clone(), region);
    let bs = BS as u64;
    (
        Zbd::new(vec![target], spec, [bs; 3], (random, false), false, false),
        table,
    )
}

fn io(op: Op, offset: u64) -> NextIo {
    NextIo {
        op,
        target: 0,
        offset,
        len: BS,
    }
}

#[test]
fn random_writes_go_to_write_pointers_in_at_most_the_open_limit() {
    let (mut zbd, table) = thread(8, spec(2), true);
    let mut rng = FastRng::new(7);
    let mut touched = std::collections::BTreeSet::new();
    for _ in 0..128 {
        let offset = rng.below(8 * ZONE / BS as u64) * BS as u64;
        let wp_before: Vec<u64> = lock(&table).wp.clone();
        let w = zbd.adjust(io(Op::Write, offset)).unwrap();
        let zone = (w.offset / ZONE) as usize;
        // At the write pointer, or at the start of a zone just reset.
        assert!(
            w.offset == wp_before[zone] || w.offset == zone as u64 * ZONE,
            "{w:?} in zone {zone} whose pointer was {}",
            wp_before[zone]
        );
        assert_eq!(w.len, BS);
        let t = lock(&table);
        assert!(t.open.len() <= 2, "open zones {:?}", t.open);
        let partly: Vec<usize> = (0..8).filter(|&z| !t.wp[z].is_multiple_of(ZONE)).collect();
        assert!(partly.len() <= 2, "zones partly written: {partly:?}");
        touched.insert(zone);
    }
    // 8 MiB in zones of 1 MiB, two open at a time: as zones fill they
    // close and others open.
    assert!(touched.len() > 2, "zones written: {touched:?}");
}

#[test]
fn reads_stay_below_the_write_pointer_and_find_zones_with_data() {
    let (mut zbd, table) = thread(4, spec(0), true);
    assert_eq!(zbd.adjust(io(Op::Read, 0)), None, "no zone holds data");
    // Zone 2 gets 4 blocks.
    for _ in 0..4 {
        zbd.adjust(io(Op::Write, 2 * ZONE)).unwrap();
    }
    assert_eq!(lock(&table).wp[2], 2 * ZONE + 4 * BS as u64);
    let mut rng = FastRng::new(3);
    for _ in 0..64 {
        let offset = rng.below(4 * ZONE / BS as u64) * BS as u64;
        let r = zbd.adjust(io(Op::Read, offset)).unwrap();
        assert!(r.offset >= 2 * ZONE, "{r:?}");
        assert!(r.offset + r.len as u64 <= 2 * ZONE + 4 * BS as u64, "{r:?}");
        assert!(r.len >= BS);
    }
}

#[test]
fn a_sequential_read_skips_to_the_next_zone_with_data_and_ends_after_the_last() {
    let (mut zbd, _) = thread(4, spec(0), false);
    zbd.adjust(io(Op::Write, 3 * ZONE)).unwrap();
    let r = zbd.adjust(io(Op::Read, 0)).unwrap();
    assert_eq!((r.offset, r.len), (3 * ZONE, BS));
    assert_eq!(zbd.adjust(io(Op::Read, 3 * ZONE + BS as u64)), None);
}

#[test]
fn a_read_of_a_job_that_writes_too_is_a_write_while_no_zone_holds_data() {
    let (mut zbd, _) = thread(2, spec(0), true);
    assert_eq!(zbd.first_op(io(Op::Read, ZONE)).op, Op::Write);
    let w = zbd.adjust(io(Op::Write, ZONE)).unwrap();
    assert_eq!(w.offset, ZONE);
    assert_eq!(zbd.first_op(io(Op::Read, 0)).op, Op::Read);
}

#[test]
fn a_zone_capacity_below_its_size_sends_sequential_writes_to_the_next_zone() {
    let mut s = spec(0);
    s.capacity = ZONE / 2;
    let (mut zbd, table) = thread(2, s, false);
    let per_zone = ZONE / 2 / BS as u64;
    for i in 0..per_zone {
        let w = zbd.adjust(io(Op::Write, i * BS as u64)).unwrap();
        assert_eq!(w.offset, i * BS as u64);
    }
    // Past the capacity: the next zone's write pointer.
    let w = zbd.adjust(io(Op::Write, ZONE / 2)).unwrap();
    assert_eq!(w.offset, ZONE);
    assert_eq!(lock(&table).wp[0], ZONE / 2);
}

#[test]
fn a_trim_resets_its_zone_and_a_random_one_finds_a_zone_with_data() {
    let (mut zbd, table) = thread(4, spec(0), true);
    zbd.adjust(io(Op::Write, ZONE)).unwrap();
    let t = zbd
        .adjust(NextIo {
            op: Op::Trim,
            target: 0,
            offset: 3 * ZONE,
            len: ZONE as u32,
        })
        .unwrap();
    assert_eq!(t.offset, ZONE);
    assert_eq!(lock(&table).wp[1], ZONE);
    assert_eq!(zbd.resets(), 1);
    let none = NextIo {
        op: Op::Trim,
        target: 0,
        offset: 0,
        len: ZONE as u32,
    };
    assert_eq!(zbd.adjust(none), None, "no zone holds data");
}

#[test]
fn the_reset_threshold_resets_zones_once_enough_holds_data() {
    let mut s = spec(0);
    s.reset_threshold = 0.25;
    s.reset_frequency = 0.5;
    let (mut zbd, _) = thread(4, s, false);
    // 1 MiB of 4 written (the threshold) in 16 writes, no reset yet.
    for i in 0..16 {
        zbd.adjust(io(Op::Write, i * BS as u64)).unwrap();
    }
    assert_eq!(zbd.resets(), 0);
    // From there every second write resets its zone first.
    for i in 16..24 {
        zbd.adjust(io(Op::Write, i * BS as u64)).unwrap();
    }
    assert!(zbd.resets() >= 3, "{} resets", zbd.resets());
}

#[test]
fn a_writing_job_range_is_cut_to_whole_zones_as_fio_says() {
    let r = Region {
        start: 100 << 10,
        len: 3 << 20,
    };
    let (aligned, said) = align_region(r, ZONE, "f").unwrap();
    assert_eq!(
        aligned,
        Region {
            start: ZONE,
            len: 2 * ZONE
        }
    );
    assert_eq!(
        said,
        [
            "f: rounded up offset from 102400 to 1048576",
            "f: rounded down io_size from 2199552 to 2097152"
        ]
    );
    let small = Region {
        start: 4096,
        len: ZONE,
    };
    assert_eq!(
        align_region(small, ZONE, "f").unwrap_err(),
        "f: io_size must be at least one zone"
    );
}
