//! fio's continue_on_error and ignore_error on errors the kernel really
//! returns: ENOSPC from a 256 KiB tmpfs this test mounts (root only), and
//! EILSEQ from verify reading blocks stamped with another pattern. The
//! figures are fio 3.33's on the same jobs; where fio is installed it runs
//! beside hiops.

mod common;

use common::{have_fio, hiops_fio, run_job_file, text, FIO};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A 256 KiB tmpfs mounted on a directory of its own, unmounted on drop.
struct SmallTmpfs(PathBuf);

impl SmallTmpfs {
    /// Mounts one in `dir`, or says why the test is skipped.
    fn mount_or_skip(dir: &Path) -> Option<SmallTmpfs> {
        if !is_root() {
            eprintln!("skipped: needs root to mount a small tmpfs");
            return None;
        }
        let fs = SmallTmpfs::mount(&dir.join("mnt"));
        if fs.is_none() {
            eprintln!("skipped: mounting a tmpfs failed here");
        }
        fs
    }

    fn mount(at: &Path) -> Option<SmallTmpfs> {
        std::fs::create_dir(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallTmpfs(at.to_path_buf()))
    }

    /// A sparse 1 MiB file there: writes past the first 256 KiB find no
    /// room (ENOSPC), and neither hiops nor fio lays the file out.
    fn sparse_file(&self) -> PathBuf {
        let f = self.0.join("f");
        let _ = std::fs::remove_file(&f);
        let file = std::fs::File::create(&f).unwrap();
        file.set_len(1 << 20).unwrap();
        f
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// What the tests compare: the exit, fio's error, total_err and
/// first_error (null when absent), the bytes written and the writes issued.
type Figures = (bool, Value, Value, Value, u64, u64);

fn figures(job: &Value, o: &Output) -> Figures {
    (
        o.status.success(),
        job["error"].clone(),
        job["total_err"].clone(),
        job["first_error"].clone(),
        job["write"]["io_bytes"].as_u64().unwrap(),
        job["write"]["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn writes_go_on_past_the_errors_ignore_error_names_and_stop_at_others() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = SmallTmpfs::mount_or_skip(tmp.path()) else {
        return;
    };
    let null = Value::Null;
    // (options, fio 3.33's figures on the same job: exit 0, error,
    // total_err, first_error, bytes written, writes issued)
    let cases: &[(&str, Figures)] = &[
        (
            "continue_on_error=none",
            (false, 28.into(), null.clone(), null.clone(), 262144, 65),
        ),
        // ENOSPC is not in fio's default list (EIO, EILSEQ): the job stops,
        // and psync's stop is counted.
        (
            "continue_on_error=write",
            (false, 28.into(), 1.into(), 28.into(), 262144, 65),
        ),
        (
            "continue_on_error=write\nignore_error=,ENOSPC",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
        (
            "continue_on_error=all\nignore_error=,28",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
        (
            "ignore_error=,EIO:ENOSPC",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
        // continue_on_error given later replaces the class ignore_error set.
        (
            "ignore_error=,ENOSPC\ncontinue_on_error=read",
            (false, 28.into(), 0.into(), 0.into(), 262144, 65),
        ),
        (
            "continue_on_error=1\nignore_error=,ENOSPC\nioengine=libaio\niodepth=4",
            (true, 28.into(), 192.into(), 28.into(), 262144, 256),
        ),
    ];
    let fio_here = have_fio();
    for (opts, want) in cases {
        let job = format!(
            "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n{opts}\n",
            fs.sparse_file().display()
        );
        let (j, o) = run_job_file(hiops_fio(), tmp.path(), &job, &[]);
        assert_eq!(&figures(&j, &o), want, "{opts}: {}", text(&o));
        if fio_here {
            let job = format!(
                "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n{opts}\n",
                fs.sparse_file().display()
            );
            let (j, o) = run_job_file(Command::new(FIO), tmp.path(), &job, &[]);
            assert_eq!(&figures(&j, &o), want, "fio 3.33 on {opts}: {}", text(&o));
        }
    }
}

#[test]
fn the_normal_output_counts_the_errors_gone_past() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = SmallTmpfs::mount_or_skip(tmp.path()) else {
        return;
    };
    let job = format!(
        "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\nignore_error=,ENOSPC\n",
        fs.sparse_file().display()
    );
    std::fs::write(tmp.path().join("j.fio"), job).unwrap();
    let o = hiops_fio()
        .current_dir(tmp.path())
        .arg("j.fio")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("     errors    : total=192, first_error=28/<No space left on device>"),
        "{out}"
    );
}

#[test]
fn verify_errors_are_counted_where_the_job_continues_on_them() {
    let tmp = tempfile::tempdir().unwrap();
    let write = "[w]\nfilename=vf\nsize=256k\nbs=4k\nrw=write\nverify=pattern\nverify_pattern=0xaa\ndo_verify=0\n";
    let (_, o) = run_job_file(hiops_fio(), tmp.path(), write, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let read = "[r]\nfilename=vf\nsize=256k\nbs=4k\nrw=read\nverify=pattern\nverify_pattern=0xbb\ncontinue_on_error=verify\n";
    let (j, o) = run_job_file(hiops_fio(), tmp.path(), read, &[]);
    // fio 3.33: every one of the 64 blocks fails (EILSEQ), the job goes on.
    assert_eq!(
        (&j["error"], &j["total_err"], &j["first_error"]),
        (&84.into(), &64.into(), &84.into()),
        "{}",
        text(&o)
    );
    assert_eq!(j["read"]["io_bytes"], 262144);
}

/// The `;` fields of `bin`'s terse line of `version` on a job file in `dir`.
fn terse_fields(bin: &mut Command, dir: &Path, job: &str, version: &str) -> Vec<String> {
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let o = bin
        .current_dir(dir)
        .stdin(Stdio::null())
        .args([
            "--output-format=terse",
            &format!("--terse-version={version}"),
        ])
        .arg("j.fio")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{version};")))
        .unwrap_or_else(|| panic!("no terse line: {}", text(&o)));
    line.split(';').map(str::to_string).collect()
}

#[test]
fn terse_lines_end_with_the_errors_gone_past_as_fios() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = SmallTmpfs::mount_or_skip(tmp.path()) else {
        return;
    };
    let fio_here = have_fio();
    // fio 3.33 on this job (no disk under a tmpfs): 123 fields in version
    // 3, 164 in version 4, the last two total_err=192 and first_error=28.
    for (version, fields) in [("3", 123), ("4", 164)] {
        let job = |opts: &str| {
            format!(
                "[w]\nfilename={}\nsize=1m\nbs=4k\nrw=write\n{opts}\n",
                fs.sparse_file().display()
            )
        };
        let ignored = job("ignore_error=,ENOSPC");
        let f = terse_fields(&mut hiops_fio(), tmp.path(), &ignored, version);
        assert_eq!(f.len(), fields, "version {version}: {f:?}");
        assert_eq!(&f[fields - 2..], ["192", "28"], "version {version}");
        // A job that stops at its error has no such fields.
        let stops = terse_fields(&mut hiops_fio(), tmp.path(), &job(""), version);
        assert_eq!(stops.len(), fields - 2, "version {version}: {stops:?}");
        if fio_here {
            let fio = terse_fields(&mut Command::new(FIO), tmp.path(), &ignored, version);
            assert_eq!(fio.len(), f.len(), "fio 3.33, version {version}: {fio:?}");
            assert_eq!(&fio[fields - 2..], &f[fields - 2..]);
        }
    }
}
