//! One run of one reader model: R readers, each doing one 4 KiB random
//! O_DIRECT read at a time from FILE for S seconds after a 1 s warm-up.
//! Prints one JSON line: IOPS, p50/p99 latency, context switches per I/O,
//! machine clocks per I/O ((elapsed x CPUs - idle - iowait - steal) x TSC /
//! I/Os) and the process's own user and kernel clocks per I/O (getrusage over
//! the same window, as `hiops run` takes its process figures: x TSC /
//! I/Os). bench/peers.py alternates the models and takes ratios.
//!
//! ```sh
//! cargo run --release --manifest-path bench/peers/Cargo.toml -- MODEL FILE READERS SECONDS
//! ```
//! MODEL: pread | coop-threads | hiops-tasks | glommio | monoio | compio |
//! tokio-uring | tokio-blocking | tokio-uring-fs (tokio's own io_uring file
//! reads; needs `RUSTFLAGS="--cfg tokio_unstable"`). monoio, compio and
//! tokio-uring (the tokio-uring crate) are thread-per-core like glommio: one
//! runtime per CPU (ring_runtimes.rs).

mod direct_buf;
mod ring_runtimes;

use hiops_path::{tokio_driver, AlignedBuf, IoPath, PathConfig, Strategy, TaskConfig, TaskRing};
use hiops_stats::Histogram;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BS: u64 = 4096;

const USAGE: &str = "usage: hiops-peers MODEL FILE READERS SECONDS
MODEL: pread | coop-threads | hiops-tasks | glommio | monoio | compio | tokio-uring | tokio-blocking | tokio-uring-fs";

/// What every reader shares: when to count, when to stop, what it saw.
struct Run {
    blocks: u64,
    measuring: AtomicBool,
    stop: AtomicBool,
    lat: Mutex<Histogram>,
}

impl Run {
    /// A reader's loop body: the next offset, and booking one read.
    fn offset(&self, x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        (*x % self.blocks) * BS
    }

    fn book(&self, local: &mut Histogram, t0: Instant) {
        if self.measuring.load(Ordering::Relaxed) {
            local.record(t0.elapsed().as_nanos() as u64);
        }
    }

    fn merge(&self, local: &Histogram) {
        self.lat.lock().unwrap().merge(local);
    }

    fn going(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }
}

fn open(path: &str) -> File {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .expect("open FILE with O_DIRECT")
}

fn pread_threads(run: &Run, file: &File, readers: u64) {
    std::thread::scope(|s| {
        for r in 0..readers {
            s.spawn(move || {
                let (mut buf, mut h, mut x) =
                    (AlignedBuf::new(BS as usize), Histogram::new(), r * 7919 + 1);
                while run.going() {
                    let t0 = Instant::now();
                    file.read_exact_at(&mut buf, run.offset(&mut x)).unwrap();
                    run.book(&mut h, t0);
                }
                run.merge(&h);
            });
        }
    });
}

fn coop_threads(run: &Run, file: &File, readers: u64) {
    // As `hiops run` gives coop: a ring per thread (each runs solo).
    let rings = (readers as u32).div_ceil(hiops_path::COOP_THREADS_PER_RING);
    let config = PathConfig {
        strategy: Strategy::Coop,
        depth: (readers as u32).div_ceil(rings),
        rings,
        ..PathConfig::default()
    };
    let path = IoPath::open(config, vec![hiops_hal::Target::from_file(file)]).unwrap();
    std::thread::scope(|s| {
        for r in 0..readers {
            let path = &path;
            s.spawn(move || {
                let (mut buf, mut h, mut x) =
                    (AlignedBuf::new(BS as usize), Histogram::new(), r * 7919 + 1);
                while run.going() {
                    let t0 = Instant::now();
                    // Read in place in the ring's registered buffer: no
                    // reader here looks at the bytes (pread's neither).
                    path.read_lent(0, &mut buf, run.offset(&mut x), |d| d.len())
                        .unwrap();
                    run.book(&mut h, t0);
                }
                run.merge(&h);
            });
        }
    });
}

/// One current-thread tokio runtime per CPU, each with its ring.
fn hiops_tasks(file: &File, readers: u64, cpus: u64) {
    std::thread::scope(|s| {
        for cpu in 0..cpus {
            let mine = readers / cpus + u64::from(cpu < readers % cpus);
            if mine == 0 {
                continue;
            }
            // As `hiops run --tasks`: one thread per CPU, pinned; a lone
            // thread is left where the device's interrupt lands.
            let pinned = readers >= cpus && cpus > 1;
            s.spawn(move || {
                if pinned {
                    pin(cpu as usize);
                }
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_io()
                    .build()
                    .unwrap();
                let local = tokio::task::LocalSet::new();
                let config = TaskConfig {
                    depth: mine.max(1) as u32,
                    sleep_in_ring: true,
                    ..TaskConfig::default()
                };
                let ring = Rc::new(
                    TaskRing::open(&config, &[hiops_hal::Target::from_file(file)]).unwrap(),
                );
                local.block_on(&rt, async move {
                    let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
                    let readers: Vec<_> = (0..mine)
                        .map(|t| {
                            let ring = ring.clone();
                            tokio::task::spawn_local(async move {
                                let (mut buf, mut h, mut x) = (
                                    AlignedBuf::new(BS as usize),
                                    Histogram::new(),
                                    (cpu * 1000 + t) * 7919 + 1,
                                );
                                while run_ref().going() {
                                    let t0 = Instant::now();
                                    let (r, b) =
                                        ring.read_at(0, buf, run_ref().offset(&mut x)).await;
                                    buf = b;
                                    r.unwrap();
                                    run_ref().book(&mut h, t0);
                                }
                                run_ref().merge(&h);
                            })
                        })
                        .collect();
                    for r in readers {
                        r.await.unwrap();
                    }
                    ring.close();
                    driver.await.unwrap().unwrap();
                });
            });
        }
    });
}

