//! net: fio's net engine. A job's writes are sends on a socket and its
//! reads are receives: the sending side connects to `host:port`, the
//! receiving side (`listen`) binds the port and takes the first peer. With
//! `pingpong` each message is echoed: the sender waits for its bytes back,
//! the receiver returns what it got. UDP sides open and close the link with
//! fio's 8-byte messages, so hiops and fio talk to each other; the link
//! opens at the first I/O (after startdelay), so receivers that joined a
//! multicast group in setup hear a sender that starts later.
//!
//! netsplice (`splice`) is the same engine whose TCP transfers go through
//! a pipe, as fio's engines/net.c does for it: a send vmsplices the buffer
//! into the pipe and splices the pipe to the socket, a receive splices the
//! socket into the pipe and vmsplices it out into the buffer. UDP and Unix
//! sockets send and receive as net, as in fio.
//!
//! A receive that waits for a peer wakes every [`WAIT_SLICE`] to see
//! whether the run was interrupted (Ctrl-C, SIGTERM), so one signal ends
//! a run whose peer never comes.

use super::pipe::{Pipe, SPLICE_CHUNK};
use super::ready::{Inline, Staged};
use crate::{Engine, HalError, Op};
use socket2::{Protocol, SockAddr, Socket, Type};
use std::io::{ErrorKind, Read, Write};
use std::mem::MaybeUninit;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;

/// fio's link messages (engines/net.c): magic, then open or close.
const LINK_MAGIC: u32 = 0x6c69_6e6b;
const LINK_OPEN: u32 = 0x98;
const LINK_CLOSE: u32 = 0x89;

/// How long a blocking receive or accept waits before it looks at the
/// run's interrupt flag (SO_RCVTIMEO).
const WAIT_SLICE: std::time::Duration = std::time::Duration::from_millis(100);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NetProto {
    #[default]
    Tcp,
    Udp,
    /// A Unix stream socket; `host` is its path.
    Unix,
}

/// The socket a net job uses (fio's net engine options).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetOptions {
    pub host: String,
    pub port: u16,
    pub proto: NetProto,
    /// The receiving side: bind and wait for the peer.
    pub listen: bool,
    pub pingpong: bool,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// SO_SNDBUF and SO_RCVBUF, bytes.
    pub window_size: Option<u32>,
    /// TCP_MAXSEG, bytes (TCP only).
    pub mss: Option<u32>,
    /// UDP to an IPv4 multicast group: the sender's IP_MULTICAST_TTL
    /// (`None`: fio's default, 1).
    pub ttl: Option<u32>,
    /// UDP multicast: the local interface's address the group is sent
    /// through (IP_MULTICAST_IF) and joined on (`None`: the system's
    /// choice).
    pub interface: Option<std::net::Ipv4Addr>,
    /// fio's netsplice: TCP transfers through a pipe with splice and
    /// vmsplice.
    pub splice: bool,
}

impl NetOptions {
    /// The socket of a job's clone `clone` (from 0): fio's net engine gives
    /// each clone the job's port plus its number, so `numjobs` senders meet
    /// as many listeners. A Unix socket has no port: every clone shares it.
    pub fn for_clone(&self, clone: u32) -> Result<NetOptions, HalError> {
        if self.proto == NetProto::Unix {
            return Ok(self.clone());
        }
        let port = u32::from(self.port) + clone;
        let port = u16::try_from(port).map_err(|_| {
            setup("choosing the clone's port")(std::io::Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "clone {clone} would use port {port}, past 65535: give a lower port or fewer numjobs"
                ),
            ))
        })?;
        Ok(NetOptions {
            port,
            ..self.clone()
        })
    }
}

pub struct NetEngine {
    sock: Socket,
    opts: NetOptions,
    /// UDP: where datagrams go (the sender's peer; the receiver's last
    /// sender, for pingpong replies).
    peer: Option<SockAddr>,
    /// UDP: fio's link-close came; every later receive is empty at once.
    closed: bool,
    /// UDP: fio's link-open was sent (sender) or received (receiver).
    linked: bool,
    /// netsplice over TCP: the pipe every transfer goes through.
    pipe: Option<Pipe>,
    inline: Inline,
}

fn setup(what: &'static str) -> impl Fn(std::io::Error) -> HalError {
    move |source| HalError::Setup {
        engine: "net",
        what,
        source,
    }
}

impl NetEngine {
    pub fn open(opts: &NetOptions, depth: u32) -> Result<NetEngine, HalError> {
        let (sock, peer) = if opts.listen {
            listen(opts)?
        } else {
            connect(opts)?
        };
        sock.set_read_timeout(Some(WAIT_SLICE))
            .map_err(setup("setting the receive timeout (SO_RCVTIMEO)"))?;
        let pipe = match opts.splice && opts.proto == NetProto::Tcp {
            true => Some(Pipe::new().map_err(setup("creating the splice pipe"))?),
            false => None,
        };
        Ok(NetEngine {
            pipe,
            sock,
            opts: opts.clone(),
            peer,
            closed: false,
            linked: opts.proto != NetProto::Udp,
            inline: Inline::with_capacity(depth),
        })
    }

