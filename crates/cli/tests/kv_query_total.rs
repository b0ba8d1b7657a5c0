//! `--max-query-total` bounds what clients' requests hold together,
//! parsed arguments included: a command announcing a million one-byte
//! arguments holds about 7 bytes of input each but 64 bytes of parsed
//! arguments, and is refused as soon as it is announced, while an ordinary
//! MSET goes through. Asserted on the server's own accounting (INFO), in
//! both server models.

use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

mod common;
use common::kv_serve;

fn info_field(c: &mut RespConn, name: &str) -> u64 {
    let Value::Bulk(Some(info)) = c.call(&[b"INFO"]).unwrap() else {
        panic!("INFO answered no text");
    };
    common::info_field(&String::from_utf8(info).unwrap(), name)
        .parse()
        .unwrap()
}

fn refused_by_the_total(model: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let limit = 8u64 << 20;
    let args = ["--model", model, "--max-query-total", "8m"];
    let (mut child, addr, _) = kv_serve(&file, &args);
    // A million arguments announced, a thousand sent: 7 KB of input.
    let mut big = TcpStream::connect(&addr).unwrap();
    let mut req = b"*1000000\r\n$4\r\nMSET\r\n".to_vec();
    for _ in 0..1000 {
        req.extend_from_slice(b"$1\r\na\r\n");
    }
    big.write_all(&req).unwrap();
    big.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut reply = Vec::new();
    let _ = big.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.starts_with("-ERR max-query-total"),
        "{model}: the announced arguments were not counted: {reply:?}"
    );
    // An ordinary MSET of 1000 pairs goes through.
    let mut c = RespConn::connect(&addr).unwrap();
    let keys: Vec<String> = (0..1000).map(|k| format!("k{k}")).collect();
    let mut mset: Vec<&[u8]> = vec![b"MSET"];
    for k in &keys {
        mset.push(k.as_bytes());
        mset.push(b"v");
    }
    assert_eq!(c.call(&mset).unwrap(), Value::Simple("OK".into()));
    assert!(info_field(&mut c, "hiops_clients_refused_input") >= 1);
    assert!(info_field(&mut c, "hiops_query_buffers_bytes") <= limit);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn announced_arguments_count_against_the_total_threads() {
    refused_by_the_total("threads");
}

#[test]
fn announced_arguments_count_against_the_total_tasks() {
    refused_by_the_total("tasks");
}
