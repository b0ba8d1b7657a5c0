//! fio's workload options through the binary: io_size (io_limit) moves the
//! bytes fio moves for each combination with size, loops, number_ios and
//! numjobs, checked against fio itself when it is installed.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn json_of(program: &str, dir: &Path, args: &[String]) -> Option<Value> {
    let o = Command::new(program)
        .current_dir(dir)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .ok()?;
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let start = text.find('{').expect("JSON on stdout");
    Some(serde_json::from_str(&text[start..]).expect("stdout is JSON"))
}

/// Bytes read by all the job's threads.
fn read_bytes(v: &Value) -> u64 {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["io_bytes"].as_u64().unwrap())
        .sum()
}

#[test]
fn io_size_moves_what_fio_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("io.dat");
    // (options, bytes fio 3.33 reads with them)
    let cases: [(&[&str], u64); 9] = [
        (&["--size=512k", "--io_size=256k", "--loops=2"], 512 << 10),
        (&["--size=512k", "--io_size=256k", "--loops=3"], 768 << 10),
        (&["--size=256k", "--io_size=512k", "--loops=2"], 512 << 10),
        (&["--size=256k", "--io_size=640k"], 640 << 10),
        (&["--size=256k", "--io_size=640k", "--loops=4"], 1 << 20),
        (&["--size=1m", "--io_size=50%"], 512 << 10),
        (
            &["--size=1m", "--io_limit=256k", "--rw=randread"],
            256 << 10,
        ),
        (
            &["--size=1m", "--io_size=256k", "--number_ios=2"],
            128 << 10,
        ),
        (&["--size=256k", "--io_size=1m", "--numjobs=2"], 2 << 20),
    ];
    let fio_here = Command::new("fio").arg("--version").output().is_ok();
    if !fio_here {
        println!("fio is not installed: checked against fio 3.33's recorded figures only");
    }
    for (opts, want) in cases {
        let mut args: Vec<String> = [
            "--name=io",
            &format!("--filename={}", file.display()),
            "--bs=64k",
            "--rw=read",
            "--output-format=json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(opts.iter().map(|s| s.to_string()));
        let mut hiops_args = vec!["run".to_string(), "--no-progress".to_string()];
        hiops_args.extend(args.iter().cloned());
        let ours = json_of(env!("CARGO_BIN_EXE_hiops"), tmp.path(), &hiops_args).unwrap();
        assert_eq!(read_bytes(&ours), want, "hiops {opts:?}");
        if fio_here {
            let theirs = json_of("fio", tmp.path(), &args).unwrap();
            assert_eq!(read_bytes(&theirs), want, "fio {opts:?}");
        }
    }
}

#[test]
fn io_size_as_a_percent_needs_size_in_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(tmp.path())
        .args([
            "run",
            "--name=p",
            "--filename=p.dat",
            "--io_size=50%",
            "--rw=read",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("io_size") && err.trim().lines().count() == 1,
        "{err}"
    );
}

/// zonemode=strided: trims show where the I/O went (the trimmed ranges
/// read back as zeroes): zonesize=64k of each zone of 128k, then 128k
/// skipped, so only the first 64 KiB of every 256 KiB.
#[test]
fn strided_zones_touch_only_their_zones() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("z.dat");
    let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8 | 1).collect();
    std::fs::write(&file, &data).unwrap();
    let args: Vec<String> = [
        "run",
        "--no-progress",
        "--output-format=json",
        "--name=z",
        &format!("--filename={}", file.display()),
        "--size=1m",
        "--bs=16k",
        "--rw=trim",
        "--zonemode=strided",
        "--zonesize=64k",
        "--zonerange=128k",
        "--zoneskip=128k",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let v = json_of(env!("CARGO_BIN_EXE_hiops"), tmp.path(), &args).unwrap();
    let trim = &v["jobs"][0]["trim"];
    assert_eq!(
        trim["io_bytes"].as_u64(),
        Some(1 << 20),
        "size is moved, skips are not"
    );
    let back = std::fs::read(&file).unwrap();
    for (i, block) in back.chunks(16 << 10).enumerate() {
        let in_zone = (i * 16) % 256 < 64;
        let zeroed = block.iter().all(|&b| b == 0);
        assert_eq!(zeroed, in_zone, "block {i} ({} KiB)", i * 16);
    }
}

