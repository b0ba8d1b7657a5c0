//! The tracepoints opened on every online CPU, all of one CPU's events
//! sharing one ring (PERF_EVENT_IOC_SET_OUTPUT), drained by a thread of
//! its own that joins events into I/Os as they come.

use super::decode::{Decoded, Decoder, Kind};
use super::ftrace::Instance;
use super::matcher::Matcher;
use super::order::{monotonic_ns, Ordered};
use super::window::Timeline;
use crate::ring::{open_event, Ring};
use crate::tracefs::{self, Tracepoint};
use crate::ProfileError;
use perf_event_open_sys::bindings as sys;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Data pages per CPU ring (4 MiB): ~64-byte records of ~5 events per I/O
/// leave room for 100k I/Os per second over 100 ms, the drain thread's
/// wait for a CPU among 128 busy threads (1 MiB lost records there).
const RING_PAGES: usize = 1024;
const DRAIN_EVERY: Duration = Duration::from_millis(10);
/// Events held for ordering, room made at start: a few drains' worth at
/// 100k I/Os per second (it grows past that rather than drop events).
const HELD: usize = 1 << 14;
/// I/Os in flight at once that can be followed.
const IN_FLIGHT: usize = 1 << 14;
/// The system calls of the synchronous engines.
const SYSCALLS: [&str; 6] = [
    "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
];

/// Every event opened, disabled: what the window's start should not wait for.
pub struct Prepared {
    rings: Vec<Ring>,
    /// Events whose records go to another event's ring; kept open.
    others: Vec<OwnedFd>,
    /// The completions, read from tracefs (see `ftrace`): None where an
    /// instance cannot be made, and perf reads them as the rest.
    ftrace: Option<Instance>,
    decoder: Decoder,
    devices: Vec<String>,
}

/// Tracing under way.
pub struct Tracer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Timeline>,
}

/// A device's dev_t as the block tracepoints print it (the kernel's
/// MKDEV: major << 20 | minor), and that of its whole disk.
fn dev_of(name: &str) -> Result<(u32, u32), ProfileError> {
    let dir = Path::new("/sys/class/block").join(name);
    let read = |p: &Path| -> Option<u32> {
        let text = std::fs::read_to_string(p.join("dev")).ok()?;
        let (ma, mi) = text.trim().split_once(':')?;
        Some((ma.parse::<u32>().ok()? << 20) | mi.parse::<u32>().ok()?)
    };
    let dev = read(&dir).ok_or_else(|| ProfileError::NoDevNumber {
        name: name.into(),
        dir: dir.clone(),
    })?;
    let disk = if dir.join("partition").exists() {
        dir.canonicalize()
            .ok()
            .and_then(|p| read(p.parent()?))
            .unwrap_or(dev)
    } else {
        dev
    };
    Ok((dev, disk))
}

fn attr(id: u16) -> sys::perf_event_attr {
    // SAFETY: perf_event_attr is plain integers and unions of integers:
    // all zeroes is a valid value (and the ABI's "unset").
    let mut a: sys::perf_event_attr = unsafe { std::mem::zeroed() };
    a.type_ = sys::PERF_TYPE_TRACEPOINT;
    a.size = std::mem::size_of::<sys::perf_event_attr>() as u32;
    a.config = u64::from(id);
    a.__bindgen_anon_1.sample_period = 1;
    a.sample_type = (sys::PERF_SAMPLE_TID
        | sys::PERF_SAMPLE_TIME
        | sys::PERF_SAMPLE_CPU
        | sys::PERF_SAMPLE_RAW) as u64;
    a.set_disabled(1);
    // The application's clock, so stages compare with its own times.
    a.set_use_clockid(1);
    a.clockid = libc::CLOCK_MONOTONIC;
    a
}

