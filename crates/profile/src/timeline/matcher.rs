//! Events joined into I/Os. A thread's system call (or io_uring
//! submission) is joined to the first bio that thread queues on a traced
//! device; the bio's request is followed by its device and first sector
//! (the block tracepoints' `dev`, `sector`) to the driver's issue and the
//! completion; the system call's exit on the same thread (or io_uring's
//! completion of the same request) ends the I/O. A bio merged into
//! another's request (block_bio_backmerge/frontmerge) is chained to that
//! request's first bio and shares its issue and completion. Everything
//! lives in tables sized at start: nothing is allocated per event.

use super::event::Event;
use super::window::{DeviceTime, Gap, StageCounts, Timeline};
use hiops_stats::Histogram;
use std::collections::HashMap;

/// The stages of one I/O, in order.
pub(crate) const ENTER: usize = 0;
pub(crate) const QUEUE: usize = 1;
pub(crate) const ISSUE: usize = 2;
pub(crate) const COMPLETE: usize = 3;
pub(crate) const EXIT: usize = 4;
const STAGES: usize = 5;

/// The gaps reported: (from, to, name).
pub(crate) const GAPS: [(usize, usize, &str); 5] = [
    (ENTER, QUEUE, "system call to block layer"),
    (QUEUE, ISSUE, "block layer to driver issue"),
    (ISSUE, COMPLETE, "device (driver issue to completion)"),
    (COMPLETE, EXIT, "completion to return"),
    (ENTER, EXIT, "total (system call to return)"),
];

#[derive(Clone, Copy, Default)]
struct Slot {
    /// CLOCK_MONOTONIC ns per stage; 0: not seen.
    t: [u64; STAGES],
    write: bool,
    tid: u32,
    req: u64,
    key: Option<(u32, u64)>,
    /// Where its bio ends (the sector after it).
    end: u64,
    /// The first bio of the request it was merged into (itself if none),
    /// and the next bio of that request after this one.
    head: u32,
    next: Option<u32>,
    /// The next request queued at the same sector while this one was in
    /// flight: the sector's requests are issued and completed in order.
    behind: Option<u32>,
    /// The disk its request went to (kept after the key is released).
    dev: u32,
    /// Submitted by io_submit: returned by the next io_getevents.
    aio: bool,
    /// Ended by its bio's completion in a bio-based driver.
    bio_done: bool,
}

/// A request still first in its sector's line this long after its issue,
/// when a later request issued there completes, lost its completion event:
/// it is dropped, not given the later one's (which would shift every
/// completion at that sector by one, with device times of hundreds of ms).
/// Far beyond any device time of a request at the head of its line.
const UNSEEN_AFTER_NS: u64 = 100_000_000;

pub(crate) struct Matcher {
    slots: Vec<Slot>,
    free: Vec<u32>,
    by_tid: HashMap<u32, u32>,
    by_sector: HashMap<(u32, u64), u32>,
    /// Bios by where they end: a back merge joins the request whose bio
    /// ends where the merged one starts.
    by_end: HashMap<(u32, u64), u32>,
    by_req: HashMap<u64, u32>,
    /// libaio: threads inside io_submit, and when each entered.
    aio_submitting: HashMap<u32, u64>,
    /// libaio: I/Os completed and not yet reaped by io_getevents.
    aio_done: Vec<u32>,
    gaps: [Histogram; GAPS.len()],
    negative: [u64; GAPS.len()],
    device: [Histogram; 2],
    /// The traced disks' dev_t, and each one's device time (read, write).
    disks: Vec<u32>,
    per_disk: Vec<[Histogram; 2]>,
    /// Disks whose device time came from bio completions, and disks seen
    /// issuing requests (whose bios' completions are not the device's).
    bio_based: Vec<bool>,
    requests: Vec<bool>,
    stages: [u64; STAGES],
    ios: u64,
    without_block_io: u64,
    block_only: u64,
    untracked: u64,
    merged: u64,
    /// Every event is on from here (ns); I/Os begun before are partial.
    pub(crate) on_ns: u64,
    partial: u64,
    completions_unseen: u64,
    /// The latest event's time.
    last_ns: u64,
    pub(crate) events: u64,
    pub(crate) lost: u64,
    pub(crate) late: u64,
}

