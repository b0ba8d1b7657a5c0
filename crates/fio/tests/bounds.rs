//! Bad input gets one clear, bounded answer: zero block sizes named as
//! given, zone lists that name no zone or run past the job's range refused,
//! long values shown once and cut, and mutated job files parsed without a
//! panic.

use hiops_fio::jobfile::parse_bytes;
use hiops_fio::options::{parse_option, Draft};
use hiops_fio::{plan_text, Defaults};
use std::path::Path;

fn refused(text: &str) -> String {
    match plan_text(text, Defaults::Fio) {
        Ok(_) => panic!("planned: {text}"),
        Err(e) => e.to_string(),
    }
}

const JOB: &str = "[j]\nioengine=null\nsize=16m\nrw=randread\n";

#[test]
fn zero_block_sizes_are_refused_as_zero() {
    for (line, shown) in [
        ("bs=0", "bs: a block size of '0' moves"),
        ("bs=4k,0", "bs=4k,0: a block size of '0' moves"),
        ("blocksize=0k", "blocksize: a block size of '0k' moves"),
        ("bsrange=0-4k", "bsrange=0-4k: a block size of '0' moves"),
        (
            "bssplit=0/50:4k/50",
            "bssplit=0/50:4k/50: block size '0' must",
        ),
    ] {
        let e = refused(&format!("{JOB}{line}\n"));
        assert!(e.contains(&format!("<text>:5: {shown}")), "{line}: {e}");
        assert!(!e.contains("=1") && !e.contains("'1'"), "{line}: {e}");
    }
}

#[test]
fn zone_lists_must_name_zones_that_fit() {
    for (dist, says) in [
        ("zoned:", "no zone is given"),
        ("zoned:,", "no zone is given"),
        ("zoned_abs:", "zoned_abs:60/1g"),
        ("zoned:50/10:40/90", "add up to 90, not 100: change them"),
        (
            "zoned_abs:50/8m:50/16m",
            "25165824 bytes (24.0MiB), past the end of the 16777216 bytes",
        ),
        ("zoned_abs:100/4m,100/17m", "17825792 bytes"),
        ("zoned_abs:50/0:50/1m", "of 0 bytes holds no block"),
    ] {
        let e = refused(&format!("{JOB}random_distribution={dist}\n"));
        assert!(e.contains(says), "{dist}: {e}");
        assert!(e.contains("random_distribution"), "names the option: {e}");
    }
    for fits in [
        "zoned_abs:50/8m:50/8m",
        "zoned:60/10:40/90",
        "zoned:,60/10:40/90",
    ] {
        let text = format!("{JOB}random_distribution={fits}\n");
        assert!(plan_text(&text, Defaults::Fio).is_ok(), "{fits}");
    }
}

#[test]
fn a_long_bad_value_is_shown_once_and_cut() {
    let long = "9".repeat(120_000);
    for (key, value) in [
        ("bs", long.clone()),
        ("rw", long.clone()),
        ("random_distribution", format!("zoned:{long}")),
        ("bssplit", format!("4k/50:8k/{long}")),
        ("cpus_allowed", long.clone()),
        ("ioengine", long.clone()),
        ("verify", long.clone()),
    ] {
        let e = refused(&format!("{JOB}{key}={value}\n"));
        // ioengine's refusal lists hiops' engines after the cut value.
        let most = if key == "ioengine" { 360 } else { 300 };
        assert!(e.len() < most, "{key}: {} bytes: {e}", e.len());
        assert!(e.contains("bytes)"), "{key}: says how long it was: {e}");
        // The shown part is 64 characters: twice would be 42 runs of 999.
        assert!(e.matches("999").count() <= 21, "{key}: shown twice: {e}");
    }
    let e = refused(&format!("{JOB}{long}=1\n"));
    assert!(e.len() < 300, "{e}");
}

#[test]
fn counts_that_would_fill_memory_are_refused_before() {
    for (line, says) in [
        (
            "numjobs=100000000",
            "numjobs=100000000 times nrfiles=1 is 100000000 files",
        ),
        (
            "bsrange=1-1g",
            "is 1073741824 block sizes, more than the 65536",
        ),
        (
            "numjobs=4096\nnrfiles=1000",
            "is 4096000 files, more than the 1048576",
        ),
        (
            "cpus_allowed=0-4000000000",
            "CPU 4000000000 is past the 1024",
        ),
    ] {
        let text = format!("[j]\nsize=1g\n{line}\n");
        let e = refused(&text);
        assert!(e.contains(says), "{line}: {e}");
    }
    // Each job keeps its own copy of the globals: 4096 jobs under 16 MiB
    // of them would hold 64 GiB.
    let jobs = "[j]\n".repeat(100);
    let text = format!("[global]\ndescription={}\n{jobs}", "d".repeat(1 << 20));
    let e = refused(&text);
    assert!(e.contains("more than 64 MiB of text together"), "{e}");
    let files = vec!["f"; (1 << 20) + 1].join(":");
    let e = refused(&format!("[j]\nfilename={files}\n"));
    assert!(e.contains("1048577 files are more") && e.len() < 300, "{e}");
}

/// A tiny deterministic generator (no dependency), for the mutations.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

/// Every corpus job file, mutated a few hundred ways (bytes flipped,
/// dropped, repeated, fio's separators inserted), parses to sections or one
/// error line, and every option it then holds parses or gives one bounded
/// line: nothing panics. Includes resolve in an empty directory.
#[test]
fn mutated_job_files_parse_or_fail_cleanly() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/jobs");
    let empty = tempfile::tempdir().unwrap();
    let env = |_: &str| Some("4k".to_string());
    let mut rng = Lcg(0x5eed);
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() > 10);
    for path in files {
        let original = std::fs::read(&path).unwrap();
        for _ in 0..150 {
            let mut bytes = original.clone();
            for _ in 0..1 + rng.next() % 4 {
                mutate(&mut bytes, &mut rng);
            }
            let Ok(sections) = parse_bytes(&bytes, "m.fio", empty.path(), &env) else {
                continue;
            };
            for o in sections.iter().flat_map(|s| &s.options) {
                if let Err(e) = parse_option(&mut Draft::default(), &o.key, o.value.as_deref()) {
                    let e = e.to_string();
                    assert!(
                        !e.contains('\n') && e.len() < 600,
                        "{}: {e}",
                        path.display()
                    );
                }
            }
        }
    }
}

fn mutate(bytes: &mut Vec<u8>, rng: &mut Lcg) {
    if bytes.is_empty() {
        bytes.push(b'[');
        return;
    }
    let at = rng.next() % bytes.len();
    const SPICE: &[u8] = b"\xff\xe9\x00\n[]=;#,:/-%${}0\t";
    match rng.next() % 4 {
        0 => bytes[at] = (rng.next() % 256) as u8,
        1 => {
            bytes.remove(at);
        }
        2 => bytes.insert(at, SPICE[rng.next() % SPICE.len()]),
        _ => {
            let end = (at + 1 + rng.next() % 16).min(bytes.len());
            let run = bytes[at..end].repeat(1 + rng.next() % 8);
            bytes.splice(at..at, run);
        }
    }
}
