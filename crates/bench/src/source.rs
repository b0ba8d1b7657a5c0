//! Where a job thread's commands come from: the workload (generator, size
//! budget, rate limits, flush policy), the read-back of a verify pass, and
//! the flushes of end_fsync. The job loop pulls from one of them at a time.

use crate::generator::{IoGen, NextIo, Region};
use crate::spec::JobSpec;
use hiops_hal::Op;
use hiops_rng::FastRng;

/// What a source offers next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// This command, created (fio's start_time) at `start_ns`.
    Io { io: NextIo, start_ns: u64 },
    /// Nothing before `until_ns` (rate limit).
    Wait { until_ns: u64 },
    /// Nothing more.
    Done,
}

pub(crate) trait Source {
    fn next(&mut self, now: u64) -> Next;
    /// The job's stop (deadline, Ctrl-C, steady state) ends this source; a
    /// verify pass after the workload and end_fsync always finish.
    fn stoppable(&self) -> bool;
    /// A command that was offered could not be staged (its block is busy):
    /// offer it again next.
    fn put_back(&mut self, io: NextIo, start_ns: u64);
    /// No data I/O is left to offer (a flush may be).
    fn exhausted(&self) -> bool {
        false
    }
    /// The thread thought for `_ns` and its rate is not to catch up on it
    /// (fio's rate_ignore_thinktime): the schedule moves on by that much.
    fn thought(&mut self, _ns: u64) {}
}

/// Paces one direction: the next I/O is due `interval` after the last one
/// was due, so a late start does not shift the schedule (latency is counted
/// from the due time: no coordinated omission). With fio's
/// `rate_process=poisson` the gaps are drawn from an exponential
/// distribution of that mean instead (HOWTO: a Poisson process of lambda
/// 10^6 / IOPS per microsecond), from the thread's own seed.
#[derive(Clone, Debug)]
struct Pacer {
    interval_ns: f64,
    next_due_ns: f64,
    poisson: Option<FastRng>,
}

impl Pacer {
    fn advance(&mut self) {
        self.next_due_ns += match self.poisson.as_mut() {
            // 1 - U is in (0, 1]: the logarithm is finite.
            Some(rng) => -self.interval_ns * (1.0 - rng.unit()).ln(),
            None => self.interval_ns,
        };
    }
}

/// The job's own I/O.
pub(crate) struct Workload {
    gen: IoGen,
    /// Bytes to move before the job is done (size-based), or u64::MAX.
    budget: u64,
    offered_bytes: u64,
    /// Offer nothing past this many bytes until `next_pass` (fio's loops
    /// reopen their files between passes); u64::MAX: never pause.
    pause_at: u64,
    pass_bytes: u64,
    /// A time-based job's cache drops as it wraps (fio's invalidate).
    wrap_drops: Option<crate::cache::WrapDrops>,
    /// fio's flow: I/O only while this thread is within its weight's share.
    flow: Option<crate::flow::FlowGate>,
    /// fio's number_ios: I/Os left to offer (u64::MAX: no limit).
    ios_left: u64,
    pacers: [Option<Pacer>; 2],
    /// fio's fsync=N, fdatasync=N and sync_file_range=FLAGS:N, in the
    /// order fio looks at them (io_u.c, get_rw_ddir): (flush, every N
    /// writes).
    flushes: Vec<(Op, u64)>,
    /// Writes offered (fio's io_issues of writes).
    writes: u64,
    /// The last command offered was a write: a flush may follow it.
    after_write: bool,
    last_write_target: u32,
    /// fio's zonemode=zbd: where the zones let each I/O go.
    zbd: Option<crate::zbd::Zbd>,
    /// The job is sequential: its stream goes on where the zones moved it.
    sequential: bool,
    zones_ended: bool,
    /// A command offered and put back (its block was busy).
    held: Option<(NextIo, u64)>,
    /// A command generated before its direction's due time.
    early: Option<NextIo>,
    /// trimwrite: the trims ride along with the writes, and only the
    /// writes count toward size and number_ios (fio does size of each).
    trims_uncounted: bool,
    /// verify_state_load in a read job: reads end at the first write the
    /// state file does not name as done.
    state: Option<StateLimit>,
}

/// A read job's verify state (fio's verify_state_should_stop): its n-th
/// read checks the writer's n-th write, which must have completed.
struct StateLimit {
    saved: crate::verify::state_file::Saved,
    reads: u64,
    ended: bool,
}

