//! A job thread's verification: what each chunk of its targets last had
//! written, the writes it stamps, and the reads it must check.

use super::header::SEQ_MAX;
use super::report::VerifyReport;
use super::stamper::{Stamp, Stamper};
use super::{fiorand, pool, state_file, trim};

/// What hiops knows of one chunk of a target.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Chunk {
    /// The write last acknowledged here (0: none in this run).
    pub(crate) seq: u32,
    /// The write in flight here.
    pub(super) pending: u32,
    /// This chunk's place in its write (the pattern's phase, `%o`).
    pub(crate) part: u16,
    pub(super) busy: bool,
    /// Checked since it was written (verify_backlog).
    pub(crate) verified: bool,
    /// Trimmed since it was written (trim_percentage): reads zeroes.
    pub(crate) trimmed: bool,
}

/// The chunks of one target region.
pub(crate) struct BlockMap {
    pub(crate) start: u64,
    pub(crate) chunk: u64,
    pub(crate) chunks: Vec<Chunk>,
}

impl BlockMap {
    /// One map per region, in chunks of the verify interval.
    pub(crate) fn for_regions(
        regions: &[crate::generator::Region],
        interval: u32,
    ) -> Vec<BlockMap> {
        regions
            .iter()
            .map(|r| BlockMap {
                start: r.start,
                chunk: interval as u64,
                chunks: vec![Chunk::default(); (r.len / interval as u64) as usize],
            })
            .collect()
    }

    pub(crate) fn range(&self, offset: u64, len: u32) -> std::ops::Range<usize> {
        let first = ((offset - self.start) / self.chunk) as usize;
        first..first + (len as u64 / self.chunk) as usize
    }

    pub(crate) fn offset_of(&self, i: usize) -> u64 {
        self.start + i as u64 * self.chunk
    }
}

/// How a thread's reads are judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Knows {
    /// It wrote the chunks itself: each must be its last acknowledged
    /// write (unless `check_seq` is off: fio's verify_write_sequence=0).
    Run { check_seq: bool },
    /// verify_only of a writing job: the maps come from a replay of its
    /// writes; a hiops chunk must be of this pass, and in a job that reads
    /// and writes the header's rand_seed must be the replayed write's
    /// (fio's check).
    Replay { check_seed: bool },
    /// A read job: every chunk of each block it reads must hold its own
    /// header and payload (fio's read verify); with verify_only (every
    /// block, in blocks of the read size) a hiops chunk must also be of
    /// this pass.
    Every,
}

/// Where bad chunks are written (fio's verify_dump).
#[derive(Clone, Debug)]
pub(crate) struct Dump {
    /// Each target's file name, without its directory.
    pub(crate) names: Vec<String>,
    /// Where the files go (fio's --aux-path; None: the current directory).
    pub(crate) dir: Option<std::path::PathBuf>,
    pub(crate) left: u32,
}

/// A job thread's verification: what it stamped, what it must find.
pub(crate) struct VerifyState {
    pub(crate) stamper: Stamper,
    /// Empty for a read job.
    pub(crate) maps: Vec<BlockMap>,
    pub(crate) knows: Knows,
    /// do_verify: check reads (false: only stamp writes).
    pub(crate) check: bool,
    pub(crate) report: VerifyReport,
    /// fio's verify stream: each write's rand_seed.
    pub(super) seeds: fiorand::Taus88,
    /// Writes claimed so far.
    pub(super) writes: u64,
    /// Each write's rand_seed by number, kept for a replay that checks them.
    pub(super) write_seeds: Vec<u64>,
    /// Stop at the first bad chunk (verify_fatal).
    pub(crate) fatal: bool,
    pub(crate) dump: Option<Dump>,
    /// fio's verify state file, kept while the job writes.
    pub(crate) state: Option<state_file::StateLog>,
    /// fio's verify_backlog: checks during the writes.
    pub(crate) backlog: Option<Backlog>,
    /// fio's trim_backlog: trims of written blocks during the writes.
    pub(crate) trim: Option<trim::TrimBacklog>,
    /// fio's --debug=verify: a line per checked chunk.
    pub(crate) trace: Option<crate::debug_trace::Trace>,
    /// fio's verify_async: threads that check reads off this one.
    pub(crate) pool: Option<pool::Pool>,
    /// The chunks of the read being checked (reused).
    pub(super) wants: Vec<pool::Want>,
    /// Each target's name as the job gives it (fio's lines for a bad
    /// chunk name its file).
    pub(crate) files: Vec<String>,
}

/// fio's verify_backlog and verify_backlog_batch (io_u.c,
/// check_get_verify): when the writes not checked yet are a multiple of
/// `every` and the last I/O was a write, `batch` of the oldest are read
/// back and checked.
pub(crate) struct Backlog {
    pub(super) every: u64,
    pub(super) batch: u64,
    /// Done writes not checked yet: (target, offset, len, write number).
    pub(super) pending: std::collections::VecDeque<(u32, u64, u32, u32)>,
    pub(super) last_was_write: bool,
    pub(super) due: u64,
}