    /// fio's UDP handshake, at the first I/O: the sender says "open", the
    /// receiver waits for it (and learns where to echo to).
    fn udp_link_open(&mut self) -> std::io::Result<()> {
        self.linked = true;
        if !self.opts.listen {
            let to = self.peer.as_ref().expect("a UDP sender knows its peer");
            self.sock.send_to(&link_msg(LINK_OPEN), to)?;
            return Ok(());
        }
        let mut buf = [MaybeUninit::<u8>::uninit(); 8];
        let (n, from) = interruptible(|| self.sock.recv_from(&mut buf))?;
        // SAFETY: recv_from initialised the first n bytes.
        let got: Vec<u8> = buf[..n]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect();
        if got[..] != link_msg(LINK_OPEN)[..] {
            return Err(std::io::Error::new(
                ErrorKind::InvalidData,
                "the first datagram is not fio's UDP link-open message",
            ));
        }
        self.peer = Some(from);
        Ok(())
    }

    fn send(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.linked {
            self.udp_link_open()?;
        }
        match (&self.peer, self.opts.proto) {
            (Some(to), NetProto::Udp) => self.sock.send_to(buf, to),
            _ => match &self.pipe {
                Some(pipe) => pipe.write_all_to(self.sock.as_raw_fd(), None, buf, false),
                None => {
                    (&self.sock).write_all(buf)?;
                    Ok(buf.len())
                }
            },
        }
    }

    /// netsplice's TCP receive: socket to pipe, pipe to buffer, until
    /// `buf` is full or the stream ends.
    fn splice_recv(&self, pipe: &Pipe, buf: &mut [u8]) -> std::io::Result<usize> {
        let fd = self.sock.as_raw_fd();
        let mut got = 0;
        while got < buf.len() {
            // No more than the pipe holds: it is emptied only after.
            let want = (buf.len() - got).min(SPLICE_CHUNK);
            let n = match interruptible(|| pipe.fill_from(fd, None, want, 0)) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted && !interrupted() => continue,
                Err(e) => return Err(e),
            };
            let mut out = 0;
            while out < n {
                out += pipe.copy_out(&mut buf[got + out..got + n])?;
            }
            got += n;
        }
        Ok(got)
    }

    /// A whole message: `len` bytes of a stream, or one datagram. 0 at the
    /// end of the stream or on fio's link-close datagram.
    fn recv(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(pipe) = &self.pipe {
            return self.splice_recv(pipe, buf);
        }
        if self.opts.proto != NetProto::Udp {
            let mut got = 0;
            while got < buf.len() {
                match interruptible(|| (&self.sock).read(&mut buf[got..])) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == ErrorKind::Interrupted && !interrupted() => {}
                    Err(e) => return Err(e),
                }
            }
            return Ok(got);
        }
        if !self.linked {
            self.udp_link_open()?;
        }
        if self.closed {
            return Ok(0);
        }
        // SAFETY: u8 and MaybeUninit<u8> have one layout; recv_from only
        // writes initialised bytes into it.
        let uninit = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        let (n, from) = interruptible(|| self.sock.recv_from(uninit))?;
        if n == 8 && buf[..8] == link_msg(LINK_CLOSE) {
            self.closed = true;
            return Ok(0);
        }
        if self.opts.listen {
            self.peer = Some(from);
        }
        Ok(n)
    }

    /// One command: the transfer, then the echo under pingpong.
    fn execute(&mut self, s: Staged) -> i64 {
        let len = s.cmd.len as usize;
        // SAFETY: s.buf is the tag's arena slot of at least len bytes
        // (Queue::bind), not touched by the caller until reaped.
        let buf = unsafe { std::slice::from_raw_parts_mut(s.buf, len) };
        let moved = match s.cmd.op {
            Op::Write => self.send(buf).and_then(|n| match self.opts.pingpong {
                true => self.recv(&mut buf[..n]),
                false => Ok(n),
            }),
            Op::Read => self
                .recv(buf)
                .and_then(|n| match self.opts.pingpong && n > 0 {
                    true => self.send(&buf[..n]),
                    false => Ok(n),
                }),
            // fio: a sync on a socket does nothing.
            Op::Fsync | Op::Fdatasync | Op::SyncRange(_) => Ok(0),
            Op::Trim => Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
        };
        if moved.is_err() {
            if let Some(pipe) = &mut self.pipe {
                // What a failed transfer left in the pipe must not reach
                // the next one (where no new pipe can be had, the old stays).
                let _ = pipe.renew();
            }
        }
        match moved {
            Ok(n) => n as i64,
            // The job's end came while it waited for its peer: the I/O
            // ends short, as fio's ends when its runtime interrupts it.
            Err(e)
                if e.kind() == ErrorKind::TimedOut
                    && crate::wait_deadline::wait_deadline_passed() =>
            {
                0
            }
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        }
    }
}

