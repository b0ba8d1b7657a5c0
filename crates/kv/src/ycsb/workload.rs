//! What a workload asks for: its mix of operations, how it chooses keys
//! (YCSB's scrambled zipfian, latest, uniform), and its values; and the
//! `Chooser` each client draws them from.

use crate::value_size::{FieldLength, LengthSampler};
use crate::zipfian::{Zipfian, ZIPFIAN_CONSTANT};
use hiops_rng::FastRng;

pub(super) const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
pub(super) const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `v`, low byte
/// first, made non-negative as Java's `Math.abs` would.
pub fn fnv64(mut v: u64) -> u64 {
    let mut h = FNV_OFFSET;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(FNV_PRIME);
        v >>= 8;
    }
    (h as i64).unsigned_abs()
}

/// The key of record `n`.
pub fn key_of(n: u64) -> String {
    format!("user{}", fnv64(n))
}

/// The scrambled zipfian's item count and its precomputed zeta (YCSB's).
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// How keys are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyDist {
    Zipfian,
    Latest,
    Uniform,
}

/// One of YCSB's core workloads.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Workload {
    pub name: String,
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub rmw: f64,
    pub dist: KeyDist,
    pub max_scan: u64,
    pub field_count: usize,
    /// Each field's length (YCSB's fieldlengthdistribution); a record's
    /// value is its fields end to end.
    pub field_len: FieldLength,
}

impl Workload {
    pub fn core(name: char) -> Option<Workload> {
        let w = |read, update, insert, scan, rmw, dist| Workload {
            name: name.to_ascii_uppercase().to_string(),
            read,
            update,
            insert,
            scan,
            rmw,
            dist,
            max_scan: 100,
            field_count: 10,
            field_len: FieldLength::Constant { len: 100 },
        };
        Some(match name.to_ascii_uppercase() {
            'A' => w(0.5, 0.5, 0.0, 0.0, 0.0, KeyDist::Zipfian),
            'B' => w(0.95, 0.05, 0.0, 0.0, 0.0, KeyDist::Zipfian),
            'C' => w(1.0, 0.0, 0.0, 0.0, 0.0, KeyDist::Zipfian),
            'D' => w(0.95, 0.0, 0.05, 0.0, 0.0, KeyDist::Latest),
            'E' => w(0.0, 0.0, 0.05, 0.95, 0.0, KeyDist::Zipfian),
            'F' => w(0.5, 0.0, 0.0, 0.0, 0.5, KeyDist::Zipfian),
            _ => return None,
        })
    }

    /// An ETC-like workload (Facebook's memcached pool, as the HIOPS paper
    /// describes its application): 30 GETs per SET, zipfian keys, one value
    /// per record whose size is 90% under 500 bytes with a long tail.
    pub fn etc() -> Workload {
        Workload {
            name: "ETC".into(),
            read: 30.0 / 31.0,
            update: 1.0 / 31.0,
            insert: 0.0,
            scan: 0.0,
            rmw: 0.0,
            dist: KeyDist::Zipfian,
            max_scan: 100,
            field_count: 1,
            field_len: FieldLength::etc(),
        }
    }

    /// A-F (YCSB's core workloads) or ETC.
    pub fn named(name: &str) -> Option<Workload> {
        match name.to_ascii_uppercase().as_str() {
            "ETC" => Some(Workload::etc()),
            n if n.len() == 1 => Workload::core(n.chars().next()?),
            _ => None,
        }
    }

    /// The longest value a record may have.
    pub fn max_record_len(&self) -> usize {
        self.field_count * self.field_len.max()
    }

    /// A value of a drawn length: the first bytes of `buf` (at least
    /// [`Self::max_record_len`] long), filled with random bytes.
    pub fn draw_value<'v>(
        &self,
        lengths: &LengthSampler,
        rng: &mut FastRng,
        buf: &'v mut [u8],
    ) -> &'v [u8] {
        let len: usize = (0..self.field_count).map(|_| lengths.draw(rng)).sum();
        rng.fill(&mut buf[..len]);
        &buf[..len]
    }
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    #[serde(rename = "READ-MODIFY-WRITE")]
    ReadModifyWrite,
}

impl Op {
    pub const ALL: [Op; 5] = [
        Op::Read,
        Op::Update,
        Op::Insert,
        Op::Scan,
        Op::ReadModifyWrite,
    ];
    pub fn label(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// Chooses operations and keys for one client thread.
pub struct Chooser {
    w: Workload,
    records: u64,
    zipf: Zipfian,
    lengths: LengthSampler,
    rng: FastRng,
}

impl Chooser {
    pub fn new(w: &Workload, records: u64, seed: u64) -> Chooser {
        let zipf = match w.dist {
            KeyDist::Zipfian => {
                Zipfian::with_zeta(SCRAMBLED_ITEMS, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN)
            }
            _ => Zipfian::new(records.max(2), ZIPFIAN_CONSTANT),
        };
        Chooser {
            w: w.clone(),
            records,
            zipf,
            lengths: w.field_len.sampler(),
            rng: FastRng::new(seed),
        }
    }

    pub fn op(&mut self) -> Op {
        let mut u = self.rng.unit();
        for (p, op) in [
            (self.w.read, Op::Read),
            (self.w.update, Op::Update),
            (self.w.insert, Op::Insert),
            (self.w.scan, Op::Scan),
            (self.w.rmw, Op::ReadModifyWrite),
        ] {
            if u < p {
                return op;
            }
            u -= p;
        }
        Op::Read
    }

    /// A record number among the `inserted` acknowledged so far.
    pub fn key(&mut self, inserted: u64) -> u64 {
        let n = inserted.max(1);
        match self.w.dist {
            KeyDist::Uniform => self.rng.below(n),
            KeyDist::Zipfian => {
                // Scrambled: spread the popular items over the key space.
                // The space is the loaded records (plus inserts so far).
                let space = self.records.max(n);
                loop {
                    let k = fnv64(self.zipf.next(&mut self.rng)) % space;
                    if k < n {
                        return k;
                    }
                }
            }
            KeyDist::Latest => {
                self.zipf.grow(n);
                n - 1 - self.zipf.next(&mut self.rng).min(n - 1)
            }
        }
    }

    pub fn scan_len(&mut self) -> u64 {
        1 + self.rng.below(self.w.max_scan)
    }

    /// A new value for a write, of the workload's drawn length.
    pub fn value<'v>(&mut self, buf: &'v mut [u8]) -> &'v [u8] {
        self.w.draw_value(&self.lengths, &mut self.rng, buf)
    }
}
