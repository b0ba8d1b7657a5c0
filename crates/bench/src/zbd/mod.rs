//! fio's zonemode=zbd on files and devices without zones of their own,
//! emulated as fio 3.33 does (zbd.c, the zone model "none"): each I/O the
//! generator draws is moved before it is issued (zbd_adjust_block). A
//! write goes to its zone's write pointer, in an open zone (at most
//! max_open_zones of them, job_max_open_zones per thread), resetting a
//! full zone first; a read stays below a zone's write pointer (unless
//! read_beyond_wp), moving to a zone with data; a trim resets its zone.
//! Where hiops differs: a zone closes when the write that fills it is
//! issued (fio: when it completes), so no thread waits for another's
//! writes to complete before opening a zone; a trim discards its zone's
//! blocks as well (fio 3.33 only moves the write pointer back).

mod table;

use crate::generator::{NextIo, Region};
use hiops_hal::Op;
use hiops_job::spec::ZbdSpec;
use std::sync::{Arc, Mutex, MutexGuard};
pub(crate) use table::{table_of, ZoneTable};

/// One target of a thread: its file's zones and the thread's range of
/// them.
#[derive(Clone)]
pub(crate) struct ZonedTarget {
    table: Arc<Mutex<ZoneTable>>,
    /// The thread's zones: `first..end` (fio's min_zone, max_zone).
    first: u32,
    end: u32,
    region: Region,
}

impl ZonedTarget {
    pub(crate) fn new(table: Arc<Mutex<ZoneTable>>, region: Region) -> ZonedTarget {
        let (first, end) = {
            let t = lock(&table);
            (
                t.zone_of(region.start),
                t.zone_of(region.start + region.len),
            )
        };
        ZonedTarget {
            table,
            first,
            end: end.max(first + 1),
            region,
        }
    }
}

/// A thread's view of its targets' zones.
pub(crate) struct Zbd {
    targets: Vec<ZonedTarget>,
    spec: ZbdSpec,
    /// The smallest block of reads, writes and trims.
    min_bs: [u64; 3],
    random: bool,
    /// The job reads and writes (fio's td_rw).
    mixed: bool,
    /// A reset would destroy blocks a verify pass reads back: full zones
    /// are left alone (fio's zbd_open_zone).
    verify: bool,
    /// Zones this thread opened (fio's td->num_open_zones).
    job_open: u32,
    /// Zones this thread reset (fio's nr_zone_resets).
    resets: u64,
    /// A sequential job of one pass ends at its range's end, however few
    /// bytes the zones let it move (fio's get_next_seq_offset): where
    /// each direction's stream ended last, per target.
    seq_ends: Option<Vec<[u64; 2]>>,
}

fn lock(t: &Mutex<ZoneTable>) -> MutexGuard<'_, ZoneTable> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

impl Zbd {
    pub(crate) fn new(
        targets: Vec<ZonedTarget>,
        spec: ZbdSpec,
        min_bs: [u64; 3],
        (random, mixed): (bool, bool),
        verify: bool,
        one_pass: bool,
    ) -> Zbd {
        let seq_ends = (!random && one_pass).then(|| vec![[0; 2]; targets.len()]);
        let mut zbd = Zbd {
            targets,
            spec,
            min_bs,
            random,
            mixed,
            verify,
            job_open: 0,
            resets: 0,
            seq_ends,
        };
        zbd.start();
        zbd
    }

    /// fio's zbd_file_reset: the reset countdown starts anew, and with
    /// verify the thread's zones are emptied first (a reset while writing
    /// would lose blocks the verify pass reads).
    fn start(&mut self) {
        for t in &self.targets {
            let mut z = lock(&t.table);
            z.writes_to_reset = writes_between_resets(self.spec.reset_frequency);
            if self.verify {
                (t.first..t.end).for_each(|zone| z.empty(zone, &mut self.job_open));
            }
        }
    }

    /// A loop of the job begins: fio's zbd_file_reset again, and the
    /// sequential streams start over.
    pub(crate) fn new_pass(&mut self) {
        self.start();
        if let Some(ends) = self.seq_ends.as_mut() {
            ends.iter_mut().for_each(|e| *e = [0; 2]);
        }
    }

    pub(crate) fn resets(&self) -> u64 {
        self.resets
    }