impl Matcher {
    /// Room for `capacity` I/Os in flight at once, on `disks` (dev_t).
    pub(crate) fn new(capacity: usize, disks: &[u32]) -> Matcher {
        Matcher {
            slots: vec![Slot::default(); capacity],
            free: (0..capacity as u32).rev().collect(),
            by_tid: HashMap::with_capacity(capacity),
            by_sector: HashMap::with_capacity(capacity),
            by_end: HashMap::with_capacity(capacity),
            by_req: HashMap::with_capacity(capacity),
            aio_submitting: HashMap::with_capacity(capacity),
            aio_done: Vec::with_capacity(capacity),
            gaps: Default::default(),
            negative: [0; GAPS.len()],
            device: Default::default(),
            disks: disks.to_vec(),
            per_disk: disks.iter().map(|_| Default::default()).collect(),
            bio_based: vec![false; disks.len()],
            requests: vec![false; disks.len()],
            stages: [0; STAGES],
            ios: 0,
            without_block_io: 0,
            block_only: 0,
            untracked: 0,
            merged: 0,
            on_ns: 0,
            partial: 0,
            completions_unseen: 0,
            last_ns: 0,
            events: 0,
            lost: 0,
            late: 0,
        }
    }

    fn alloc(&mut self, stage: usize, t: u64) -> Option<u32> {
        let Some(i) = self.free.pop() else {
            self.untracked += 1;
            return None;
        };
        let s = &mut self.slots[i as usize];
        *s = Slot::default();
        s.head = i;
        s.t[stage] = t;
        Some(i)
    }

    pub(crate) fn on(&mut self, t: u64, e: Event) {
        self.events += 1;
        self.last_ns = self.last_ns.max(t);
        match e {
            Event::Enter { tid } => self.enter(t, tid),
            Event::Submit { tid, req } => self.submit(t, tid, req),
            Event::Queue {
                tid,
                dev,
                sector,
                write,
                sectors,
            } => {
                self.queue(t, tid, (dev, sector), write);
                self.note_end(dev, sector, sectors);
            }
            Event::Merge {
                dev,
                sector,
                sectors,
                front,
            } => self.merge(dev, sector, sectors, front),
            Event::Issue { dev, sector } => self.issue(t, (dev, sector)),
            Event::BioComplete { dev, sector } => self.bio_complete(t, dev, sector),
            Event::Complete { dev, sector } => self.complete(t, (dev, sector)),
            Event::AioEnter { tid } => {
                self.aio_submitting.insert(tid, t);
            }
            Event::AioExit { tid } => {
                self.aio_submitting.remove(&tid);
            }
            Event::AioReaped => self.aio_reaped(t),
            Event::Exit { tid } => self.exit(t, tid),
            Event::Posted { req } => {
                if let Some(i) = self.by_req.remove(&req) {
                    self.slots[i as usize].t[EXIT] = t;
                    self.finish(i);
                }
            }
        }
    }

    /// A system call entered on `tid`: a new I/O, ending one whose exit
    /// was never seen.
    fn enter(&mut self, t: u64, tid: u32) {
        if let Some(old) = self.by_tid.remove(&tid) {
            if self.slots[old as usize].req == 0 {
                self.finish(old); // its exit was never seen
            }
        }
        if let Some(i) = self.alloc(ENTER, t) {
            self.slots[i as usize].tid = tid;
            self.by_tid.insert(tid, i);
        }
    }

    /// io_uring took request `req` on `tid`: a new I/O held by its request.
    fn submit(&mut self, t: u64, tid: u32, req: u64) {
        if let Some(i) = self.alloc(ENTER, t) {
            self.slots[i as usize].req = req;
            self.slots[i as usize].tid = tid;
            // An earlier submission that queued no bio is still
            // held by its request.
            self.by_tid.insert(tid, i);
            if let Some(old) = self.by_req.insert(req, i) {
                self.finish(old);
            }
        }
    }

    /// Where the bio just queued at `sector` ends, for a back merge to
    /// find it.
    fn note_end(&mut self, dev: u32, sector: u64, sectors: u32) {
        if let Some(&i) = self.by_sector.get(&(dev, sector)) {
            let end = sector + u64::from(sectors);
            self.slots[i as usize].end = end;
            self.by_end.insert((dev, end), i);
        }
    }

    /// A bio ended: the completion itself on a disk that issues no
    /// requests (a bio-based driver), else already seen.
    fn bio_complete(&mut self, t: u64, dev: u32, sector: u64) {
        let requests = self.disks.iter().position(|&d| d == dev);
        let bio_only = !requests.is_some_and(|d| self.requests[d])
            && self
                .by_sector
                .get(&(dev, sector))
                .is_some_and(|&i| self.slots[i as usize].t[ISSUE] == 0);
        if bio_only {
            let i = self.by_sector[&(dev, sector)];
            self.slots[i as usize].bio_done = true;
            self.on(t, Event::Complete { dev, sector });
        }
    }

