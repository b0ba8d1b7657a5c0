//! The checks of what a verified job reads back: each chunk against what
//! the thread knows of it, inline or on fio's verify_async threads.

use super::failure::{ChunkAt, ReadOf};
use super::pool;
use super::stamper::BadBlock;
use super::tracker::{Knows, VerifyState};
use super::verdict::{verdict, zeroes};

impl VerifyState {
    /// Checks each chunk of a full read this run wrote.
    pub(super) fn check_read(&mut self, target: u32, offset: u64, len: u32, data: &[u8]) {
        let mut wants = std::mem::take(&mut self.wants);
        self.wants_of(target, offset, len, &mut wants);
        self.check_wants(target, &wants, data, len);
        self.wants = wants;
    }

    /// Checks the chunks `wants` names of a read's `len` bytes, here or
    /// on a verify_async thread.
    pub(super) fn check_wants(&mut self, target: u32, wants: &[pool::Want], data: &[u8], len: u32) {
        if self.pool.is_some() {
            return self.check_async(target, wants, &data[..len as usize]);
        }
        let iv = self.stamper.interval();
        for w in wants {
            let chunk = &data[w.k * iv..(w.k + 1) * iv];
            let found = match w.trimmed {
                true => zeroes(chunk),
                false => self.stamper.check(chunk, w.at, w.part, w.io_offset),
            };
            let verdict = verdict(found, self.stamper.checked_pass(), w.seq, w.seed);
            self.record(target, w, chunk, len, verdict);
        }
    }

    /// What the check of each written chunk of a read must find.
    pub(super) fn wants_of(&self, target: u32, offset: u64, len: u32, out: &mut Vec<pool::Want>) {
        out.clear();
        let iv = self.stamper.interval();
        let map = &self.maps[target as usize];
        for (k, i) in map.range(offset, len).enumerate() {
            let (at, c) = (map.offset_of(i), map.chunks[i]);
            if c.seq == 0 {
                continue; // never written: nothing to expect
            }
            let part = c.part as usize;
            let (seq, seed) = match self.knows {
                _ if c.trimmed => (None, None),
                Knows::Run { check_seq } => (check_seq.then_some(c.seq), None),
                Knows::Replay { check_seed: true } => {
                    (None, self.write_seeds.get(c.seq as usize - 1).copied())
                }
                _ => (None, None),
            };
            out.push(pool::Want {
                k,
                at,
                part,
                io_offset: at - (part * iv) as u64,
                seq,
                seed,
                trimmed: c.trimmed,
            });
        }
    }

    /// verify_async: the read's bytes to a verify thread, in a free batch
    /// (waiting for one, and booking what comes back, when none is).
    pub(super) fn check_async(&mut self, target: u32, wants: &[pool::Want], data: &[u8]) {
        if wants.is_empty() {
            return;
        }
        self.book_checked(false);
        let mut b = loop {
            if let Some(b) = self.pool.as_mut().and_then(pool::Pool::free) {
                break b;
            }
            self.book_checked(true);
        };
        b.target = target;
        b.data.clear();
        b.data.extend_from_slice(data);
        b.wants.clear();
        b.wants.extend_from_slice(wants);
        if let Some(p) = self.pool.as_mut() {
            p.send(b);
        }
    }

    /// Books the batches the verify threads gave back: one at least when
    /// `wait` (if any is out), else those ready.
    pub(super) fn book_checked(&mut self, wait: bool) {
        let mut wait = wait;
        while let Some(b) = self.pool.as_mut().and_then(|p| p.checked(wait)) {
            wait = false;
            let iv = self.stamper.interval();
            let len = b.data.len() as u32;
            for (w, v) in b.wants.iter().zip(&b.verdicts) {
                let chunk = &b.data[w.k * iv..(w.k + 1) * iv];
                self.record(b.target, w, chunk, len, *v);
            }
            if let Some(p) = self.pool.as_mut() {
                p.give_back(b);
            }
        }
    }

    /// verify_async: waits for every batch out and books it.
    pub(crate) fn flush(&mut self) {
        while self.pool.as_ref().is_some_and(|p| p.out() > 0) {
            self.book_checked(true);
        }
    }

    /// Books one chunk's verdict: counted, traced, and a bad one reported
    /// and dumped.
    /// `w` is the chunk's place in a read of `len` bytes.
    pub(super) fn record(
        &mut self,
        target: u32,
        w: &pool::Want,
        chunk: &[u8],
        len: u32,
        verdict: Result<(), BadBlock>,
    ) {
        let (at, part, io_offset) = (w.at, w.part, w.io_offset);
        self.report.blocks_checked += 1;
        if let Some(t) = &self.trace {
            let bad = verdict.as_ref().err().map(ToString::to_string);
            t.verify(target, at, chunk.len(), bad);
        }
        let Err(why) = verdict else {
            return;
        };
        self.report.record_bad(at, why);
        self.say_bad(target, w, chunk, len, why);
        if let Some(d) = self.dump.as_mut().filter(|d| d.left > 0) {
            d.left -= 1;
            let name = d.names.get(target as usize).cloned().unwrap_or_default();
            let dir = d.dir.clone().unwrap_or_default();
            let write = |kind: &str, bytes: &[u8]| {
                let file = dir.join(format!("{name}.{at}.{kind}"));
                // A dump is a file: the gate refuses a device or FIFO there.
                let mode = hiops_safety::OutputMode::Truncate;
                let written = hiops_safety::create_output(&file, &Default::default(), mode)
                    .map_err(std::io::Error::other)
                    .and_then(|mut f| std::io::Write::write_all(&mut f, bytes));
                if let Err(e) = written {
                    eprintln!("hiops: verify_dump could not write {}: {e}", file.display());
                }
            };
            if why.in_header() {
                write("hdr_fail", chunk);
            } else if matches!(why, BadBlock::NotZero { .. }) {
                write("received", chunk);
                write("expected", &vec![0; chunk.len()]);
            } else {
                write("received", chunk);
                write(
                    "expected",
                    &self.stamper.expected(chunk, at, part, io_offset),
                );
            }
        }
    }

    /// fio's lines for a bad chunk, on stderr as the check finds it.
    fn say_bad(&self, target: u32, w: &pool::Want, chunk: &[u8], len: u32, why: BadBlock) {
        let iv = self.stamper.interval() as u64;
        let read = ReadOf {
            file: self.files.get(target as usize).map_or("", String::as_str),
            offset: w.at - w.k as u64 * iv,
            len: u64::from(len),
            listed: !matches!(self.knows, Knows::Every),
        };
        let c = ChunkAt {
            chunk,
            at: w.at,
            part: w.part,
            io_offset: w.io_offset,
        };
        eprint!("{}", self.stamper.fio_lines(why, &c, &read));
    }
}
