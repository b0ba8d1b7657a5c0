//! fio's lockfile (filesetup.c, lock_file and unlock_file; ioengines.c
//! takes the lock from an I/O's prep until its queue call returns): the
//! submission of each I/O to a file is serialised across every thread of
//! the run that opened that file by name with a lock, `exclusive` one at a
//! time, `readwrite` reads together and each write alone. On an engine
//! that does its I/O inside the call (psync and the like) the I/O itself
//! is serialised; on an asynchronous one, its submission.

use crate::spec::FileLockMode;
use hiops_hal::Op;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// One file's lock, shared by name as fio shares it through its file hash:
/// the kind the first thread to open the file with a lock asked for.
pub(crate) enum IoLock {
    Exclusive(Mutex<()>),
    ReadWrite(RwLock<()>),
}

/// A held lock, released when dropped (the guards are only held).
pub(crate) enum Held<'a> {
    Exclusive { _guard: MutexGuard<'a, ()> },
    Read { _guard: RwLockReadGuard<'a, ()> },
    Write { _guard: RwLockWriteGuard<'a, ()> },
}

impl IoLock {
    /// The lock of the file named `name` (created by the first to ask).
    pub(crate) fn of(name: &str, mode: FileLockMode) -> Option<Arc<IoLock>> {
        static LOCKS: OnceLock<Mutex<HashMap<String, Arc<IoLock>>>> = OnceLock::new();
        let made = match mode {
            FileLockMode::None => return None,
            FileLockMode::Exclusive => IoLock::Exclusive(Mutex::new(())),
            FileLockMode::ReadWrite => IoLock::ReadWrite(RwLock::new(())),
        };
        let mut all = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Some(
            all.entry(name.to_string())
                .or_insert_with(|| Arc::new(made))
                .clone(),
        )
    }

    /// Waits for the lock for an I/O of `op` (a read shares a readwrite
    /// lock; anything else, a flush too, takes it alone).
    pub(crate) fn hold(&self, op: Op) -> Held<'_> {
        // A thread that panicked holding it left no state to repair.
        match self {
            IoLock::Exclusive(m) => Held::Exclusive {
                _guard: m.lock().unwrap_or_else(|e| e.into_inner()),
            },
            IoLock::ReadWrite(l) if op == Op::Read => Held::Read {
                _guard: l.read().unwrap_or_else(|e| e.into_inner()),
            },
            IoLock::ReadWrite(l) => Held::Write {
                _guard: l.write().unwrap_or_else(|e| e.into_inner()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lock_per_name_of_the_first_kind_asked() {
        let a = IoLock::of("io_lock-test-a", FileLockMode::Exclusive).unwrap();
        let again = IoLock::of("io_lock-test-a", FileLockMode::ReadWrite).unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        assert!(matches!(*again, IoLock::Exclusive(_)));
        assert!(IoLock::of("io_lock-test-a", FileLockMode::None).is_none());
        let b = IoLock::of("io_lock-test-b", FileLockMode::Exclusive).unwrap();
        assert!(!Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn exclusive_holds_one_readwrite_shares_reads_only() {
        let x = IoLock::of("io_lock-test-x", FileLockMode::Exclusive).unwrap();
        let held = x.hold(Op::Read);
        let IoLock::Exclusive(m) = &*x else { panic!() };
        assert!(m.try_lock().is_err(), "a second reader waits");
        drop(held);
        assert!(m.try_lock().is_ok());
        let rw = IoLock::of("io_lock-test-rw", FileLockMode::ReadWrite).unwrap();
        let IoLock::ReadWrite(l) = &*rw else { panic!() };
        let reading = rw.hold(Op::Read);
        assert!(l.try_read().is_ok(), "readers share");
        assert!(l.try_write().is_err(), "a writer waits for the readers");
        drop(reading);
        let writing = rw.hold(Op::Write);
        assert!(l.try_read().is_err(), "a reader waits for the writer");
        drop(writing);
    }
}
