//! The thread-per-core io_uring runtimes besides glommio: monoio, compio and
//! tokio-uring, each as its own docs show it. One runtime per CPU, pinned to
//! it as glommio's executors are, the readers split evenly across them; each
//! runtime opens FILE with O_DIRECT through its own OpenOptions and its
//! readers share that file, each reading into its own aligned buffer
//! (`DirectBuf`). A runtime that opens the file without O_DIRECT, or a read
//! that fails or comes back short, ends the run with an error instead of
//! figures, never a silent read through the page cache.

use crate::direct_buf::DirectBuf;
use crate::{run_ref, BS};
use hiops_stats::Histogram;
use std::collections::HashSet;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// One thread per CPU with that CPU's share of the readers; the first error
/// of any of them (which stops the others).
fn per_cpu(
    readers: u64,
    cpus: u64,
    body: impl Fn(usize, u64) -> io::Result<()> + Sync,
) -> io::Result<()> {
    std::thread::scope(|s| {
        let body = &body;
        let threads: Vec<_> = (0..cpus)
            .filter_map(|cpu| {
                let mine = readers / cpus + u64::from(cpu < readers % cpus);
                (mine > 0).then(|| {
                    s.spawn(move || {
                        let r = body(cpu as usize, mine);
                        if r.is_err() {
                            run_ref().stop.store(true, Ordering::Relaxed);
                        }
                        r
                    })
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .fold(Ok(()), io::Result::and)
    })
}

/// The same seeds as glommio's readers.
fn seed(cpu: usize, t: u64) -> u64 {
    (cpu as u64 * 1000 + t) * 7919 + 1
}

/// The runtime's own open must have kept O_DIRECT.
fn direct(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL only reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    if flags & libc::O_DIRECT == 0 {
        return Err(io::Error::other(
            "the runtime opened FILE without O_DIRECT: its reads would come from the page cache",
        ));
    }
    Ok(())
}

/// A read's outcome: a failed or short read stops every reader.
fn whole(r: io::Result<usize>) -> io::Result<()> {
    let r = match r {
        Ok(n) if n as u64 == BS => return Ok(()),
        Ok(n) => Err(io::Error::other(format!(
            "a read returned {n} bytes of {BS}"
        ))),
        Err(e) => Err(e),
    };
    run_ref().stop.store(true, Ordering::Relaxed);
    r
}

async fn monoio_reader(file: Rc<monoio::fs::File>, mut x: u64) -> io::Result<()> {
    let (mut buf, mut h) = (DirectBuf::new(BS as usize), Histogram::new());
    while run_ref().going() {
        let t0 = Instant::now();
        let (r, b) = file.read_at(buf, run_ref().offset(&mut x)).await;
        buf = b;
        whole(r)?;
        run_ref().book(&mut h, t0);
    }
    run_ref().merge(&h);
    Ok(())
}

/// monoio: a RuntimeBuilder with the io_uring driver per thread, bound with
/// monoio's bind_to_cpu_set.
pub fn monoio(path: &str, readers: u64, cpus: u64) -> io::Result<()> {
    use monoio::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;
    per_cpu(readers, cpus, |cpu, mine| {
        monoio::utils::bind_to_cpu_set([cpu]).map_err(io::Error::from)?;
        let mut rt = monoio::RuntimeBuilder::<monoio::IoUringDriver>::new().build()?;
        rt.block_on(async {
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(path)
                .await?;
            direct(file.as_raw_fd())?;
            let file = Rc::new(file);
            let tasks: Vec<_> = (0..mine)
                .map(|t| monoio::spawn(monoio_reader(file.clone(), seed(cpu, t))))
                .collect();
            let mut first = Ok(());
            for t in tasks {
                first = first.and(t.await);
            }
            first
        })
    })
}

async fn compio_reader(file: Rc<compio::fs::File>, mut x: u64) -> io::Result<()> {
    use compio::io::AsyncReadAt;
    let (mut buf, mut h) = (DirectBuf::new(BS as usize), Histogram::new());
    while run_ref().going() {
        let t0 = Instant::now();
        let compio::BufResult(r, b) = file.read_at(buf, run_ref().offset(&mut x)).await;
        buf = b;
        whole(r)?;
        run_ref().book(&mut h, t0);
    }
    run_ref().merge(&h);
    Ok(())
}

/// compio: a Runtime per thread, bound with the builder's thread_affinity;
/// it must have picked its io_uring driver.
pub fn compio(path: &str, readers: u64, cpus: u64) -> io::Result<()> {
    use compio::runtime::ResumeUnwind;
    per_cpu(readers, cpus, |cpu, mine| {
        let rt = compio::runtime::RuntimeBuilder::new()
            .thread_affinity(HashSet::from([cpu]))
            .build()?;
        if !rt.driver_type().is_iouring() {
            return Err(io::Error::other(format!(
                "compio chose its {:?} driver, not io_uring",
                rt.driver_type()
            )));
        }
        rt.block_on(async {
            let file = compio::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(path)
                .await?;
            direct(file.as_raw_fd())?;
            let file = Rc::new(file);
            let tasks: Vec<_> = (0..mine)
                .map(|t| compio::runtime::spawn(compio_reader(file.clone(), seed(cpu, t))))
                .collect();
            let mut first = Ok(());
            for t in tasks {
                first = first.and(t.await.resume_unwind().expect("a reader was cancelled"));
            }
            first
        })
    })
}

async fn tokio_uring_reader(file: Rc<tokio_uring::fs::File>, mut x: u64) -> io::Result<()> {
    let (mut buf, mut h) = (DirectBuf::new(BS as usize), Histogram::new());
    while run_ref().going() {
        let t0 = Instant::now();
        let (r, b) = file.read_at(buf, run_ref().offset(&mut x)).await;
        buf = b;
        whole(r)?;
        run_ref().book(&mut h, t0);
    }
    run_ref().merge(&h);
    Ok(())
}

/// tokio-uring: tokio_uring::start per thread; it has no placement of its
/// own, so the thread pins itself first.
pub fn tokio_uring(path: &str, readers: u64, cpus: u64) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    per_cpu(readers, cpus, |cpu, mine| {
        crate::pin(cpu);
        tokio_uring::start(async {
            let file = tokio_uring::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(path)
                .await?;
            direct(file.as_raw_fd())?;
            let file = Rc::new(file);
            let tasks: Vec<_> = (0..mine)
                .map(|t| tokio_uring::spawn(tokio_uring_reader(file.clone(), seed(cpu, t))))
                .collect();
            let mut first = Ok(());
            for t in tasks {
                first = first.and(t.await.unwrap());
            }
            first
        })
    })
}
