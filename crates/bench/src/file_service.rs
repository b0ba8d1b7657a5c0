//! Which file a thread serves next as a job runs (fio's file_service_type
//! and openfiles); the service itself is the job's:
//! [`hiops_job::file_service`].

pub use hiops_job::file_service::*;

use crate::distribution::zipf::ZipfSampler;
use hiops_rng::FastRng;

/// The generator's state of a file service.
#[derive(Clone, Debug)]
pub struct FileChooser {
    kind: FileServiceKind,
    ios_per_pick: u32,
    files: u32,
    current: u32,
    /// I/Os left on `current` before the next pick.
    ios_left: u32,
    /// sequential: bytes moved to `current`, and what finishes it.
    moved: u64,
    zipf: Option<ZipfSampler>,
}

impl FileChooser {
    pub fn new(s: &FileService, files: u32) -> FileChooser {
        assert!(files > 0);
        FileChooser {
            zipf: match s.kind {
                FileServiceKind::Zipf(t) => Some(ZipfSampler::new(files as u64, t)),
                _ => None,
            },
            kind: s.kind.clone(),
            ios_per_pick: s.ios_per_pick,
            files,
            // The first pick starts at file 0 (round-robin) or draws.
            current: files - 1,
            ios_left: 0,
            moved: 0,
        }
    }

    /// The file of the next I/O of `len` bytes; `file_len(i)` is file i's
    /// range (what finishes it for the sequential service).
    pub fn next(&mut self, rng: &mut FastRng, len: u32, file_len: impl Fn(u32) -> u64) -> u32 {
        if self.kind == FileServiceKind::Sequential {
            if self.moved >= file_len(self.current) || self.ios_left == 0 {
                self.current = (self.current + 1) % self.files;
                (self.moved, self.ios_left) = (0, 1);
            }
            self.moved += len as u64;
            return self.current;
        }
        if self.ios_left == 0 {
            self.current = self.pick(rng);
            self.ios_left = self.ios_per_pick;
        }
        self.ios_left -= 1;
        self.current
    }

    fn pick(&mut self, rng: &mut FastRng) -> u32 {
        let n = self.files as u64;
        let last = (n - 1) as f64;
        let i = match self.kind {
            FileServiceKind::RoundRobin => (self.current as u64 + 1) % n,
            FileServiceKind::Random => rng.below(n),
            FileServiceKind::Zipf(_) => self.zipf.as_ref().unwrap().sample(rng) - 1,
            FileServiceKind::Pareto(h) => {
                let pow = h.ln() / (1.0 - h).ln();
                (last * rng.unit().powf(pow)) as u64
            }
            FileServiceKind::Normal(dev) => {
                let (u1, u2) = (rng.unit().max(f64::MIN_POSITIVE), rng.unit());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (n as f64 / 2.0 + z * dev / 100.0 * n as f64).clamp(0.0, last) as u64
            }
            FileServiceKind::Sequential => unreachable!("handled in next"),
        };
        i.min(n - 1) as u32
    }
}

/// Where a file stands under fio's openfiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileState {
    Unopened,
    Open,
    Done,
}

/// fio's openfiles below the job's files (io_u.c, get_next_file_rr): the
/// files are served in turn, but at most `limit` are in service; one not
/// yet in service is skipped while the limit is reached, and a file leaves
/// when its range is done. So the first files finish before the others
/// start, as in fio (hiops keeps every file open all the same). When all
/// are done, the next pass starts over.
#[derive(Clone, Debug)]
pub(crate) struct OpenFiles {
    limit: u32,
    open: u32,
    state: Vec<FileState>,
    /// Bytes each file moved this pass, and its range's length.
    moved: Vec<u64>,
    lens: Vec<u64>,
    /// The round-robin's next file.
    next: usize,
}

impl OpenFiles {
    pub fn new(limit: u32, lens: Vec<u64>) -> OpenFiles {
        assert!(limit > 0 && !lens.is_empty());
        OpenFiles {
            limit,
            open: 0,
            state: vec![FileState::Unopened; lens.len()],
            moved: vec![0; lens.len()],
            lens,
            next: 0,
        }
    }

    /// The file of the next I/O of `len` bytes.
    pub fn next(&mut self, len: u32) -> u32 {
        if self.state.iter().all(|&s| s == FileState::Done) {
            self.state.fill(FileState::Unopened);
            self.moved.fill(0);
        }
        loop {
            let f = self.next;
            self.next = (self.next + 1) % self.state.len();
            match self.state[f] {
                FileState::Done => continue,
                FileState::Unopened if self.open >= self.limit => continue,
                FileState::Unopened => {
                    self.state[f] = FileState::Open;
                    self.open += 1;
                }
                FileState::Open => {}
            }
            self.moved[f] += len as u64;
            if self.moved[f] >= self.lens[f] {
                self.state[f] = FileState::Done;
                self.open -= 1;
            }
            return f as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_rng::FastRng;

    fn picks(text: &str, files: u32, n: usize) -> Vec<u32> {
        let mut c = FileChooser::new(&FileService::parse(text).unwrap(), files);
        let mut rng = FastRng::new(5);
        (0..n)
            .map(|_| c.next(&mut rng, 4096, |_| 4 * 4096))
            .collect()
    }

    #[test]
    fn each_service_chooses_as_fio_describes() {
        assert_eq!(picks("roundrobin", 3, 6), [0, 1, 2, 0, 1, 2]);
        assert_eq!(picks("roundrobin:2", 3, 6), [0, 0, 1, 1, 2, 2]);
        // sequential: a file's whole range (4 blocks here), then the next.
        assert_eq!(picks("sequential", 2, 10), [0, 0, 0, 0, 1, 1, 1, 1, 0, 0]);
        let r = picks("random", 4, 4000);
        assert!((0..4).all(|f| r.iter().filter(|&&x| x == f).count() > 800));
        let r = picks("random:4", 4, 400);
        assert!(
            r.chunks(4).all(|c| c.iter().all(|&x| x == c[0])),
            "4 I/Os per pick"
        );
        let z = picks("zipf:1.2", 10, 10000);
        let first = z.iter().filter(|&&x| x == 0).count();
        let last = z.iter().filter(|&&x| x == 9).count();
        assert!(
            first > 5 * last,
            "zipf favours the first file: {first} vs {last}"
        );
        let p = picks("pareto:0.9", 10, 10000);
        assert!(
            p.iter().filter(|&&x| x >= 8).count() > 5000,
            "pareto: the last files"
        );
        let g = picks("gauss:10", 10, 10000);
        assert!(g.iter().filter(|&&x| (4..=6).contains(&x)).count() > 8000);
    }

    #[test]
    fn openfiles_finishes_the_files_in_service_before_the_next_joins() {
        // Three files of 3 blocks, two in service at a time.
        let mut o = OpenFiles::new(2, vec![3 * 4096; 3]);
        let order: Vec<u32> = (0..18).map(|_| o.next(4096)).collect();
        assert_eq!(
            order,
            [0, 1, 0, 1, 0, 1, 2, 2, 2, 0, 1, 0, 1, 0, 1, 2, 2, 2],
            "files 0 and 1, then 2; then the next pass"
        );
        let mut one = OpenFiles::new(1, vec![2 * 4096, 4096]);
        let order: Vec<u32> = (0..6).map(|_| one.next(4096)).collect();
        assert_eq!(order, [0, 0, 1, 0, 0, 1]);
    }
}
