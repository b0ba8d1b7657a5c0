//! One connection, whatever carries it: the bytes read and not yet parsed,
//! the replies not yet written, and the limits on both. The same loop
//! ([`serve`]) runs under the thread-per-connection server (blocking
//! transport, polled once) and under the event-driven one (tokio).
//!
//! Memory: an idle connection holds no buffer of its own. Reads land in a
//! small stack buffer and are copied into the connection's input only while
//! a command is unfinished; input and output buffers are given back when
//! they empty. Every byte of input held counts against the client's limit
//! (Redis' `client-query-buffer-limit`) and against a total for all
//! clients (`--max-query-total`), and so does each argument parsed or
//! announced, at `ARG_BYTES` (a command of a million one-byte arguments
//! holds far more in its parsed arguments than in its input).

use crate::commands::{execute, Args, Backend, Client, Flow};
use crate::resp::{CommandParser, Reply};
use crate::server_state::Shared;
use std::io;
use std::sync::atomic::Ordering::Relaxed;

/// A client's input the server will not hold; the text is the RESP error
/// the client reads.
#[derive(Debug, thiserror::Error)]
enum InputRefused {
    #[error("ERR client-query-buffer-limit: this client's request would take over {limit} bytes; send smaller requests or restart the server with a larger --client-query-buffer-limit")]
    ClientLimit { limit: usize },
    #[error("ERR max-query-total: the requests of all clients together would hold over {limit} bytes; retry later or restart the server with a larger --max-query-total")]
    TotalLimit { limit: usize },
    #[error("ERR out of memory for this request")]
    OutOfMemory,
}

/// What one argument of a command holds beyond its bytes in the input,
/// at most: the parser's range of it (16 bytes) and the command's own
/// lists of it (its words, MSET's pairs, a device's share: 16 bytes
/// each). Charged to the total for every argument a command announced.
pub(crate) const ARG_BYTES: usize = 64;
/// A command of up to this many arguments (in a buffer up to `KEEP`) is
/// never refused by the total.
const SMALL_ARGS: usize = 64;

/// Replies are written once this much is waiting, even mid-pipeline.
const FLUSH_AT: usize = 256 << 10;
/// Buffers larger than this are freed when they empty.
const KEEP: usize = 4 << 10;
/// One read's worth (a refusal by the limits comes back from the sink as
/// `OutOfMemory` carrying the reply's text). Small: the stack buffer is
/// zeroed for every read, and 16 KiB of that was 3.4% of a GET's CPU.
pub(crate) const READ_CHUNK: usize = 4 << 10;

/// Moves bytes between a connection and its session.
///
/// A read hands its bytes to a sink instead of returning them, so the
/// transport reads into a buffer on the stack of one poll: not part of a
/// future's state, so an idle connection holds none of it.
pub(crate) trait Transport {
    /// Waits for bytes and passes what one read got to `sink`; 0 is the end
    /// of the connection. An error from `sink` is returned as it is.
    async fn read_with(
        &mut self,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<usize>;
    async fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
}

/// What the session needs next.
enum Step {
    Input,
    Flush,
    Close,
}

pub(crate) struct Session<'s> {
    shared: &'s Shared,
    client: Client,
    input: Vec<u8>,
    /// Bytes at the front of `input` already parsed and answered.
    consumed: usize,
    parser: CommandParser,
    out: Vec<u8>,
    /// Input bytes charged to the total for all clients.
    charged: usize,
}

/// A client's input buffer past this size is given back to the system
/// when the client leaves.
const TRIM_AT: usize = 1 << 20;

impl Drop for Session<'_> {
    fn drop(&mut self) {
        self.shared.query_bytes.fetch_sub(self.charged, Relaxed);
        if self.input.capacity() > TRIM_AT {
            self.input = Vec::new();
            // glibc keeps freed blocks below its mmap threshold, which rises
            // to the size of the largest block freed (up to 32 MiB): values
            // of a few MiB then stay in the heap after their clients left.
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            // SAFETY: malloc_trim only returns free heap pages to the
            // system; it touches no memory in use.
            unsafe {
                libc::malloc_trim(0);
            }
        }
    }
}

/// Serves one connection until it closes, errs or sends QUIT.
pub(crate) async fn serve<T: Transport, B: Backend>(
    shared: &Shared,
    id: u64,
    conn: &mut T,
    backend: &B,
) -> io::Result<()> {
    let mut s = Session {
        shared,
        client: Client::new(id, shared.cfg.password.is_none()),
        input: Vec::new(),
        consumed: 0,
        parser: CommandParser::new(),
        out: Vec::new(),
        charged: 0,
    };
    loop {
        let step = s.run_commands(backend).await;
        if !s.out.is_empty() {
            conn.write_all(&s.out).await?;
            s.out.clear();
            if s.out.capacity() > FLUSH_AT {
                s.out = Vec::new();
            }
        }
        match step {
            Step::Flush => continue,
            Step::Close => return Ok(()),
            Step::Input => {}
        }
        let got = conn
            .read_with(&mut |bytes| {
                s.take_input(bytes)
                    .map_err(|why| io::Error::new(io::ErrorKind::OutOfMemory, why.to_string()))
            })
            .await;
        match got {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::OutOfMemory => {
                Reply::resp2(&mut s.out).error(&e.to_string());
                return conn.write_all(&s.out).await;
            }
            Err(e) => return Err(e),
        }
    }
}

