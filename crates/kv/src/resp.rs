//! RESP2, the Redis protocol: commands in (arrays of bulk strings, or
//! inline lines as typed into telnet), replies out, and replies back in for
//! the client side. See <https://redis.io/docs/latest/develop/reference/protocol-spec/>.
//!
//! The parser never trusts a length: every count and size is checked
//! against [`Limits`] before anything is allocated for it.

use std::ops::Range;

/// Bounds on what a client may send.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest bulk string (a key or a value).
    pub max_bulk: usize,
    /// Most arguments in one command.
    pub max_args: usize,
    /// Largest inline command line.
    pub max_inline: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk: 8 << 20,
            max_args: 1 << 20,
            max_inline: 64 << 10,
        }
    }
}

/// Why input was refused; the connection answers `-ERR Protocol error: ...`
/// and closes, as Redis does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

/// Parses one command from the start of `buf`. `Ok(None)`: incomplete, read
/// more. `Ok(Some(n))`: the command's arguments are in `args` (ranges of
/// `buf`) and it took `n` bytes.
pub fn parse_command(
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    args.clear();
    if buf.is_empty() {
        return Ok(None);
    }
    if buf[0] != b'*' {
        return parse_inline(buf, limits, args);
    }
    let Some((count, mut pos)) = parse_len_line(buf, 1, limits.max_args as i64, "multibulk")?
    else {
        return Ok(None);
    };
    // *0 and *-1 are empty commands: skipped, as Redis does.
    for _ in 0..count.max(0) {
        if pos >= buf.len() {
            return Ok(None);
        }
        if buf[pos] != b'$' {
            return Err(ProtocolError(format!(
                "expected '$', got '{}'",
                printable(buf[pos])
            )));
        }
        let Some((len, start)) = parse_len_line(buf, pos + 1, limits.max_bulk as i64, "bulk")?
        else {
            return Ok(None);
        };
        if len < 0 {
            return Err(ProtocolError("invalid bulk length".into()));
        }
        let end = start + len as usize;
        if buf.len() < end + 2 {
            return Ok(None);
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Err(ProtocolError("bulk string not ended by CRLF".into()));
        }
        args.push(start..end);
        pos = end + 2;
    }
    Ok(Some(pos))
}

fn printable(b: u8) -> char {
    if b.is_ascii_graphic() {
        b as char
    } else {
        '?'
    }
}

/// Reads `<number>\r\n` at `from`; returns the number and where the next
/// line starts.
fn parse_len_line(
    buf: &[u8],
    from: usize,
    max: i64,
    what: &str,
) -> Result<Option<(i64, usize)>, ProtocolError> {
    let Some(nl) = buf[from..].iter().position(|&b| b == b'\n') else {
        if buf.len() - from > 32 {
            return Err(ProtocolError(format!("invalid {what} length")));
        }
        return Ok(None);
    };
    let line = &buf[from..from + nl];
    let line = line
        .strip_suffix(b"\r")
        .ok_or_else(|| ProtocolError(format!("invalid {what} length (no CR before LF)")))?;
    let n: i64 = std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ProtocolError(format!("invalid {what} length")))?;
    if n > max || n < -1 {
        return Err(ProtocolError(format!("invalid {what} length")));
    }
    Ok(Some((n, from + nl + 1)))
}

/// An inline command: words separated by spaces, ended by LF (CRLF), with
/// double-quoted words allowed as redis-cli's shell does.
fn parse_inline(
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Option<usize>, ProtocolError> {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > limits.max_inline {
            return Err(ProtocolError("too big inline request".into()));
        }
        return Ok(None);
    };
    let end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    let mut i = 0;
    while i < end {
        if buf[i] == b' ' || buf[i] == b'\t' {
            i += 1;
            continue;
        }
        if buf[i] == b'"' {
            let close = buf[i + 1..end]
                .iter()
                .position(|&b| b == b'"')
                .ok_or_else(|| ProtocolError("unbalanced quotes in request".into()))?;
            args.push(i + 1..i + 1 + close);
            i += close + 2;
        } else {
            let len = buf[i..end]
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
    Ok(Some(nl + 1))
}

/// Appends replies to an output buffer.
pub struct Reply<'a>(pub &'a mut Vec<u8>);

impl Reply<'_> {
    pub fn simple(&mut self, s: &str) {
        self.0.push(b'+');
        self.0.extend_from_slice(s.as_bytes());
        self.0.extend_from_slice(b"\r\n");
    }

    /// An error line; `msg` starts with its code (`ERR ...`, `WRONGTYPE ...`).
    pub fn error(&mut self, msg: &str) {
        self.0.push(b'-');
        // A reply line cannot hold CR or LF.
        self.0.extend(
            msg.bytes()
                .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
        self.0.extend_from_slice(b"\r\n");
    }

    pub fn int(&mut self, n: i64) {
        self.0.push(b':');
        self.0.extend_from_slice(n.to_string().as_bytes());
        self.0.extend_from_slice(b"\r\n");
    }

    pub fn bulk(&mut self, b: &[u8]) {
        self.0.push(b'$');
        self.0.extend_from_slice(b.len().to_string().as_bytes());
        self.0.extend_from_slice(b"\r\n");
        self.0.extend_from_slice(b);
        self.0.extend_from_slice(b"\r\n");
    }

    pub fn nil(&mut self) {
        self.0.extend_from_slice(b"$-1\r\n");
    }

    pub fn array(&mut self, n: usize) {
        self.0.push(b'*');
        self.0.extend_from_slice(n.to_string().as_bytes());
        self.0.extend_from_slice(b"\r\n");
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
}

/// Parses one reply from the start of `buf`: `Ok(None)` if incomplete.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(Value, usize)>, ProtocolError> {
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
    Ok(Some(match kind {
        b'+' => (Value::Simple(text()), after),
        b'-' => (Value::Error(text()), after),
        b':' => (Value::Int(num()?), after),
        b'$' => {
            let n = num()?;
            if n < 0 {
                (Value::Bulk(None), after)
            } else {
                let end = after + n as usize;
                if buf.len() < end + 2 {
                    return Ok(None);
                }
                (Value::Bulk(Some(buf[after..end].to_vec())), end + 2)
            }
        }
        b'*' => {
            let n = num()?;
            if n < 0 {
                (Value::Array(None), after)
            } else {
                let mut items = Vec::with_capacity(n.min(1024) as usize);
                let mut pos = after;
                for _ in 0..n {
                    let Some((v, used)) = parse_reply(&buf[pos..])? else {
                        return Ok(None);
                    };
                    items.push(v);
                    pos += used;
                }
                (Value::Array(Some(items)), pos)
            }
        }
        other => {
            return Err(ProtocolError(format!(
                "unknown reply type '{}'",
                printable(other)
            )))
        }
    }))
}

/// Encodes a command as an array of bulk strings.
pub fn encode_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut r = Reply(out);
    r.array(args.len());
    for a in args {
        r.bulk(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A parsed command's words and the bytes it took.
    type Parsed = Option<(Vec<Vec<u8>>, usize)>;

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
        let mut r = Reply(&mut out);
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
