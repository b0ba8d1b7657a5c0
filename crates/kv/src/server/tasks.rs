//! The event-driven model: one OS thread per allowed CPU, each a tokio
//! current-thread runtime with its own task ring; connections are tasks,
//! handed out round-robin by the accepting thread.

use crate::commands::Backend;
use crate::server_state::Shared;
use crate::session::{serve, Transport, READ_CHUNK};
use crate::store::{Store, StoreError};
use hiops_path::TaskRing;
use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::io;
use std::mem::MaybeUninit;
use std::net::TcpStream;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::task::Poll;
use std::thread::JoinHandle;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;
use tokio::task::JoinSet;

type Handoff = (TcpStream, u64);

pub(super) struct Workers {
    senders: Vec<UnboundedSender<Handoff>>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
}

impl Workers {
    /// One runtime thread per allowed CPU (or `cfg.workers`); pinned when
    /// fewer than the allowed CPUs (see [`runtime_cpus`]).
    pub fn start(shared: Arc<Shared>) -> io::Result<Workers> {
        let allowed = hiops_stats::cpu::allowed_cpus();
        let n = match shared.cfg.workers {
            0 => allowed.len().max(1),
            n => n,
        };
        let cpus = runtime_cpus(n, allowed, &shared.store.interrupt_cpus());
        if let Some(cpus) = &cpus {
            let pinned: Vec<String> = cpus.iter().map(usize::to_string).collect();
            let _ = shared.runtime_cpus.set(pinned.join(","));
        }
        let mut w = Workers {
            senders: Vec::with_capacity(n),
            threads: Vec::with_capacity(n),
            next: 0,
        };
        let (ready_tx, ready) = mpsc::channel();
        for i in 0..n {
            let (tx, rx) = unbounded_channel();
            let shared = shared.clone();
            let cpu = cpus.as_ref().map(|c| c[i]);
            let ready = ready_tx.clone();
            let t = std::thread::Builder::new()
                .name(format!("hiops-kv-w{i}"))
                .spawn(move || worker(i, shared, rx, cpu, ready))?;
            w.senders.push(tx);
            w.threads.push(t);
        }
        drop(ready_tx);
        // Every runtime and ring is up, or the first failure is the answer.
        for _ in 0..n {
            match ready.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    w.stop();
                    return Err(e);
                }
                Err(_) => {
                    w.stop();
                    return Err(io::Error::other("a runtime thread ended while starting"));
                }
            }
        }
        Ok(w)
    }

    /// How many runtime threads serve connections.
    pub fn runtimes(&self) -> usize {
        self.senders.len()
    }

    pub fn hand(&mut self, conn: TcpStream, id: u64) -> io::Result<()> {
        conn.set_nonblocking(true)?;
        let i = self.next;
        self.next = (i + 1) % self.senders.len();
        self.senders[i]
            .send((conn, id))
            .map_err(|_| io::Error::other(format!("runtime thread {i} has stopped")))
    }

    /// Stops taking connections; each runtime drops the ones it serves.
    pub fn stop(self) {
        drop(self.senders);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// The CPU of each of `n` runtime threads, or `None` to leave them to the
/// scheduler. Pinned only when there are fewer threads than allowed CPUs:
/// then the threads sit on the CPUs that take the store's interrupts (a
/// read's completion is posted on the CPU of the thread that waits for it,
/// the HIOPS paper's completion where the I/O is awaited: GET 0.84 -> 0.89x
/// redis at 50 clients with one thread), and the other CPUs are left to
/// other work. With a thread on every CPU, pinning would tie each to a CPU
/// it must share with whatever else runs there (a client on the same host:
/// 1,000 clients GET at 0.67x redis pinned, 0.92x unpinned, BENCHMARKS.md).
fn runtime_cpus(n: usize, mut allowed: Vec<usize>, irq: &[usize]) -> Option<Vec<usize>> {
    if n >= allowed.len() {
        return None;
    }
    allowed.sort_by_key(|c| !irq.contains(c));
    allowed.truncate(n);
    Some(allowed)
}

/// One runtime thread: its ring, the ring's driver, and the connections
/// handed to it, until the acceptor stops handing.
fn worker(
    i: usize,
    shared: Arc<Shared>,
    handoffs: UnboundedReceiver<Handoff>,
    cpu: Option<usize>,
    ready: mpsc::Sender<io::Result<()>>,
) {
    if let Some(cpu) = cpu {
        // Pinning is for locality only: a failure is not worth stopping.
        let _ = hiops_stats::cpu::pin_current_thread(&[cpu]);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        // FLUSHALL's thread (it runs one at a time per device anyway).
        .max_blocking_threads(1)
        .build();
    let targets = shared.store.targets();
    let ring = TaskRing::open(&shared.cfg.task, &targets).map_err(|e| {
        io::Error::other(format!(
            "cannot open a task ring on the store ({e}); serve with --model threads"
        ))
    });
    let (rt, ring) = match (rt, ring) {
        (Ok(rt), Ok(ring)) => (rt, Rc::new(ring)),
        (Err(e), _) | (_, Err(e)) => return drop(ready.send(Err(e))),
    };
    let _ = ready.send(Ok(()));
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, serve_handoffs(i, &shared, ring, handoffs));
}

/// The ring's driver; if the ring fails, `health` says so (with what to
/// do), which fails the GETs waiting on it.
fn spawn_driver(
    i: usize,
    shared: &Shared,
    ring: &Rc<TaskRing>,
    health: &Rc<Health>,
) -> tokio::task::JoinHandle<io::Result<()>> {
    let hook = shared.cfg.fail_rings.clone();
    let (ring, health) = (ring.clone(), health.clone());
    let devices: Vec<String> = (shared.store.device_paths().iter())
        .map(|p| p.display().to_string())
        .collect();
    let devices = devices.join(",");
    tokio::task::spawn_local(async move {
        let injected = move || hook.as_ref().is_some_and(|h| h.load(Relaxed));
        let driven = crate::watched::drive(ring, injected).await;
        if let Err(e) = &driven {
            health.fail(format!(
                "server thread {i}: {e}; GETs of {devices} that wait for the device on this thread's connections fail: restart the server (or serve with --model threads)"
            ));
        }
        driven
    })
}

async fn serve_handoffs(
    i: usize,
    shared: &Arc<Shared>,
    ring: Rc<TaskRing>,
    mut handoffs: UnboundedReceiver<Handoff>,
) {
    let health = Rc::new(Health::default());
    let published = Rc::new(Cell::new(0));
    let driver = spawn_driver(i, shared, &ring, &health);
    let mut connections = JoinSet::new();
    while let Some((conn, id)) = handoffs.recv().await {
        let shared = shared.clone();
        let (ring, health, published) = (ring.clone(), health.clone(), published.clone());
        connections.spawn_local(async move {
            let worker = Worker {
                ring: &ring,
                health: &health,
                published: &published,
            };
            let _ = connection(&shared, conn, id, worker).await;
            shared.disconnected();
        });
        // Forget the connections that ended.
        while connections.try_join_next().is_some() {}
    }
    // Stopping: the connections' futures go first (an I/O in flight stays
    // the ring's until reaped), then the driver reaps what is left.
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    ring.close();
    let _ = driver.await;
}

/// What the connections of one runtime thread share.
#[derive(Clone, Copy)]
struct Worker<'w> {
    ring: &'w TaskRing,
    health: &'w Health,
    /// How many of the ring's issued I/Os are already in the server's count.
    published: &'w Cell<u64>,
}