impl Session<'_> {
    /// Parses and runs every complete command buffered, stopping early to
    /// let a large pile of replies out.
    async fn run_commands<B: Backend>(&mut self, backend: &B) -> Step {
        let limits = self.shared.cfg.limits;
        loop {
            let buf = &self.input[self.consumed..];
            let n = match self.parser.parse(buf, &limits) {
                Ok(Some(n)) => n,
                Ok(None) => {
                    // The arguments it announced count before they arrive.
                    if let Err(why) = self.charge(self.input.capacity()) {
                        Reply::resp2(&mut self.out).error(&why.to_string());
                        return Step::Close;
                    }
                    break;
                }
                Err(e) => {
                    Reply::resp2(&mut self.out).error(&format!("ERR Protocol error: {}", e.0));
                    return Step::Close;
                }
            };
            let args = Args {
                buf,
                ranges: self.parser.args(),
            };
            self.consumed += n;
            if args.len() == 0 {
                continue;
            }
            self.shared.counters.commands.fetch_add(1, Relaxed);
            let flow = execute(args, &mut self.client, self.shared, backend, &mut self.out).await;
            if flow == Flow::Close {
                return Step::Close;
            }
            if self.out.len() >= FLUSH_AT {
                return Step::Flush;
            }
        }
        self.compact();
        Step::Input
    }

    /// Drops the answered commands from the input; frees a large buffer
    /// once it is empty.
    fn compact(&mut self) {
        self.input.drain(..self.consumed);
        self.consumed = 0;
        if self.input.is_empty() && self.input.capacity() > KEEP {
            self.input = Vec::new();
        }
        self.recharge();
    }

    /// Appends a read, within the client's and the total limit.
    fn take_input(&mut self, bytes: &[u8]) -> Result<(), InputRefused> {
        let cfg = &self.shared.cfg;
        let held = self.input.len() - self.consumed;
        let wanted = self.parser.bytes_wanted(held).max(bytes.len());
        if held + wanted > cfg.client_query_buffer_limit {
            self.shared.counters.refused_input.fetch_add(1, Relaxed);
            return Err(InputRefused::ClientLimit {
                limit: cfg.client_query_buffer_limit,
            });
        }
        let room = self.input.capacity().max(self.input.len() + wanted);
        self.charge(room)?;
        self.input
            .try_reserve(wanted)
            .map_err(|_| InputRefused::OutOfMemory)?;
        self.input.extend_from_slice(bytes);
        self.recharge();
        Ok(())
    }

    /// This client's share of the total with an input buffer of `room`
    /// bytes: the buffer and its command's arguments.
    fn share(&self, room: usize) -> usize {
        room + self.parser.args_held() * ARG_BYTES
    }

    /// Charges the share of an input buffer of `room` bytes before the
    /// memory is taken, unless the total would pass the limit.
    fn charge(&mut self, room: usize) -> Result<(), InputRefused> {
        let cfg = &self.shared.cfg;
        let want = self.share(room);
        let growth = want.saturating_sub(self.charged);
        let total = self.shared.query_bytes.load(Relaxed);
        // Ordinary commands (up to KEEP bytes, a few arguments) are never
        // refused: the total is there to stop a few huge requests, and
        // refusing an INFO because others hold the memory would lock an
        // operator out.
        let small = room <= KEEP && self.parser.args_held() <= SMALL_ARGS;
        if growth > 0 && !small && total + growth > cfg.max_query_total {
            self.shared.counters.refused_input.fetch_add(1, Relaxed);
            return Err(InputRefused::TotalLimit {
                limit: cfg.max_query_total,
            });
        }
        self.set_charge(want);
        Ok(())
    }

    /// Brings this client's share of the total up to date (the total is
    /// shared by every runtime thread: untouched unless the share moved).
    fn recharge(&mut self) {
        self.set_charge(self.share(self.input.capacity()));
    }

    fn set_charge(&mut self, now: usize) {
        if now == self.charged {
            return;
        }
        if now > self.charged {
            self.shared
                .query_bytes
                .fetch_add(now - self.charged, Relaxed);
        } else {
            self.shared
                .query_bytes
                .fetch_sub(self.charged - now, Relaxed);
        }
        self.charged = now;
    }
}
