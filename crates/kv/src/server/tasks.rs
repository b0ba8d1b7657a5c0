//! The event-driven model: one OS thread per allowed CPU, each a tokio
//! current-thread runtime with its own task ring; connections are tasks,
//! handed out round-robin by the accepting thread.

use super::Shared;
use crate::commands::Backend;
use crate::session::{serve, Transport};
use crate::store::{Store, StoreError};
use std::io;
use std::net::TcpStream;
use std::sync::Arc;
use std::thread::JoinHandle;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

type Handoff = (TcpStream, u64);

pub(super) struct Workers {
    senders: Vec<UnboundedSender<Handoff>>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
}

impl Workers {
    /// One runtime thread per allowed CPU (or `cfg.workers`), each pinned
    /// to its CPU.
    pub fn start(shared: Arc<Shared>) -> io::Result<Workers> {
        let cpus = hiops_stats::cpu::allowed_cpus();
        let n = match shared.cfg.workers {
            0 => cpus.len().max(1),
            n => n,
        };
        let mut w = Workers {
            senders: Vec::with_capacity(n),
            threads: Vec::with_capacity(n),
            next: 0,
        };
        for i in 0..n {
            let (tx, rx) = unbounded_channel();
            let shared = shared.clone();
            let cpu = (cpus.len() > 1).then(|| cpus[i % cpus.len()]);
            let t = std::thread::Builder::new()
                .name(format!("hiops-kv-w{i}"))
                .spawn(move || worker(shared, rx, cpu))?;
            w.senders.push(tx);
            w.threads.push(t);
        }
        Ok(w)
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

fn worker(shared: Arc<Shared>, mut handoffs: UnboundedReceiver<Handoff>, cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        // Pinning is for locality only: a failure is not worth stopping.
        let _ = hiops_stats::cpu::pin_current_thread(&[cpu]);
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return eprintln!("hiops kv: cannot start a runtime thread: {e}"),
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        while let Some((conn, id)) = handoffs.recv().await {
            let shared = shared.clone();
            tokio::task::spawn_local(async move {
                let _ = connection(&shared, conn, id).await;
                shared.disconnected();
            });
        }
    });
}

async fn connection(shared: &Shared, conn: TcpStream, id: u64) -> io::Result<()> {
    let stream = tokio::net::TcpStream::from_std(conn)?;
    stream.set_nodelay(true)?;
    let backend = TaskStore(&shared.store);
    serve(shared, id, &mut Async(stream), &backend).await
}

struct Async(tokio::net::TcpStream);

impl Transport for Async {
    async fn readable(&mut self) -> io::Result<()> {
        self.0.readable().await
    }

    fn try_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }

    async fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.0.try_write(buf) {
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.0.writable().await?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The store reached from a runtime thread.
struct TaskStore<'a>(&'a Store);

impl Backend for TaskStore<'_> {
    async fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        self.0.get_into(key, out)
    }

    async fn set(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.0.set(key, value)
    }

    async fn del(&self, key: &[u8]) -> Result<bool, StoreError> {
        self.0.del(key)
    }

    async fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        self.0.mset(pairs)
    }
}
