//! fio 3.42's `random_distribution=sequence` and `random_sequence_stride`,
//! checked as fio's own t/sequence.py checks them: each I/O's offset in
//! the iops log (log_offset=1) against the pattern. fio 3.33 has neither
//! option, so no run beside it.

mod common;

use common::{hiops_fio, log_lines, run_job_file, text};

/// sequence.py's job on the null engine (48 KiB, 4 KiB blocks), with
/// `extra` lines; the offsets its iops log holds and the job's JSON.
fn offsets(extra: &str) -> (Vec<u64>, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "[sequence]\nrw=randread\nioengine=null\nbs=4k\nsize=48k\nwrite_iops_log=seq\nlog_offset=1\n{extra}"
    );
    let (j, o) = run_job_file(hiops_fio(), tmp.path(), &job, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let log = log_lines(&tmp.path().join("seq_iops.1.log"));
    (log.iter().map(|l| l[4]).collect(), j)
}

#[test]
fn each_io_goes_to_the_patterns_block_in_turn_or_strided() {
    // sequence.py's two tests: 24 KiB of a 48 KiB file.
    for (stride, blocks) in [(0, [2, 0, 1, 2, 0, 1]), (1, [2, 0, 1, 5, 3, 4])] {
        let (got, _) = offsets(&format!(
            "random_distribution=sequence:2,0,1\nrandom_sequence_stride={stride}\nio_size=24k\n"
        ));
        let want: Vec<u64> = blocks.map(|b| b * 4096).to_vec();
        assert_eq!(got, want, "stride {stride}");
    }
}

#[test]
fn a_striding_pattern_ends_the_job_at_the_files_end() {
    // 12 blocks: rounds 2,0,1 / 5,3,4 / 8,6,7 / 11,9,10; the fifth round's
    // 14 is past the end, so the job stops at 12 I/Os of the 24 asked.
    let (got, j) =
        offsets("random_distribution=sequence:2,0,1\nrandom_sequence_stride=1\nio_size=96k\n");
    assert_eq!(got.len(), 12, "{got:?}");
    let mut blocks: Vec<u64> = got.iter().map(|o| o / 4096).collect();
    assert_eq!(blocks[9..], [11, 9, 10]);
    blocks.sort();
    assert_eq!(blocks, (0..12).collect::<Vec<u64>>(), "each block once");
    assert_eq!(j["read"]["io_bytes"].as_u64(), Some(48 << 10));
}

/// `job` through `hiops fio` in `dir`: its exit code and output.
fn refused(dir: &std::path::Path, job: &str) -> (Option<i32>, String) {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let o = hiops_fio().current_dir(dir).arg("j.fio").output().unwrap();
    (o.status.code(), text(&o))
}

#[test]
fn a_block_past_the_file_is_refused_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    let job =
        "[s]\nrw=randread\nioengine=null\nbs=4k\nsize=48k\nrandom_distribution=sequence:2,12\n";
    let (code, out) = refused(tmp.path(), job);
    assert_ne!(code, Some(0), "{out}");
    assert!(
        out.contains("block 12 is past the 12 blocks") && out.contains("raise size"),
        "{out}"
    );
    for bad in ["sequence", "sequence:1,-2", "sequence:1,,2"] {
        let (code, out) = refused(tmp.path(), &job.replace("sequence:2,12", bad));
        assert_ne!(code, Some(0), "{bad}: {out}");
        assert!(out.contains("random_distribution"), "{bad}: {out}");
    }
}