/// Whether the run was interrupted (hiops' Ctrl-C and SIGTERM handler).
fn interrupted() -> bool {
    hiops_os::signals::flag().load(std::sync::atomic::Ordering::Relaxed)
}

/// A blocking socket call on a socket with SO_RCVTIMEO: tried again after
/// each timeout until it completes, the run is interrupted (EINTR) or the
/// thread's job is past its end ([`crate::set_wait_deadline`]; ETIMEDOUT).
fn interruptible<T>(mut call: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match call() {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if interrupted() {
                    return Err(ErrorKind::Interrupted.into());
                }
                if crate::wait_deadline::wait_deadline_passed() {
                    return Err(ErrorKind::TimedOut.into());
                }
            }
            r => return r,
        }
    }
}

/// fio's link message: "open" in network order, "close" little-endian
/// (as fio's net.c writes and reads them).
fn link_msg(cmd: u32) -> [u8; 8] {
    let word = |v: u32| match cmd {
        LINK_CLOSE => v.to_le_bytes(),
        _ => v.to_be_bytes(),
    };
    let mut m = [0u8; 8];
    m[..4].copy_from_slice(&word(LINK_MAGIC));
    m[4..].copy_from_slice(&word(cmd));
    m
}

/// The socket for `opts`, options set before it binds or connects (window
/// and MSS take effect only then).
fn socket(opts: &NetOptions, addr: &SockAddr) -> Result<Socket, HalError> {
    let (ty, proto) = match opts.proto {
        NetProto::Tcp => (Type::STREAM, Some(Protocol::TCP)),
        NetProto::Udp => (Type::DGRAM, Some(Protocol::UDP)),
        NetProto::Unix => (Type::STREAM, None),
    };
    let sock = Socket::new(addr.domain(), ty, proto).map_err(setup("creating the socket"))?;
    if let Some(w) = opts.window_size {
        sock.set_send_buffer_size(w as usize)
            .and_then(|_| sock.set_recv_buffer_size(w as usize))
            .map_err(setup("setting window_size (SO_SNDBUF, SO_RCVBUF)"))?;
    }
    if opts.proto == NetProto::Tcp {
        if opts.nodelay {
            sock.set_tcp_nodelay(true)
                .map_err(setup("setting nodelay (TCP_NODELAY)"))?;
        }
        if let Some(mss) = opts.mss {
            set_mss(&sock, mss).map_err(setup("setting mss (TCP_MAXSEG)"))?;
        }
    }
    Ok(sock)
}

/// TCP_MAXSEG, which socket2 sets only with its `all` feature.
fn set_mss(sock: &Socket, mss: u32) -> std::io::Result<()> {
    let mss = libc::c_int::try_from(mss).map_err(std::io::Error::other)?;
    set_int_option(sock, libc::IPPROTO_TCP, libc::TCP_MAXSEG, mss)
}

