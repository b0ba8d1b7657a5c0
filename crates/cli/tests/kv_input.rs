//! `hiops kv` through the binary: bad options are refused with exit 2
//! before any file is created, errors opening --path name it, --size past
//! the free space needs --sparse, the largest value is the one the server
//! says, and `hiops kv check` scrubs a store (exit 4 on damage).

use hiops_kv::resp::Value;
use hiops_kv::ycsb::RespConn;
use hiops_kv::{Store, StoreConfig};
use std::path::Path;
use std::process::{Output, Stdio};

mod common;
use common::{hiops, kv_serve};

/// `hiops kv <args>`, no stdin; its output and stderr as text. One that
/// has not ended after a generous bound (a server that took an option it
/// should have refused, and serves) is killed and fails the test.
fn kv(args: &[&str]) -> (Output, String) {
    let mut child = hiops()
        .arg("kv")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hiops starts");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "hiops kv {args:?} did not end: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

fn serve(path: &Path, extra: &[&str]) -> (Output, String) {
    let p = path.to_str().unwrap();
    let mut args = vec!["serve", "--port", "0", "--path", p];
    args.extend_from_slice(extra);
    kv(&args)
}

#[test]
fn count_options_at_0_or_absurd_exit_2_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let cases: &[(&[&str], &str)] = &[
        (&["--block-size", "0"], "--block-size=0"),
        (
            &["--block-size", "10k"],
            "multiple of 4 KiB from 8 KiB to 8 MiB",
        ),
        (&["--block-size", "16m"], "--block-size=16m"),
        (&["--iodepth", "0"], "--iodepth=0"),
        (&["--iodepth", "1000000"], "--iodepth=1000000"),
        (&["--flush-max-ms", "999999999"], "--flush-max-ms"),
        (&["--size", "0"], "--size=0"),
        (&["--size", "1m", "--block-size", "1m"], "needs at least"),
        (&["--max-clients", "0"], "--max-clients=0"),
        (&["--workers", "0"], "--workers=0"),
        (&["--workers", "100000"], "--workers=100000"),
        (&["--proto-max-bulk-len", "512m"], "at most 1048432"),
    ];
    for (extra, said) in cases {
        let (out, err) = serve(&file, extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(said), "{extra:?}: {err}");
        assert!(!file.exists(), "{extra:?} left {}", file.display());
    }
    let p = file.to_str().unwrap();
    let ycsb: &[&[&str]] = &[
        &["--records", "0"],
        &["--operations", "0"],
        &["--clients", "0"],
        &["--field-count", "0"],
        &["--field-length", "0"],
        // Values past what a 64 KiB block takes.
        &["--block-size", "64k", "--field-length", "10000"],
    ];
    for extra in ycsb {
        let mut args = vec!["ycsb", "--path", p, "--size", "8m"];
        args.extend_from_slice(extra);
        let (out, err) = kv(&args);
        assert_eq!(out.status.code(), Some(2), "ycsb {extra:?}: {err}");
        assert!(!file.exists(), "ycsb {extra:?} left {}", file.display());
    }
}

#[test]
fn errors_opening_the_path_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let (out, err) = serve(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{d}: is a directory")), "{err}");
    let missing = dir.path().join("no/such/dir/kv.dat");
    let (out, err) = serve(&missing, &[]);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(err.contains("no/such/dir"), "{err}");
    let mem = Path::new("/proc/self/mem");
    if !mem.exists() {
        eprintln!("skipped /proc/self/mem: no /proc here");
        return;
    }
    let (out, err) = serve(mem, &["--size", "8m", "--block-size", "64k"]);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("/proc/self/mem"), "{err}");
}

/// Bytes free on the file system of `dir`.
fn free_bytes(dir: &Path) -> u64 {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statvfs writes into the struct we own; `c` is a C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_bavail as u64 * st.f_frsize as u64
}

