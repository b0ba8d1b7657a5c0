//! What a Fig 10 point measures beside YCSB: the machine's and the
//! server's CPU time and the store's devices' I/Os, before and after.

use hiops_report::figures::PointFigures;
use hiops_stats::cpu::{CpuSeconds, MachineSample, ProcessSample};
use hiops_stats::disk::DiskStats;

/// Each thread of this process with the kernel function it waits in
/// (`/proc/self/task/*/wchan`), for a server that stopped answering.
pub(super) fn thread_states() -> String {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return "unknown (no /proc)".into();
    };
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    let states: Vec<String> = tasks
        .flatten()
        .map(|t| {
            let comm = read(t.path().join("comm"));
            let wchan = read(t.path().join("wchan"));
            let wchan = if wchan.is_empty() || wchan == "0" {
                "running"
            } else {
                wchan.as_str()
            };
            format!("{}: {wchan}", comm.trim())
        })
        .collect();
    states.join(", ")
}

/// What the machine, this process (the server) and the store's device had
/// done at one moment.
pub(super) struct Sample {
    at: std::time::Instant,
    machine: Option<MachineSample>,
    server: ProcessSample,
    /// Each of the store's block devices.
    disks: Vec<Option<DiskStats>>,
}

impl Sample {
    pub(super) fn take(devices: &[String]) -> Sample {
        Sample {
            at: std::time::Instant::now(),
            machine: MachineSample::read(),
            server: ProcessSample::process(),
            disks: devices.iter().map(|d| DiskStats::read(d)).collect(),
        }
    }

    /// The point's platform figures over `ops` operations.
    pub(super) fn since(&self, e: &Sample, ops: f64) -> PointFigures {
        let secs = self.at.duration_since(e.at).as_secs_f64();
        let hz = hiops_stats::tsc::tsc_hz();
        let server = self.server.delta(&e.server);
        let device_ios: f64 = self
            .disks
            .iter()
            .zip(&e.disks)
            .filter_map(|(b, a)| Some(b.as_ref()?.delta(a.as_ref()?)))
            .map(|d| (d.reads + d.writes) as f64)
            .sum();
        let machine_clocks = self
            .machine
            .zip(e.machine)
            .map(|(b, a)| CpuSeconds::of_machine(&b.delta(&a)).total() * hz)
            .unwrap_or(0.0);
        let server_clocks = CpuSeconds::of_process(&server).total() * hz;
        let per = |x: f64, n: f64| if n > 0.0 { x / n } else { 0.0 };
        PointFigures {
            device_iops: Some(per(device_ios, secs)),
            machine_clocks_per_op: Some(per(machine_clocks, ops)),
            server_clocks_per_op: Some(per(server_clocks, ops)),
            machine_clocks_per_device_io: Some(per(machine_clocks, device_ios)),
            server_ctx_switches_per_op: Some(per(server.context_switches() as f64, ops)),
            ..PointFigures::default()
        }
    }
}
