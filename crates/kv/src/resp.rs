//! RESP, the Redis protocol (RESP2, and RESP3 after `HELLO 3`): commands in
//! (arrays of bulk strings, or inline lines as typed into telnet), replies
//! out, and replies back in for the client side. See
//! <https://redis.io/docs/latest/develop/reference/protocol-spec/>.
//!
//! The parser never trusts a length: every count and size is checked
//! against [`Limits`] before anything is allocated for it. It is
//! incremental: a command that arrives in many reads is parsed once, each
//! read resuming where the last stopped, so the work is linear in the
//! command's size (a 57 MB `MSET` is scanned once, not once per read).

use std::ops::Range;

/// Room for arguments a parser keeps between commands (a server counts a
/// client's room past its few ordinary arguments against its limits).
const ARGS_KEPT: usize = 64;

/// Bounds on what a client may send (Redis' names in the docs).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest bulk string, a key or a value (Redis' `proto-max-bulk-len`).
    pub max_bulk: usize,
    /// Most arguments in one command.
    pub max_args: usize,
    /// Largest inline command line.
    pub max_inline: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // Redis' default proto-max-bulk-len.
            max_bulk: 512 << 20,
            max_args: 1 << 20,
            max_inline: 64 << 10,
        }
    }
}

/// Why input was refused; the connection answers `-ERR Protocol error: ...`
/// and closes, as Redis does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

/// The longest length line accepted (`*`/`$`, digits, sign, CRLF).
const MAX_LEN_LINE: usize = 32;

/// Parses commands one at a time, resuming an unfinished one where the
/// previous call stopped.
///
/// Contract: until a call returns `Ok(Some(_))`, every call must get the
/// same buffer (the unfinished command at its start), possibly longer.
/// After `Ok(Some(n))` the command's arguments are [`args`](Self::args),
/// ranges of that buffer, until the next call, which gets the bytes after
/// the `n` consumed ones.
#[derive(Debug, Default)]
pub struct CommandParser {
    args: Vec<Range<usize>>,
    /// Bytes of the unfinished command parsed so far (header and whole
    /// arguments).
    pos: usize,
    /// Arguments the multibulk header announced; `None` before the header.
    expected: Option<usize>,
    /// An inline command: bytes searched for its LF so far.
    inline_scan: usize,
    /// The bulk string being waited for: its length.
    pending_bulk: usize,
    /// Bytes the parser has looked at, over its life: the work it did.
    scanned: u64,
    done: bool,
}

impl CommandParser {
    pub fn new() -> CommandParser {
        CommandParser::default()
    }

    /// The last complete command's arguments, as ranges of its buffer.
    pub fn args(&self) -> &[Range<usize>] {
        &self.args
    }

    /// Arguments the parser holds room for, or the unfinished command
    /// announced if more: what its arguments may take once all are in.
    pub fn args_held(&self) -> usize {
        self.args.capacity().max(self.expected.unwrap_or(0))
    }

    /// Bytes examined so far, for checking that parsing is linear.
    pub fn scanned(&self) -> u64 {
        self.scanned
    }

    /// How many more bytes the unfinished command needs at least (0 when
    /// unknown): lets a reader size its buffer once for a large value.
    pub fn bytes_wanted(&self, buffered: usize) -> usize {
        (self.pos + self.pending_bulk).saturating_sub(buffered)
    }

    /// Parses from the start of `buf`. `Ok(None)`: incomplete, call again
    /// with more bytes. `Ok(Some(n))`: a command took `n` bytes; an empty
    /// one (`*0`) has no arguments and is to be skipped, as Redis does.
    pub fn parse(&mut self, buf: &[u8], limits: &Limits) -> Result<Option<usize>, ProtocolError> {
        if self.done {
            *self = CommandParser {
                args: std::mem::take(&mut self.args),
                scanned: self.scanned,
                ..CommandParser::default()
            };
            self.args.clear();
            // A huge command's room goes with it.
            if self.args.capacity() > ARGS_KEPT {
                self.args = Vec::new();
            }
        }
        debug_assert!(
            self.pos <= buf.len(),
            "the unfinished command's buffer shrank"
        );
        if buf.is_empty() {
            return Ok(None);
        }
        let got = if buf[0] == b'*' {
            self.parse_multibulk(buf, limits)?
        } else {
            self.parse_inline(buf, limits)?
        };
        self.done = got.is_some();
        Ok(got)
    }