    /// libaio: io_getevents returned every I/O completed before it.
    fn aio_reaped(&mut self, t: u64) {
        while let Some(i) = self.aio_done.pop() {
            self.slots[i as usize].t[EXIT] = t;
            self.finish(i);
        }
    }

    /// The system call returned on `tid`: its I/O ends, unless it is
    /// io_uring's (ended by its completion).
    fn exit(&mut self, t: u64, tid: u32) {
        if let Some(i) = self.by_tid.remove(&tid) {
            if self.slots[i as usize].req == 0 {
                self.slots[i as usize].t[EXIT] = t;
                self.finish(i);
            } else {
                self.by_tid.insert(tid, i); // io_uring's: kept
            }
        }
    }

    fn queue(&mut self, t: u64, tid: u32, key: (u32, u64), write: bool) {
        let waiting = self
            .by_tid
            .get(&tid)
            .copied()
            .filter(|&i| self.slots[i as usize].t[QUEUE] == 0);
        let i = match waiting {
            Some(i) => {
                if self.slots[i as usize].req != 0 {
                    self.by_tid.remove(&tid); // io_uring: one bio per request
                }
                self.slots[i as usize].t[QUEUE] = t;
                i
            }
            // A bio no system call of ours is known to wait for (an
            // io_uring worker, readahead's further bios), or one of the
            // I/Os of a libaio io_submit.
            None => match self.alloc(QUEUE, t) {
                Some(i) => {
                    if let Some(&entered) = self.aio_submitting.get(&tid) {
                        let s = &mut self.slots[i as usize];
                        (s.t[ENTER], s.aio) = (entered, true);
                    }
                    i
                }
                None => return,
            },
        };
        let s = &mut self.slots[i as usize];
        s.write = write;
        s.key = Some(key);
        s.dev = key.0;
        if let Some(first) = self.by_sector.insert(key, i) {
            if self.slots[first as usize].t[QUEUE] < self.on_ns {
                // Queued while the events were being turned on: its issue
                // or completion may have gone unseen, so it holds no line.
                self.slots[first as usize].key = None;
                return;
            }
            // The same sector queued again before it completed: this one
            // waits behind the others there.
            self.by_sector.insert(key, first);
            let mut last = first;
            while let Some(b) = self.slots[last as usize].behind {
                last = b;
            }
            self.slots[last as usize].behind = Some(i);
        }
    }

    /// The driver issued the request at `key`: the first in its line not
    /// issued yet, with the bios merged into it.
    fn issue(&mut self, t: u64, key: (u32, u64)) {
        if let Some(d) = self.disks.iter().position(|&d| d == key.0) {
            self.requests[d] = true;
        }
        let mut line = self.by_sector.get(&key).copied();
        while let Some(i) = line.filter(|&i| self.slots[i as usize].t[ISSUE] != 0) {
            line = self.slots[i as usize].behind;
        }
        let mut at = line;
        while let Some(i) = at {
            let s = &mut self.slots[i as usize];
            s.t[ISSUE] = t;
            at = s.next;
        }
    }

    /// The request at `key` completed: the first in its line, with the
    /// bios merged into it; the next in line moves up.
    fn complete(&mut self, t: u64, key: (u32, u64)) {
        while let Some(&first) = self.by_sector.get(&key).filter(|&&i| self.unseen(i, t)) {
            self.drop_unseen(first, key);
        }
        let mut at = self.by_sector.remove(&key);
        if let Some(b) = at.and_then(|i| self.slots[i as usize].behind.take()) {
            self.by_sector.insert(key, b);
        }
        while let Some(i) = at {
            let s = &mut self.slots[i as usize];
            (s.t[COMPLETE], s.key, at) = (t, None, s.next.take());
            s.head = i;
            if self.by_end.get(&(s.dev, s.end)) == Some(&i) {
                self.by_end.remove(&(s.dev, s.end));
            }
            if s.aio {
                self.aio_done.push(i);
            } else if s.t[ENTER] == 0 {
                self.finish(i); // no system call waits for it
            }
        }
    }

    /// Whether request `i`, first in its line at a completion at `t`, lost
    /// its own completion: issued long before, with a later request behind
    /// it issued too.
    fn unseen(&self, i: u32, t: u64) -> bool {
        let s = &self.slots[i as usize];
        let issued = s.t[ISSUE];
        let next_issued = s
            .behind
            .is_some_and(|b| self.slots[b as usize].t[ISSUE] != 0);
        issued != 0 && next_issued && t > issued + UNSEEN_AFTER_NS
    }

