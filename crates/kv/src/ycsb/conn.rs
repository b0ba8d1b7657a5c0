//! How a client reaches the database under test: the `Conn` calls, the
//! embedded store behind them, and a minimal blocking RESP2 client with
//! the reply checks the async clients share.

use crate::resp::{encode_command, parse_reply, Value};
use crate::store::Store;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// A connection to the database under test, one per client thread.
pub trait Conn: Send {
    /// Reads `key` into `out`; false if absent.
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool>;
    fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()>;
    /// Reads every key; returns how many were found.
    fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize>;
}

/// Where the clients connect.
#[derive(Clone)]
pub enum Target {
    Embedded(Arc<Store>),
    /// A Redis-protocol server (`host:port`).
    Tcp(String),
}

impl Target {
    pub fn connect(&self) -> io::Result<Box<dyn Conn>> {
        Ok(match self {
            Target::Embedded(s) => Box::new(EmbeddedConn(s.clone(), Vec::new())),
            Target::Tcp(addr) => Box::new(RespConn::connect(addr)?),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            Target::Embedded(s) => format!("embedded store ({})", s.stats().strategy),
            Target::Tcp(a) => format!("redis protocol at {a}"),
        }
    }
}

/// The store, and a value buffer scans reuse.
pub(super) struct EmbeddedConn(Arc<Store>, Vec<u8>);

pub(super) fn to_io(e: crate::StoreError) -> io::Error {
    io::Error::other(e.to_string())
}

impl Conn for EmbeddedConn {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        self.0.get_into(key, out).map_err(to_io)
    }
    fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.0.set(key, value).map_err(to_io)
    }
    fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize> {
        let mut found = 0;
        for k in keys {
            found += usize::from(self.0.get_into(k, &mut self.1).map_err(to_io)?);
        }
        Ok(found)
    }
}

/// How long a client waits for a reply before it gives up on the server.
/// A store's slowest command (FLUSHALL, a write behind a stalled flush)
/// answers in well under this; a server that stops answering ends the
/// run with an error instead of holding its clients forever.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// How [`no_reply`]'s message starts.
const NO_REPLY: &str = "the server sent no reply in";

/// The error of a reply that did not come within [`REPLY_TIMEOUT`].
pub(crate) fn no_reply() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "{NO_REPLY} {} s; it may be stuck (its threads: /proc/PID/task/*/wchan)",
            REPLY_TIMEOUT.as_secs()
        ),
    )
}

/// Whether a phase's first error (its message, as
/// [`PhaseResult::first_error`](super::PhaseResult::first_error) keeps it)
/// is a reply that never came: the server stopped answering.
pub fn is_no_reply(first_error: &str) -> bool {
    first_error.contains(NO_REPLY)
}

/// A minimal blocking RESP2 client.
pub struct RespConn {
    stream: TcpStream,
    out: Vec<u8>,
    input: Vec<u8>,
}

impl RespConn {
    pub fn connect(addr: &str) -> io::Result<RespConn> {
        let stream = TcpStream::connect(addr).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot connect to {addr}: {e}; is the server running?"),
            )
        })?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(REPLY_TIMEOUT))?;
        Ok(RespConn {
            stream,
            out: Vec::with_capacity(4096),
            input: Vec::with_capacity(4096),
        })
    }

    /// Sends one command and reads its reply.
    pub fn call(&mut self, args: &[&[u8]]) -> io::Result<Value> {
        self.out.clear();
        encode_command(&mut self.out, args);
        self.stream.write_all(&self.out)?;
        loop {
            if let Some(v) = take_reply(&mut self.input)? {
                return Ok(v);
            }
            let len = self.input.len();
            self.input.resize(len + 16384, 0);
            let n = self
                .stream
                .read(&mut self.input[len..])
                .map_err(|e| match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => no_reply(),
                    _ => e,
                })?;
            self.input.truncate(len + n);
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
        }
    }
}

/// The first whole reply in `input`, taken out of it (None: not all here).
pub(crate) fn take_reply(input: &mut Vec<u8>) -> io::Result<Option<Value>> {
    match parse_reply(input).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.0))? {
        Some((v, used)) => {
            input.drain(..used);
            Ok(Some(v))
        }
        None => Ok(None),
    }
}

/// A reply the client did not expect; a server's error reply is named as
/// the server's own words.
pub(crate) fn server_error(v: Value) -> io::Error {
    match v {
        Value::Error(e) => io::Error::other(format!("the server answered an error: {e}")),
        v => io::Error::other(format!("unexpected reply {v:?}")),
    }
}

/// GET's reply: the value into `out`, false when absent.
pub(crate) fn get_reply(v: Value, out: &mut Vec<u8>) -> io::Result<bool> {
    out.clear();
    match v {
        Value::Bulk(Some(v)) => {
            out.extend_from_slice(&v);
            Ok(true)
        }
        Value::Bulk(None) => Ok(false),
        v => Err(server_error(v)),
    }
}

/// SET's reply.
pub(crate) fn set_reply(v: Value) -> io::Result<()> {
    match v {
        Value::Simple(s) if s == "OK" => Ok(()),
        v => Err(server_error(v)),
    }
}

/// MGET's reply: how many keys were found.
pub(crate) fn mget_reply(v: Value) -> io::Result<usize> {
    match v {
        Value::Array(Some(items)) => Ok(items
            .iter()
            .filter(|v| matches!(v, Value::Bulk(Some(_))))
            .count()),
        v => Err(server_error(v)),
    }
}

impl Conn for RespConn {
    fn read(&mut self, key: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        get_reply(self.call(&[b"GET", key])?, out)
    }
    fn write(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        set_reply(self.call(&[b"SET", key, value])?)
    }
    fn read_many(&mut self, keys: &[Vec<u8>]) -> io::Result<usize> {
        let mut args: Vec<&[u8]> = vec![b"MGET"];
        args.extend(keys.iter().map(|k| k.as_slice()));
        mget_reply(self.call(&args)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_that_never_came_is_told_from_other_errors() {
        assert!(is_no_reply(&no_reply().to_string()));
        // As a failed run reports it.
        let said = format!("operations failed; the first error: {}", no_reply());
        assert!(is_no_reply(&said));
        let refused = RespConn::connect("127.0.0.1:1").err().unwrap();
        assert!(!is_no_reply(&refused.to_string()), "{refused}");
    }
}