#[test]
fn a_size_past_the_free_space_needs_sparse() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    // A size the file system cannot hold: past its free space (8 MiB
    // blocks keep the format's free headers few).
    let size = (free_bytes(dir.path()) + (4 << 30)).next_multiple_of(8 << 20);
    if size / (8 << 20) > 1 << 24 {
        eprintln!("skipped: the file system's free space is beyond what one store addresses");
        return;
    }
    let size = size.to_string();
    let args = |sparse: bool| {
        let mut a = vec![
            "ycsb",
            "--path",
            file.to_str().unwrap(),
            "--size",
            &size,
            "--block-size",
            "8m",
            "--cache-size",
            "0",
            "--records",
            "20",
            "--operations",
            "20",
            "--clients",
            "1",
        ];
        if sparse {
            a.push("--sparse");
        }
        a
    };
    let (out, err) = kv(&args(false));
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&size) && err.contains("free"), "{err}");
    assert!(err.contains("--sparse"), "{err}");
    assert!(!file.exists(), "the refusal created {}", file.display());
    let (out, err) = kv(&args(true));
    assert!(out.status.success(), "--sparse: {err}");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.len().to_string(), size);
}

/// The server's default proto-max-bulk-len is what its write blocks take
/// (INFO says so): a value at it is stored, one byte more is refused with
/// an error stating it.
#[test]
fn the_largest_value_is_stored_and_one_byte_more_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, _) = kv_serve(&dir.path().join("kv.dat"), &[]);
    let mut c = RespConn::connect(&addr).unwrap();
    let Value::Bulk(Some(info)) = c.call(&[b"INFO", b"hiops"]).unwrap() else {
        panic!("INFO is not a bulk string");
    };
    let info = String::from_utf8(info).unwrap();
    let field = |name: &str| -> usize {
        let line = info.lines().find_map(|l| l.strip_prefix(name));
        line.and_then(|v| v.trim().parse().ok()).unwrap()
    };
    let max = field("hiops_max_value_bytes:");
    assert_eq!(max, (256 << 10) - 144, "256 KiB blocks (kv_serve's)");
    assert_eq!(field("hiops_proto_max_bulk_len:"), max);
    let at = vec![b'v'; max - 3];
    let ok = c.call(&[b"SET", b"key", &at]).unwrap();
    assert_eq!(ok, Value::Simple("OK".into()));
    assert_eq!(c.call(&[b"GET", b"key"]).unwrap(), Value::Bulk(Some(at)));
    match c.call(&[b"SET", b"key", &vec![b'w'; max - 2]]).unwrap() {
        Value::Error(e) => assert!(e.contains(&format!("at most {max} bytes")), "{e}"),
        v => panic!("one byte more: {v:?}"),
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A store with a superseded record ("dead" set twice) and a deleted key.
fn small_store(file: &Path) {
    let cfg = StoreConfig {
        block_size: 64 << 10,
        create_size: 16 * (64 << 10),
        defrag_threshold: 0.0,
        ..StoreConfig::default()
    };
    let store = Store::open(file, cfg).unwrap();
    for k in 0..20u32 {
        store
            .set(format!("k{k}").as_bytes(), &[k as u8 | 1; 2000])
            .unwrap();
    }
    store.set(b"dead", &[0xAA; 900]).unwrap();
    store.set(b"dead", &[0xBB; 900]).unwrap();
    store.set(b"gone", b"x").unwrap();
    store.del(b"gone").unwrap();
}

#[test]
fn kv_check_counts_a_clean_store_and_names_damage_in_a_dead_record() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    small_store(&file);
    let p = file.to_str().unwrap();
    let (out, err) = kv(&["check", "--path", p]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}{err}");
    assert!(text.contains("21 live records"), "{text}");
    assert!(
        text.contains("1 tombstones") && text.contains("2 dead records"),
        "{text}"
    );
    assert!(text.contains("0 damaged"), "{text}");
    // 64 bytes of noise in the superseded value.
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(900).position(|w| w == [0xAA; 900]).unwrap();
    for (i, b) in bytes[at + 100..at + 164].iter_mut().enumerate() {
        *b ^= (i as u8).wrapping_mul(37) | 1;
    }
    std::fs::write(&file, &bytes).unwrap();
    let record = at - hiops_kv::format::RECORD_HEADER - 4;
    let block = record / (64 << 10) - 1;
    let (out, err) = kv(&["check", "--path", p]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(4), "{text}{err}");
    let named = format!("damaged: block {block} at byte {record}:");
    assert!(text.contains(&named), "want {named:?} in {text}");
    assert!(text.contains("1 damaged"), "{text}");
    assert!(err.contains("--repair"), "{err}");
    let (out, _) = kv(&["check", "--path", p, "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(4));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["damage"][0]["byte"], record as u64);
    let (out, err) = kv(&["check"]);
    assert_eq!(out.status.code(), Some(2), "{err}");
}
