//! Many threads reading one file through the HIOPS path.
//!
//!     cargo run --release -p hiops-path --example many_threads -- FILE [STRATEGY] [THREADS]
//!
//! Reads random 4 KiB blocks of FILE (O_DIRECT) from THREADS threads (64) for
//! two seconds through STRATEGY (coop) and prints the IOPS and the path's
//! counters.

use hiops_path::{AlignedBuf, IoPath, PathConfig, Strategy, ThreadStats};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let file_name = args
        .next()
        .ok_or("usage: many_threads FILE [STRATEGY] [THREADS]")?;
    let strategy = match args.next() {
        Some(s) => Strategy::parse(&s).ok_or(format!("unknown strategy {s}"))?,
        None => Strategy::Coop,
    };
    let threads: u64 = args.next().map(|t| t.parse()).transpose()?.unwrap_or(64);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&file_name)?;
    let blocks = file.metadata()?.len() / 4096;
    if blocks == 0 {
        return Err("the file is smaller than one 4 KiB block".into());
    }
    let path = IoPath::open(
        PathConfig {
            strategy,
            depth: threads.clamp(1, 256) as u32,
            ..PathConfig::default()
        },
        vec![hiops_hal::Target::from_file(&file)],
    )?;
    let stop = Instant::now() + Duration::from_secs(2);
    let all = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let path = &path;
                s.spawn(move || {
                    let mut buf = AlignedBuf::new(4096);
                    let mut stats = ThreadStats::default();
                    let mut x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                    while Instant::now() < stop {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let offset = (x % blocks) * 4096;
                        path.read_at_with_stats(0, &mut buf, offset, &mut stats)
                            .expect("read");
                    }
                    stats
                })
            })
            .collect();
        let mut all = ThreadStats::default();
        for w in workers {
            all.merge(&w.join().expect("worker"));
        }
        all
    });
    println!("{}", path.description());
    println!(
        "{} reads in 2 s: {:.0} IOPS; hand-off p50 {} ns, p99 {} ns; parks/IO {:.2}",
        all.ios,
        all.ios as f64 / 2.0,
        all.handoff.percentile(50.0),
        all.handoff.percentile(99.0),
        all.parks as f64 / all.ios.max(1) as f64
    );
    println!("{:?}", path.counters());
    Ok(())
}
