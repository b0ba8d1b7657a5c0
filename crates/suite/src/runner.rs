//! A suite's point run in this process, as `hiops run` would run its
//! command line ([`hiops_run::Point`]), with the suite's own flags around
//! it: the devices' interrupts confined to the threads' CPUs and their
//! handler traced.

use crate::irq;
use crate::sweep::{Measured, RunFailure, Runner};
use std::sync::atomic::AtomicBool;

/// Runs points in this process through hiops-bench, as `hiops run` would.
pub struct BenchRunner<'a> {
    pub interrupt: &'a AtomicBool,
    pub progress: Option<&'a mut dyn FnMut(&hiops_bench::Progress)>,
}

impl Runner for BenchRunner<'_> {
    fn run(&mut self, args: &[String]) -> Result<Measured, RunFailure> {
        let failed = |e: &dyn std::fmt::Display| RunFailure::Failed(e.to_string());
        let (args, confine_irqs) = irq::affinity::confine_flag(args);
        let (args, trace_irqs) = irq::trace::flag(&args);
        let point = hiops_run::Point::plan(&args).map_err(|e| failed(&e))?;
        let plan = point.plan_ref();
        // Held until this function returns, the run's error or Ctrl-C
        // included: the interrupts go back where they were.
        let confinement = confine_irqs.then(|| irq::affinity::confine(&plan.jobs));
        let traced = trace_irqs
            .then(|| irq::trace::Traced::start(&args))
            .transpose()
            .map_err(|e| failed(&e))?;
        let progress = &mut self.progress;
        let mut forward = |p: &hiops_bench::Progress| {
            if let Some(f) = progress.as_mut() {
                f(p)
            }
        };
        let r = point
            .run(self.interrupt, Some(&mut forward))
            .map_err(|e| match e {
                hiops_run::PointError::Interrupted => RunFailure::Interrupted,
                other => failed(&other),
            })?;
        let mut metrics = hiops_report::derived::point_metrics(&r);
        if let Some(t) = traced {
            t.finish(&mut metrics);
        }
        let set = hiops_report::json::RunSet {
            runs: std::slice::from_ref(&r),
            global_options: &plan.global_options,
            ignored: &plan.ignored,
        };
        Ok(Measured {
            metrics,
            cdf: hiops_report::derived::latency_cdf(&r),
            series: r
                .series
                .iter()
                .map(|p| (p.t_s, p.read_iops + p.write_iops))
                .collect(),
            hist: hiops_report::derived::latency_histogram(&r),
            notes: confinement.map(|c| c.note).into_iter().collect(),
            raw: hiops_report::json::to_fio_json_set(&set, false),
        })
    }
}
