//! The job's passes other than its workload: fio's read_iolog replay,
//! verify_only, and the read-back of a verify pass.

use super::JobThread;
use crate::driver::Driver;
use crate::iolog::replay::Replay;
use crate::source::ReadBack;
use crate::thread_plan::WorkerPlan;
use hiops_hal::now_ns;

impl<D: Driver> JobThread<'_, D> {
    /// fio's read_iolog: the trace's I/Os instead of the workload.
    pub(super) fn replay(&mut self, trace: &crate::spec::ReplaySpec, plan: &WorkerPlan<'_>) {
        match Replay::open(trace, &plan.regions, now_ns()) {
            Ok(mut r) => {
                self.pump(&mut r);
                if let Some(e) = r.error.take() {
                    self.books.error.get_or_insert(e.into());
                }
            }
            Err(e) => {
                self.books.error.get_or_insert(e.into());
            }
        }
    }

    /// fio's verify_only: the job's writes are replayed, not done, and
    /// the blocks they would have written are read back and checked (a
    /// read job checks every block of its regions).
    pub(super) fn verify_only(&mut self, plan: &WorkerPlan<'_>) {
        let Some(v) = self.books.verify.as_mut() else {
            return;
        };
        let spec = self.spec;
        let interval = v.stamper.interval() as u32;
        let replayed = spec.workload.rw.writes();
        if replayed {
            let saved = if spec.verify.state_load {
                match crate::verify::state_file::load_for(plan) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        self.books.error.get_or_insert(e.into());
                        return;
                    }
                }
            } else {
                None
            };
            crate::verify::state::replay(v, plan, saved.as_ref());
        }
        let chunks = v.to_read();
        // fio's verify reads the device, never a cached copy.
        crate::cache::drop_cached(&plan.targets, &plan.regions);
        self.start_window(now_ns());
        if replayed {
            let max = spec.data_bs_max();
            self.pump(&mut ReadBack::written(
                &plan.regions,
                chunks,
                interval,
                max,
                true,
            ));
        } else {
            // Blocks of the read size, as fio's read job verifies its reads.
            let read = spec.bs_for(hiops_hal::Op::Read);
            let unit = if read.is_fixed() {
                read.max()
            } else {
                interval
            };
            self.pump(&mut ReadBack::every(&plan.regions, unit));
        }
        self.end_window();
        self.drain();
    }

    /// The read-back of blocks written in this run, booked as reads (as fio
    /// books its verify phase) over a time of its own.
    pub(super) fn verify_pass(&mut self, plan: &WorkerPlan<'_>) {
        let Some(v) = self.books.verify.as_mut() else {
            return;
        };
        // A read job checked each read as it came: it wrote nothing to read back.
        let wrote = !v.maps.is_empty();
        if !(v.check && wrote)
            || self.books.error.is_some()
            || v.halted()
            || self.ctrl.interrupted()
        {
            return;
        }
        // Which chunks to read: those acknowledged (the books keep the maps
        // to check each read against its write).
        let chunks = v.to_read();
        let interval = v.stamper.interval() as u32;
        // As fio: what the writes left in the page cache goes to the device
        // and out of the cache, so the check reads the device.
        if let Err(e) = crate::cache::sync(&plan.targets) {
            self.books.error.get_or_insert(e.into());
            return;
        }
        crate::cache::drop_cached(&plan.targets, &plan.regions);
        let t0 = now_ns();
        self.books.booking = true;
        let max = self.spec.data_bs_max();
        self.pump(&mut ReadBack::written(
            &plan.regions,
            chunks,
            interval,
            max,
            false,
        ));
        self.drain();
        self.books.booking = false;
        self.books.stats[0].runtime_ns += now_ns() - t0;
    }
}
