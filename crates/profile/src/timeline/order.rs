//! Events put back in time order before they are joined. Each CPU has its
//! own ring, read one after the other, so an I/O's completion (written on
//! one CPU) can be read after its return (on another). As perf's own
//! reader does (tools/perf/util/ordered-events.c), events are held and
//! sorted, and only those older than a horizon are handed on: every event
//! stamped before it has reached its ring by then.

use super::matcher::{Event, Matcher};

/// How far behind the clock the horizon stays: far more than an event
/// takes from its time stamp to its ring.
const HORIZON_NS: u64 = 2_000_000;

pub(crate) struct Ordered {
    held: Vec<(u64, Event)>,
}

/// CLOCK_MONOTONIC now, in ns: the clock the events are stamped with.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; CLOCK_MONOTONIC
    // is always present.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Ordered {
    pub(crate) fn with_capacity(n: usize) -> Ordered {
        Ordered {
            held: Vec::with_capacity(n),
        }
    }

    pub(crate) fn push(&mut self, t: u64, e: Event) {
        self.held.push((t, e));
    }

    /// Hands on, in time order, the events stamped before `now` less the
    /// horizon (all of them when `all`).
    pub(crate) fn flush(&mut self, now_ns: u64, all: bool, m: &mut Matcher) {
        // Stable: events of one ring with equal stamps keep their order.
        self.held.sort_by_key(|&(t, _)| t);
        let until = if all {
            u64::MAX
        } else {
            now_ns.saturating_sub(HORIZON_NS)
        };
        let n = self.held.partition_point(|&(t, _)| t <= until);
        for &(t, e) in &self.held[..n] {
            m.on(t, e);
        }
        self.held.drain(..n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_out_of_order_are_joined_in_order() {
        let (dev, sector) = (1, 8);
        let mut o = Ordered::with_capacity(8);
        let mut m = Matcher::new(4, &[dev]);
        // CPU 1's ring (the return) read before CPU 0's (the rest).
        o.push(500, Event::Exit { tid: 3 });
        o.push(100, Event::Enter { tid: 3 });
        o.push(
            200,
            Event::Queue {
                tid: 3,
                dev,
                sector,
                write: false,
            },
        );
        o.push(300, Event::Issue { dev, sector });
        o.push(400, Event::Complete { dev, sector });
        // Only what is older than the horizon goes on at first.
        o.flush(HORIZON_NS + 250, false, &mut m);
        assert_eq!(m.events, 2);
        o.flush(0, true, &mut m);
        let t = m.timeline(vec![], 1.0);
        assert_eq!((t.ios, t.stages.completion), (1, 1));
        assert_eq!(t.gaps[2].mean_ns, 100.0);
    }
}