/// glommio: one LocalExecutor per CPU, DmaFile reads.
fn glommio_tasks(path: &str, readers: u64, cpus: u64) {
    let handles: Vec<_> = (0..cpus)
        .map(|cpu| {
            let mine = readers / cpus + u64::from(cpu < readers % cpus);
            let path = path.to_string();
            glommio::LocalExecutorBuilder::new(glommio::Placement::Fixed(cpu as usize))
                .spawn(move || async move {
                    let file = Rc::new(glommio::io::DmaFile::open(&path).await.unwrap());
                    let tasks: Vec<_> = (0..mine)
                        .map(|t| {
                            let file = file.clone();
                            glommio::spawn_local(async move {
                                let (mut h, mut x) =
                                    (Histogram::new(), (cpu * 1000 + t) * 7919 + 1);
                                while run_ref().going() {
                                    let t0 = Instant::now();
                                    let r = file
                                        .read_at_aligned(run_ref().offset(&mut x), BS as usize)
                                        .await
                                        .unwrap();
                                    assert_eq!(r.len(), BS as usize);
                                    run_ref().book(&mut h, t0);
                                }
                                run_ref().merge(&h);
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await;
                    }
                })
                .unwrap()
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// What most Rust servers do today: tokio tasks with the read in
/// spawn_blocking.
fn tokio_blocking(file: &File, readers: u64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(readers as usize)
        .build()
        .unwrap();
    let fd = file.as_raw_fd();
    rt.block_on(async move {
        let tasks: Vec<_> = (0..readers)
            .map(|r| {
                tokio::spawn(async move {
                    let (mut buf, mut h, mut x) = (
                        Some(AlignedBuf::new(BS as usize)),
                        Histogram::new(),
                        r * 7919 + 1,
                    );
                    while run_ref().going() {
                        let t0 = Instant::now();
                        let off = run_ref().offset(&mut x);
                        let mut b = buf.take().unwrap();
                        b = tokio::task::spawn_blocking(move || {
                            // SAFETY: the descriptor stays open for the run; b is ours.
                            let n = unsafe {
                                libc::pread(fd, b.as_mut_ptr().cast(), BS as usize, off as i64)
                            };
                            assert_eq!(n, BS as isize);
                            b
                        })
                        .await
                        .unwrap();
                        buf = Some(b);
                        run_ref().book(&mut h, t0);
                    }
                    run_ref().merge(&h);
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
}

/// tokio's unstable io_uring file reads, as a tokio user writes them: one
/// `tokio::fs::File` per task (O_DIRECT, like every other model), a seek,
/// then `read_exact`. The read goes through the runtime's ring; the read
/// lands in tokio's own buffer first, so O_DIRECT may refuse it: the first
/// error is printed as the result instead of a figure.
#[cfg(tokio_unstable)]
fn tokio_uring_fs(path: &str, readers: u64) {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .enable_io_uring()
        .build()
        .unwrap();
    let path = path.to_string();
    let failed = rt.block_on(async move {
        let tasks: Vec<_> = (0..readers)
            .map(|r| {
                let path = path.clone();
                tokio::spawn(async move {
                    let mut f = tokio::fs::OpenOptions::new()
                        .read(true)
                        .custom_flags(libc::O_DIRECT)
                        .open(&path)
                        .await?;
                    let (mut buf, mut h, mut x) =
                        (vec![0u8; BS as usize], Histogram::new(), r * 7919 + 1);
                    while run_ref().going() {
                        let t0 = Instant::now();
                        let off = run_ref().offset(&mut x);
                        f.seek(std::io::SeekFrom::Start(off)).await?;
                        f.read_exact(&mut buf).await?;
                        run_ref().book(&mut h, t0);
                    }
                    run_ref().merge(&h);
                    Ok::<(), std::io::Error>(())
                })
            })
            .collect();
        let mut first = None;
        for t in tasks {
            if let Err(e) = t.await.unwrap() {
                run_ref().stop.store(true, Ordering::Relaxed);
                first.get_or_insert(e);
            }
        }
        first
    });
    if let Some(e) = failed {
        println!("{{\"model\": \"tokio-uring-fs\", \"readers\": {readers}, \"error\": \"{e}\"}}");
        std::process::exit(0);
    }
}

#[cfg(not(tokio_unstable))]
fn tokio_uring_fs(_: &str, _: u64) {
    eprintln!("tokio-uring-fs needs tokio's unstable io_uring: build with RUSTFLAGS=\"--cfg tokio_unstable\"");
    std::process::exit(2);
}

/// A model that could not do the reads (one the run asks for) prints why
/// instead of figures, as bench/peers.py expects.
fn refused(model: &str, readers: u64, r: std::io::Result<()>) {
    if let Err(e) = r {
        let why = e.to_string().replace('"', "'");
        println!("{{\"model\": \"{model}\", \"readers\": {readers}, \"error\": \"{why}\"}}");
        std::process::exit(0);
    }
}

static RUN: std::sync::OnceLock<Arc<Run>> = std::sync::OnceLock::new();

fn run_ref() -> &'static Run {
    RUN.get().expect("the run is set up")
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t with one CPU set, for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn busy_s() -> f64 {
    let f: Vec<u64> = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (f[..8].iter().sum::<u64>() - f[3] - f[4] - f[7]) as f64 / hz
}

/// The process's own use so far (getrusage, as `hiops run` takes its
/// process figures): context switches, user and kernel seconds.
#[derive(Clone, Copy)]
struct Own {
    ctx: u64,
    user_s: f64,
    sys_s: f64,
}

impl Own {
    fn now() -> Own {
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage fills `u`.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Own {
            ctx: (u.ru_nvcsw + u.ru_nivcsw) as u64,
            user_s: s(u.ru_utime),
            sys_s: s(u.ru_stime),
        }
    }

    fn since(self, earlier: Own) -> Own {
        Own {
            ctx: self.ctx - earlier.ctx,
            user_s: self.user_s - earlier.user_s,
            sys_s: self.sys_s - earlier.sys_s,
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
    let (model, path, readers, secs) = (
        a[1].clone(),
        a[2].clone(),
        a[3].parse::<u64>().unwrap(),
        a[4].parse::<u64>().unwrap(),
    );
    let file = open(&path);
    // A block device's metadata says 0 bytes: its end is its size.
    let blocks =
        std::io::Seek::seek(&mut &file, std::io::SeekFrom::End(0)).expect("FILE's size") / BS;
    assert!(blocks > 0, "FILE holds no whole 4 KiB block");
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    let run = Arc::new(Run {
        blocks,
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        lat: Mutex::new(Histogram::new()),
    });
    RUN.set(run.clone()).ok();
    let timer = {
        let run = run.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            let (b0, c0, t0) = (busy_s(), Own::now(), Instant::now());
            run.measuring.store(true, Ordering::Relaxed);
            std::thread::sleep(Duration::from_secs(secs));
            run.measuring.store(false, Ordering::Relaxed);
            let out = (
                busy_s() - b0,
                Own::now().since(c0),
                t0.elapsed().as_secs_f64(),
            );
            run.stop.store(true, Ordering::Relaxed);
            out
        })
    };
    match model.as_str() {
        "pread" => pread_threads(&run, &file, readers),
        "coop-threads" => coop_threads(&run, &file, readers),
        "hiops-tasks" => hiops_tasks(&file, readers, cpus),
        "glommio" => glommio_tasks(&path, readers, cpus),
        "monoio" => refused(&model, readers, ring_runtimes::monoio(&path, readers, cpus)),
        "compio" => refused(&model, readers, ring_runtimes::compio(&path, readers, cpus)),
        "tokio-uring" => refused(
            &model,
            readers,
            ring_runtimes::tokio_uring(&path, readers, cpus),
        ),
        "tokio-blocking" => tokio_blocking(&file, readers),
        "tokio-uring-fs" => tokio_uring_fs(&path, readers),
        m => {
            eprintln!("unknown model {m}\n{USAGE}");
            std::process::exit(2);
        }
    }
    let (busy, own, window) = timer.join().unwrap();
    let h = run.lat.lock().unwrap();
    let ios = h.count();
    let tsc = hiops_stats::tsc::tsc_hz();
    println!(
        "{{\"model\": \"{model}\", \"readers\": {readers}, \"iops\": {:.0}, \"p50_us\": {:.1}, \"p99_us\": {:.1}, \"ctx_per_io\": {:.3}, \"machine_clocks_per_io\": {:.0}, \"ios\": {ios}, \"window_s\": {window:.3}, \"user_clocks_per_io\": {:.0}, \"kernel_clocks_per_io\": {:.0}}}",
        ios as f64 / window,
        h.percentile(50.0) as f64 / 1e3,
        h.percentile(99.0) as f64 / 1e3,
        own.ctx as f64 / ios.max(1) as f64,
        busy * tsc / ios.max(1) as f64,
        own.user_s * tsc / ios.max(1) as f64,
        own.sys_s * tsc / ios.max(1) as f64,
    );
}