    /// `io` moved where its zone lets it go, or None: no zone can take it
    /// and the job's I/O ends (fio's io_u_eof).
    pub(crate) fn adjust(&mut self, io: NextIo) -> Option<NextIo> {
        let io = match self.mixed {
            true => self.first_op(io),
            false => io,
        };
        let dir = usize::from(io.op == Op::Write);
        if let Some(ends) = self.seq_ends.as_ref() {
            // The stream goes on from where the last I/O was moved to:
            // an offset before that is the generator wrapping round.
            if io.offset < ends[io.target as usize][dir] {
                return None;
            }
        }
        let moved = match io.op {
            Op::Read if self.spec.read_beyond_wp => Some(io),
            Op::Read => self.read(io),
            Op::Write => self.write(io),
            Op::Trim => self.trim(io),
            _ => Some(io),
        }?;
        if let Some(ends) = self.seq_ends.as_mut() {
            ends[moved.target as usize][dir] = moved.offset + moved.len as u64;
        }
        Some(moved)
    }

    /// fio's zbd_adjust_ddir: in a job that reads and writes, a read while
    /// no zone holds data becomes a write.
    pub(crate) fn first_op(&self, io: NextIo) -> NextIo {
        let empty = self.targets.iter().all(|t| lock(&t.table).with_data == 0);
        match io.op {
            Op::Read if empty && !self.spec.read_beyond_wp => NextIo {
                op: Op::Write,
                ..io
            },
            _ => io,
        }
    }

    fn read(&mut self, io: NextIo) -> Option<NextIo> {
        let t = &self.targets[io.target as usize];
        let z = lock(&t.table);
        let min_bs = self.min_bs[0];
        let orig = z.zone_of(io.offset);
        let (mut zone, mut offset) = (orig, io.offset);
        if z.used(zone) < min_bs || (!self.random && offset + min_bs > z.wp[zone as usize]) {
            zone = find_zone(&z, t, zone, min_bs, self.random)?;
            if !self.random {
                offset = z.start(zone);
            }
        }
        let (range, len) = (z.used(zone), io.len as u64);
        if range <= len {
            offset = z.start(zone);
        } else if self.random {
            let into = (offset - z.start(orig)) % (range - len);
            offset = z.start(zone) + into / min_bs * min_bs;
        }
        let len = len.min(z.wp[zone as usize] - offset) / min_bs * min_bs;
        debug_assert!(len >= min_bs && offset + len <= z.wp[zone as usize]);
        Some(NextIo {
            offset,
            len: len as u32,
            ..io
        })
    }

    fn write(&mut self, io: NextIo) -> Option<NextIo> {
        let min_bs = self.min_bs[1];
        let t = &self.targets[io.target as usize];
        let mut z = lock(&t.table);
        let mut zone = z.zone_of(io.offset);
        // A sequential writer past a zone's capacity goes on in the next
        // zone (fio's setup_zbd_zone_mode).
        if !self.random && io.offset >= z.capacity_end(zone) {
            zone = if zone + 1 >= t.end { t.first } else { zone + 1 };
        }
        let rules = self.rules();
        if !open_zone(&mut z, zone, min_bs, rules, &mut self.job_open) {
            zone = other_zone(&mut z, t, (io.offset, min_bs), rules, &mut self.job_open)?;
        }
        let threshold = (t.region.len as f64 * self.spec.reset_threshold) as u64;
        if self.spec.reset_frequency > 0.0 && z.with_data >= threshold {
            z.writes_to_reset -= 1;
            if z.writes_to_reset == 0 {
                z.writes_to_reset = writes_between_resets(self.spec.reset_frequency);
                z.reset_due[zone as usize] = true;
            }
        }
        if z.reset_due[zone as usize] || z.full(zone, min_bs) {
            if z.used(zone) > 0 {
                self.resets += 1;
            }
            z.reset(zone);
        }
        let offset = z.wp[zone as usize];
        let len = (io.len as u64).min(z.capacity_end(zone) - offset) / min_bs * min_bs;
        // A zone with less than a block left was reset above, and no block
        // is larger than a zone's capacity (the plan's check).
        assert!(
            len >= min_bs,
            "zone {zone}: {len} bytes left, blocks of {min_bs}"
        );
        z.advance(zone, len, &mut self.job_open);
        Some(NextIo {
            offset,
            len: len as u32,
            ..io
        })
    }

    /// A trim empties its zone, which is then no longer open (fio 3.36 and
    /// later; 3.33 kept counting it); a random one goes to a zone with
    /// data.
    fn trim(&mut self, io: NextIo) -> Option<NextIo> {
        let t = &self.targets[io.target as usize];
        let mut z = lock(&t.table);
        let mut zone = z.zone_of(io.offset);
        if self.random && z.used(zone) == 0 {
            zone = find_zone(&z, t, zone, 1, true)?;
        }
        if z.used(zone) > 0 {
            self.resets += 1;
        }
        z.empty(zone, &mut self.job_open);
        Some(NextIo {
            offset: z.start(zone),
            ..io
        })
    }

    fn rules(&self) -> OpenRules {
        OpenRules {
            verify: self.verify,
            job_max: self.spec.job_max_open_zones,
        }
    }
}

