//! fio's per-thread setup in the plan: nice, uid, gid, lockmem,
//! ioscheduler and the exec commands go to the spec as given; NUMA nodes
//! and gtod_cpu become the threads' CPUs and memory policy, checked
//! against this machine's nodes and CPUs (fio 3.33 backend.c, thread_main).

use crate::error::FioError;
use crate::options::{Draft, MemPolicyGiven};
use hiops_job::spec::MemPolicy;
use hiops_job::JobBuilder;
use std::path::Path;

/// Where the kernel lists NUMA nodes (one `nodeN` directory each).
const NODES: &str = "/sys/devices/system/node";

impl Draft {
    /// After the job's CPUs are set: numa_cpu_nodes takes their place (fio
    /// runs the thread on the nodes' CPUs after its cpus_allowed), and
    /// gtod_cpu is left out of a cpus_allowed.
    pub(super) fn set_thread_setup(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        spec.thread = self.thread_setup.clone();
        spec.thread.cgroup = self.cgroup.clone().map(|name| hiops_job::spec::CgroupSpec {
            name,
            weight: self.cgroup_weight,
            nodelete: self.cgroup_nodelete,
        });
        if let Some(given) = &self.numa_mem_policy {
            spec.thread.mem_policy = Some(mem_policy(given)?);
        }
        if let Some(nodes) = &self.numa_cpu_nodes {
            let nodes = existing(nodes.as_deref())?;
            spec.cpus_allowed = Some(cpus_of(&nodes)?);
            spec.cpus_split = false;
        }
        let Some(cpu) = self.gtod_cpu.filter(|&c| c != 0) else {
            return Ok(());
        };
        let online = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cpu >= online {
            return Err(format!("gtod_cpu={cpu}: this machine has CPUs 0-{}", online - 1).into());
        }
        if let Some(cpus) = spec.cpus_allowed.as_mut() {
            cpus.retain(|&c| c != cpu);
            if cpus.is_empty() {
                return Err(format!("gtod_cpu={cpu} was the job's only CPU (fio leaves it out of cpus_allowed): allow the job another").into());
            }
        }
        Ok(())
    }
}

impl Draft {
    /// fio's mem=mmap:FILE: the buffers of each thread's own queue.
    pub(super) fn set_buffer_file(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        let Some(file) = &self.buffer_file else {
            return Ok(());
        };
        if spec.io.path.is_some() || spec.io.offload {
            return Err(format!("mem=...:{} maps the buffers of each thread's own queue: drop --strategy, --tasks and io_submit_mode=offload, or the file", file.path.display()).into());
        }
        spec.io.buffer_file = Some(file.clone());
        Ok(())
    }
}

/// The policy with its nodes: `all` is every node with memory.
fn mem_policy(given: &MemPolicyGiven) -> Result<MemPolicy, FioError> {
    Ok(match given {
        MemPolicyGiven::Default => MemPolicy::Default,
        MemPolicyGiven::Local => MemPolicy::Local,
        MemPolicyGiven::Prefer(n) => MemPolicy::Prefer(existing(Some(&[*n][..]))?[0]),
        MemPolicyGiven::Bind(list) => MemPolicy::Bind(existing(list.as_deref())?),
        MemPolicyGiven::Interleave(list) => MemPolicy::Interleave(existing(list.as_deref())?),
    })
}

/// The nodes named (`None`: every node with memory), each checked to be
/// one of this machine's.
fn existing(nodes: Option<&[u32]>) -> Result<Vec<u32>, FioError> {
    let root = Path::new(NODES);
    if !root.exists() {
        return Err(format!("this kernel has no NUMA nodes ({NODES} is absent): drop numa_cpu_nodes and numa_mem_policy").into());
    }
    let Some(nodes) = nodes else {
        let list = std::fs::read_to_string(root.join("has_memory"))
            .or_else(|_| std::fs::read_to_string(root.join("online")))
            .map_err(|e| format!("{NODES}: {e}"))?;
        let all = hiops_stats::cpu::parse_cpu_list(list.trim()).map_err(|e| e.to_string())?;
        return Ok(all.into_iter().map(|n| n as u32).collect());
    };
    if let Some(n) = nodes
        .iter()
        .find(|n| !root.join(format!("node{n}")).exists())
    {
        let online = std::fs::read_to_string(root.join("online")).unwrap_or_default();
        return Err(format!(
            "NUMA node {n} is not one of this machine's (nodes {})",
            online.trim()
        )
        .into());
    }
    Ok(nodes.to_vec())
}

/// Every CPU of the nodes, in order.
fn cpus_of(nodes: &[u32]) -> Result<Vec<usize>, FioError> {
    let mut cpus = Vec::new();
    for n in nodes {
        let path = Path::new(NODES).join(format!("node{n}/cpulist"));
        let list =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        cpus.extend(hiops_stats::cpu::parse_cpu_list(list.trim()).map_err(|e| e.to_string())?);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(format!("NUMA nodes {nodes:?} have no CPUs: name a node with CPUs").into());
    }
    Ok(cpus)
}
