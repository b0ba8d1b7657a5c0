//! The flusher and defragmenter of a device while they run: started,
//! stopped and joined the same way whichever [`super::worker::Worker`]
//! they run on (a thread each, or tasks on the device's I/O thread).

use super::halt::panic_text;
use super::inner::Inner;
use super::on_tasks::IoThread;
use super::wait::now;
use super::worker::OnThread;
use hiops_path::TaskConfig;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A device's running flusher and defragmenter.
pub(super) enum Running {
    Threads {
        flusher: Option<JoinHandle<()>>,
        defrag: Option<JoinHandle<()>>,
    },
    Tasks(IoThread),
}

impl Running {
    /// Starts the flusher (the defragmenter waits for `start_defrag`):
    /// on an I/O thread's ring with `tasks`, else on a thread of its own.
    pub(super) fn start(inner: &Arc<Inner>, tasks: Option<&TaskConfig>) -> io::Result<Running> {
        Ok(match tasks {
            Some(cfg) => Running::Tasks(IoThread::spawn(inner.clone(), cfg)?),
            None => Running::Threads {
                flusher: Some(spawn(inner, "hiops-kv-flush", |i| {
                    now(i.flush_loop(&OnThread::new(i)))
                })?),
                defrag: None,
            },
        })
    }

    pub(super) fn start_defrag(&mut self, inner: &Arc<Inner>) -> io::Result<()> {
        match self {
            Running::Threads { defrag, .. } => {
                *defrag = Some(spawn(inner, "hiops-kv-defrag", |i| {
                    now(i.defrag_loop(&OnThread::new(i)))
                })?);
            }
            Running::Tasks(t) => t.start_defrag(),
        }
        Ok(())
    }

    pub(super) fn name(&self) -> &'static str {
        match self {
            Running::Threads { .. } => "threads",
            Running::Tasks(_) => "tasks",
        }
    }

    /// Waits for the defragmenter to end (told to by `stop_defrag`).
    pub(super) fn join_defrag(&mut self) {
        match self {
            Running::Threads { defrag, .. } => {
                if let Some(t) = defrag.take() {
                    let _ = t.join();
                }
            }
            Running::Tasks(t) => t.join_defrag(),
        }
    }

    /// Waits for the flusher to end (told to by `stop`), and the I/O
    /// thread with it.
    pub(super) fn join_flusher(&mut self) {
        match self {
            Running::Threads { flusher, .. } => {
                if let Some(t) = flusher.take() {
                    let _ = t.join();
                }
            }
            Running::Tasks(t) => t.join(),
        }
    }
}

/// A worker thread; if it panics, its device is halted (`halt`): the
/// writes waiting for it fail rather than wait forever.
fn spawn(inner: &Arc<Inner>, name: &'static str, job: fn(&Inner)) -> io::Result<JoinHandle<()>> {
    let me = inner.clone();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(|| job(&me))) {
                me.halt(&format!("its {name} thread {}", panic_text(&*p)));
            }
        })
}