    /// Drops request `i` (first at `key`) and the bios merged into it; the
    /// next in line moves up.
    fn drop_unseen(&mut self, i: u32, key: (u32, u64)) {
        self.by_sector.remove(&key);
        if let Some(b) = self.slots[i as usize].behind.take() {
            self.by_sector.insert(key, b);
        }
        let mut at = Some(i);
        while let Some(j) = at {
            at = self.slots[j as usize].next.take();
            self.slots[j as usize].key = None;
            self.release(j);
            self.completions_unseen += 1;
        }
    }

    /// Chains the bio queued at `sector` to the request it was merged
    /// into. A back merge joins the request whose bio ends at `sector`; a
    /// front merge makes this bio the request's first, whose sector its
    /// issue and completion will carry.
    fn merge(&mut self, dev: u32, sector: u64, sectors: u32, front: bool) {
        let Some(&bio) = self.by_sector.get(&(dev, sector)) else {
            return; // not a bio we follow
        };
        let after = (dev, sector + u64::from(sectors));
        let into = if front {
            self.by_sector.get(&after)
        } else {
            self.by_end.get(&(dev, sector))
        };
        let Some(&other) = into.filter(|&&o| o != bio) else {
            return;
        };
        let head = self.slots[other as usize].head;
        if front {
            // This bio leads now: the old first bio and its chain follow.
            self.unlink_sector(after, head);
            self.slots[head as usize].key = None;
            self.slots[bio as usize].next = Some(head);
            let mut at = Some(head);
            while let Some(i) = at {
                self.slots[i as usize].head = bio;
                at = self.slots[i as usize].next;
            }
        } else {
            self.unlink_sector((dev, sector), bio);
            let next = self.slots[head as usize].next.replace(bio);
            let s = &mut self.slots[bio as usize];
            (s.key, s.head, s.next) = (None, head, next);
        }
        self.merged += 1;
    }

    /// Takes slot `i` out of the line of requests at `key`.
    fn unlink_sector(&mut self, key: (u32, u64), i: u32) {
        let behind = self.slots[i as usize].behind.take();
        let Some(&first) = self.by_sector.get(&key) else {
            return;
        };
        if first == i {
            match behind {
                Some(b) => self.by_sector.insert(key, b),
                None => self.by_sector.remove(&key),
            };
            return;
        }
        let mut at = first;
        while let Some(b) = self.slots[at as usize].behind {
            if b == i {
                self.slots[at as usize].behind = behind;
                return;
            }
            at = b;
        }
    }

    /// Frees I/O `i`'s slot and every index that points at it.
    fn release(&mut self, i: u32) {
        let s = self.slots[i as usize];
        if let Some(key) = s.key {
            self.unlink_sector(key, i);
        }
        if self.by_end.get(&(s.dev, s.end)) == Some(&i) {
            self.by_end.remove(&(s.dev, s.end));
        }
        if s.req != 0 && self.by_req.get(&s.req) == Some(&i) {
            self.by_req.remove(&s.req);
        }
        if s.tid != 0 && self.by_tid.get(&s.tid) == Some(&i) {
            self.by_tid.remove(&s.tid);
        }
        self.free.push(i);
    }

    /// Records an I/O's stages and gaps, and frees its slot.
    fn finish(&mut self, i: u32) {
        let s = self.slots[i as usize];
        self.release(i);
        let first = s.t.iter().copied().filter(|&at| at != 0).min().unwrap_or(0);
        if first < self.on_ns {
            // Under way while the events were being turned on, one CPU's
            // ring after another: some of its stages may have gone unseen.
            self.partial += 1;
            return;
        }
        self.ios += 1;
        if s.t[ISSUE] != 0 && s.t[COMPLETE] == 0 && s.t[EXIT] != 0 {
            // Returned to its caller, so its request did complete.
            self.completions_unseen += 1;
        }
        for (n, &at) in self.stages.iter_mut().zip(&s.t) {
            *n += u64::from(at != 0);
        }
        if s.t[ENTER] != 0 && s.t[QUEUE] == 0 {
            self.without_block_io += 1;
        }
        if s.t[ENTER] == 0 {
            self.block_only += 1;
        }
        for (g, &(from, to, _)) in GAPS.iter().enumerate() {
            let (a, b) = (s.t[from], s.t[to]);
            if a == 0 || b == 0 {
                continue;
            }
            if b < a {
                self.negative[g] += 1;
            }
            self.gaps[g].record(b.saturating_sub(a));
            if (from, to) == (ISSUE, COMPLETE) {
                self.record_device(&s, b.saturating_sub(a), false);
            }
        }
        let (queued, done) = (s.t[QUEUE], s.t[COMPLETE]);
        if s.bio_done && queued != 0 && done >= queued {
            // A bio-based driver: the bio's life is the device's time.
            self.record_device(&s, done - queued, true);
        }
    }

