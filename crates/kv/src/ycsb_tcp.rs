//! YCSB's clients as tasks against a Redis-protocol server: one
//! current-thread runtime per allowed CPU, its share of the clients as
//! futures of the same client loop the threads run
//! (`ycsb::client_loop`), each over its own TCP connection. A
//! client waiting for its reply costs no OS thread and no context switch,
//! so a thousand clients sharing the server's CPUs take little from it
//! (as the paper's clients, on other machines, took nothing).

use crate::resp::{encode_command, encode_mget, Value};
use crate::ycsb::{
    client_loop, get_reply, mget_reply, no_reply, run_on_runtimes, set_reply, take_reply,
    AsyncConn, Op, PhaseResult, RunConfig, RunShared, Tally, REPLY_TIMEOUT,
};
use futures_util::stream::{FuturesUnordered, Stream};
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The run phase with `cfg.clients` tasks over TCP to `addr`. Closed loop
/// only: an open loop sleeps between operations, which a task must not do
/// to its runtime.
pub fn run_tcp_tasks(
    addr: &str,
    cfg: &RunConfig,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<PhaseResult> {
    run_on_runtimes(cfg, stop, progress, |i, n, shared| {
        one_runtime(i, n, addr, shared)
    })
}

/// Runtime `i` of `n`: clients i, i+n, i+2n...
fn one_runtime(i: usize, n: usize, addr: &str, shared: &RunShared<'_>) -> Vec<(Op, Tally)> {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            shared.failed(&format!("cannot start a runtime for the clients: {e}"));
            return vec![(Op::Read, Tally::failed())];
        }
    };
    rt.block_on(async {
        let mut clients: FuturesUnordered<_> = (i..shared.cfg.clients.max(1))
            .step_by(n)
            .map(|c| async move {
                match AsyncRespConn::connect(addr).await {
                    Ok(mut conn) => client_loop(c, &mut conn, shared).await,
                    Err(e) => {
                        shared.failed(&e);
                        vec![(Op::Read, Tally::failed())]
                    }
                }
            })
            .collect();
        let mut tallies = Vec::new();
        // Only the clients woken are polled (FuturesUnordered), not all.
        while let Some(t) = poll_fn(|cx| Pin::new(&mut clients).poll_next(cx)).await {
            tallies.extend(t);
        }
        tallies
    })
}

/// A RESP2 client over tokio's TcpStream: the blocking
/// [`crate::ycsb::RespConn`]'s commands and error handling, its buffers
/// reused from one command to the next.
pub(crate) struct AsyncRespConn {
    stream: TcpStream,
    out: Vec<u8>,
    input: Vec<u8>,
}

impl AsyncRespConn {
    pub async fn connect(addr: &str) -> io::Result<AsyncRespConn> {
        let stream = TcpStream::connect(addr).await.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot connect to {addr}: {e}; is the server running?"),
            )
        })?;
        stream.set_nodelay(true)?;
        Ok(AsyncRespConn {
            stream,
            out: Vec::with_capacity(4096),
            input: Vec::with_capacity(4096),
        })
    }

    /// Sends the command encoded in `out` and reads its reply.
    async fn send(&mut self) -> io::Result<Value> {
        self.stream.write_all(&self.out).await?;
        loop {
            if let Some(v) = take_reply(&mut self.input)? {
                return Ok(v);
            }
            let len = self.input.len();
            self.input.resize(len + 16384, 0);
            let read = self.stream.read(&mut self.input[len..]);
            let n = tokio::time::timeout(REPLY_TIMEOUT, read)
                .await
                .map_err(|_| no_reply())??;
            self.input.truncate(len + n);
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
        }
    }

    async fn call(&mut self, args: &[&[u8]]) -> io::Result<Value> {
        self.out.clear();
        encode_command(&mut self.out, args);
        self.send().await
    }
}

impl AsyncConn for AsyncRespConn {
    async fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        let v = self.call(&[b"GET", key]).await?;
        get_reply(v, out)
    }

    async fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        set_reply(self.call(&[b"SET", key, value]).await?)
    }

    async fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize> {
        self.out.clear();
        encode_mget(&mut self.out, keys);
        mget_reply(self.send().await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A server that answers each command with the next of `replies`,
    /// whatever it was, and returns the commands it read.
    async fn canned_server(listener: TcpListener, replies: &[&[u8]]) -> Vec<u8> {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut got = Vec::new();
        for reply in replies {
            let mut buf = [0u8; 4096];
            let n = sock.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
            sock.write_all(reply).await.unwrap();
        }
        got
    }

    #[test]
    fn replies_become_values_and_a_server_error_is_named() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap().to_string();
            let replies: [&[u8]; 5] = [
                b"$5\r\nhello\r\n",
                b"$-1\r\n",
                b"+OK\r\n",
                b"*3\r\n$1\r\na\r\n$-1\r\n$1\r\nc\r\n",
                b"-ERR out of space\r\n",
            ];
            let server = tokio::spawn(async move { canned_server(listener, &replies).await });
            let mut c = AsyncRespConn::connect(&addr).await.unwrap();
            let mut out = Vec::new();
            assert!(c.read(b"k", &mut out).await.unwrap());
            assert_eq!(out, b"hello");
            assert!(!c.read(b"gone", &mut out).await.unwrap());
            assert!(out.is_empty());
            c.write(b"k", b"v").await.unwrap();
            let keys = [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
            assert_eq!(c.read_many(&keys).await.unwrap(), 2);
            let e = c.write(b"k", b"v").await.unwrap_err();
            assert!(e.to_string().contains("ERR out of space"), "{e}");
            // The commands went out as RESP arrays, MGET with every key.
            let sent = server.await.unwrap();
            let mut want = Vec::new();
            encode_command(&mut want, &[b"GET", b"k"]);
            encode_command(&mut want, &[b"GET", b"gone"]);
            encode_command(&mut want, &[b"SET", b"k", b"v"]);
            encode_command(&mut want, &[b"MGET", b"a", b"b", b"c"]);
            encode_command(&mut want, &[b"SET", b"k", b"v"]);
            assert_eq!(
                String::from_utf8_lossy(&sent),
                String::from_utf8_lossy(&want)
            );
        });
    }
}