/// The events to open: (group, name, kind, kernel-side filter).
fn events(
    root: &Path,
    devs: &[(u32, u32)],
) -> Result<Vec<(Tracepoint, Kind, Option<String>)>, ProfileError> {
    let mut ids: Vec<u32> = devs.iter().flat_map(|&(d, w)| [d, w]).collect();
    ids.sort_unstable();
    ids.dedup();
    let filter = ids
        .iter()
        .map(|d| format!("dev == {d}"))
        .collect::<Vec<_>>()
        .join(" || ");
    let mut out = Vec::new();
    let block = [
        "block_bio_queue",
        "block_bio_backmerge",
        "block_bio_frontmerge",
        "block_rq_issue",
        "block_rq_complete",
        "block_bio_complete",
    ];
    for name in block {
        let tp = Tracepoint::load(root, "block", name)?;
        let kind = Kind::block(name, &tp)?;
        out.push((tp, kind, Some(filter.clone())));
    }
    for call in SYSCALLS {
        for (dir, kind) in [("sys_enter_", Kind::Enter), ("sys_exit_", Kind::Exit)] {
            // Not every architecture has every call: skip what is absent.
            if let Ok(tp) = Tracepoint::load(root, "syscalls", &format!("{dir}{call}")) {
                out.push((tp, kind, None));
            }
        }
    }
    let aio = [
        ("sys_enter_io_submit", Kind::AioEnter),
        ("sys_exit_io_submit", Kind::AioExit),
        ("sys_exit_io_getevents", Kind::AioReaped),
        ("sys_exit_io_pgetevents", Kind::AioReaped),
    ];
    for (name, kind) in aio {
        if let Ok(tp) = Tracepoint::load(root, "syscalls", name) {
            out.push((tp, kind, None));
        }
    }
    for name in ["io_uring_submit_req", "io_uring_complete"] {
        if let Ok(tp) = Tracepoint::load(root, "io_uring", name) {
            let req = tp.field("req", 8)?;
            let kind = if name.ends_with("req") {
                Kind::Submit { req }
            } else {
                Kind::Posted { req }
            };
            out.push((tp, kind, None));
        }
    }
    Ok(out)
}

/// What to do about a failed open, in one line.
fn explain(e: std::io::Error) -> ProfileError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => ProfileError::TracepointDenied,
        _ => ProfileError::TracepointOpen(e),
    }
}

fn set_filter(fd: &OwnedFd, filter: &str) -> std::io::Result<()> {
    let c = CString::new(filter).expect("a filter has no NUL");
    // SAFETY: SET_FILTER reads a NUL-terminated string that outlives the call.
    Ring::check(unsafe {
        perf_event_open_sys::ioctls::SET_FILTER(fd.as_raw_fd(), c.as_ptr().cast_mut())
    })
}

/// The events that fire where the disk's completion runs (its interrupt
/// or softirq, often on an idle CPU): perf loses most of those there.
fn in_interrupt(kind: &Kind) -> bool {
    matches!(kind, Kind::Complete { .. } | Kind::BioComplete { .. })
}

/// A tracefs instance with the completion events on, or None (perf then
/// reads them, and loses those that fire on an idle CPU).
fn completions_from_tracefs(
    root: &Path,
    evs: &[(Tracepoint, Kind, Option<String>)],
    cpus: &[usize],
) -> Option<Instance> {
    let names: Vec<(&str, &str, Option<String>)> = evs
        .iter()
        .filter(|(_, k, _)| in_interrupt(k))
        .map(|(_, k, f)| {
            let name = match k {
                Kind::BioComplete { .. } => "block_bio_complete",
                _ => "block_rq_complete",
            };
            ("block", name, f.clone())
        })
        .collect();
    Instance::create(root, &names, cpus).ok()
}

/// Opens the tracepoints for `devices` (block device names, as in
/// /sys/class/block), disabled; an `Err` says what to do.
pub fn prepare(devices: &[String]) -> Result<Prepared, ProfileError> {
    if devices.is_empty() {
        return Err(ProfileError::NoBlockDevice);
    }
    let root = tracefs::root()?;
    let devs = devices
        .iter()
        .map(|d| dev_of(d))
        .collect::<Result<Vec<_>, _>>()?;
    let evs = events(&root, &devs)?;
    let cpus = crate::sampler::online_cpus();
    let ftrace = completions_from_tracefs(&root, &evs, &cpus);
    let (mut rings, mut others) = (Vec::new(), Vec::new());
    for &cpu in &cpus {
        let mut leader: Option<Ring> = None;
        for (tp, kind, filter) in &evs {
            if ftrace.is_some() && in_interrupt(kind) {
                continue;
            }
            let fd = open_event(attr(tp.id), -1, cpu as libc::c_int).map_err(explain)?;
            if let Some(f) = filter {
                // The user-space filter stays in force if the kernel's fails.
                let _ = set_filter(&fd, f);
            }
            match &leader {
                None => leader = Some(Ring::over(fd, RING_PAGES).map_err(explain)?),
                Some(ring) => {
                    ring.redirect(&fd).map_err(explain)?;
                    others.push(fd);
                }
            }
        }
        rings.extend(leader);
    }
    let decoder = Decoder {
        kinds: evs.iter().map(|(tp, k, _)| (tp.id, *k)).collect(),
        pid: std::process::id(),
        devs,
    };
    Ok(Prepared {
        rings,
        others,
        ftrace,
        decoder,
        devices: devices.to_vec(),
    })
}

