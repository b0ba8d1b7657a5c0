//! The commands, written once for every server model: what each does to the
//! store and what it answers. The store is reached through a [`Backend`]:
//! blocking calls for the thread-per-connection server, futures on the task
//! path for the event-driven one.
//!
//! Commands: GET SET DEL UNLINK EXISTS MGET MSET PING ECHO HELLO AUTH INFO
//! DBSIZE FLUSHDB FLUSHALL COMMAND CONFIG(GET) SELECT(0) CLIENT QUIT. With a
//! password set, everything but AUTH, HELLO and QUIT answers NOAUTH until
//! the client authenticates.

use crate::info::REDIS_VERSION;
use crate::resp::Reply;
use crate::server_state::Shared;
use crate::store::StoreError;
use std::ops::Range;

/// How a connection reaches the store. Only the calls that touch the
/// device differ between models; the rest go to the store directly.
pub(crate) trait Backend {
    async fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError>;
    async fn set(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError>;
    /// DEL k1 k2 ...: how many were there (all or none per device).
    async fn del(&self, keys: &[&[u8]]) -> Result<u64, StoreError>;
    async fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError>;
    /// FLUSHALL: it waits for the flusher and writes each superblock.
    async fn flush_all(&self) -> Result<(), StoreError>;
}

/// One connection's protocol state.
#[derive(Debug)]
pub(crate) struct Client {
    pub id: u64,
    pub resp3: bool,
    /// AUTH done, or no password set.
    pub authenticated: bool,
    pub name: Option<Vec<u8>>,
    /// A value read for GET, reused.
    pub value: Vec<u8>,
}

impl Client {
    pub fn new(id: u64, authenticated: bool) -> Client {
        Client {
            id,
            resp3: false,
            authenticated,
            name: None,
            value: Vec::new(),
        }
    }
}

/// A command's words: ranges of the connection's input buffer.
#[derive(Clone, Copy)]
pub(crate) struct Args<'a> {
    pub buf: &'a [u8],
    pub ranges: &'a [Range<usize>],
}

impl<'a> Args<'a> {
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn at(&self, i: usize) -> &'a [u8] {
        &self.buf[self.ranges[i].clone()]
    }

    /// The words after the command's name.
    pub fn rest(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let buf = self.buf;
        self.ranges[1..].iter().map(move |r| &buf[r.clone()])
    }
}

/// What the connection does after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Close,
}

pub(crate) const COMMANDS: &[&str] = &[
    "PING", "ECHO", "GET", "SET", "MSET", "MGET", "DEL", "UNLINK", "EXISTS", "DBSIZE", "FLUSHDB",
    "FLUSHALL", "INFO", "COMMAND", "CONFIG", "SELECT", "CLIENT", "QUIT", "HELLO", "AUTH",
];

/// Runs one command (`args` is never empty) and appends its reply to `out`.
pub(crate) async fn execute<B: Backend>(
    args: Args<'_>,
    client: &mut Client,
    shared: &Shared,
    backend: &B,
    out: &mut Vec<u8>,
) -> Flow {
    let mut name = [0u8; 16];
    let raw = args.at(0);
    let upper = if raw.len() <= name.len() {
        name[..raw.len()].copy_from_slice(raw);
        name[..raw.len()].make_ascii_uppercase();
        std::str::from_utf8(&name[..raw.len()]).unwrap_or("")
    } else {
        ""
    };
    let n = args.len() - 1;
    if !client.authenticated && !matches!(upper, "AUTH" | "HELLO" | "QUIT") {
        Reply::new(out, client.resp3).error("NOAUTH Authentication required.");
        return Flow::Continue;
    }
    let resp3 = client.resp3;
    let mut r = Reply::new(out, resp3);
    match upper {
        "GET" if n == 1 => match backend.get(args.at(1), &mut client.value).await {
            Ok(true) => r.bulk(&client.value),
            Ok(false) => r.nil(),
            Err(e) => store_error(&mut r, e),
        },
        "SET" if n == 2 => match backend.set(args.at(1), args.at(2)).await {
            Ok(()) => r.simple("OK"),
            Err(e) => store_error(&mut r, e),
        },
        "SET" if n > 2 => r.error(
            "ERR syntax error: hiops kv's SET takes a key and a value only (no EX/PX/NX/XX: the store has no expiry)",
        ),
        "MSET" if n >= 2 && n.is_multiple_of(2) => mset(args, backend, &mut r).await,
        "MGET" if n >= 1 => mget(args, client, backend, out).await,
        "DEL" | "UNLINK" if n >= 1 => del(args, backend, &mut r).await,
        "FLUSHDB" | "FLUSHALL" if n <= 1 => match backend.flush_all().await {
            Ok(()) => r.simple("OK"),
            Err(e) => store_error(&mut r, e),
        },
        "QUIT" => {
            r.simple("OK");
            return Flow::Close;
        }
        "HELLO" => hello(args, client, shared, out),
        "AUTH" if n == 1 || n == 2 => {
            let user = if n == 2 { args.at(1) } else { b"default" };
            match authenticate(shared, client, user, args.at(n)) {
                Ok(()) => r.simple("OK"),
                Err(e) => r.error(e),
            }
        }
        _ => admin(upper, args, client, shared, &mut r),
    }
    Flow::Continue
}