    fn parse_multibulk(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<usize>, ProtocolError> {
        let expected = match self.expected {
            Some(n) => n,
            None => {
                let Some((count, next)) = self.len_line(buf, 1, limits.max_args, "multibulk")?
                else {
                    return Ok(None);
                };
                // *-1 is an empty command too.
                let n = count.max(0) as usize;
                self.expected = Some(n);
                self.pos = next;
                self.args.reserve(n.min(1024));
                n
            }
        };
        while self.args.len() < expected {
            let Some(arg) = self.parse_bulk(buf, limits)? else {
                return Ok(None);
            };
            self.args.push(arg);
        }
        Ok(Some(self.pos))
    }

    /// One `$len\r\n<bytes>\r\n` at `self.pos`; advances past it.
    fn parse_bulk(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<Range<usize>>, ProtocolError> {
        let pos = self.pos;
        if pos >= buf.len() {
            return Ok(None);
        }
        if buf[pos] != b'$' {
            return Err(ProtocolError(format!(
                "expected '$', got '{}'",
                printable(buf[pos])
            )));
        }
        let Some((len, start)) = self.len_line(buf, pos + 1, limits.max_bulk, "bulk")? else {
            return Ok(None);
        };
        if len < 0 {
            return Err(ProtocolError("invalid bulk length".into()));
        }
        let end = start + len as usize;
        if buf.len() < end + 2 {
            self.pending_bulk = end + 2 - pos;
            return Ok(None);
        }
        self.pending_bulk = 0;
        self.scanned += 2;
        if &buf[end..end + 2] != b"\r\n" {
            return Err(ProtocolError("bulk string not ended by CRLF".into()));
        }
        self.pos = end + 2;
        Ok(Some(start..end))
    }

    /// Reads `<number>\r\n` at `from`; returns the number and where the
    /// next line starts. Looks at no more than one short line.
    fn len_line(
        &mut self,
        buf: &[u8],
        from: usize,
        max: usize,
        what: &str,
    ) -> Result<Option<(i64, usize)>, ProtocolError> {
        let window = &buf[from..buf.len().min(from + MAX_LEN_LINE)];
        let Some(nl) = window.iter().position(|&b| b == b'\n') else {
            self.scanned += window.len() as u64;
            if window.len() == MAX_LEN_LINE {
                return Err(ProtocolError(format!("invalid {what} length")));
            }
            return Ok(None);
        };
        self.scanned += nl as u64 + 1;
        let line = window[..nl]
            .strip_suffix(b"\r")
            .ok_or_else(|| ProtocolError(format!("invalid {what} length (no CR before LF)")))?;
        let n: i64 = std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ProtocolError(format!("invalid {what} length")))?;
        if n > max as i64 {
            return Err(ProtocolError(format!(
                "invalid {what} length {n}: the largest accepted is {max}"
            )));
        }
        if n < -1 {
            return Err(ProtocolError(format!("invalid {what} length")));
        }
        Ok(Some((n, from + nl + 1)))
    }

    /// An inline command: words separated by spaces, ended by LF (CRLF),
    /// with double-quoted words allowed as redis-cli's shell does.
    fn parse_inline(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<usize>, ProtocolError> {
        let from = self.inline_scan;
        let Some(at) = buf[from..].iter().position(|&b| b == b'\n') else {
            self.scanned += (buf.len() - from) as u64;
            self.inline_scan = buf.len();
            if buf.len() > limits.max_inline {
                return Err(ProtocolError("too big inline request".into()));
            }
            return Ok(None);
        };
        let nl = from + at;
        self.scanned += at as u64 + 1;
        let end = if nl > 0 && buf[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        split_words(&buf[..end], limits, &mut self.args)?;
        self.scanned += end as u64;
        Ok(Some(nl + 1))
    }
}

/// Splits an inline line into words (double quotes group a word).
fn split_words(
    line: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<(), ProtocolError> {
    let end = line.len();
    let mut i = 0;
    while i < end {
        if line[i] == b' ' || line[i] == b'\t' {
            i += 1;
            continue;
        }
        if line[i] == b'"' {
            let close = line[i + 1..]
                .iter()
                .position(|&b| b == b'"')
                .ok_or_else(|| ProtocolError("unbalanced quotes in request".into()))?;
            args.push(i + 1..i + 1 + close);
            i += close + 2;
        } else {
            let len = line[i..]
                .iter()
                .position(|&b| b == b' ' || b == b'\t')
                .unwrap_or(end - i);
            args.push(i..i + len);
            i += len;
        }
        if args.len() > limits.max_args {
            return Err(ProtocolError("too many arguments".into()));
        }
    }
    Ok(())
}

/// Parses one command from the start of `buf` in one go (no resumption):
/// `Ok(None)` if incomplete; `Ok(Some(n))` with the arguments in `args`.
pub fn parse_command(
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    let mut p = CommandParser::new();
    let got = p.parse(buf, limits)?;
    args.clear();
    if got.is_some() {
        args.extend_from_slice(p.args());
    }
    Ok(got)
}

fn printable(b: u8) -> char {
    if b.is_ascii_graphic() {
        b as char
    } else {
        '?'
    }
}

/// Appends replies to an output buffer, in RESP2 or RESP3.
pub struct Reply<'a> {
    out: &'a mut Vec<u8>,
    resp3: bool,
}

impl<'a> Reply<'a> {
    pub fn new(out: &'a mut Vec<u8>, resp3: bool) -> Reply<'a> {
        Reply { out, resp3 }
    }

    pub fn resp2(out: &'a mut Vec<u8>) -> Reply<'a> {
        Reply::new(out, false)
    }

    pub fn is_resp3(&self) -> bool {
        self.resp3
    }

    /// `kind`, then `n` in decimal and CRLF: the line before every bulk
    /// string and aggregate (by hand: `write!` cost 0.5% of a GET's CPU).
    fn header(&mut self, kind: u8, n: i64) {
        self.out.push(kind);
        if n < 0 {
            self.out.push(b'-');
        }
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut v = n.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.out.extend_from_slice(&digits[at..]);
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn simple(&mut self, s: &str) {
        self.out.push(b'+');
        self.out.extend_from_slice(s.as_bytes());
        self.out.extend_from_slice(b"\r\n");
    }

    /// An error line; `msg` starts with its code (`ERR ...`, `NOPROTO ...`).
    pub fn error(&mut self, msg: &str) {
        self.out.push(b'-');
        // A reply line cannot hold CR or LF.
        self.out.extend(
            msg.bytes()
                .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn int(&mut self, n: i64) {
        self.header(b':', n);
    }

    pub fn bulk(&mut self, b: &[u8]) {
        self.header(b'$', b.len() as i64);
        self.out.extend_from_slice(b);
        self.out.extend_from_slice(b"\r\n");
    }

    /// No value: RESP3's null, RESP2's null bulk string.
    pub fn nil(&mut self) {
        let null: &[u8] = if self.resp3 { b"_\r\n" } else { b"$-1\r\n" };
        self.out.extend_from_slice(null);
    }

    pub fn array(&mut self, n: usize) {
        self.header(b'*', n as i64);
    }

    /// A map of `n` pairs: RESP3's map, or a flat array of 2n in RESP2.
    pub fn map(&mut self, n: usize) {
        if self.resp3 {
            self.header(b'%', n as i64);
        } else {
            self.header(b'*', 2 * n as i64);
        }
    }

    /// Text meant for people (INFO): RESP3's verbatim string, else bulk.
    pub fn verbatim(&mut self, text: &str) {
        if !self.resp3 {
            return self.bulk(text.as_bytes());
        }
        self.header(b'=', text.len() as i64 + 4);
        self.out.extend_from_slice(b"txt:");
        self.out.extend_from_slice(text.as_bytes());
        self.out.extend_from_slice(b"\r\n");
    }
}

/// A reply as a client reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Value>>),
    /// RESP3's null (`_`).
    Null,
    /// RESP3's map (`%`), pairs in order.
    Map(Vec<(Value, Value)>),
    /// RESP3's verbatim string (`=`): its format and its text.
    Verbatim(String, String),
}

/// Parses one reply from the start of `buf`: `Ok(None)` if incomplete.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(Value, usize)>, ProtocolError> {
    parse_nested(buf, 0)
}

/// How deep arrays and maps of a reply may nest: each level is a frame of
/// the parser's stack, and a client thread's stack is 2 MiB.
pub const MAX_REPLY_DEPTH: usize = 512;

/// A reply inside `depth` arrays or maps.
fn parse_nested(buf: &[u8], depth: usize) -> Result<Option<(Value, usize)>, ProtocolError> {
    let Some(&kind) = buf.first() else {
        return Ok(None);
    };
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        return Ok(None);
    };
    if nl == 0 {
        return Err(ProtocolError("a reply line without a type".into()));
    }
    let line = buf[1..nl].strip_suffix(b"\r").unwrap_or(&buf[1..nl]);
    let text = || String::from_utf8_lossy(line).into_owned();
    let num = || -> Result<i64, ProtocolError> {
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ProtocolError(format!("bad number in reply: {}", text())))
    };
    let after = nl + 1;
    if matches!(kind, b'*' | b'~' | b'%') && depth >= MAX_REPLY_DEPTH {
        return Err(ProtocolError(format!(
            "a reply nested deeper than {MAX_REPLY_DEPTH} arrays or maps"
        )));
    }
    Ok(match kind {
        b'+' => Some((Value::Simple(text()), after)),
        b'-' => Some((Value::Error(text()), after)),
        b':' => Some((Value::Int(num()?), after)),
        b'_' => Some((Value::Null, after)),
        b'$' | b'=' => parse_string(buf, kind, num()?, after),
        b'*' | b'~' => {
            let n = num()?;
            if n < 0 {
                return Ok(Some((Value::Array(None), after)));
            }
            parse_items(buf, n as usize, after, depth)?
                .map(|(items, end)| (Value::Array(Some(items)), end))
        }
        b'%' => {
            let n = num()?.max(0) as usize;
            parse_items(buf, 2 * n, after, depth)?.map(|(items, end)| {
                let mut it = items.into_iter();
                let pairs = std::iter::from_fn(|| Some((it.next()?, it.next()?))).collect();
                (Value::Map(pairs), end)
            })
        }
        other => {
            return Err(ProtocolError(format!(
                "unknown reply type '{}'",
                printable(other)
            )))
        }
    })
}

/// A bulk (`$`) or verbatim (`=`) string of `n` bytes starting at `at`.
fn parse_string(buf: &[u8], kind: u8, n: i64, at: usize) -> Option<(Value, usize)> {
    if n < 0 {
        return Some((Value::Bulk(None), at));
    }
    let end = at + n as usize;
    if buf.len() < end + 2 {
        return None;
    }
    let bytes = &buf[at..end];
    if kind == b'$' {
        return Some((Value::Bulk(Some(bytes.to_vec())), end + 2));
    }
    let (format, text) = bytes.split_at(bytes.len().min(4));
    let format = String::from_utf8_lossy(format)
        .trim_end_matches(':')
        .to_string();
    Some((
        Value::Verbatim(format, String::from_utf8_lossy(text).into_owned()),
        end + 2,
    ))
}

/// `n` replies in a row from `at`, the items of an aggregate at `depth`.
fn parse_items(
    buf: &[u8],
    n: usize,
    at: usize,
    depth: usize,
) -> Result<Option<(Vec<Value>, usize)>, ProtocolError> {
    let mut items = Vec::with_capacity(n.min(1024));
    let mut pos = at;
    for _ in 0..n {
        let Some((v, used)) = parse_nested(&buf[pos..], depth + 1)? else {
            return Ok(None);
        };
        items.push(v);
        pos += used;
    }
    Ok(Some((items, pos)))
}

/// Encodes a command as an array of bulk strings.
pub fn encode_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut r = Reply::resp2(out);
    r.array(args.len());
    for a in args {
        r.bulk(a);
    }
}

/// Encodes `MGET` of `keys` (no argument list to build per call).
pub fn encode_mget(out: &mut Vec<u8>, keys: &[Vec<u8>]) {
    let mut r = Reply::resp2(out);
    r.array(keys.len() + 1);
    r.bulk(b"MGET");
    for k in keys {
        r.bulk(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A parsed command's words and the bytes it took.
    type Parsed = Option<(Vec<Vec<u8>>, usize)>;

    #[test]
    fn replies_nest_to_the_limit_and_no_deeper() {
        let nested = |levels: usize| {
            let mut buf = b"*1\r\n".repeat(levels);
            buf.extend_from_slice(b":7\r\n");
            buf
        };
        let (mut v, used) = parse_reply(&nested(MAX_REPLY_DEPTH)).unwrap().unwrap();
        assert_eq!(used, MAX_REPLY_DEPTH * 4 + 4);
        for _ in 0..MAX_REPLY_DEPTH {
            let Value::Array(Some(mut items)) = v else {
                panic!("an array at every level")
            };
            v = items.pop().unwrap();
        }
        assert_eq!(v, Value::Int(7));
        // 20,000 levels once overflowed the stack; now one error.
        for levels in [MAX_REPLY_DEPTH + 1, 20_000] {
            let e = parse_reply(&nested(levels)).unwrap_err();
            assert!(e.0.contains("nested deeper than 512"), "{}", e.0);
        }
    }

    fn words(buf: &[u8]) -> Result<Parsed, ProtocolError> {
        let mut args = Vec::new();
        Ok(parse_command(buf, &Limits::default(), &mut args)?
            .map(|n| (args.iter().map(|r| buf[r.clone()].to_vec()).collect(), n)))
    }

    #[test]
    fn arrays_inline_and_pipelines_parse() {
        let mut buf = Vec::new();
        encode_command(&mut buf, &[b"SET", b"k", b"v\r\nwith crlf"]);
        encode_command(&mut buf, &[b"GET", b"k"]);
        buf.extend_from_slice(b"PING \"hello world\"\r\n");
        let (a, n) = words(&buf).unwrap().unwrap();
        assert_eq!(
            a,
            vec![b"SET".to_vec(), b"k".to_vec(), b"v\r\nwith crlf".to_vec()]
        );
        let (b, m) = words(&buf[n..]).unwrap().unwrap();
        assert_eq!(b.len(), 2);
        let (c, _) = words(&buf[n + m..]).unwrap().unwrap();
        assert_eq!(c, vec![b"PING".to_vec(), b"hello world".to_vec()]);
        // Every strict prefix is incomplete, never an error.
        for cut in 0..n {
            assert_eq!(words(&buf[..cut]), Ok(None), "cut at {cut}");
        }
    }

    /// Feeds `input` in `chunk`-byte reads, as a connection does; returns
    /// every command's words and the parser's work.
    fn feed(input: &[u8], chunk: usize) -> (Vec<Vec<Vec<u8>>>, u64) {
        let mut p = CommandParser::new();
        let (mut start, mut have, mut cmds) = (0, 0, Vec::new());
        while start < input.len() {
            match p.parse(&input[start..have], &Limits::default()).unwrap() {
                Some(n) => {
                    let base = &input[start..];
                    cmds.push(p.args().iter().map(|r| base[r.clone()].to_vec()).collect());
                    start += n;
                }
                None if have == input.len() => panic!("input ended inside a command"),
                None => have = (have + chunk).min(input.len()),
            }
        }
        (cmds, p.scanned())
    }

    #[test]
    fn a_command_read_in_many_pieces_is_parsed_once() {
        let mut buf = Vec::new();
        // A client's hostile case: a million 50-byte arguments, 57 MB.
        let values: Vec<Vec<u8>> = (0..1_000_000u32)
            .map(|i| format!("{i:050}").into_bytes())
            .collect();
        let mut args: Vec<&[u8]> = vec![b"MSET"];
        args.extend(values.iter().map(|v| v.as_slice()));
        encode_command(&mut buf, &args);
        encode_command(&mut buf, &[b"GET", b"k"]);
        for chunk in [7, 16 << 10] {
            let (cmds, scanned) = feed(&buf, chunk);
            assert_eq!(cmds.len(), 2);
            assert_eq!(cmds[0].len(), 1_000_001);
            assert_eq!(cmds[0][77_777], values[77_776]);
            assert_eq!(cmds[1], vec![b"GET".to_vec(), b"k".to_vec()]);
            // Linear: each byte of framing looked at about once per read
            // that ends inside it, never the whole command per read.
            assert!(
                scanned <= 2 * buf.len() as u64,
                "{scanned} bytes scanned for a {}-byte input in {chunk}-byte reads",
                buf.len()
            );
        }
    }

    #[test]
    fn inline_commands_resume_too() {
        let line = format!("SET k {}\r\nPING\r\n", "v".repeat(30_000));
        let (cmds, scanned) = feed(line.as_bytes(), 100);
        assert_eq!(cmds.len(), 2);
        assert_eq!(cmds[0][2].len(), 30_000);
        assert!(scanned <= 3 * line.len() as u64, "{scanned}");
    }

    #[test]
    fn hostile_lengths_are_refused_before_allocation() {
        for bad in [
            &b"*99999999999\r\n"[..],
            b"*1\r\n$999999999999\r\n",
            b"*1\r\n$-5\r\n",
            b"*1\r\n:12\r\n",
            b"*x\r\n",
            b"*1\r\n$3\r\nabcXY",
            b"*2\n",
            b"*1\r\n$11111111111111111111111111111111111111",
        ] {
            assert!(
                words(bad).is_err(),
                "{:?} accepted",
                String::from_utf8_lossy(bad)
            );
        }
        let long = vec![b'a'; 70_000];
        assert!(words(&long).is_err(), "an endless inline line is refused");
    }

    #[test]
    fn replies_round_trip() {
        let mut out = Vec::new();
        let mut r = Reply::resp2(&mut out);
        r.array(4);
        r.simple("OK");
        r.int(-3);
        r.nil();
        r.bulk(b"x\r\ny");
        r.error("ERR bad\r\nthing");
        let (v, n) = parse_reply(&out).unwrap().unwrap();
        assert_eq!(
            v,
            Value::Array(Some(vec![
                Value::Simple("OK".into()),
                Value::Int(-3),
                Value::Bulk(None),
                Value::Bulk(Some(b"x\r\ny".to_vec())),
            ]))
        );
        let (e, _) = parse_reply(&out[n..]).unwrap().unwrap();
        assert_eq!(e, Value::Error("ERR bad  thing".into()));
    }

    #[test]
    fn resp3_replies_round_trip_and_fall_back_in_resp2() {
        for resp3 in [false, true] {
            let mut out = Vec::new();
            let mut r = Reply::new(&mut out, resp3);
            r.map(1);
            r.bulk(b"k");
            r.nil();
            r.verbatim("# Server\r\n");
            let (v, n) = parse_reply(&out).unwrap().unwrap();
            let (t, _) = parse_reply(&out[n..]).unwrap().unwrap();
            if resp3 {
                assert_eq!(
                    v,
                    Value::Map(vec![(Value::Bulk(Some(b"k".to_vec())), Value::Null)])
                );
                assert_eq!(t, Value::Verbatim("txt".into(), "# Server\r\n".into()));
            } else {
                assert_eq!(
                    v,
                    Value::Array(Some(vec![
                        Value::Bulk(Some(b"k".to_vec())),
                        Value::Bulk(None)
                    ]))
                );
                assert_eq!(t, Value::Bulk(Some(b"# Server\r\n".to_vec())));
            }
        }
    }

    proptest! {
        #[test]
        fn a_header_writes_its_number_as_format_does(n: i64, kind in prop::sample::select(vec![b'$', b'*', b'%', b':'])) {
            let mut out = Vec::new();
            Reply::resp2(&mut out).header(kind, n);
            prop_assert_eq!(out, format!("{}{n}\r\n", kind as char).into_bytes());
        }
    }

    #[test]
    fn headers_at_the_edges_of_the_range() {
        for n in [0, 1, -1, 9, 10, -10, 99, 100, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            Reply::resp2(&mut out).header(b'$', n);
            assert_eq!(out, format!("${n}\r\n").into_bytes());
        }
    }

    proptest! {
        /// Any bytes: the parser answers Ok(None), an error, or a command
        /// whose ranges lie inside the input; it never panics.
        #[test]
        fn arbitrary_input_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut args = Vec::new();
            let limits = Limits { max_bulk: 1000, max_args: 50, max_inline: 200 };
            if let Ok(Some(n)) = parse_command(&data, &limits, &mut args) {
                prop_assert!(n <= data.len());
                for r in &args {
                    prop_assert!(r.end <= n);
                }
            }
        }

        /// Parsing in pieces gives what parsing at once gives.
        #[test]
        fn pieces_parse_as_a_whole(cut in 1usize..60, extra in 0usize..3) {
            let mut buf = Vec::new();
            encode_command(&mut buf, &[b"MSET", b"key", b"value", b"k2", b"v2"]);
            buf.extend_from_slice(b"PING x\r\n");
            let whole = feed(&buf, buf.len()).0;
            prop_assert_eq!(feed(&buf, cut + extra).0, whole);
        }

        /// Mutations of a valid pipeline never panic either.
        #[test]
        fn mutated_commands_never_panic(pos in 0usize..40, byte in any::<u8>()) {
            let mut buf = Vec::new();
            encode_command(&mut buf, &[b"MSET", b"key", b"value", b"k2", b"v2"]);
            let p = pos % buf.len();
            buf[p] = byte;
            let mut args = Vec::new();
            let _ = parse_command(&buf, &Limits::default(), &mut args);
            let _ = parse_reply(&buf);
        }
    }
}