impl Workload {
    pub(crate) fn new(gen: IoGen, spec: &JobSpec, budget: u64, now: u64) -> Workload {
        let pacers = spec.workload.rate_iops.map(|r| {
            r.map(|iops| Pacer {
                interval_ns: 1e9 / iops,
                next_due_ns: now as f64,
                poisson: None,
            })
        });
        let w = &spec.workload;
        let flushes = [
            (Op::Fsync, w.fsync_every),
            (Op::Fdatasync, w.fdatasync_every),
            (Op::SyncRange(w.sync_range.flags), w.sync_range.every),
        ];
        let flushes = (flushes.into_iter())
            .filter(|&(_, every)| every > 0)
            .map(|(op, every)| (op, u64::from(every)))
            .collect();
        Workload {
            gen,
            budget,
            offered_bytes: 0,
            pause_at: u64::MAX,
            pass_bytes: u64::MAX,
            wrap_drops: None,
            flow: None,
            ios_left: spec.workload.number_ios.unwrap_or(u64::MAX),
            pacers,
            flushes,
            writes: 0,
            after_write: false,
            last_write_target: 0,
            zbd: None,
            sequential: !spec.workload.rw.is_random(),
            zones_ended: false,
            held: None,
            early: None,
            trims_uncounted: spec.workload.rw.trims() && spec.workload.rw.writes_data(),
            state: None,
        }
    }

    /// Under fio's zonemode=zbd.
    pub(crate) fn in_zones(mut self, zbd: crate::zbd::Zbd) -> Workload {
        self.zbd = Some(zbd);
        self
    }

    /// fio's rate_process=poisson: exponential gaps between due times, each
    /// direction drawing from its own stream of `seed`.
    pub(crate) fn poisson(mut self, seed: u64) -> Workload {
        for (d, p) in self.pacers.iter_mut().enumerate() {
            if let Some(p) = p.as_mut() {
                p.poisson = Some(FastRng::new(
                    seed ^ (d as u64 + 1).wrapping_mul(0x5851_F42D),
                ));
            }
        }
        self
    }

    /// Pauses (offers `Done`) after each pass of `pass_bytes`, until
    /// `next_pass`.
    pub(crate) fn pausing_every(mut self, pass_bytes: u64) -> Workload {
        self.pass_bytes = pass_bytes.max(1);
        self.pause_at = self.pass_bytes;
        self
    }

    /// Keeps to its share of a flow (fio's flow).
    pub(crate) fn in_flow(mut self, gate: crate::flow::FlowGate) -> Workload {
        self.flow = Some(gate);
        self
    }

    /// Drops the cache as each pass ends (time-based jobs).
    pub(crate) fn dropping_caches(mut self, drops: crate::cache::WrapDrops) -> Workload {
        self.wrap_drops = Some(drops);
        self
    }

    /// Reads only what the verify state file names as written (fio's
    /// verify_state_load in a read job), and ends at the first other.
    pub(crate) fn until_unwritten(mut self, saved: crate::verify::state_file::Saved) -> Workload {
        self.state = Some(StateLimit {
            saved,
            reads: 0,
            ended: false,
        });
        self
    }

    /// Whether a new command may go: false once a read reached a write
    /// the state file does not name as done.
    fn written_before(&mut self, io: &NextIo) -> bool {
        let Some(s) = self.state.as_mut().filter(|_| io.op == Op::Read) else {
            return true;
        };
        s.reads += 1;
        s.ended |= !s.saved.done(s.reads, io.target as u64, io.offset);
        !s.ended
    }

    /// The job's I/O ended before its bytes: the verify state's writes
    /// are read, no zone can take the next I/O (fio's io_u_eof), or a
    /// striding block sequence passed the end.
    fn ended(&self) -> bool {
        self.zones_ended || self.state.as_ref().is_some_and(|s| s.ended) || self.gen.exhausted()
    }

    /// After a pause: whether there is more to do, and if so the next pass
    /// may start.
    pub(crate) fn next_pass(&mut self) -> bool {
        if self.offered_bytes >= self.budget || self.ios_left == 0 || self.ended() {
            return false;
        }
        self.pause_at = self.pause_at.saturating_add(self.pass_bytes);
        if let Some(z) = self.zbd.as_mut() {
            z.new_pass();
        }
        true
    }

    /// fio's zonemode=zbd on the job's I/O (None: no zone can take it,
    /// and the job's I/O ends, as fio's io_u_eof).
    fn zoned(&mut self, io: NextIo) -> Option<NextIo> {
        let Some(z) = self.zbd.as_mut() else {
            return Some(io);
        };
        let Some(io) = z.adjust(io) else {
            self.zones_ended = true;
            return None;
        };
        if self.sequential {
            self.gen.went_to(&io);
        }
        Some(io)
    }