fn store_error(r: &mut Reply, e: StoreError) {
    r.error(&format!("ERR {e}"));
}

fn wrong_args(r: &mut Reply, name: &str) {
    r.error(&format!(
        "ERR wrong number of arguments for '{}' command",
        name.to_ascii_lowercase()
    ));
}

async fn mset<B: Backend>(args: Args<'_>, backend: &B, r: &mut Reply<'_>) {
    let words: Vec<&[u8]> = args.rest().collect();
    let pairs: Vec<(&[u8], &[u8])> = words.chunks(2).map(|p| (p[0], p[1])).collect();
    match backend.mset(&pairs).await {
        Ok(()) => r.simple("OK"),
        Err(e) => store_error(r, e),
    }
}

/// An error mid-way must not leave a half-written array: the reply is
/// rolled back to an error.
async fn mget<B: Backend>(args: Args<'_>, client: &mut Client, backend: &B, out: &mut Vec<u8>) {
    let start = out.len();
    Reply::new(out, client.resp3).array(args.len() - 1);
    for key in args.rest() {
        match backend.get(key, &mut client.value).await {
            Ok(true) => Reply::new(out, client.resp3).bulk(&client.value),
            Ok(false) => Reply::new(out, client.resp3).nil(),
            Err(e) => {
                out.truncate(start);
                return store_error(&mut Reply::new(out, client.resp3), e);
            }
        }
    }
}

async fn del<B: Backend>(args: Args<'_>, backend: &B, r: &mut Reply<'_>) {
    let keys: Vec<&[u8]> = args.rest().collect();
    match backend.del(&keys).await {
        Ok(gone) => r.int(gone as i64),
        Err(e) => store_error(r, e),
    }
}

/// `HELLO [protover [AUTH user pass] [SETNAME name]]` as Redis 7 answers
/// it: the protocol switches, and the server describes itself.
fn hello(args: Args<'_>, client: &mut Client, shared: &Shared, out: &mut Vec<u8>) {
    let mut proto = if client.resp3 { 3 } else { 2 };
    if args.len() > 1 {
        match std::str::from_utf8(args.at(1))
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
        {
            Some(v @ (2 | 3)) => proto = v,
            Some(_) => return Reply::resp2(out).error("NOPROTO unsupported protocol version"),
            None => {
                return Reply::resp2(out)
                    .error("ERR Protocol version is not an integer or out of range")
            }
        }
    }
    let mut i = 2;
    while i < args.len() {
        let opt = args.at(i).to_ascii_uppercase();
        match opt.as_slice() {
            b"AUTH" if i + 2 < args.len() => {
                if let Err(e) = authenticate(shared, client, args.at(i + 1), args.at(i + 2)) {
                    return Reply::new(out, client.resp3).error(e);
                }
                i += 3;
            }
            b"SETNAME" if i + 1 < args.len() => {
                client.name = Some(args.at(i + 1).to_vec());
                i += 2;
            }
            _ => {
                let word = String::from_utf8_lossy(args.at(i));
                return Reply::resp2(out)
                    .error(&format!("ERR Syntax error in HELLO option '{word}'"));
            }
        }
    }
    if !client.authenticated {
        return Reply::new(out, client.resp3).error(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time",
        );
    }
    client.resp3 = proto == 3;
    let mut r = Reply::new(out, client.resp3);
    r.map(7);
    for (k, v) in [("server", "redis"), ("version", REDIS_VERSION)] {
        r.bulk(k.as_bytes());
        r.bulk(v.as_bytes());
    }
    r.bulk(b"proto");
    r.int(proto);
    r.bulk(b"id");
    r.int(client.id as i64);
    for (k, v) in [("mode", "standalone"), ("role", "master")] {
        r.bulk(k.as_bytes());
        r.bulk(v.as_bytes());
    }
    r.bulk(b"modules");
    r.array(0);
}

