//! Many tokio tasks doing synchronous-looking reads through the task path:
//! one current-thread runtime per CPU, each with its own ring and driver.
//!
//! ```sh
//! cargo run --release -p hiops-path --features tokio --example tokio_tasks -- FILE [TASKS]
//! ```

use hiops_path::{tokio_driver, AlignedBuf, TaskConfig, TaskRing};
use std::os::unix::fs::OpenOptionsExt;
use std::rc::Rc;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: tokio_tasks FILE [TASKS]")?;
    let tasks: u64 = args.next().map(|t| t.parse()).transpose()?.unwrap_or(128);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)?;
    let blocks = file.metadata()?.len() / 4096;
    let cpus = std::thread::available_parallelism()?.get() as u64;
    let started = Instant::now();
    let reads: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cpus)
            .map(|cpu| {
                let file = &file;
                // Tasks shared out as evenly as they go.
                let mine = tasks / cpus + u64::from(cpu < tasks % cpus);
                s.spawn(move || one_executor(file, mine, blocks, cpu))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{reads} reads by {tasks} tasks on {cpus} threads: {:.0} IOPS",
        reads as f64 / secs
    );
    Ok(())
}

/// One thread: a runtime, a ring, its driver, and `tasks` readers for 2 s.
fn one_executor(file: &std::fs::File, tasks: u64, blocks: u64, seed: u64) -> u64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let targets = [hiops_hal::Target::from_file(file)];
    let ring = Rc::new(TaskRing::open(&TaskConfig::default(), &targets).unwrap());
    local.block_on(&rt, async move {
        let driver = tokio::task::spawn_local(tokio_driver::drive(ring.clone()));
        let until = Instant::now() + Duration::from_secs(2);
        let readers: Vec<_> = (0..tasks)
            .map(|t| {
                let ring = ring.clone();
                tokio::task::spawn_local(async move {
                    let mut buf = AlignedBuf::new(4096);
                    let mut x = seed * 1_000_003 + t + 1;
                    let mut n = 0u64;
                    while Instant::now() < until {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let (r, b) = ring.read_at(0, buf, (x % blocks) * 4096).await;
                        buf = b;
                        r.expect("read");
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let mut total = 0;
        for r in readers {
            total += r.await.unwrap();
        }
        ring.close();
        driver.await.unwrap().unwrap();
        total
    })
}