/// An integer socket option socket2 sets only with its `all` feature
/// (TCP_MAXSEG, SO_REUSEPORT).
fn set_int_option(
    sock: &Socket,
    level: libc::c_int,
    name: libc::c_int,
    v: libc::c_int,
) -> std::io::Result<()> {
    // SAFETY: a c_int option value of its own size, on an open socket.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

fn address(opts: &NetOptions) -> Result<SockAddr, HalError> {
    if opts.proto == NetProto::Unix {
        return SockAddr::unix(&opts.host).map_err(setup("naming the Unix socket"));
    }
    let host = match (opts.host.as_str(), opts.listen) {
        ("", true) => "0.0.0.0",
        ("", false) => "127.0.0.1",
        (h, _) => h,
    };
    let addr: SocketAddr = (host, opts.port)
        .to_socket_addrs()
        .map_err(setup("resolving hostname"))?
        .next()
        .ok_or_else(|| setup("resolving hostname")(ErrorKind::NotFound.into()))?;
    Ok(addr.into())
}

/// The IPv4 multicast group `addr` names, if it names one (fio's
/// fio_netio_is_multicast); an IPv6 group is refused, as in fio.
fn multicast_group(addr: &SockAddr) -> Result<Option<std::net::Ipv4Addr>, HalError> {
    match addr.as_socket() {
        Some(SocketAddr::V4(a)) if a.ip().is_multicast() => Ok(Some(*a.ip())),
        Some(SocketAddr::V6(a)) if a.ip().is_multicast() => {
            Err(setup("joining a multicast group")(std::io::Error::new(
                ErrorKind::Unsupported,
                "multicast is IPv4 only, as in fio",
            )))
        }
        _ => Ok(None),
    }
}

fn connect(opts: &NetOptions) -> Result<(Socket, Option<SockAddr>), HalError> {
    let addr = address(opts)?;
    let sock = socket(opts, &addr)?;
    if opts.proto == NetProto::Udp {
        if multicast_group(&addr)?.is_some() {
            if let Some(iface) = &opts.interface {
                sock.set_multicast_if_v4(iface)
                    .map_err(setup("setting interface (IP_MULTICAST_IF)"))?;
            }
            sock.set_multicast_ttl_v4(opts.ttl.unwrap_or(1))
                .map_err(setup("setting ttl (IP_MULTICAST_TTL)"))?;
        }
        return Ok((sock, Some(addr)));
    }
    sock.connect(&addr)
        .map_err(setup("connecting to hostname:port"))?;
    Ok((sock, None))
}

fn listen(opts: &NetOptions) -> Result<(Socket, Option<SockAddr>), HalError> {
    let addr = address(opts)?;
    let sock = socket(opts, &addr)?;
    if opts.proto != NetProto::Unix {
        sock.set_reuse_address(true)
            .map_err(setup("setting SO_REUSEADDR"))?;
    }
    let group = match opts.proto {
        NetProto::Udp => multicast_group(&addr)?,
        _ => None,
    };
    if group.is_some() {
        // Several receivers of one group share its port (fio sets it too).
        set_int_option(&sock, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)
            .map_err(setup("setting SO_REUSEPORT"))?;
    }
    sock.bind(&addr).map_err(setup("binding the listen port"))?;
    if let Some(group) = group {
        let iface = opts.interface.unwrap_or(std::net::Ipv4Addr::UNSPECIFIED);
        sock.join_multicast_v4(&group, &iface)
            .map_err(setup("joining the multicast group (IP_ADD_MEMBERSHIP)"))?;
    }
    if opts.proto == NetProto::Udp {
        return Ok((sock, None));
    }
    sock.listen(1).map_err(setup("listening"))?;
    sock.set_read_timeout(Some(WAIT_SLICE))
        .map_err(setup("setting the accept timeout (SO_RCVTIMEO)"))?;
    let (peer, _) = interruptible(|| sock.accept()).map_err(setup("accepting the peer"))?;
    if opts.proto == NetProto::Tcp && opts.nodelay {
        peer.set_tcp_nodelay(true)
            .map_err(setup("setting nodelay (TCP_NODELAY)"))?;
    }
    Ok((peer, None))
}

impl Drop for NetEngine {
    fn drop(&mut self) {
        // fio's UDP sender ends the link it opened with a close message.
        if self.opts.proto == NetProto::Udp && !self.opts.listen && self.linked {
            if let Some(to) = &self.peer {
                let _ = self.sock.send_to(&link_msg(LINK_CLOSE), to);
            }
        }
        if self.opts.proto == NetProto::Unix && self.opts.listen {
            let _ = std::fs::remove_file(&self.opts.host);
        }
    }
}

impl Engine for NetEngine {
    super::ready::runs_inline!();

    fn description(&self) -> String {
        let side = if self.opts.listen {
            "receiving"
        } else {
            "sending"
        };
        let proto = format!("{:?}", self.opts.proto).to_lowercase();
        let pp = if self.opts.pingpong { ", pingpong" } else { "" };
        let group = match self.opts.host.parse::<std::net::Ipv4Addr>() {
            Ok(a) if a.is_multicast() => format!(", multicast group {a}"),
            _ => String::new(),
        };
        let (name, via) = match (self.opts.splice, &self.pipe) {
            (false, _) => ("net", ""),
            (true, Some(_)) => ("netsplice", ", splice and vmsplice through a pipe"),
            (true, None) => (
                "netsplice",
                ", sent and received as net: fio splices tcp alone",
            ),
        };
        format!(
            "{name} ({proto}, {side} side, port {}{pp}{group}{via})",
            self.opts.port
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_clone_takes_the_port_plus_its_number_as_in_fio() {
        let tcp = NetOptions {
            port: 8000,
            ..Default::default()
        };
        assert_eq!(tcp.for_clone(0).unwrap().port, 8000);
        assert_eq!(tcp.for_clone(3).unwrap().port, 8003);
        let unix = NetOptions {
            proto: NetProto::Unix,
            host: "/tmp/s".into(),
            ..Default::default()
        };
        assert_eq!(unix.for_clone(3).unwrap(), unix);
        let last = NetOptions {
            port: 65535,
            ..Default::default()
        };
        let e = last.for_clone(1).unwrap_err().to_string();
        assert!(e.contains("port 65536, past 65535"), "{e}");
    }
}
