//! The engine's own options, the devices a job may write, the task path
//! and the HIOPS path of a strategy, and fio's cmdprio.
use crate::error::FioError;
use crate::options::Draft;
use hiops_hal::EngineKind;
use hiops_job::{JobBuilder, PathSpec, QueueDepth, TargetSpec};
use hiops_safety::Grants;
use std::time::Duration;

impl Draft {
    /// The engine's own options; each refused with an engine that has
    /// no such option.
    pub(super) fn set_engine_options(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        let engine = spec.io.engine;
        let o = &mut spec.io.engine_opts;
        let hipri = self.hipri.unwrap_or(false);
        match engine {
            EngineKind::IoUring => o.iopoll = hipri,
            EngineKind::Pvsync2 => o.hipri = hipri,
            _ if hipri => {
                return Err(format!("hipri works with io_uring or pvsync2, not {engine}").into())
            }
            _ => {}
        }
        self.check_engine_flags(engine)?;
        self.set_engine_tuning(engine, spec.target.direct, o)?;
        o.psync_call = self.psync_call;
        o.nowait = self.nowait.unwrap_or(false);
        o.fixedbufs = self.fixedbufs.unwrap_or(false);
        o.registerfiles = self.registerfiles.unwrap_or(false);
        o.sqpoll = self.sqthread_poll.unwrap_or(false);
        o.sqpoll_cpu = self.sqthread_poll_cpu;
        o.sqpoll_idle_ms = self.sqthread_idle_ms.unwrap_or(1000);
        o.defer_taskrun = self.defer_taskrun.unwrap_or_default();
        o.coop_taskrun = self.coop_taskrun.unwrap_or_default();
        self.set_net(spec.io.engine, spec.workload.rw, o)?;
        o.net.splice = self.netsplice;
        self.set_e4defrag(engine, o)?;
        if o.iopoll && !spec.target.direct {
            return Err("hipri (IOPOLL) needs direct=1".into());
        }
        Ok(())
    }

    /// fio's net options: the net engine's socket, refused with other engines.
    fn set_net(
        &self,
        engine: EngineKind,
        rw: hiops_job::RwMode,
        o: &mut hiops_hal::EngineOptions,
    ) -> Result<(), FioError> {
        use hiops_hal::backends::net::NetProto;
        match (&self.net, engine) {
            (Some(_), EngineKind::Net) | (None, _) => {}
            (Some(_), _) => {
                return Err(format!("hostname, port, protocol, listen, pingpong, nodelay, window_size and mss are the net engine's, not {engine}'s: add ioengine=net or drop them").into())
            }
        }
        if engine != EngineKind::Net {
            return Ok(());
        }
        o.net = self.net.clone().unwrap_or_default();
        if o.net.proto == NetProto::Unix && o.net.host.is_empty() {
            return Err("protocol=unix needs hostname=PATH, the socket's path".into());
        }
        if o.net.proto != NetProto::Unix && o.net.port == 0 {
            return Err("ioengine=net needs port=N (and hostname= on the sending side)".into());
        }
        if o.net.proto != NetProto::Tcp {
            o.net.listen = datagram_receives(o.net.listen, rw)?;
        }
        Ok(())
    }

    /// fio's e4defrag options: the donor (fio: `directory/donorname`,
    /// required) and its preallocation over offset..filesize; refused
    /// with other engines.
    fn set_e4defrag(
        &self,
        engine: EngineKind,
        o: &mut hiops_hal::EngineOptions,
    ) -> Result<(), FioError> {
        let given = self.donorname.is_some() || self.inplace.is_some();
        if engine != EngineKind::E4defrag {
            if given {
                return Err(format!("donorname and inplace are the e4defrag engine's, not {engine}'s: add ioengine=e4defrag or drop them").into());
            }
            return Ok(());
        }
        let name = match self.donorname.as_deref() {
            Some(n) if !n.is_empty() => n,
            _ => return Err("ioengine=e4defrag needs donorname=FILE, the donor file whose blocks each write moves in (fio: 'donorname' options required)".into()),
        };
        let donor = match &self.directory {
            Some(dir) => std::path::PathBuf::from(format!("{}/{name}", dir.display())),
            None => std::path::PathBuf::from(name),
        };
        if std::fs::metadata(&donor).is_ok_and(|m| !m.is_file()) {
            return Err(format!("donorname {}: not a regular file; e4defrag writes its donor, so it must be a file (or not exist yet)", donor.display()).into());
        }
        o.e4defrag = hiops_hal::backends::e4defrag::E4defragOptions {
            donor,
            inplace: self.inplace.unwrap_or(false),
            start: self.offset.map_or(0, |a| a.fixed().get()),
            end: self.filesize.map(|b| b.get()),
        };
        Ok(())
    }

