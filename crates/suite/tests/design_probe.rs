//! One round of the HIOPS design probe on a file this test makes: the
//! path's and the HAL's counters move as the design says they count.

use hiops_suite::papers::hiops_paper::probe;
use std::io::Write;

/// A 16 MiB file of data in a directory that takes direct I/O, or why
/// there is none.
fn data_file() -> Result<tempfile::NamedTempFile, String> {
    let mut f = tempfile::NamedTempFile::new_in("/var/tmp").map_err(|e| e.to_string())?;
    let block = vec![0x5au8; 1 << 20];
    for _ in 0..16 {
        f.write_all(&block).map_err(|e| e.to_string())?;
    }
    f.as_file().sync_all().map_err(|e| e.to_string())?;
    Ok(f)
}

#[test]
fn a_round_counts_every_io_through_the_hal_and_the_fifo() {
    let f = match data_file() {
        Ok(f) => f,
        Err(e) => return eprintln!("skipped: no file to read in /var/tmp: {e}"),
    };
    let path = f.path().display().to_string();
    let r = match probe::round(&path, 0) {
        Ok(r) => r,
        Err(e @ probe::ProbeError::Open { .. }) => return eprintln!("skipped: {e}"),
        Err(e) => panic!("{e}"),
    };
    eprintln!("{r:?}");
    let n = r.nonblocking;
    let reads = u64::from(probe::NONBLOCKING_THREADS) * 250;
    assert_eq!(n.ios, reads, "every read through the shared queue");
    assert_eq!(
        (n.binds, n.fetched, n.detached, n.released),
        (reads, reads, reads, reads)
    );
    assert_eq!(n.issued, reads);
    assert!(n.issue_calls > 0 && n.issue_calls <= reads);
    // Eight threads on two tags: some commands found the device busy,
    // waited in the FIFO, and were sent by a thread other than their own.
    assert!(n.busy > 0 && n.fifo_queued > 0, "{n:?}");
    assert!(
        n.issued_for_others > 0 && n.issued_for_others <= n.fifo_queued,
        "{n:?}"
    );
    assert!(r.light.iops > 0.0 && r.heavy.iops > 0.0);
    assert!(r.latency.sequential_p50_us > 0.0 && r.latency.random_p50_us > 0.0);
}
