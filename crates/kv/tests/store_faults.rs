//! Errors do not spread: a failed device write fails the writes its flush
//! carried (and every write not yet durable) and the store goes on serving
//! (and writing, once the device takes writes again); a failed read fails
//! its GET alone. Nothing panics and no lock is poisoned (every call after
//! the failure still works). A write that failed is never served: not
//! while it waits, not after it failed, not after a reopen.
//!
//! Write errors come from the kernel itself, without root: a process's
//! file size limit (RLIMIT_FSIZE) makes every write past an offset fail
//! with EFBIG. The limit is the whole process's, so that test runs in a
//! child process (this test binary again, for that one test). The other
//! tests inject the failure (`Fault::FlushFails`: a flush fails after its
//! writes reached the device, the worst case for a reopen).

use hiops_kv::{Store, StoreConfig, StoreError};
use std::path::Path;
use std::process::Command;

const BLOCK: u32 = 64 * 1024;
const CHILD: &str = "HIOPS_KV_FAULT_DIR";
/// Set in the child: the flusher writes through a task ring
/// (`StoreConfig::tasks`) rather than the store's blocking path.
const ON_TASKS: &str = "HIOPS_KV_FAULT_TASKS";
const TEST: &str = "a_failed_device_write_fails_its_writes_and_the_store_goes_on";

fn config() -> StoreConfig {
    StoreConfig {
        block_size: BLOCK,
        create_size: 17 * BLOCK as u64,
        // GETs read the device, as before the SETs' records were cached.
        cache_writes: false,
        ..StoreConfig::default()
    }
}

/// The child's config: its flusher on a task ring when the parent says so.
fn child_config() -> StoreConfig {
    StoreConfig {
        tasks: std::env::var_os(ON_TASKS).map(|_| hiops_path::TaskConfig::default()),
        ..config()
    }
}

fn key(k: u32) -> Vec<u8> {
    format!("fault:{k:05}").into_bytes()
}

fn value(k: u32) -> Vec<u8> {
    vec![(k % 251) as u8; 1000]
}

fn set_file_limit(bytes: u64) {
    let lim = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct we pass; no memory is shared.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &lim) }, 0);
}

#[test]
fn a_failed_device_write_fails_its_writes_and_the_store_goes_on() {
    if let Some(dir) = std::env::var_os(CHILD) {
        return child(Path::new(&dir));
    }
    // Once with the flusher on its blocking thread, once on a task ring.
    for tasks in [false, true] {
        run_child(tasks);
    }
}

fn run_child(tasks: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, dir.path());
    if tasks {
        cmd.env(ON_TASKS, "1");
    }
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the child (tasks: {tasks}) failed:\n{text}"
    );
    assert!(
        text.contains("child: done"),
        "the child did not run:\n{text}"
    );
}

/// Runs in the child: writes until the size limit makes a flush fail,
/// checks the store serves on without the failed writes, lifts the limit,
/// and checks after a reopen that every acknowledged write is there and
/// no failed one.
fn child(dir: &Path) {
    // SAFETY: ignoring a signal installs no handler code.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let file = dir.join("kv.dat");
    let store = Store::open(&file, child_config()).unwrap();
    for k in 0..100 {
        store.set(&key(k), &value(k)).unwrap();
    }
    // Blocks are taken lowest first: writes into block 4 and beyond fail.
    set_file_limit(5 * BLOCK as u64);
    let mut acked: Vec<u32> = (0..100).collect();
    let mut failed = Vec::new();
    for k in 100..400 {
        match store.set(&key(k), &value(k)) {
            Ok(()) => acked.push(k),
            Err(e) => {
                assert!(matches!(e, StoreError::Failed(_)), "{e}");
                assert!(e.to_string().contains("not served"), "{e}");
                failed.push(k);
            }
        }
    }
    assert!(failed.len() > 100, "only {} writes failed", failed.len());
    let st = store.stats();
    assert!(st.flush_errors > 0);
    // Reads, deletes and syncs answer; nothing is stuck or poisoned; what
    // failed is not there.
    let check = |store: &Store, when: &str| {
        for &k in &acked {
            assert_eq!(
                store.get(&key(k)).unwrap(),
                Some(value(k)),
                "{when}: key {k}"
            );
        }
        for &k in &failed {
            assert_eq!(store.get(&key(k)).unwrap(), None, "{when}: key {k}");
            assert!(!store.exists(&key(k)), "{when}: key {k}");
        }
        let after = store.exists(b"after") as u64;
        assert_eq!(store.len(), acked.len() as u64 + after, "{when}");
    };
    check(&store, "after the failures");
    assert!(store.del(&key(0)).is_err(), "its flush fails too");
    assert_eq!(store.get(&key(0)).unwrap(), Some(value(0)), "a failed DEL");
    store.sync().unwrap();
    // The device takes writes again: the store goes on.
    set_file_limit(libc::RLIM_INFINITY);
    store.set(b"after", b"the fault").unwrap();
    store.sync().unwrap();
    check(&store, "after the device came back");
    if std::env::var_os(ON_TASKS).is_some() {
        let st = store.stats();
        assert!(st.worker_ring_ios > 0, "the flusher wrote on its ring");
        assert_eq!(st.worker_ring_ios, st.worker_ios, "and only there");
    }
    drop(store);
    let store = Store::open(&file, child_config()).unwrap();
    assert_eq!(store.stats().recovery.damage.len(), 0);
    check(&store, "after a reopen");
    assert_eq!(
        store.get(b"after").unwrap().as_deref(),
        Some(&b"the fault"[..])
    );
    println!("child: done");
}