impl Backlog {
    pub(crate) fn new(every: u64, batch: u64) -> Backlog {
        Backlog {
            every: every.max(1),
            batch: if batch == 0 { every } else { batch },
            pending: Default::default(),
            last_was_write: false,
            due: 0,
        }
    }
}

impl VerifyState {
    pub(crate) fn new(stamper: Stamper, seed: u64, thread: u32, check: bool) -> VerifyState {
        VerifyState {
            stamper,
            maps: Vec::new(),
            knows: Knows::Every,
            check,
            report: VerifyReport::default(),
            seeds: fiorand::verify_stream(seed, thread),
            writes: 0,
            write_seeds: Vec::new(),
            fatal: false,
            dump: None,
            state: None,
            backlog: None,
            trim: None,
            trace: None,
            pool: None,
            wants: Vec::new(),
            files: Vec::new(),
        }
    }

    /// What a read-back pass reads: each chunk's write number (0: not to
    /// read: never written, or checked by verify_backlog since) and place
    /// in its write.
    pub(crate) fn to_read(&self) -> Vec<Vec<(u32, u16)>> {
        self.maps
            .iter()
            .map(|m| {
                m.chunks
                    .iter()
                    .map(|c| (if c.verified { 0 } else { c.seq }, c.part))
                    .collect()
            })
            .collect()
    }

    /// Keeps the state file up to date (at most every 250 ms), or writes it
    /// now (`now_ns` None: the job's writes are over).
    pub(crate) fn save_state(&mut self, now_ns: Option<u64>) {
        let writes = self.writes;
        if let Some(log) = self.state.as_mut() {
            match now_ns {
                Some(t) => log.tick(writes, t),
                None => log.save(writes, hiops_hal::now_ns()),
            }
        }
    }

    /// The next read verify_backlog wants, if one is due: the oldest done
    /// write still holding its chunks (a later write replaced the others).
    /// Like fio's get_next_verify, each draws a seed from the verify
    /// stream, so the writes after it carry fio's seeds.
    pub(crate) fn backlog_read(&mut self) -> Option<crate::generator::NextIo> {
        let b = self.backlog.as_mut()?;
        let n = b.pending.len() as u64;
        if b.due == 0 && n > 0 && n.is_multiple_of(b.every) && b.last_was_write {
            b.due = b.batch;
        }
        while b.due > 0 {
            let (target, offset, len, seq) = b.pending.pop_front()?;
            let map = &mut self.maps[target as usize];
            let r = map.range(offset, len);
            if map.chunks[r.clone()].iter().any(|c| c.seq != seq || c.busy) {
                continue;
            }
            b.due -= 1;
            for c in &mut map.chunks[r] {
                c.verified = true;
            }
            if self.stamper.seeded() {
                self.seeds.block_seed();
            }
            return Some(crate::generator::NextIo {
                op: hiops_hal::Op::Read,
                target,
                offset,
                len,
            });
        }
        None
    }

    /// The next trim trim_backlog wants, if one is due: the oldest picked
    /// write still holding its chunks, not checked by verify_backlog since.
    pub(crate) fn trim_next(&mut self) -> Option<crate::generator::NextIo> {
        let t = self.trim.as_mut()?;
        while t.ready() {
            let (target, offset, len, seq) = t.picked.pop_front()?;
            let map = &self.maps[target as usize];
            let r = map.range(offset, len);
            if map.chunks[r]
                .iter()
                .any(|c| c.seq != seq || c.busy || c.verified)
            {
                continue;
            }
            t.due -= 1;
            return Some(crate::generator::NextIo {
                op: hiops_hal::Op::Trim,
                target,
                offset,
                len,
            });
        }
        None
    }

    /// verify_fatal: a bad chunk was found; the job stops.
    pub(crate) fn halted(&self) -> bool {
        self.fatal && self.report.bad_blocks > 0
    }

    /// The next write's stamp (fio draws the seed as it fills the buffer).
    pub(super) fn next_stamp(&mut self) -> Stamp {
        let rand_seed = if self.stamper.seeded() {
            self.seeds.block_seed()
        } else {
            0
        };
        let numberio = self.writes as u16;
        self.writes += 1;
        Stamp {
            rand_seed,
            numberio,
            seq: ((self.writes - 1) % SEQ_MAX + 1) as u32,
        }
    }