/// Enables every event, joins events into I/Os until told to stop, then
/// disables them and drains the rest.
fn drain_loop(
    p: Prepared,
    stop: Arc<AtomicBool>,
    ready: mpsc::Sender<Result<(), ProfileError>>,
) -> Timeline {
    let Prepared {
        mut rings,
        others,
        mut ftrace,
        decoder,
        devices,
    } = p;
    let disks: Vec<u32> = decoder.devs.iter().map(|&(_, w)| w).collect();
    let mut m = Matcher::new(IN_FLIGHT, &disks);
    let enabled = toggle(&rings, &others, ftrace.as_ref(), true);
    m.on_ns = monotonic_ns();
    let started = Instant::now();
    let _ = ready.send(enabled.map_err(|source| ProfileError::Enable {
        what: "tracing",
        source,
    }));
    let mut held = Ordered::with_capacity(HELD);
    let drain = |rings: &mut [Ring],
                 ftrace: &mut Option<Instance>,
                 m: &mut Matcher,
                 held: &mut Ordered,
                 all: bool| {
        // Read before the rings: every event stamped before the horizon
        // is in them by now.
        let now = monotonic_ns();
        for ring in rings.iter_mut() {
            ring.drain_words(|w| match decoder.decode(w) {
                Decoded::Event(t, e) => held.push(t, e),
                Decoded::Lost(n) => m.lost += n,
                Decoded::Skip => {}
            });
        }
        if let Some(f) = ftrace.as_mut() {
            m.lost += f.drain(|t, raw| {
                if let Decoded::Event(t, e) = decoder.decode_raw(t, raw) {
                    held.push(t, e);
                }
            });
        }
        held.flush(now, all, m);
    };
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(DRAIN_EVERY);
        drain(&mut rings, &mut ftrace, &mut m, &mut held, false);
    }
    let _ = toggle(&rings, &others, ftrace.as_ref(), false);
    let window_s = started.elapsed().as_secs_f64();
    drain(&mut rings, &mut ftrace, &mut m, &mut held, true);
    m.late = held.late;
    m.timeline(devices, window_s)
}

/// Turns every event on or off.
fn toggle(
    rings: &[Ring],
    others: &[OwnedFd],
    ftrace: Option<&Instance>,
    on: bool,
) -> std::io::Result<()> {
    for r in rings {
        if on {
            r.enable()?
        } else {
            r.disable()?
        }
    }
    for fd in others {
        // SAFETY: ioctls without a pointer argument on events we own.
        let r = unsafe {
            if on {
                perf_event_open_sys::ioctls::ENABLE(fd.as_raw_fd(), 0)
            } else {
                perf_event_open_sys::ioctls::DISABLE(fd.as_raw_fd(), 0)
            }
        };
        Ring::check(r)?;
    }
    if let Some(f) = ftrace {
        f.set_on(on).map_err(std::io::Error::other)?;
    }
    Ok(())
}

impl Prepared {
    /// Starts tracing; returns once the events are on.
    pub fn start(self) -> Result<Tracer, ProfileError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let flag = stop.clone();
        let spawned = std::thread::Builder::new()
            .name("hiops-timeline".into())
            .spawn(move || drain_loop(self, flag, tx));
        let thread = crate::error::started("the timeline's", spawned, &rx)?;
        Ok(Tracer { stop, thread })
    }
}

impl Tracer {
    /// Stops tracing and returns the window's timeline.
    pub fn stop(self) -> Timeline {
        self.stop.store(true, Ordering::Release);
        self.thread.thread().unpark();
        self.thread
            .join()
            .expect("the timeline's thread does not panic")
    }
}
