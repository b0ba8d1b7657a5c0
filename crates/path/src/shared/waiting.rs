//! How a thread waits for its request on a shared queue: parked on its
//! own request, spinning, or one at a time on the completion doorbell and
//! then reaping for everybody (the paper's lazy, cooperative completion).

use super::combining::Stay;
use super::*;

impl SharedQueue {
    /// Waits until `req` is done, helping the others as the strategy says.
    pub fn wait(&self, req: &Request, wake: &mut WakeList) -> WaitCounts {
        if !self.how.cooperative {
            return self.wait_parked(req);
        }
        if let Some(posted) = &self.posted {
            if self.how.signalled {
                return self.wait_signalled(req, posted, wake);
            }
            return self.wait_own(req, posted, wake);
        }
        if !self.how.lazy_only && self.how.spin_ticks > 0 {
            self.spin(req, wake);
        }
        self.wait_doorbell(req, wake)
    }

    /// Someone else (the completion or poll thread) reaps for us.
    pub(super) fn wait_parked(&self, req: &Request) -> WaitCounts {
        let mut counts = WaitCounts::default();
        while !req.is_done() {
            self.park_waiter();
            counts.parks += 1;
        }
        counts
    }

    /// Reaps whenever the lock is free, for up to the spin time.
    pub(super) fn spin(&self, req: &Request, wake: &mut WakeList) {
        let me = req.owner.id();
        let deadline = tsc::rdtsc() + self.how.spin_ticks;
        while !req.is_done() && tsc::rdtsc() < deadline {
            if let Ok(mut core) = self.core.try_lock() {
                self.pump(&mut core, me, wake, false);
                drop(core);
                wake_all(wake);
            }
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
    }

    /// Reaps what is there, then sleeps on the doorbell if nobody does, or
    /// parks until the sleeper completes `req` or hands us the baton.
    pub(super) fn wait_doorbell(&self, req: &Request, wake: &mut WakeList) -> WaitCounts {
        let mut counts = WaitCounts::default();
        let me = req.owner.id();
        // The baton: a thread promoted by a leaving doorbell sleeper is
        // responsible for what is in flight until it sleeps on the doorbell
        // itself or finds someone who does; it never just walks away.
        let mut baton = false;
        loop {
            // DONE before the flag: a promotion can only precede our DONE
            // (it picks requests still in flight), so reading DONE first and
            // the flag second never misses a baton handed to us.
            let done = req.is_done();
            baton |= req.promoted.swap(false, Ordering::SeqCst);
            if done && !baton {
                return counts;
            }
            let mut core = self.lock();
            // Promotions happen under this lock: one made since the check
            // above is seen here, before we decide to leave.
            baton |= req.promoted.swap(false, Ordering::SeqCst);
            // Lazy only: the doorbell sleeper reaps; a waiter still issues
            // from the FIFO when nothing is in flight to free a tag.
            if !req.is_done() && (!self.how.lazy_only || core.queue.in_flight() == 0) {
                self.pump(&mut core, me, wake, false);
            }
            if req.is_done() {
                if baton {
                    self.hand_over(&mut core, me, wake);
                }
                drop(core);
                wake_all(wake);
                return counts;
            }
            let bell = self.doorbell.as_ref().filter(|_| {
                self.how.strategy != Strategy::CompletionThread
                    && core.mode == Mode::Coop
                    && !core.sleeper
                    && core.queue.in_flight() > 0
            });
            if let Some(bell) = bell {
                baton = self.sleep_on_bell(bell, core, req, wake, &mut counts);
                continue;
            }
            // Not sleeping on the doorbell means a sleeper exists, the poll
            // thread reaps, or nothing is in flight: the baton is not needed.
            baton = false;
            drop(core);
            wake_all(wake);
            // Woken by the completer (DONE), by a promotion, or spuriously.
            while !req.is_done() && !req.promoted.load(Ordering::Relaxed) {
                counts.parks += 1;
                if self.park_waiter() {
                    break;
                }
            }
        }
    }

    /// Sleeps on the doorbell as the ring's sleeper, then reaps. Returns
    /// whether we still hold the baton (`req` not yet done).
    pub(super) fn sleep_on_bell(
        &self,
        bell: &Doorbell,
        mut core: MutexGuard<'_, Core>,
        req: &Request,
        wake: &mut WakeList,
        counts: &mut WaitCounts,
    ) -> bool {
        let me = req.owner.id();
        core.sleeper = true;
        drop(core);
        wake_all(wake);
        bell.wait().expect("waiting on the completion eventfd");
        let t0 = Self::pass_start();
        counts.doorbell_sleeps += 1;
        let mut core = self.lock();
        core.sleeper = false;
        core.counters.doorbell_wakes += 1;
        let reaped = self.pump(&mut core, me, wake, false);
        let done = req.is_done();
        if done {
            // Leaving: someone else must reap what is still in flight.
            self.hand_over(&mut core, me, wake);
        }
        // Not done: still responsible; if another thread reaps our I/O
        // before we are back under the lock, we hand over then.
        drop(core);
        wake_all(wake);
        self.book_pass(t0, reaped);
        !done
    }

    /// Waits for `req` on a ring whose completions are posted in their
    /// submitter's context (see [`PostedCounter`]): sleep until someone
    /// completes `req` or, for a thread with commands it sent in flight,
    /// until the CQ tail moves. Whoever sent a batch of commands (see the
    /// `combining` module) is woken once by their completions, through the
    /// kernel's task work; it then reaps everything posted and wakes the
    /// owners that sleep (the paper's cooperative completion). The others
    /// sleep on their request's word alone (see the `submitter` module); a
    /// thread that sent commands drains them before it leaves
    /// ([`Self::drain_sent`]); so sleeps need no timer but on a stalled
    /// ring (see [`sleep_limit`]).
    pub(super) fn wait_own(
        &self,
        req: &Request,
        posted: &PostedCounter,
        wake: &mut WakeList,
    ) -> WaitCounts {
        let me = req.owner.id();
        let mut counts = WaitCounts::default();
        loop {
            if self.done_after_owed_look(req, me, wake) {
                self.drain_sent(me, posted, wake, &mut counts);
                return counts;
            }
            let stalled = self.retry_if_stalled(me, wake);
            // The tail before the look (see `tail_then_combine`).
            let (tail, reaped_all) = self.tail_then_combine(me, posted, wake, Stay::Until(req));
            // PARKED after reading the tail: a completer that finds us
            // PARKED wakes the state word; a completion posted after the
            // read moves the tail, which ends (or refuses) the sleep.
            if !req.mark_parked() {
                continue;
            }
            // Completions left by a busy lock are the holder's to reap (it
            // looks again after unlocking) and it wakes us if one is ours;
            // spinning here would only take the CPU from it.
            if reaped_all && posted.posted() != posted.consumed() {
                continue;
            }
            let limit = sleep_limit(stalled);
            if submitter::sent_in_flight() {
                let (word, parked) = (req.state_word(), Request::PARKED_STATE);
                futex::wait2(posted.posted_addr(), tail, word, parked, limit);
            } else {
                // Nothing of ours in flight: no task work will interrupt
                // this sleep, and whoever reaps our completion wakes us.
                futex::wait1(req.state_word(), Request::PARKED_STATE, limit);
                self.word_sleeps.fetch_add(1, Ordering::Relaxed);
            }
            counts.parks += 1;
            // Awake: a reaper need not wake us any more.
            req.unpark();
        }
    }

    /// Waits for `req` on a ring whose kernel signals each owner from the
    /// interrupt (see the `signal` module): sleep on the thread's eventfd
    /// until its completion is signalled; then it is in the ring, reaped
    /// by us next or by the holder of the lock we found (who looks again
    /// after unlocking, and wakes us on our request's word).
    pub(super) fn wait_signalled(
        &self,
        req: &Request,
        posted: &PostedCounter,
        wake: &mut WakeList,
    ) -> WaitCounts {
        let me = req.owner.id();
        let mut counts = WaitCounts::default();
        loop {
            if self.done_after_owed_look(req, me, wake) {
                if req.was_signalled() {
                    signal::settle();
                }
                return counts;
            }
            let stalled = self.retry_if_stalled(me, wake);
            let reaped_all = self.combine(me, wake, Stay::Until(req));
            if req.is_done() {
                continue;
            }
            if !signal::banked() {
                signal::sleep(sleep_limit(stalled));
                counts.parks += 1;
                continue;
            }
            // Signalled and not done: whoever reaps it sees PARKED and
            // wakes the word.
            if !req.mark_parked() {
                continue;
            }
            if reaped_all && posted.posted() != posted.consumed() {
                continue;
            }
            futex::wait1(
                req.state_word(),
                Request::PARKED_STATE,
                sleep_limit(stalled),
            );
            counts.parks += 1;
            req.unpark();
        }
    }

    /// Reads the CQ's tail, then combines; the tail read and whether the
    /// combining reaped all. A thread that sent commands sleeps on the
    /// tail as read *before* its look: their completions are posted by
    /// its own task work, which can run in any system call of its look
    /// (the wakes it sends), after the last holder's look again; read
    /// after, the tail would already hold them, and the sleep would wait
    /// for a move that never comes while nobody reaps them. Read before,
    /// such a completion makes the sleep return at once.
    fn tail_then_combine(
        &self,
        me: ThreadId,
        posted: &PostedCounter,
        wake: &mut WakeList,
        stay: Stay,
    ) -> (u32, bool) {
        let tail = posted.posted();
        (tail, self.combine(me, wake, stay))
    }

    /// Whether `req` is done; if so, after the look owed by a thread woken
    /// to combine in another's place (see `Stay`), even where its own
    /// request is done by then.
    fn done_after_owed_look(&self, req: &Request, me: ThreadId, wake: &mut WakeList) -> bool {
        let roused = req.promoted.swap(false, Ordering::SeqCst);
        if !req.is_done() {
            return false;
        }
        if roused {
            self.combine(me, wake, Stay::Until(req));
        }
        true
    }

    /// Sends the staged commands again if a submission was refused;
    /// whether the ring was stalled.
    fn retry_if_stalled(&self, me: ThreadId, wake: &mut WakeList) -> bool {
        let stalled = self.stalled.load(Ordering::SeqCst);
        if stalled {
            self.send_staged(&mut self.lock(), me, wake);
            wake_all(wake);
        }
        stalled
    }

    /// Before the thread leaves the path: reaps until every command it sent
    /// has been reaped. Their completions are posted only through this
    /// thread's task work, which interrupts its sleep here; one reaped by
    /// another thread meanwhile is seen when that thread wakes us for the
    /// last (see [`submitter::Draining`]).
    pub(super) fn drain_sent(
        &self,
        me: ThreadId,
        posted: &PostedCounter,
        wake: &mut WakeList,
        counts: &mut WaitCounts,
    ) {
        if !submitter::sent_in_flight() {
            return;
        }
        let drain = submitter::Draining::start();
        let since = tsc::rdtsc();
        loop {
            let stalled = self.retry_if_stalled(me, wake);
            let (tail, reaped_all) =
                self.tail_then_combine(me, posted, wake, Stay::Leaving { since });
            let Some((word, left)) = drain.left() else {
                return;
            };
            if reaped_all && posted.posted() != posted.consumed() {
                continue;
            }
            let limit = sleep_limit(stalled);
            futex::wait2(posted.posted_addr(), tail, word, left, limit);
            // A sleep in the path like any other of the wait's.
            counts.parks += 1;
        }
    }
}

/// How long a waiter on an own-completion ring sleeps at most: on a
/// stalled ring until the refused submission is tried again (the
/// completion that would wake it cannot come before); else until it is
/// woken.
fn sleep_limit(stalled: bool) -> Option<std::time::Duration> {
    stalled.then_some(STALL_RETRY)
}