/// AUTH for the one user, `default`, as Redis answers it. The password is
/// compared in constant time; failures are counted for INFO.
fn authenticate(
    shared: &Shared,
    client: &mut Client,
    user: &[u8],
    password: &[u8],
) -> Result<(), &'static str> {
    use subtle::ConstantTimeEq;
    let Some(expected) = &shared.cfg.password else {
        if user == b"default" {
            // Redis accepts any password for a user that has none.
            client.authenticated = true;
            return Ok(());
        }
        return Err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
    };
    let matches: bool = expected.as_bytes().ct_eq(password).into();
    if user == b"default" && matches {
        client.authenticated = true;
        return Ok(());
    }
    shared
        .counters
        .auth_failures
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Err("WRONGPASS invalid username-password pair or user is disabled.")
}

/// The commands that never touch the device.
fn admin(name: &str, args: Args<'_>, client: &mut Client, shared: &Shared, r: &mut Reply) {
    let store = &shared.store;
    let n = args.len() - 1;
    let arg = |i: usize| args.at(i + 1);
    match name {
        "PING" => match n {
            0 => r.simple("PONG"),
            1 => r.bulk(arg(0)),
            _ => wrong_args(r, name),
        },
        "ECHO" if n == 1 => r.bulk(arg(0)),
        "EXISTS" if n >= 1 => r.int(args.rest().filter(|k| store.exists(k)).count() as i64),
        "DBSIZE" if n == 0 => r.int(store.len() as i64),
        "INFO" => {
            let wanted: Vec<&[u8]> = args.rest().collect();
            r.verbatim(&crate::info::info_sections(&shared.info(), &wanted))
        }
        // Clients ask for command docs and counts when they connect; an
        // empty table is a valid answer.
        "COMMAND" => match args.rest().next().map(|a| a.to_ascii_uppercase()) {
            Some(sub) if sub == b"COUNT" => r.int(COMMANDS.len() as i64),
            Some(sub) if sub == b"DOCS" => r.map(0),
            _ => r.array(0),
        },
        "CONFIG" if n >= 1 && arg(0).eq_ignore_ascii_case(b"GET") => config_get(args, shared, r),
        "CONFIG" => r.error("ERR hiops kv has no runtime configuration: restart with other flags"),
        "SELECT" if n == 1 => {
            if arg(0) == b"0" {
                r.simple("OK")
            } else {
                r.error("ERR DB index is out of range")
            }
        }
        "CLIENT" if n >= 1 => client_command(args, client, r),
        _ if COMMANDS.contains(&name) => wrong_args(r, name),
        _ => unknown(args, r),
    }
}

/// CONFIG GET: proto-max-bulk-len (named, or `*`), the limit in force;
/// nothing else is configurable at run time.
fn config_get(args: Args<'_>, shared: &Shared, r: &mut Reply) {
    const NAME: &[u8] = b"proto-max-bulk-len";
    let asked = args
        .rest()
        .skip(1)
        .any(|p| p == b"*" || p.eq_ignore_ascii_case(NAME));
    if !asked {
        return r.map(0);
    }
    r.map(1);
    r.bulk(NAME);
    r.bulk(shared.cfg.limits.max_bulk.to_string().as_bytes());
}

fn client_command(args: Args<'_>, client: &mut Client, r: &mut Reply) {
    match args.at(1).to_ascii_uppercase().as_slice() {
        b"SETNAME" if args.len() == 3 => {
            client.name = Some(args.at(2).to_vec());
            r.simple("OK")
        }
        b"SETINFO" => r.simple("OK"),
        b"GETNAME" => match &client.name {
            Some(n) => r.bulk(n),
            None => r.nil(),
        },
        b"ID" => r.int(client.id as i64),
        _ => r.error("ERR unknown CLIENT subcommand"),
    }
}

fn unknown(args: Args<'_>, r: &mut Reply) {
    let name = args.at(0);
    let mut msg = format!(
        "ERR unknown command '{}', with args beginning with: ",
        String::from_utf8_lossy(&name[..name.len().min(128)])
    );
    for a in args.rest().take(8) {
        msg.push_str(&format!(
            "'{}' ",
            String::from_utf8_lossy(&a[..a.len().min(64)])
        ));
    }
    r.error(&msg);
}
