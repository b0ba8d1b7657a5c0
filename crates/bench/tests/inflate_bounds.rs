//! `--inflate-log` within its bounds: logs stored compressed inflate to
//! their lines across buffer and stream boundaries, and a file built to
//! inflate without end (a zlib bomb), one cut short and one larger than a
//! compressed log are each refused with one line.

use flate2::write::ZlibEncoder;
use flate2::Compression;
use hiops_bench::{inflate_log, InflateError, LogError};
use std::io::Write;
use std::path::Path;

/// fio's stored sample with an offset (40 bytes, the offset flag set).
fn sample(t: u64, value: u64, bs: u64, offset: u64) -> [u8; 40] {
    let mut b = [0u8; 40];
    b[0..8].copy_from_slice(&t.to_le_bytes());
    b[8..16].copy_from_slice(&value.to_le_bytes());
    b[16..20].copy_from_slice(&0x8000_0001u32.to_le_bytes());
    b[24..32].copy_from_slice(&bs.to_le_bytes());
    b[32..40].copy_from_slice(&offset.to_le_bytes());
    b
}

fn zlib(bytes: &[u8]) -> Vec<u8> {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

fn refusal(path: &Path) -> (InflateError, String) {
    match inflate_log(path).unwrap_err() {
        e @ LogError::Inflate { .. } => {
            let line = e.to_string();
            let LogError::Inflate { why, .. } = e else {
                unreachable!()
            };
            (why, line)
        }
        e => panic!("not an inflate error: {e}"),
    }
}

#[test]
fn two_streams_of_many_samples_inflate_to_every_line() {
    // 3000 samples (120,000 bytes) per stream: past one 64 KiB buffer, with
    // a sample cut at its end.
    let stream = |first: u64| {
        let samples: Vec<u8> = (first..first + 3000)
            .flat_map(|i| sample(i, i * 7, 4096, i * 4096))
            .collect();
        zlib(&samples)
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("j_bw.log.fz");
    std::fs::write(&log, [stream(0), stream(3000)].concat()).unwrap();
    let text = inflate_log(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6000);
    assert_eq!(lines[0], "0, 0, 1, 4096, 0, 0");
    assert_eq!(lines[1638], "1638, 11466, 1, 4096, 6709248, 0");
    assert_eq!(lines[5999], "5999, 41993, 1, 4096, 24571904, 0");
}

#[test]
fn a_zlib_bomb_is_refused_as_it_inflates() {
    // 256 MiB of zeros in about 256 KiB: 1000 to 1 and more.
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..256 {
        z.write_all(&zeros).unwrap();
    }
    let bomb = z.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bomb.log.fz");
    std::fs::write(&log, &bomb).unwrap();
    let (why, line) = refusal(&log);
    assert!(why.is_limit(), "{line}");
    assert!(
        line.contains("compressed, more than 1000 to 1, which no log stored compressed reaches"),
        "{line}"
    );
    assert!(
        line.contains("bomb.log.fz") && !line.contains('\n'),
        "{line}"
    );
    // It stops within the first MiBs, not at the end of the stream.
    let InflateError::Bomb { inflated, .. } = why else {
        panic!("{line}")
    };
    assert!(inflated < 4 << 20, "{line}");
}

#[test]
fn a_stream_cut_short_or_a_file_too_large_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cut.log.fz");
    let whole = zlib(&sample(1, 2, 4096, 0).repeat(100));
    std::fs::write(&log, &whole[..whole.len() / 2]).unwrap();
    let (why, line) = refusal(&log);
    assert!(matches!(why, InflateError::CutShort), "{line}");
    assert!(!why.is_limit());
    // /dev/zero claims no size and never ends: read up to the limit only.
    let (why, line) = refusal(Path::new("/dev/zero"));
    assert!(why.is_limit(), "{line}");
    assert!(
        line.ends_with("/dev/zero holds more than 256 MiB, more than a log stored compressed would: give a log stored with log_store_compressed=1"),
        "{line}"
    );
}
