//! fio's flow control (HOWTO `flow`, `flow_id`, `flow_sleep`; its flow.c):
//! jobs sharing a flow id keep their I/O in proportion to their weights.
//! The flow counts every I/O its threads issue (from 1); a thread may issue
//! its next I/O only while its own count, as a share of the flow's, is no
//! more than its weight as a share of the flow's weights. Otherwise it waits
//! (`flow_sleep` µs, or just retries) and the others go on. A thread's
//! weight and count join the flow as its workload starts and leave with it.

use crate::spec::clock_ns;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// One flow id's counters, shared by its threads in a phase.
#[derive(Debug)]
pub(crate) struct FlowCounter {
    ios: AtomicU64,
    weights: AtomicU64,
}

impl Default for FlowCounter {
    fn default() -> Self {
        FlowCounter {
            ios: AtomicU64::new(1),
            weights: AtomicU64::new(0),
        }
    }
}

/// A thread's place in its flow.
pub(crate) struct FlowGate {
    flow: Arc<FlowCounter>,
    weight: u64,
    mine: u64,
    pub(crate) sleep_ns: u64,
}

impl FlowGate {
    pub(crate) fn join(flow: Arc<FlowCounter>, weight: u32, sleep: Duration) -> FlowGate {
        flow.weights.fetch_add(weight as u64, Relaxed);
        FlowGate {
            flow,
            weight: weight as u64,
            mine: 0,
            sleep_ns: clock_ns(sleep),
        }
    }

    /// Whether this thread may issue an I/O now; if so it is counted.
    pub(crate) fn admit(&mut self) -> bool {
        let (ios, weights) = (self.flow.ios.load(Relaxed), self.flow.weights.load(Relaxed));
        // mine / ios > weight / weights, without division.
        if self.mine as u128 * weights as u128 > self.weight as u128 * ios as u128 {
            return false;
        }
        self.flow.ios.fetch_add(1, Relaxed);
        self.mine += 1;
        true
    }
}

impl Drop for FlowGate {
    fn drop(&mut self) {
        self.flow.ios.fetch_sub(self.mine, Relaxed);
        self.flow.weights.fetch_sub(self.weight, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_keep_to_their_weights_and_leave_the_flow() {
        let flow = Arc::new(FlowCounter::default());
        let mut a = FlowGate::join(flow.clone(), 3, Duration::ZERO);
        let mut b = FlowGate::join(flow.clone(), 1, Duration::ZERO);
        // Both ask as fast as they can: 3 of a's to 1 of b's.
        for _ in 0..4000 {
            a.admit();
            b.admit();
        }
        assert!(
            (a.mine as f64 / b.mine as f64 - 3.0).abs() < 0.01,
            "{} to {}",
            a.mine,
            b.mine
        );
        drop(a);
        // Alone in the flow, b is never held back.
        assert!((0..100).all(|_| b.admit()));
        drop(b);
        assert_eq!(flow.ios.load(Relaxed), 1);
        assert_eq!(flow.weights.load(Relaxed), 0);
    }
}