    /// fio's engine tunings, each refused (set to anything but its
    /// default) with an engine that has no such option.
    fn set_engine_tuning(
        &self,
        engine: EngineKind,
        direct: bool,
        o: &mut hiops_hal::EngineOptions,
    ) -> Result<(), FioError> {
        use EngineKind::{IoUring, Libaio, Pvsync2};
        let refuse = |name: &str, engines: &str| -> Result<(), FioError> {
            Err(format!(
                "{name} is {engines}'s: add ioengine={} or drop it",
                engines.split(' ').next().unwrap_or(engines)
            )
            .into())
        };
        if self.userspace_reap == Some(true) && engine != Libaio {
            return refuse("userspace_reap", "libaio");
        }
        if self.force_async.is_some_and(|n| n > 0) && engine != IoUring {
            return refuse("force_async", "io_uring");
        }
        if self.hipri_percentage.is_some_and(|p| p < 100) && engine != Pvsync2 {
            return refuse("hipri_percentage", "pvsync2");
        }
        if self.uncached == Some(true) && !matches!(engine, Pvsync2 | IoUring) {
            return refuse("uncached", "pvsync2 or io_uring");
        }
        o.aio_userspace_reap = self.userspace_reap.unwrap_or(false);
        o.force_async = self.force_async.unwrap_or(0);
        o.hipri_percentage = self.hipri_percentage;
        // fio sets the flag on buffered I/O only (engines/sync.c, io_uring.c).
        o.dontcache = self.uncached.unwrap_or(false) && !direct;
        Ok(())
    }

    /// io_uring's and pvsync2's flags are refused with other engines.
    pub(super) fn check_engine_flags(&self, engine: EngineKind) -> Result<(), FioError> {
        let uring_only = [
            ("fixedbufs", self.fixedbufs == Some(true)),
            ("registerfiles", self.registerfiles == Some(true)),
            ("sqthread_poll", self.sqthread_poll == Some(true)),
            ("defer_taskrun", self.defer_taskrun.is_some()),
            ("coop_taskrun", self.coop_taskrun.is_some()),
        ];
        if engine != EngineKind::IoUring {
            if let Some((flag, _)) = uring_only.iter().find(|(_, set)| *set) {
                return Err(format!(
                    "{flag} is an io_uring option: add ioengine=io_uring or drop it"
                )
                .into());
            }
        }
        if self.nowait == Some(true) && engine != EngineKind::Pvsync2 {
            return Err("nowait is a pvsync2 option: add ioengine=pvsync2 or drop it".into());
        }
        Ok(())
    }

    /// The devices the job may write to.
    pub(super) fn set_write_grants(&self, spec: &mut JobBuilder) {
        spec.target.allow_write_devices = self.allow_write_devices.clone();
        if self.allow_mounted_write {
            // The safety gate lifts "in use" only where --allow-write-device
            // names the device too.
            if let TargetSpec::Paths(p) = &spec.target.targets {
                spec.target
                    .allow_write_devices
                    .extend(p.iter().map(|p| Grants::mounted_entry(p)));
            }
        }
    }

    /// The task path's threads, and the shared HIOPS path of a strategy.
    pub(super) fn set_tasks_and_path(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        // strategy=tasks: numjobs counts tasks (so sweeps over threads and
        // strategies draw the task path beside the threads).
        let tasks = self
            .tasks
            .or(self.tasks_from_numjobs.then(|| self.numjobs.unwrap_or(1)));
        if let Some(tasks) = tasks {
            self.task_threads(spec, tasks)?;
        }
        if let Some(strategy) = self.strategy {
            if self.iodepth.is_none() && tasks.is_none() {
                spec.io.iodepth = QueueDepth::clamped(spec.numjobs.clamp(1, 4096).into());
            }
            spec.io.path = Some(self.path_spec(strategy, spec.numjobs, tasks));
        }
        Ok(())
    }

    pub(super) fn path_spec(
        &self,
        strategy: hiops_path::Strategy,
        threads: u32,
        tasks: Option<u32>,
    ) -> PathSpec {
        let defaults = hiops_path::HybridConfig::default();
        PathSpec {
            strategy,
            spin: Duration::from_nanos(self.spin.unwrap_or(0)),
            poll_interval: Duration::from_nanos(self.poll_interval.unwrap_or(16_000)),
            coop_peeks: self.coop_peeks.unwrap_or(true),
            coop_parts: self.coop_parts.unwrap_or_default(),
            coop_wait: self.coop_wait.unwrap_or_default(),
            rings: self.rings.unwrap_or(self.default_rings(strategy, threads)),
            hybrid: hiops_path::HybridConfig {
                poll_min_depth: self.hybrid_depth.unwrap_or(defaults.poll_min_depth),
                poll_min_iops: self.hybrid_iops.unwrap_or(defaults.poll_min_iops),
                ..defaults
            },
            tasks,
            task_poll_depth: self.hybrid_depth.map(|d| d as u32),
        }
    }