    /// Requests open at the end that were issued long before the last
    /// event and not completed.
    fn unseen_at_end(&self) -> u64 {
        let free: std::collections::HashSet<u32> = self.free.iter().copied().collect();
        (0..self.slots.len() as u32)
            .filter(|i| !free.contains(i))
            .map(|i| self.slots[i as usize].t)
            .filter(|t| t[ISSUE] != 0 && t[COMPLETE] == 0)
            .filter(|t| t[ISSUE] + UNSEEN_AFTER_NS < self.last_ns)
            .count() as u64
    }

    fn record_device(&mut self, s: &Slot, ns: u64, bio_based: bool) {
        let dir = usize::from(s.write);
        self.device[dir].record(ns);
        if let Some(d) = self.disks.iter().position(|&d| d == s.dev) {
            self.per_disk[d][dir].record(ns);
            self.bio_based[d] |= bio_based;
        }
    }

    /// The figures so far; I/Os still open are counted, not charged.
    /// `devices` names the disks given to [`Matcher::new`], in order.
    pub(crate) fn timeline(&self, devices: Vec<String>, window_s: f64) -> Timeline {
        let gap = Gap::of;
        assert!(
            self.stages.iter().all(|&n| n <= self.ios),
            "a stage seen by more I/Os ({:?}) than finished ({})",
            self.stages,
            self.ios
        );
        let [enter, queue, issue, complete, exit] = self.stages;
        Timeline {
            devices: devices.clone(),
            window_s,
            events: self.events,
            lost: self.lost,
            late: self.late,
            ios: self.ios,
            stages: StageCounts {
                syscall: enter,
                block_entry: queue,
                driver_issue: issue,
                completion: complete,
                returned: exit,
            },
            gaps: GAPS
                .iter()
                .zip(&self.gaps)
                .zip(&self.negative)
                .map(|((&(_, _, name), h), &n)| gap(h, name, n))
                .collect(),
            device_read: (self.device[0].count() > 0)
                .then(|| gap(&self.device[0], "device read", 0)),
            device_write: (self.device[1].count() > 0)
                .then(|| gap(&self.device[1], "device write", 0)),
            per_device: devices
                .iter()
                .zip(self.per_disk.iter().zip(&self.bio_based))
                .map(|(name, ([r, w], &bio_based))| DeviceTime {
                    device: name.clone(),
                    read: (r.count() > 0).then(|| gap(r, "device read", 0)),
                    write: (w.count() > 0).then(|| gap(w, "device write", 0)),
                    bio_based,
                })
                .collect(),
            without_block_io: self.without_block_io,
            block_only: self.block_only,
            in_flight_at_end: (self.slots.len() - self.free.len()) as u64,
            completions_unseen: self.completions_unseen + self.unseen_at_end(),
            untracked: self.untracked,
            merged: self.merged,
            partial: self.partial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: u32 = 7 << 20;

    /// `tid` queues a 4 KiB read bio at `sector` of DEV.
    fn read_bio(tid: u32, sector: u64) -> Event {
        Event::Queue {
            tid,
            dev: DEV,
            sector,
            write: false,
            sectors: 8,
        }
    }

    fn sync_io(m: &mut Matcher, t0: u64, tid: u32, sector: u64) {
        m.on(t0, Event::Enter { tid });
        m.on(t0 + 1_000, read_bio(tid, sector));
        m.on(t0 + 3_000, Event::Issue { dev: DEV, sector });
        m.on(t0 + 23_000, Event::Complete { dev: DEV, sector });
        m.on(t0 + 30_000, Event::Exit { tid });
    }

    #[test]
    fn a_system_call_is_followed_through_its_request() {
        let mut m = Matcher::new(8, &[DEV]);
        sync_io(&mut m, 1_000_000, 10, 8);
        sync_io(&mut m, 2_000_000, 11, 16);
        let t = m.timeline(vec!["loop0".into()], 1.0);
        assert_eq!(t.ios, 2);
        assert_eq!(t.per_device[0].device, "loop0");
        assert_eq!(t.per_device[0].read.as_ref().unwrap().mean_ns, 20_000.0);
        assert_eq!(t.stages.syscall, 2);
        assert_eq!(t.stages.driver_issue, 2);
        assert_eq!(t.stages.returned, 2);
        let means: Vec<f64> = t.gaps.iter().map(|g| g.mean_ns).collect();
        assert_eq!(means, [1_000.0, 2_000.0, 20_000.0, 7_000.0, 30_000.0]);
        assert_eq!(t.device_read.unwrap().count, 2);
        assert!(t.device_write.is_none());
        assert_eq!(t.in_flight_at_end, 0);
    }

    #[test]
    fn io_uring_requests_interleave_and_cache_hits_reach_no_device() {
        let mut m = Matcher::new(8, &[DEV]);
        m.on(100, Event::Submit { tid: 5, req: 0xa });
        m.on(
            110,
            Event::Queue {
                tid: 5,
                dev: DEV,
                sector: 0,
                write: true,
                sectors: 8,
            },
        );
        m.on(120, Event::Submit { tid: 5, req: 0xb });
        m.on(
            130,
            Event::Queue {
                tid: 5,
                dev: DEV,
                sector: 8,
                write: false,
                sectors: 8,
            },
        );
        m.on(
            140,
            Event::Issue {
                dev: DEV,
                sector: 8,
            },
        );
        m.on(
            150,
            Event::Issue {
                dev: DEV,
                sector: 0,
            },
        );
        m.on(
            200,
            Event::Complete {
                dev: DEV,
                sector: 0,
            },
        );
        m.on(210, Event::Posted { req: 0xa });
        m.on(
            300,
            Event::Complete {
                dev: DEV,
                sector: 8,
            },
        );
        m.on(310, Event::Posted { req: 0xb });
        // A buffered read served by the page cache.
        m.on(400, Event::Enter { tid: 6 });
        m.on(450, Event::Exit { tid: 6 });
        let t = m.timeline(vec![], 1.0);
        assert_eq!(t.ios, 3);
        assert_eq!(t.without_block_io, 1);
        assert_eq!(t.device_write.unwrap().mean_ns, 50.0);
        assert_eq!(t.device_read.unwrap().mean_ns, 160.0);
        assert_eq!(t.gaps[4].count, 3);
        assert!(t.gaps.iter().all(|g| g.negative == 0));
    }

    #[test]
    fn a_bio_based_driver_is_timed_from_block_entry_to_bio_completion() {
        const REQ: u32 = 8 << 20;
        let mut m = Matcher::new(8, &[DEV, REQ]);
        let q = |dev, sector| Event::Queue {
            tid: 3,
            dev,
            sector,
            write: false,
            sectors: 8,
        };
        // zram: no request, the bio ends inside the call.
        m.on(100, Event::Enter { tid: 3 });
        m.on(110, q(DEV, 0));
        m.on(
            150,
            Event::BioComplete {
                dev: DEV,
                sector: 0,
            },
        );
        m.on(170, Event::Exit { tid: 3 });
        // A request-based disk: its bio's completion follows the request's
        // and is not the device's time.
        m.on(200, Event::Enter { tid: 3 });
        m.on(210, q(REQ, 8));
        m.on(
            220,
            Event::Issue {
                dev: REQ,
                sector: 8,
            },
        );
        m.on(
            300,
            Event::Complete {
                dev: REQ,
                sector: 8,
            },
        );
        m.on(
            305,
            Event::BioComplete {
                dev: REQ,
                sector: 8,
            },
        );
        m.on(310, Event::Exit { tid: 3 });
        // A request whose driver issue the tracer missed: not bio-based.
        m.on(400, Event::Enter { tid: 3 });
        m.on(410, q(REQ, 16));
        m.on(
            500,
            Event::Complete {
                dev: REQ,
                sector: 16,
            },
        );
        m.on(510, Event::Exit { tid: 3 });
        let t = m.timeline(vec!["zram0".into(), "vdb".into()], 1.0);
        assert_eq!(t.ios, 3);
        let (zram, disk) = (&t.per_device[0], &t.per_device[1]);
        assert!(zram.bio_based && !disk.bio_based);
        assert_eq!(zram.read.as_ref().unwrap().mean_ns, 40.0);
        assert_eq!(disk.read.as_ref().unwrap().mean_ns, 80.0);
        assert_eq!(t.stages.driver_issue, 1);
    }

    #[test]
    fn bios_merged_into_one_request_share_its_issue_and_completion() {
        let mut m = Matcher::new(8, &[DEV]);
        let q = |sector| read_bio(7, sector);
        let merge = |sector, front| Event::Merge {
            dev: DEV,
            sector,
            sectors: 8,
            front,
        };
        // One io_submit: 8 and 16 back-merged into the request at 0; 32
        // and 24 front-merged into the one at 40, which starts at 24 then.
        m.on(1_000, Event::AioEnter { tid: 7 });
        for (t, sector, merged) in [
            (1_100, 0, None),
            (1_200, 8, Some(false)),
            (1_300, 16, Some(false)),
            (1_400, 40, None),
            (1_500, 32, Some(true)),
            (1_600, 24, Some(true)),
        ] {
            m.on(t, q(sector));
            if let Some(front) = merged {
                m.on(t + 1, merge(sector, front));
            }
        }
        m.on(1_700, Event::AioExit { tid: 7 });
        let mut keys: Vec<_> = m.by_sector.keys().copied().collect();
        keys.sort_unstable();
        assert_eq!(keys, [(DEV, 0), (DEV, 24)]);
        for (t, sector) in [(2_000, 0), (2_100, 24)] {
            m.on(t, Event::Issue { dev: DEV, sector });
        }
        for (t, sector) in [(5_000, 0), (5_100, 24)] {
            m.on(t, Event::Complete { dev: DEV, sector });
        }
        m.on(6_000, Event::AioReaped);
        let t = m.timeline(vec![], 1.0);
        assert_eq!((t.ios, t.merged, t.in_flight_at_end), (6, 4, 0));
        assert_eq!((t.stages.driver_issue, t.stages.completion), (6, 6));
        // Each bio's device time is its request's.
        assert_eq!((t.gaps[2].count, t.gaps[2].max_ns), (6, 3_000));
        assert!(m.by_end.is_empty() && m.by_sector.is_empty());
    }

    #[test]
    fn an_io_under_way_while_tracing_was_turned_on_is_left_out() {
        let mut m = Matcher::new(8, &[DEV]);
        m.on_ns = 1_500;
        let q = read_bio;
        // Thread 1 entered before every ring was on (its completion, on
        // the other CPU, went unseen); thread 2 after.
        m.on(1_000, Event::Enter { tid: 1 });
        m.on(1_100, q(1, 0));
        m.on(
            1_200,
            Event::Issue {
                dev: DEV,
                sector: 0,
            },
        );
        m.on(2_000, Event::Exit { tid: 1 });
        // A bio queued then whose request went unseen holds no line: a
        // later request at its sector is followed.
        m.on(1_300, q(3, 8));
        m.on(2_100, Event::Enter { tid: 2 });
        m.on(2_200, q(2, 8));
        m.on(
            2_300,
            Event::Issue {
                dev: DEV,
                sector: 8,
            },
        );
        m.on(
            2_400,
            Event::Complete {
                dev: DEV,
                sector: 8,
            },
        );
        m.on(2_500, Event::Exit { tid: 2 });
        let t = m.timeline(vec![], 1.0);
        assert_eq!((t.ios, t.partial, t.stages.completion), (1, 1, 1));
        assert_eq!((t.stages.driver_issue, t.in_flight_at_end), (1, 1));
    }

    #[test]
    fn requests_of_one_sector_in_flight_at_once_complete_in_turn() {
        let mut m = Matcher::new(8, &[DEV]);
        let sector = 64;
        // Two threads read the same block at once.
        for (t, tid) in [(1_000, 1), (1_100, 2)] {
            m.on(t, Event::Enter { tid });
            m.on(
                t + 10,
                Event::Queue {
                    tid,
                    dev: DEV,
                    sector,
                    write: false,
                    sectors: 8,
                },
            );
        }
        for t in [2_000, 2_100] {
            m.on(t, Event::Issue { dev: DEV, sector });
        }
        for (t, tid) in [(3_000, 1), (3_200, 2)] {
            m.on(t, Event::Complete { dev: DEV, sector });
            m.on(t + 50, Event::Exit { tid });
        }
        let t = m.timeline(vec![], 1.0);
        assert_eq!((t.ios, t.in_flight_at_end), (2, 0));
        assert_eq!((t.stages.driver_issue, t.stages.completion), (2, 2));
        assert_eq!((t.gaps[2].count, t.gaps[2].max_ns), (2, 1_100));
        assert!(m.by_sector.is_empty());
    }

    #[test]
    fn a_completion_never_seen_does_not_take_the_next_one_at_its_sector() {
        let mut m = Matcher::new(8, &[DEV]);
        let sector = 64;
        let ms = 1_000_000;
        // One libaio read: it waits for its completion and a reap.
        let read = |m: &mut Matcher, t: u64| {
            m.on(t, Event::AioEnter { tid: 7 });
            m.on(t + 10, read_bio(7, sector));
            m.on(t + 15, Event::AioExit { tid: 7 });
            m.on(t + 20, Event::Issue { dev: DEV, sector });
        };
        // The first read's completion event never comes; 300 ms later
        // another read of the same block is issued and completes in 7 us.
        read(&mut m, ms);
        read(&mut m, 301 * ms);
        m.on(301 * ms + 7_020, Event::Complete { dev: DEV, sector });
        m.on(301 * ms + 7_100, Event::AioReaped);
        let t = m.timeline(vec![], 1.0);
        assert_eq!(t.completions_unseen, 1);
        assert_eq!(t.device_read.as_ref().map(|g| g.max_ns), Some(7_000));
        assert_eq!((t.ios, t.in_flight_at_end), (1, 0));
        assert!(m.by_sector.is_empty());
        // A system call that returned with its request's completion unseen.
        m.on(303 * ms, Event::Enter { tid: 9 });
        m.on(303 * ms + 10, read_bio(9, 512));
        m.on(
            303 * ms + 20,
            Event::Issue {
                dev: DEV,
                sector: 512,
            },
        );
        m.on(303 * ms + 9_000, Event::Exit { tid: 9 });
        let t = m.timeline(vec![], 1.0);
        assert_eq!((t.completions_unseen, t.ios), (2, 2));
        // A request still open long after its issue is named too.
        read(&mut m, 304 * ms);
        m.on(500 * ms, Event::AioReaped);
        assert_eq!(m.timeline(vec![], 1.0).completions_unseen, 3);
    }

    #[test]
    fn libaio_ios_run_from_io_submit_to_the_io_getevents_after_completion() {
        let mut m = Matcher::new(8, &[DEV]);
        let q = |sector| read_bio(7, sector);
        // One io_submit of two iocbs, one bio each.
        m.on(1_000, Event::AioEnter { tid: 7 });
        m.on(1_100, q(0));
        m.on(1_200, q(8));
        m.on(1_300, Event::AioExit { tid: 7 });
        // A bio queued outside io_submit (another path) is not one of them.
        m.on(1_400, q(16));
        for (t, sector) in [(1_500, 0), (1_600, 8), (1_700, 16)] {
            m.on(t, Event::Issue { dev: DEV, sector });
        }
        m.on(
            5_500,
            Event::Complete {
                dev: DEV,
                sector: 0,
            },
        );
        m.on(6_000, Event::AioReaped);
        m.on(
            7_600,
            Event::Complete {
                dev: DEV,
                sector: 8,
            },
        );
        m.on(
            7_700,
            Event::Complete {
                dev: DEV,
                sector: 16,
            },
        );
        let t = m.timeline(vec![], 1.0);
        assert_eq!(t.ios, 2, "the orphan and the first, reaped");
        m.on(9_000, Event::AioReaped);
        let t = m.timeline(vec![], 1.0);
        assert_eq!((t.ios, t.stages.syscall, t.stages.returned), (3, 2, 2));
        assert_eq!(t.block_only, 1);
        // Totals: io_submit entry to the io_getevents return after each.
        assert_eq!(t.gaps[4].count, 2);
        assert_eq!(
            t.gaps[4].mean_ns,
            ((6_000 - 1_000) + (9_000 - 1_000)) as f64 / 2.0
        );
        assert!(t.gaps.iter().all(|g| g.negative == 0));
    }

    #[test]
    fn orphans_are_counted_and_the_table_does_not_overflow() {
        let mut m = Matcher::new(2, &[DEV]);
        // A bio with no system call (an io_uring worker's): ended by its
        // completion.
        m.on(
            10,
            Event::Queue {
                tid: 1,
                dev: DEV,
                sector: 0,
                write: false,
                sectors: 8,
            },
        );
        m.on(
            20,
            Event::Issue {
                dev: DEV,
                sector: 0,
            },
        );
        m.on(
            30,
            Event::Complete {
                dev: DEV,
                sector: 0,
            },
        );
        m.on(40, Event::Enter { tid: 2 });
        m.on(50, Event::Enter { tid: 3 });
        m.on(60, Event::Enter { tid: 4 }); // no room
        let t = m.timeline(vec![], 1.0);
        assert_eq!((t.ios, t.block_only), (1, 1));
        assert_eq!(t.untracked, 1);
        assert_eq!(t.in_flight_at_end, 2);
        // Completions of requests never seen change nothing.
        m.on(
            70,
            Event::Complete {
                dev: DEV,
                sector: 99,
            },
        );
        m.on(80, Event::Exit { tid: 9 });
        assert_eq!(m.timeline(vec![], 1.0).ios, 1);
    }
}
