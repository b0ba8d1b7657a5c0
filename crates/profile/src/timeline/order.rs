//! Events put back in time order before they are joined. Each CPU has its
//! own ring, read one after the other, so an I/O's completion (written on
//! one CPU) can be read after its return (on another). As perf's own
//! reader does (tools/perf/util/ordered-events.c), events are held and
//! sorted, and only those older than a horizon are handed on: every event
//! stamped before it has reached its ring by then.

use super::event::Event;
use super::matcher::Matcher;

/// How far behind the clock the horizon starts: far more than an event
/// takes from its time stamp to its ring on a machine of its own.
const HORIZON_NS: u64 = 10_000_000;
/// How far it may grow when events arrive later than that (a virtual CPU
/// stopped by its host between an event's stamp and its write).
const HORIZON_MAX_NS: u64 = 500_000_000;

pub(crate) struct Ordered {
    held: Vec<(u64, Event)>,
    horizon_ns: u64,
    /// The horizon of the last hand-on.
    handed_with: u64,
    /// Every event stamped up to here has been handed on.
    handed_until: u64,
    /// Events read after the horizon had passed their stamp: handed on
    /// out of order (a writer delayed past the horizon, such as a virtual
    /// CPU the host stopped between the stamp and the write).
    pub(crate) late: u64,
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
            horizon_ns: HORIZON_NS,
            handed_with: HORIZON_NS,
            handed_until: 0,
            late: 0,
        }
    }

    pub(crate) fn push(&mut self, t: u64, e: Event) {
        if t < self.handed_until {
            // Handed on out of order; keep later ones in order by waiting
            // at least this much longer from now on.
            self.late += 1;
            let needed = self.handed_with + (self.handed_until - t);
            self.horizon_ns = self.horizon_ns.max(needed).min(HORIZON_MAX_NS);
        }
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
            now_ns.saturating_sub(self.horizon_ns)
        };
        let n = self.held.partition_point(|&(t, _)| t <= until);
        self.handed_until = self.handed_until.max(until.min(u64::MAX - 1));
        self.handed_with = self.horizon_ns;
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
                sectors: 8,
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
        assert_eq!(o.late, 0);
    }

    #[test]
    fn an_event_read_after_its_time_was_handed_on_is_counted_and_widens_the_horizon() {
        let mut o = Ordered::with_capacity(8);
        let mut m = Matcher::new(4, &[1]);
        let now = 10 * HORIZON_NS;
        o.push(now - 2 * HORIZON_NS, Event::Enter { tid: 3 });
        o.flush(now, false, &mut m);
        assert_eq!((m.events, o.late), (1, 0));
        // Stamped 3 ms before what was handed on, read only now.
        let stamp = now - HORIZON_NS - 3_000_000;
        o.push(stamp, Event::Exit { tid: 3 });
        assert_eq!(o.late, 1);
        assert_eq!(o.horizon_ns, HORIZON_NS + 3_000_000);
        // The next event 11 ms old waits now: a 12 ms delay is covered.
        o.push(now + 1_000_000 - 11_000_000, Event::Enter { tid: 4 });
        o.flush(now + 1_000_000, false, &mut m);
        assert_eq!(m.events, 2, "only the late one went on");
    }
}