    /// The zone resets the job made (fio's nr_zone_resets).
    pub(crate) fn zone_resets(&self) -> u64 {
        self.zbd.as_ref().map_or(0, crate::zbd::Zbd::resets)
    }

    /// The flush that is due right after a write, if one is: the first
    /// whose N divides the writes so far, as fio picks one.
    fn due_flush(&mut self, now: u64) -> Option<Next> {
        if !std::mem::take(&mut self.after_write) {
            return None;
        }
        let writes = self.writes;
        let &(op, _) = (self.flushes.iter()).find(|&&(_, every)| writes.is_multiple_of(every))?;
        // A ranged flush's range is the job's to fill as it stages it:
        // it spans the writes completed since the last one.
        let io = NextIo {
            op,
            target: self.last_write_target,
            offset: 0,
            len: 0,
        };
        Some(Next::Io { io, start_ns: now })
    }
}

impl Source for Workload {
    fn next(&mut self, now: u64) -> Next {
        if let Some((io, start_ns)) = self.held.take() {
            return Next::Io { io, start_ns };
        }
        if self.offered_bytes >= self.budget.min(self.pause_at)
            || self.ios_left == 0
            || self.ended()
        {
            return Next::Done;
        }
        // A flush is made before the next I/O, so none after the last
        // write (fio's get_rw_ddir is asked only for another I/O).
        if let Some(flush) = self.due_flush(now) {
            return flush;
        }
        if let Some(f) = self.flow.as_mut().filter(|_| self.early.is_none()) {
            if !f.admit() {
                return Next::Wait {
                    until_ns: now.saturating_add(f.sleep_ns),
                };
            }
        }
        let io = match self.early.take() {
            Some(io) => io,
            None => {
                let io = self.gen.next_io();
                if self.ended() || !self.written_before(&io) {
                    return Next::Done;
                }
                match self.zoned(io) {
                    Some(io) => io,
                    None => return Next::Done,
                }
            }
        };
        let mut start_ns = now;
        // Trims are paced with the write side, as fio's two-valued rate
        // forms give trims the write value.
        if let Some(p) = self.pacers[io.op.dir().min(1)].as_mut() {
            if p.next_due_ns > now as f64 {
                self.early = Some(io);
                return Next::Wait {
                    until_ns: p.next_due_ns as u64,
                };
            }
            start_ns = p.next_due_ns as u64;
            p.advance();
        }
        if !(self.trims_uncounted && io.op == Op::Trim) {
            self.offered_bytes += io.len as u64;
            self.ios_left -= 1;
        }
        if let Some(d) = self.wrap_drops.as_mut() {
            d.offered(self.offered_bytes);
        }
        if io.op == Op::Write && !self.flushes.is_empty() {
            self.writes += 1;
            self.after_write = true;
            self.last_write_target = io.target;
        }
        Next::Io { io, start_ns }
    }

    fn thought(&mut self, ns: u64) {
        for p in self.pacers.iter_mut().flatten() {
            p.next_due_ns += ns as f64;
        }
    }

    fn stoppable(&self) -> bool {
        true
    }

    fn put_back(&mut self, io: NextIo, start_ns: u64) {
        assert!(self.held.is_none(), "one command held at a time");
        self.held = Some((io, start_ns));
    }

    fn exhausted(&self) -> bool {
        self.held.is_none()
            && (self.offered_bytes >= self.budget.min(self.pause_at)
                || self.ios_left == 0
                || self.ended())
    }
}

/// Reads back blocks to check their stamps: the writes a thread made (or
/// a replay says a writing job made), each read whole as fio reads back
/// its io pieces, or every block of its regions (verify_only of a read job).
pub(crate) struct ReadBack<'a> {
    regions: &'a [Region],
    what: What,
    region: usize,
    block: u64,
    stoppable: bool,
    held: Option<(NextIo, u64)>,
}

enum What {
    /// Every block of this many bytes.
    Every(u32),
    /// Chunks of `chunk` bytes: each one's write number (0: skip) and place
    /// in its write; reads of consecutive chunks of one write, up to `max`
    /// bytes.
    Written {
        chunks: Vec<Vec<(u32, u16)>>,
        chunk: u32,
        max: u32,
    },
}

