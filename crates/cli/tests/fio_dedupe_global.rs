//! fio's dedupe_global (examples/dedupe-global.fio, shortened): two jobs
//! whose working sets are spread over both threads write blocks of each
//! other's, so the two files together dedupe better than each alone;
//! counted on the written files, beside fio's.

mod common;

use common::{have_fio, hiops_fio, run_job_file, text, FIO};
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

const JOB: &str = "[global]\nioengine=psync\nsize=8m\ndedupe_mode=working_set\n\
dedupe_global=GLOBAL\ndedupe_percentage=50\nblocksize=4k\nrw=write\n\
buffer_compress_percentage=50\ndedupe_working_set_percentage=50\n\n[a]\n\n[b]\n";

/// The distinct 4 KiB blocks of a file.
fn blocks(path: &Path) -> HashSet<Vec<u8>> {
    std::fs::read(path)
        .unwrap()
        .chunks(4096)
        .map(<[u8]>::to_vec)
        .collect()
}

/// Blocks found in both files, as a share of all the blocks written.
fn shared_share(dir: &Path) -> f64 {
    let (a, b) = (blocks(&dir.join("a.0.0")), blocks(&dir.join("b.0.0")));
    let total = 2.0 * 2048.0;
    a.intersection(&b).count() as f64 / total
}

fn run(bin: Command, dir: &Path, global: u8) -> f64 {
    let job = JOB.replace("GLOBAL", &global.to_string());
    let (_, o) = run_job_file(bin, dir, &job, &[]);
    assert!(o.status.success(), "{}", text(&o));
    shared_share(dir)
}

#[test]
fn jobs_with_dedupe_global_write_each_others_blocks_as_fio_does() {
    let tmp = tempfile::tempdir().unwrap();
    let hiops = run(hiops_fio(), tmp.path(), 1);
    // Each file: 1,024 unique writes, 1,024 repeats drawn from a set whose
    // half is the other file's first 512 unique writes (about 324 of them
    // drawn), and the other way round: some 650 blocks, 16% of the 4,096
    // written, are in both files.
    assert!(
        (0.10..0.22).contains(&hiops),
        "{hiops:.3} of the blocks in both"
    );
    let own = run(hiops_fio(), tmp.path(), 0);
    assert_eq!(own, 0.0, "with sets of their own the files share no block");
    if !have_fio() {
        return;
    }
    let fio = run(Command::new(FIO), tmp.path(), 1);
    assert!(
        (hiops - fio).abs() < 0.03,
        "hiops {hiops:.3}, fio {fio:.3} of the blocks in both"
    );
}
