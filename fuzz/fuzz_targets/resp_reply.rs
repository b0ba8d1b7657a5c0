//! The key-value client's reply parser (RESP2 and RESP3 replies, as the
//! YCSB load generator reads them), on pipelined input. Each reply,
//! encoded again, parses back to itself in as many bytes; every proper
//! prefix of that encoding is incomplete, never an error or another reply.
#![no_main]

use hiops_kv::resp::{parse_reply, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while at < data.len() {
        let Ok(Some((v, n))) = parse_reply(&data[at..]) else {
            break;
        };
        assert!(n > 0 && at + n <= data.len(), "took {n} at {at}");
        at += n;
        let Some(wire) = encode(&v) else {
            continue;
        };
        assert_eq!(parse_reply(&wire), Ok(Some((v.clone(), wire.len()))));
        if wire.len() <= 512 {
            for cut in 0..wire.len() {
                assert_eq!(parse_reply(&wire[..cut]), Ok(None), "{:?}", &wire[..cut]);
            }
        }
    }
});

/// The reply as a server sends it; `None` for a verbatim string whose
/// format is not the three characters a server writes.
fn encode(v: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    put(&mut out, v)?;
    Some(out)
}

fn put(out: &mut Vec<u8>, v: &Value) -> Option<()> {
    let mut line = |kind: char, text: &str| {
        out.extend_from_slice(format!("{kind}{text}\r\n").as_bytes());
    };
    match v {
        Value::Simple(s) => line('+', s),
        Value::Error(s) => line('-', s),
        Value::Int(n) => line(':', &n.to_string()),
        Value::Null => line('_', ""),
        Value::Bulk(None) => line('$', "-1"),
        Value::Array(None) => line('*', "-1"),
        Value::Bulk(Some(b)) => {
            line('$', &b.len().to_string());
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
        }
        Value::Verbatim(format, text) => {
            if format.len() != 3 || format.contains(':') {
                return None;
            }
            line('=', &(text.len() + 4).to_string());
            out.extend_from_slice(format!("{format}:{text}\r\n").as_bytes());
        }
        Value::Array(Some(items)) => {
            line('*', &items.len().to_string());
            for i in items {
                put(out, i)?;
            }
        }
        Value::Map(pairs) => {
            line('%', &pairs.len().to_string());
            for (k, v) in pairs {
                put(out, k)?;
                put(out, v)?;
            }
        }
    }
    Some(())
}