#[test]
fn zone_options_without_strided_are_refused_as_fio_does() {
    let tmp = tempfile::tempdir().unwrap();
    for extra in [vec!["--zonesize=64k"], vec!["--zonemode=zbd"]] {
        let mut args = vec!["run", "--name=z", "--filename=z.dat", "--size=1m"];
        args.extend(extra.iter().copied());
        let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
            .current_dir(tmp.path())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} ran");
        assert!(
            err.contains("zone") && err.trim().lines().count() == 1,
            "{extra:?}: {err}"
        );
    }
}

/// Trimmed blocks (zeroes) of each file after 8 trims of 64 KiB over two
/// files of 512 KiB, by file_service_type.
#[test]
fn file_service_type_chooses_the_files_fio_would() {
    let tmp = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..512 << 10).map(|i| (i % 251) as u8 | 1).collect();
    let zeroed = |f: &Path| {
        std::fs::read(f)
            .unwrap()
            .chunks(64 << 10)
            .filter(|c| c.iter().all(|&b| b == 0))
            .count()
    };
    for (service, want) in [
        ("sequential", [8, 0]),
        ("roundrobin", [4, 4]),
        ("roundrobin:4", [4, 4]),
    ] {
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::write(&a, &data).unwrap();
        std::fs::write(&b, &data).unwrap();
        let args: Vec<String> = [
            "run",
            "--no-progress",
            "--output-format=json",
            "--name=fs",
            "--filename=a:b",
            "--size=1m",
            "--bs=64k",
            "--rw=trim",
            "--number_ios=8",
            "--openfiles=2",
            &format!("--file_service_type={service}"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        json_of(env!("CARGO_BIN_EXE_hiops"), tmp.path(), &args).unwrap();
        assert_eq!([zeroed(&a), zeroed(&b)], want, "{service}");
    }
    // random:8 keeps the file it drew for all 8 I/Os.
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::write(&a, &data).unwrap();
    std::fs::write(&b, &data).unwrap();
    let args: Vec<String> = [
        "run",
        "--no-progress",
        "--output-format=json",
        "--name=fs",
        "--filename=a:b",
        "--size=1m",
        "--bs=64k",
        "--rw=randtrim",
        "--number_ios=8",
        "--file_service_type=random:8",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    json_of(env!("CARGO_BIN_EXE_hiops"), tmp.path(), &args).unwrap();
    let mut got = [zeroed(&a), zeroed(&b)];
    got.sort();
    assert_eq!(got, [0, 8], "one file drawn, all 8 trims in it");
    let o = Command::new(env!("CARGO_BIN_EXE_hiops"))
        .current_dir(tmp.path())
        .args([
            "run",
            "--name=fs",
            "--filename=a:b",
            "--size=1m",
            "--openfiles=1",
            "--file_service_type=random",
        ])
        .output()
        .unwrap();
    // Below the job's files, openfiles keeps to fio's round-robin order;
    // the random services with it are refused by name.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(2) && err.contains("openfiles=1") && err.contains("roundrobin"),
        "{err}"
    );
}

/// buffer_pattern is the payload of every write, byte for byte what fio
/// writes with it.
#[test]
fn buffer_pattern_fills_written_blocks_as_fio_does() {
    let tmp = tempfile::tempdir().unwrap();
    let fio_here = Command::new("fio").arg("--version").output().is_ok();
    for pattern in ["0xdeadbeef", "\"hiops\"", "0x12\"ab\""] {
        let args = |file: &str| -> Vec<String> {
            [
                "--name=bp",
                &format!("--filename={file}"),
                "--size=256k",
                "--bs=4k",
                "--rw=randwrite",
                "--ioengine=psync",
                &format!("--buffer_pattern={pattern}"),
                "--output-format=json",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        };
        let mut ours = vec!["run".to_string(), "--no-progress".to_string()];
        ours.extend(args("h.dat"));
        json_of(env!("CARGO_BIN_EXE_hiops"), tmp.path(), &ours).unwrap();
        let written = std::fs::read(tmp.path().join("h.dat")).unwrap();
        let bytes: &[u8] = match pattern {
            "0xdeadbeef" => &[0xde, 0xad, 0xbe, 0xef],
            "\"hiops\"" => b"hiops",
            _ => &[0x12, b'a', b'b'],
        };
        for block in written.chunks(4096) {
            let want: Vec<u8> = bytes.iter().copied().cycle().take(block.len()).collect();
            assert_eq!(
                block,
                &want[..],
                "{pattern}: each block starts the pattern over"
            );
        }
        if fio_here {
            json_of("fio", tmp.path(), &args("f.dat")).unwrap();
            let theirs = std::fs::read(tmp.path().join("f.dat")).unwrap();
            assert!(written == theirs, "{pattern}: fio wrote other bytes");
        }
    }
}