    /// Claims the chunks of a command about to be staged: the stamp a
    /// write carries, or `None` when another command owns one of them (its
    /// outcome would be ambiguous: the caller offers it again later).
    pub(crate) fn claim(
        &mut self,
        op: hiops_hal::Op,
        target: u32,
        offset: u64,
        len: u32,
    ) -> Option<Stamp> {
        if op.is_sync() {
            return Some(Stamp::default());
        }
        if let Some(map) = self.maps.get(target as usize) {
            let r = map.range(offset, len);
            if map.chunks[r.clone()].iter().any(|c| c.busy) {
                return None;
            }
        }
        let stamp = if op.is_write() {
            self.next_stamp()
        } else {
            Stamp::default()
        };
        if let Some(log) = self.state.as_mut().filter(|_| op.is_write()) {
            log.claimed(self.writes, target, offset);
        }
        if let Some(map) = self.maps.get_mut(target as usize) {
            let r = map.range(offset, len);
            for c in &mut map.chunks[r] {
                c.busy = true;
                c.pending = stamp.seq;
            }
        }
        Some(stamp)
    }

    /// A dry run's write (verify_only's replay, fio's do_dry_run): the
    /// chunks are recorded as written by it.
    pub(crate) fn replay_write(&mut self, target: u32, offset: u64, len: u32, keep: bool) {
        let s = self.next_stamp();
        if matches!(self.knows, Knows::Replay { check_seed: true }) {
            self.write_seeds.push(s.rand_seed);
        }
        if let Some(map) = self.maps.get_mut(target as usize).filter(|_| keep) {
            let r = map.range(offset, len);
            for (k, c) in map.chunks[r].iter_mut().enumerate() {
                (c.seq, c.part) = (s.seq, k as u16);
            }
        }
    }

    /// Books a completed command: a full write commits its chunks, a full
    /// read checks the chunks written in this run (or every chunk, in a
    /// read job).
    pub(crate) fn settle(
        &mut self,
        op: hiops_hal::Op,
        target: u32,
        offset: u64,
        len: u32,
        moved: bool,
        data: &[u8],
    ) {
        if op.is_sync() {
            return;
        }
        if let Some(log) = self.state.as_mut().filter(|_| op.is_write()) {
            log.completed(target, offset, moved);
        }
        let Some(map) = self.maps.get_mut(target as usize) else {
            // A read job (or verify_only of one): every chunk of the block,
            // as fio's read verify checks each block it reads.
            if self.check && moved && !op.is_write() {
                let mut wants = std::mem::take(&mut self.wants);
                every_chunk(offset, len, self.stamper.interval(), &mut wants);
                self.check_wants(target, &wants, data, len);
                self.wants = wants;
            }
            return;
        };
        let r = map.range(offset, len);
        for c in &mut map.chunks[r.clone()] {
            debug_assert!(c.busy);
            c.busy = false;
        }
        if !moved {
            return; // a short transfer is counted, not verified
        }
        if op.is_write() {
            return self.wrote(target, offset, len);
        }
        if let Some(b) = self.backlog.as_mut() {
            b.last_was_write = false;
        }
        if let Some(t) = self.trim.as_mut() {
            t.last_read(op == hiops_hal::Op::Read);
        }
        if op == hiops_hal::Op::Trim {
            return self.trimmed(target, offset, len);
        }
        if self.check {
            self.check_read(target, offset, len, data);
        }
    }

    /// A full write is done: its chunks hold it, and the backlogs log it.
    pub(super) fn wrote(&mut self, target: u32, offset: u64, len: u32) {
        let map = &mut self.maps[target as usize];
        let r = map.range(offset, len);
        let seq = map.chunks[r.start].pending;
        for (k, c) in map.chunks[r].iter_mut().enumerate() {
            (c.seq, c.part, c.verified, c.trimmed) = (c.pending, k as u16, false, false);
        }
        if let Some(b) = self.backlog.as_mut() {
            b.pending.push_back((target, offset, len, seq));
            b.last_was_write = true;
        }
        if let Some(t) = self.trim.as_mut() {
            t.logged(target, offset, len, seq);
        }
    }

    /// A trim_backlog trim is done (fio's get_next_trim): its chunks are
    /// to read as zeroes (trim_verify_zero), or out of the check.
    pub(super) fn trimmed(&mut self, target: u32, offset: u64, len: u32) {
        let zero = self.trim.as_ref().is_some_and(|t| t.zero);
        let map = &mut self.maps[target as usize];
        let r = map.range(offset, len);
        for c in &mut map.chunks[r] {
            if zero {
                c.trimmed = true;
            } else {
                c.seq = 0;
            }
        }
    }
}

/// What a read job's check of a block read at `offset` must find: every
/// chunk holds a header of its own offset, as the block's part `k`.
fn every_chunk(offset: u64, len: u32, interval: usize, out: &mut Vec<pool::Want>) {
    out.clear();
    out.extend((0..len as usize / interval).map(|k| pool::Want {
        k,
        at: offset + (k * interval) as u64,
        part: k,
        io_offset: offset,
        seq: None,
        seed: None,
        trimmed: false,
    }));
}