    /// The task path: tasks run on one thread per allowed CPU, each pinned to
    /// its CPU (thread per core), each with a ring of `iodepth` tags (by
    /// default as many as its tasks). Only coop serves tasks.
    /// Coop sleeping on its own completions shares a ring among a few
    /// threads; every other strategy has one ring unless told.
    pub(super) fn default_rings(&self, strategy: hiops_path::Strategy, threads: u32) -> u32 {
        if self.coop_shared {
            return 1;
        }
        let own = strategy == hiops_path::Strategy::Coop
            && self.coop_parts.unwrap_or_default() == hiops_path::CoopParts::All
            && self.coop_wait.unwrap_or_default() == hiops_path::CoopWait::Own
            && self.tasks.is_none()
            && !self.tasks_from_numjobs;
        if own {
            threads.div_ceil(hiops_path::COOP_THREADS_PER_RING).max(1)
        } else {
            1
        }
    }

    pub(super) fn task_threads(&self, spec: &mut JobBuilder, tasks: u32) -> Result<(), FioError> {
        match self.strategy {
            Some(hiops_path::Strategy::Coop) => {}
            None => return Err("--tasks runs the task path: add --strategy=coop".into()),
            Some(s) => {
                return Err(format!(
                    "--tasks runs tasks on the coop path; the {s} strategy serves threads: drop --tasks or use --strategy=coop"
                ).into())
            }
        }
        if self.numjobs.is_some() && !self.tasks_from_numjobs {
            return Err("--tasks sets the threads itself (one per allowed CPU): drop --numjobs, narrow them with --cpus_allowed".into());
        }
        // Thread per core: each thread pinned to one allowed CPU. A lone
        // thread (one task, or one CPU allowed) is left to the scheduler,
        // which runs it where the device's interrupt lands.
        let cpus = self
            .cpus_allowed
            .clone()
            .unwrap_or_else(hiops_stats::cpu::allowed_cpus);
        spec.numjobs = (cpus.len() as u32).min(tasks).max(1);
        if spec.numjobs > 1 || self.cpus_allowed.is_some() {
            spec.cpus_allowed = Some(cpus);
            spec.cpus_split = true;
        }
        if self.iodepth.is_none() {
            spec.io.iodepth =
                QueueDepth::clamped(tasks.div_ceil(spec.numjobs).clamp(1, 4096).into());
        }
        Ok(())
    }

    /// fio's cmdprio: the rules, on an engine that issues them itself.
    pub(super) fn set_cmdprio(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        // fio's ioprio_value (os/os-linux.h): class 0 is best effort.
        if self.prio.is_some() || self.prioclass.is_some() {
            let class = self.prioclass.filter(|&c| c != 0).unwrap_or(2);
            spec.io.ioprio = Some(hiops_hal::ioprio_value(class, self.prio.unwrap_or(0)));
        }
        let dirs = (spec.workload.rw.reads(), spec.workload.rw.writes());
        spec.io.cmdprio = self.cmdprio.plan(spec.io.engine, dirs, self.kb_base)?;
        if spec.io.cmdprio.is_some() && (spec.io.offload || spec.io.path.is_some()) {
            return Err("cmdprio_percentage and cmdprio_bssplit set priorities in the job's own io_uring or libaio queue: drop strategy, tasks or io_submit_mode=offload".into());
        }
        Ok(())
    }
}

/// fio 3.33's net.c for a protocol other than tcp: listen is refused, a
/// job reads or writes (not both), and the reading side is the one that
/// binds (fio_netio_setup's `o->listen = td_read(td)`).
fn datagram_receives(listen: bool, rw: hiops_job::RwMode) -> Result<bool, FioError> {
    if listen {
        return Err("listen is for protocol=tcp alone, as in fio 3.33: with udp or unix the job that reads (rw=read) binds the port; drop listen".into());
    }
    if rw.reads() && rw.writes() {
        return Err(format!("rw={}: a udp or unix net job reads or writes, not both (fio 3.33: datagram network connections must be read OR write); give rw=read or rw=write", rw.name()).into());
    }
    Ok(rw.reads())
}
