//! What a job measures and keeps: its logs, a latency target, its flow
//! share and steady state.
use crate::error::FioError;
use crate::options::Draft;
use hiops_job::JobBuilder;
use std::time::Duration;

impl Draft {
    /// fio's logs: a prefix left empty is the job's name (fio's default).
    pub(super) fn logs_of(&self, job: &str) -> hiops_job::LogSpec {
        let mut logs = self.logs.clone();
        for prefix in [&mut logs.bw, &mut logs.lat, &mut logs.iops, &mut logs.hist]
            .into_iter()
            .flatten()
        {
            if prefix.is_empty() {
                *prefix = job.to_string();
            }
        }
        logs.epoch_clock =
            (self.log_unix_epoch || self.log_alternate_epoch).then_some(self.log_clock_id);
        logs
    }

    /// fio's bwavgtime and iopsavgtime (init.c, setup of the bw and iops
    /// logs): as given; not given, a job writing that log samples every
    /// log_avg_msec when it is set, others every 500 ms. A window below
    /// log_avg_msec would shorten the log's windows in fio, which hiops
    /// keeps at log_avg_msec for every log: refused.
    fn rate_windows(&self) -> Result<[Duration; 2], FioError> {
        let logs = [("bw", &self.logs.bw), ("iops", &self.logs.iops)];
        let names = ["bwavgtime", "iopsavgtime"];
        let avg = self.logs.avg_window;
        let mut out = [hiops_job::spec::RATE_WINDOW; 2];
        for (i, ((log, written), given)) in logs.iter().zip(self.rate_windows).enumerate() {
            out[i] = match (given, written.is_some() && !avg.is_zero()) {
                (Some(w), true) if w < avg => {
                    let (n, ms, avg) = (names[i], w.as_millis(), avg.as_millis());
                    return Err(format!("write_{log}_log with {n}={ms} below log_avg_msec={avg}: fio would log every {ms} ms, hiops logs every log_avg_msec; give log_avg_msec={ms} or drop {n}").into());
                }
                (Some(w), _) => w,
                (None, true) => avg,
                (None, false) => out[i],
            };
        }
        Ok(out)
    }

    /// Logs, offload and serialize_overlap, the latency target and the flow share.
    pub(super) fn set_logs_latency_and_flow(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        spec.logs = self.logs_of(&spec.name);
        spec.logs.rate_windows = self.rate_windows()?;
        spec.io.offload = self.offload.unwrap_or(false);
        spec.io.serialize_overlap = self.serialize_overlap.unwrap_or(false);
        spec.io.latency_target = self
            .latency_target
            .map(|target| hiops_job::spec::LatencyTarget {
                target: Duration::from_nanos(target),
                window: Duration::from_nanos(self.latency_window.unwrap_or(0)),
                percentile: self.latency_percentile.unwrap_or(100.0),
                run: self.latency_run.unwrap_or(false),
            });
        spec.io.max_latency = [0, 1].map(|d| self.max_latency[d].map(Duration::from_nanos));
        if spec.io.latency_target.is_none()
            && (self.latency_window.is_some()
                || self.latency_percentile.is_some()
                || self.latency_run.is_some())
        {
            return Err("latency_window, latency_percentile and latency_run go with latency_target (e.g. latency_target=2ms)".into());
        }
        spec.workload.flow = self
            .flow
            .filter(|&w| w > 0)
            .map(|weight| hiops_job::spec::FlowSpec {
                id: self.flow_id.unwrap_or(0),
                weight,
                sleep: Duration::from_nanos(self.flow_sleep.unwrap_or(0)),
            });
        if self.gtod_reduce == Some(true) {
            if spec.logs.lat.is_some() || spec.logs.hist.is_some() {
                return Err("gtod_reduce=1 measures no latency, so a latency log would hold none: drop write_lat_log/write_hist_log or gtod_reduce".into());
            }
            if spec.io.latency_target.is_some() {
                return Err("latency_target needs each I/O's latency, which gtod_reduce=1 does not measure: drop one of them".into());
            }
            if spec.io.max_latency.iter().any(Option::is_some) {
                return Err("max_latency needs each I/O's latency, which gtod_reduce=1 does not measure (fio then checks none): drop one of them".into());
            }
        }
        if spec.io.offload && spec.io.path.is_some() {
            return Err("io_submit_mode=offload hands I/O to threads of its own: drop strategy or tasks, or the offload".into());
        }
        Ok(())
    }

    /// ss: stop once steady, within runtime.
    pub(super) fn set_steady_state(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        if let Some(mut ss) = self.ss {
            ss.window = Duration::from_nanos(self.ss_dur.unwrap_or(0));
            ss.ramp = Duration::from_nanos(self.ss_ramp.unwrap_or(0));
            if ss.window.is_zero() && is_fio_default_ss(&ss) && self.ss_ramp.is_none() {
                // fio's default ss, which fio judges only with an ss_dur.
                return Ok(());
            }
            if ss.window.is_zero() {
                return Err("ss needs ss_dur (the window to judge, e.g. ss_dur=30s)".into());
            }
            if spec.timing.runtime.is_none() {
                return Err("ss needs runtime (the longest to wait for steady state)".into());
            }
            spec.timing.steady_state = Some(ss);
        } else if self.ss_dur.is_some() || self.ss_ramp.is_some() {
            return Err("ss_dur and ss_ramp need ss (e.g. ss=iops:5%)".into());
        }
        Ok(())
    }
}

/// fio 3.33's default ss, iops_slope:0.01% (options.c): off without ss_dur.
fn is_fio_default_ss(ss: &hiops_job::spec::SteadyState) -> bool {
    ss.metric == hiops_job::spec::SsMetric::Iops && ss.slope && ss.percent && ss.limit == 0.01
}