impl<'a> ReadBack<'a> {
    /// Every block of `bs` bytes.
    pub(crate) fn every(regions: &'a [Region], bs: u32) -> Self {
        ReadBack {
            regions,
            what: What::Every(bs),
            region: 0,
            block: 0,
            stoppable: true,
            held: None,
        }
    }

    /// The written chunks (see `VerifyState::to_read`), in reads of at
    /// most `max` bytes. `stoppable`: verify_only is the job itself and
    /// honours Ctrl-C; a check after the workload always finishes.
    pub(crate) fn written(
        regions: &'a [Region],
        chunks: Vec<Vec<(u32, u16)>>,
        chunk: u32,
        max: u32,
        stoppable: bool,
    ) -> Self {
        ReadBack {
            regions,
            what: What::Written { chunks, chunk, max },
            region: 0,
            block: 0,
            stoppable,
            held: None,
        }
    }
}

impl Source for ReadBack<'_> {
    fn next(&mut self, now: u64) -> Next {
        if let Some((io, start_ns)) = self.held.take() {
            return Next::Io { io, start_ns };
        }
        while let Some(r) = self.regions.get(self.region) {
            let (first, len) = match &self.what {
                What::Every(bs) => {
                    if self.block >= r.len / *bs as u64 {
                        (self.region, self.block) = (self.region + 1, 0);
                        continue;
                    }
                    self.block += 1;
                    (self.block - 1, *bs)
                }
                What::Written { chunks, chunk, max } => {
                    let w = &chunks[self.region];
                    let i = self.block as usize;
                    if i >= w.len() {
                        (self.region, self.block) = (self.region + 1, 0);
                        continue;
                    }
                    let (seq, _) = w[i];
                    if seq == 0 {
                        self.block += 1;
                        continue;
                    }
                    let mut j = i + 1;
                    while j < w.len()
                        && w[j].0 == seq
                        && w[j].1 == w[j - 1].1.wrapping_add(1)
                        && (j + 1 - i) as u64 * *chunk as u64 <= *max as u64
                    {
                        j += 1;
                    }
                    self.block = j as u64;
                    (i as u64, (j - i) as u32 * *chunk)
                }
            };
            let unit = match &self.what {
                What::Every(bs) => *bs,
                What::Written { chunk, .. } => *chunk,
            };
            let io = NextIo {
                op: Op::Read,
                target: self.region as u32,
                offset: r.start + first * unit as u64,
                len,
            };
            return Next::Io { io, start_ns: now };
        }
        Next::Done
    }

    fn stoppable(&self) -> bool {
        self.stoppable
    }

    fn put_back(&mut self, io: NextIo, start_ns: u64) {
        self.held = Some((io, start_ns));
    }
}

/// fio's end_fsync: one fsync per target.
pub(crate) struct Flushes {
    pub(crate) next: u32,
    pub(crate) targets: u32,
}

impl Source for Flushes {
    fn next(&mut self, now: u64) -> Next {
        if self.next == self.targets {
            return Next::Done;
        }
        self.next += 1;
        let io = NextIo {
            op: Op::Fsync,
            target: self.next - 1,
            offset: 0,
            len: 0,
        };
        Next::Io { io, start_ns: now }
    }

    fn stoppable(&self) -> bool {
        false
    }

    fn put_back(&mut self, _: NextIo, _: u64) {
        unreachable!("flushes touch no block")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(poisson: bool) -> Vec<f64> {
        let mut p = Pacer {
            interval_ns: 1e6,
            next_due_ns: 0.0,
            poisson: poisson.then(|| FastRng::new(7)),
        };
        (0..20_000)
            .map(|_| {
                let before = p.next_due_ns;
                p.advance();
                p.next_due_ns - before
            })
            .collect()
    }

    fn mean_and_cv(g: &[f64]) -> (f64, f64) {
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64;
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_rates_mean() {
        let (mean, cv) = mean_and_cv(&gaps(true));
        assert!(
            (mean - 1e6).abs() < 0.03e6,
            "mean gap {mean} ns for 1000 IOPS"
        );
        // An exponential's standard deviation is its mean.
        assert!((cv - 1.0).abs() < 0.05, "coefficient of variation {cv}");
        let g = gaps(true);
        let short = g.iter().filter(|&&x| x < 1e6 * 0.5f64.ln().abs()).count();
        assert!(
            (short as f64 / g.len() as f64 - 0.5).abs() < 0.02,
            "median at ln 2"
        );
        assert_eq!(mean_and_cv(&gaps(false)), (1e6, 0.0), "linear: fixed gaps");
    }
}
