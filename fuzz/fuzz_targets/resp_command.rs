//! The key-value server's request parser (RESP arrays of bulk strings, and
//! inline commands), on pipelined input. The server's way, one parser
//! resuming as bytes arrive in pieces, finds the same commands and the
//! same error as parsing the whole input at once; its work stays linear
//! and the bytes it asks for stay within the limits; each command, encoded
//! as a client sends it, parses back to itself.
#![no_main]

use hiops_kv::resp::{encode_command, parse_command, CommandParser, Limits};
use libfuzzer_sys::fuzz_target;

/// Small limits, so the fuzzer reaches them.
const LIMITS: Limits = Limits {
    max_bulk: 4096,
    max_args: 64,
    max_inline: 512,
};

type Command = Vec<Vec<u8>>;

#[derive(Debug, PartialEq)]
enum End {
    /// Every byte taken, or a command left incomplete.
    Clean,
    Refused(String),
}

fuzz_target!(|data: &[u8]| {
    let (whole, whole_end) = at_once(data);
    let (pieces, pieces_end) = in_pieces(data);
    match &pieces_end {
        // Waiting for a long line's end, the server refuses it before
        // the end comes; at once, the line is there.
        End::Refused(e) if e == "too big inline request" => {
            assert!(whole.starts_with(&pieces), "{pieces:?} vs {whole:?}")
        }
        _ => {
            assert_eq!(pieces, whole);
            assert_eq!(pieces_end, whole_end);
        }
    }
    for cmd in &whole {
        round_trip(cmd);
    }
});

fn args_of(buf: &[u8], p: &CommandParser) -> Command {
    p.args().iter().map(|r| buf[r.clone()].to_vec()).collect()
}

/// Each command parsed from the whole of what is left.
fn at_once(data: &[u8]) -> (Vec<Command>, End) {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let mut p = CommandParser::new();
        match p.parse(&data[at..], &LIMITS) {
            Ok(Some(n)) => {
                assert!(n > 0 && at + n <= data.len(), "took {n} at {at}");
                out.push(args_of(&data[at..], &p));
                at += n;
            }
            Ok(None) => break,
            Err(e) => return (out, End::Refused(e.0)),
        }
    }
    (out, End::Clean)
}

/// As the server reads: bytes arrive a few at a time (1 to 8, following
/// the input's own bytes), one parser resumes on the unconsumed buffer.
fn in_pieces(data: &[u8]) -> (Vec<Command>, End) {
    let mut out = Vec::new();
    let mut p = CommandParser::new();
    let (mut start, mut end, mut step) = (0, 0, 0);
    loop {
        let buf = &data[start..end];
        match p.parse(buf, &LIMITS) {
            Ok(Some(n)) => {
                assert!(n > 0 && n <= buf.len(), "took {n} of {}", buf.len());
                out.push(args_of(buf, &p));
                start += n;
                if start == data.len() {
                    break;
                }
                continue;
            }
            Ok(None) => {
                let wanted = p.bytes_wanted(buf.len());
                assert!(wanted <= LIMITS.max_bulk + 64, "wants {wanted}");
            }
            Err(e) => return (out, End::Refused(e.0)),
        }
        if end == data.len() {
            break;
        }
        end = data
            .len()
            .min(end + 1 + data[step % data.len()] as usize % 8);
        step += 1;
    }
    // Linear: each byte looked at a bounded number of times (a length
    // line, at most 32 bytes, is looked at again as each piece comes).
    let bound = 40 * data.len() as u64 + 64;
    assert!(
        p.scanned() <= bound,
        "scanned {} of {}",
        p.scanned(),
        data.len()
    );
    (out, End::Clean)
}

fn round_trip(cmd: &Command) {
    if cmd.is_empty() {
        return;
    }
    let mut wire = Vec::new();
    let args: Vec<&[u8]> = cmd.iter().map(Vec::as_slice).collect();
    encode_command(&mut wire, &args);
    let mut ranges = Vec::new();
    let n = parse_command(&wire, &LIMITS, &mut ranges).expect("an encoded command parses");
    assert_eq!(n, Some(wire.len()));
    let back: Command = ranges.iter().map(|r| wire[r.clone()].to_vec()).collect();
    assert_eq!(&back, cmd);
}
