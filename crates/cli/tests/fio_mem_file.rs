//! fio's mem=mmap:FILE and mmapshared:FILE: each thread's I/O buffers are
//! mapped from the file, shared (the buffers are its bytes) or private;
//! a file the run made is removed at its end and one given is kept, as
//! fio's memory.c does; a FIFO there is refused by the output gate.

mod common;

use common::{hiops_fio, text};
use std::path::Path;
use std::process::{Output, Stdio};

fn write_job(dir: &Path, mem: &str) -> Output {
    let target = format!("--filename={}", dir.join("data").display());
    hiops_fio()
        .current_dir(dir)
        .stdin(Stdio::null())
        .args([
            "--name=j",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--iodepth=1",
        ])
        .args([target.as_str(), "--buffer_pattern=0x5a", mem])
        .output()
        .expect("hiops starts")
}

#[test]
fn shared_buffers_are_the_files_bytes_and_private_ones_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = tmp.path().join("buffers");
    for (kind, written) in [("mmapshared", true), ("mmap", false)] {
        std::fs::write(&buf, b"").unwrap();
        let o = write_job(tmp.path(), &format!("--mem={kind}:{}", buf.display()));
        assert!(o.status.success(), "{kind}: {}", text(&o));
        let bytes = std::fs::read(&buf).expect("a given file is kept");
        assert!(
            bytes.len() >= 4096,
            "{kind}: made as long as the buffers ({})",
            bytes.len()
        );
        let pattern = bytes[..4096].iter().all(|&b| b == 0x5a);
        assert_eq!(pattern, written, "{kind}: the buffer's pattern in the file");
        let data = std::fs::read(tmp.path().join("data")).unwrap();
        assert!(
            data.iter().all(|&b| b == 0x5a),
            "{kind}: the writes carried the pattern"
        );
    }
}

#[test]
fn a_file_the_run_made_is_removed_and_a_fifo_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let made = tmp.path().join("made");
    let o = write_job(tmp.path(), &format!("--mem=mmap:{}", made.display()));
    assert!(o.status.success(), "{}", text(&o));
    assert!(!made.exists(), "removed at the end, as fio");
    let fifo = tmp.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let o = write_job(tmp.path(), &format!("--mem=mmapshared:{}", fifo.display()));
    assert!(!o.status.success(), "a FIFO is no buffer file");
    assert!(text(&o).contains("refusing"), "{}", text(&o));
}