/// fio's zbd_convert_to_open_zone: an open zone with room (from one picked
/// by the offset), else the next zone that can be opened, else any open
/// zone of the thread's with room.
fn other_zone(
    z: &mut ZoneTable,
    t: &ZonedTarget,
    (offset, min_bs): (u64, u64),
    rules: OpenRules,
    job_open: &mut u32,
) -> Option<u32> {
    let limited = z.max_open > 0 || rules.job_max > 0;
    let mut zone = match limited {
        true => {
            let i = pick(t, offset, z.open.len());
            z.open.get(i).copied().unwrap_or(t.first)
        }
        false => z.zone_of(offset),
    };
    zone = zone.clamp(t.first, t.end - 1);
    if limited && !z.open.is_empty() {
        let (start, n) = (pick(t, offset, z.open.len()), z.open.len());
        zone = (0..n)
            .map(|k| z.open[(start + k) % n])
            .find(|&o| t.first <= o && o < t.end)?;
    }
    if (!limited || !z.open.is_empty()) && !z.full(zone, min_bs) {
        return Some(zone);
    }
    let zones = (t.region.len / z.zone_size) as u32;
    for _ in 0..zones {
        zone = if zone + 1 >= t.end { t.first } else { zone + 1 };
        if !z.is_open[zone as usize] && open_zone(z, zone, min_bs, rules, job_open) {
            return Some(zone);
        }
    }
    let open = z.open.iter().copied();
    open.filter(|&o| t.first <= o && o < t.end)
        .find(|&o| !z.full(o, min_bs))
}

#[derive(Clone, Copy)]
struct OpenRules {
    verify: bool,
    job_max: u32,
}

/// fio's zbd_open_zone: whether `zone` may take writes, opening it where
/// the limits allow.
fn open_zone(
    z: &mut ZoneTable,
    zone: u32,
    min_bs: u64,
    rules: OpenRules,
    job_open: &mut u32,
) -> bool {
    if rules.verify && z.full(zone, min_bs) {
        return false;
    }
    if z.max_open == 0 {
        return true;
    }
    if z.is_open[zone as usize] {
        return z.wp[zone as usize] < z.capacity_end(zone);
    }
    let job_full = rules.job_max > 0 && *job_open >= rules.job_max;
    if job_full || z.open.len() as u32 >= z.max_open {
        return false;
    }
    z.open.push(zone);
    z.is_open[zone as usize] = true;
    *job_open += 1;
    true
}

/// fio's pick_random_zone_idx: an open zone's index scaled from the
/// offset's place in the thread's range.
fn pick(t: &ZonedTarget, offset: u64, open: usize) -> usize {
    let into = offset.saturating_sub(t.region.start) as u128;
    (into * open as u128 / t.region.len.max(1) as u128) as usize
}

/// fio's zbd_find_zone: the next zone after `from` with `bytes` of data,
/// and for a random job the nearest one either side.
fn find_zone(z: &ZoneTable, t: &ZonedTarget, from: u32, bytes: u64, random: bool) -> Option<u32> {
    let has = |zone: u32| z.used(zone) >= bytes;
    let zones = t.end - t.first;
    for step in 1..=zones {
        let after = from + step;
        if after < t.end && has(after) {
            return Some(after);
        }
        if !random && after >= t.end {
            return None;
        }
        let before = from.checked_sub(step).filter(|&b| b >= t.first);
        if let Some(b) = before.filter(|&b| random && has(b)) {
            return Some(b);
        }
    }
    None
}

/// Writes between resets once past the threshold (fio's write_cnt).
fn writes_between_resets(frequency: f64) -> u32 {
    match frequency > 0.0 {
        true => (1.0 / frequency).min(u32::MAX as f64) as u32,
        false => u32::MAX,
    }
}

/// fio's zbd_zone_align_file_sizes for a job that writes: its range
/// starts at a zone's start and ends at one, with the lines fio prints
/// where it moved them; Err where no whole zone is left.
pub(crate) fn align_region(
    region: Region,
    zone_size: u64,
    file: &str,
) -> Result<(Region, Vec<String>), String> {
    let (mut start, mut len, mut said) = (region.start, region.len, Vec::new());
    let too_small = || format!("{file}: io_size must be at least one zone");
    if !start.is_multiple_of(zone_size) {
        let next = start.next_multiple_of(zone_size);
        if next >= start + len {
            return Err(too_small());
        }
        said.push(format!("{file}: rounded up offset from {start} to {next}"));
        len -= next - start;
        start = next;
    }
    let end = (start + len) / zone_size * zone_size;
    if end != start + len {
        if end <= start {
            return Err(too_small());
        }
        said.push(format!(
            "{file}: rounded down io_size from {len} to {}",
            end - start
        ));
        len = end - start;
    }
    Ok((Region { start, len }, said))
}

#[cfg(test)]
mod tests;