async fn connection(
    shared: &Shared,
    conn: TcpStream,
    id: u64,
    worker: Worker<'_>,
) -> io::Result<()> {
    let stream = tokio::net::TcpStream::from_std(conn)?;
    stream.set_nodelay(true)?;
    let backend = TaskStore {
        store: &shared.store,
        worker,
        ring_ios: &shared.counters.ring_ios,
    };
    match &shared.tls {
        None => serve(shared, id, &mut AsyncStream(stream), &backend).await,
        Some(tls) => {
            let stream = tokio_rustls::TlsAcceptor::from(tls.clone())
                .accept(stream)
                .await?;
            serve(shared, id, &mut AsyncStream(stream), &backend).await
        }
    }
}

/// A connection of the tasks model, plain or TLS. Reads go through
/// `poll_read`, which tokio answers from a short read by forgetting the
/// socket's readiness: the next read waits for epoll instead of asking the
/// kernel once more for an `EAGAIN` (one system call per request saved;
/// `try_read` keeps the readiness until it sees `WouldBlock`).
struct AsyncStream<S>(S);

impl<S: AsyncRead + AsyncWrite + Unpin> Transport for AsyncStream<S> {
    async fn read_with(
        &mut self,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<usize> {
        poll_fn(|cx| {
            // Lives for one poll only: on the stack, not in the task; not
            // zeroed (ReadBuf tracks what the read filled).
            let mut chunk = [MaybeUninit::<u8>::uninit(); READ_CHUNK];
            let mut buf = ReadBuf::uninit(&mut chunk);
            match Pin::new(&mut self.0).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) => {
                    let n = buf.filled().len();
                    Poll::Ready(sink(buf.filled()).map(|()| n))
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }

    async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).await?;
        // TLS holds what it encrypted until flushed; a plain socket's
        // flush returns at once.
        self.0.flush().await
    }
}

/// The store reached from a runtime thread: reads on its task ring,
/// writes awaiting the flusher.
struct TaskStore<'a> {
    store: &'a Arc<Store>,
    worker: Worker<'a>,
    /// The server's count of I/Os its rings issued (INFO).
    ring_ios: &'a AtomicU64,
}