#[test]
fn a_failed_read_fails_its_get_and_the_store_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.dat");
    let store = Store::open(&file, config()).unwrap();
    for k in 0..300 {
        store.set(&key(k), &value(k)).unwrap();
    }
    store.sync().unwrap();
    // The file loses its tail under the store: reads there come up short.
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(3 * BLOCK as u64).unwrap();
    let mut errors = 0;
    for k in 0..300 {
        match store.get(&key(k)) {
            Ok(v) => assert_eq!(v, Some(value(k)), "key {k}"),
            Err(e) => {
                assert!(e.to_string().contains("short read"), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 0 && errors < 300, "{errors} reads failed");
    assert_eq!(store.get(&key(0)).unwrap(), Some(value(0)));
    store.set(b"still", b"writing").unwrap();
    assert_eq!(
        store.get(b"still").unwrap().as_deref(),
        Some(&b"writing"[..])
    );
}

/// Runs `f` on a thread of its own: if it hangs, the test fails (after a
/// generous bound) instead of hanging.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(tx.send(f())));
    match rx.recv_timeout(std::time::Duration::from_secs(120)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what} hung"),
        Err(_) => panic!("{what} panicked"),
    }
}

/// A device's flusher stops (its I/O thread's ring fails, or it panics)
/// while writes wait for it: those writes and every later one to that
/// device fail with an error naming the device and what to do; the other
/// device goes on writing; reads of both go on; closing does not hang.
#[test]
fn a_stopped_flusher_fails_its_devices_writes_and_the_rest_goes_on() {
    use hiops_kv::store::Fault;
    let cases = [
        (true, Fault::RingFails),
        (true, Fault::WorkerPanics),
        (false, Fault::WorkerPanics),
    ];
    for (tasks, fault) in cases {
        let dir = tempfile::tempdir().unwrap();
        let paths = vec![dir.path().join("a.dat"), dir.path().join("b.dat")];
        let cfg = StoreConfig {
            tasks: tasks.then(hiops_path::TaskConfig::default),
            ..config()
        };
        let store = std::sync::Arc::new(Store::open_devices(&paths, cfg).unwrap());
        for k in 0..100 {
            store.set(&key(k), &value(k)).unwrap();
        }
        store.inject_fault(0, Some(fault));
        let s = store.clone();
        let what = format!("writes after {fault:?} (tasks: {tasks})");
        let failed = within(&what, move || failing_writes(&s));
        assert!(
            failed.len() > 10 && failed.len() < 90,
            "{what}: {} of 100 failed (one device's share should)",
            failed.len()
        );
        let name = paths[0].display().to_string();
        for e in failed.values() {
            assert!(matches!(e, StoreError::Halted(_)), "{what}: {e}");
            let text = e.to_string();
            assert!(text.contains(&name) && text.contains("restart"), "{text}");
        }
        // Reads go on, on both devices; a later write fails at once.
        for k in 0..100 {
            assert_eq!(store.get(&key(k)).unwrap(), Some(value(k)), "key {k}");
        }
        let &k = failed.keys().next().unwrap();
        let s = store.clone();
        let again = within(&what, move || (s.set(&key(k), b"x"), s.del(&key(k))));
        assert!(matches!(again.0, Err(StoreError::Halted(_))), "{again:?}");
        assert!(matches!(again.1, Err(StoreError::Halted(_))), "{again:?}");
        assert!(matches!(store.flush_all(), Err(StoreError::Halted(_))));
        let store = std::sync::Arc::into_inner(store).unwrap();
        within(&format!("closing ({what})"), move || drop(store));
    }
}

/// SETs keys 100..200; the keys whose SET failed, with the error.
fn failing_writes(store: &Store) -> std::collections::BTreeMap<u32, StoreError> {
    let mut failed = std::collections::BTreeMap::new();
    for k in 100..200 {
        if let Err(e) = store.set(&key(k), &value(k)) {
            failed.insert(k, e);
        }
    }
    failed
}