impl Backend for TaskStore<'_> {
    async fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        let Worker {
            ring,
            health,
            published,
        } = self.worker;
        let got = health
            .unless_failed(self.store.get_async(ring, key, out))
            .await;
        // What the ring issued since the last GET on this thread published,
        // its own I/Os or those of GETs still waiting: each counted once
        // (a difference around this GET's await would count the others'
        // again, once for every GET they overlap).
        let issued = ring.counters().issued;
        let new = issued - published.replace(issued);
        // A GET from memory issued none: the shared count is left alone.
        if new > 0 {
            self.ring_ios.fetch_add(new, Relaxed);
        }
        got
    }

    async fn set(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.store.set_async(key, value).await
    }

    async fn del(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        self.store.del_keys_async(keys).await
    }

    async fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        self.store.mset_async(pairs).await
    }

    /// On the runtime's blocking pool: FLUSHALL waits for the flusher and
    /// writes each device's superblock under the writer lock, which no
    /// task may hold across an await (a SET on the same thread would then
    /// block the thread the FLUSHALL needs to go on). The same blocking
    /// call, off the event loop, is the simple correct form.
    async fn flush_all(&self) -> Result<(), StoreError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || store.flush_all())
            .await
            .unwrap_or_else(|e| Err(StoreError::Io(io::Error::other(format!("FLUSHALL: {e}")))))
    }
}

/// Whether this runtime thread's ring still works. A GET waiting on a
/// failed ring gives up (what the ring staged may never complete) with
/// the ring's error; GETs served from memory go on.
#[derive(Default)]
struct Health {
    failed: RefCell<Option<String>>,
    changed: Notify,
}

impl Health {
    fn fail(&self, why: String) {
        tracing::error!("{why}");
        *self.failed.borrow_mut() = Some(why);
        self.changed.notify_waiters();
    }

    fn error(&self) -> Option<StoreError> {
        self.failed.borrow().clone().map(StoreError::Halted)
    }

    /// `io`, unless the ring fails first (or failed: its error, named).
    async fn unless_failed<T>(
        &self,
        io: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let mut io = pin!(io);
        let mut failed = pin!(self.changed.notified());
        poll_fn(|cx| {
            match io.as_mut().poll(cx) {
                Poll::Ready(Ok(v)) => return Poll::Ready(Ok(v)),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(self.error().unwrap_or(e))),
                Poll::Pending => {}
            }
            if let Some(e) = self.error() {
                return Poll::Ready(Err(e));
            }
            // Registered before this task sleeps: `fail` wakes it (one
            // thread: nothing runs between the check and this).
            let _ = failed.as_mut().poll(cx);
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::runtime_cpus;

    #[test]
    fn fewer_threads_than_cpus_go_first_on_the_interrupts_cpus() {
        assert_eq!(runtime_cpus(1, vec![0, 1], &[1]), Some(vec![1]));
        assert_eq!(runtime_cpus(2, vec![0, 1, 2, 3], &[3, 1]), Some(vec![1, 3]));
        assert_eq!(
            runtime_cpus(3, vec![0, 1, 2, 3], &[3, 1]),
            Some(vec![1, 3, 0])
        );
        // Interrupts on a CPU this process may not use change nothing.
        assert_eq!(runtime_cpus(1, vec![0, 1], &[5]), Some(vec![0]));
        assert_eq!(runtime_cpus(1, vec![2, 3], &[]), Some(vec![2]));
    }

    #[test]
    fn a_thread_on_every_cpu_is_left_to_the_scheduler() {
        assert_eq!(runtime_cpus(2, vec![0, 1], &[1]), None);
        assert_eq!(runtime_cpus(4, vec![0, 1], &[1]), None);
        assert_eq!(runtime_cpus(1, vec![0], &[0]), None);
    }
}
