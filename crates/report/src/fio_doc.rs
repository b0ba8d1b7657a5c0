//! fio's JSON document read back typed: the jobs, their directions and
//! latencies, and the disks, as fio 3.33's stat.c writes them and hiops'
//! [`crate::json`] does. What is read from a result (fio's terse lines)
//! reads these fields, never a key looked up by its name.
//!
//! Every field may be absent or null (a document of another fio, a
//! direction without I/O): it reads as zero or empty. Counts written as floats by other
//! tools read truncated, negatives as zero.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// A whole document (one process's result).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct FioDoc {
    pub jobs: Vec<FioJob>,
    pub disk_util: Vec<DiskUtil>,
    /// hiops' own figures of the run (absent in fio's documents).
    pub hiops: Option<HiopsRun>,
}

/// What hiops adds to a whole run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct HiopsRun {
    pub machine: Option<Machine>,
}

/// The machine's cost over the run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Machine {
    /// Machine clocks (every CPU's busy time x the TSC rate) per I/O.
    pub clocks_per_io: Option<f64>,
}

/// One job (or reporting group).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct FioJob {
    #[serde(deserialize_with = "text")]
    pub jobname: String,
    #[serde(deserialize_with = "count")]
    pub groupid: u64,
    #[serde(deserialize_with = "count")]
    pub error: u64,
    #[serde(deserialize_with = "text")]
    pub job_description: String,
    pub read: Option<Direction>,
    pub write: Option<Direction>,
    pub trim: Option<Direction>,
    pub mixed: Option<Direction>,
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    #[serde(deserialize_with = "count")]
    pub ctx: u64,
    #[serde(deserialize_with = "count")]
    pub majf: u64,
    #[serde(deserialize_with = "count")]
    pub minf: u64,
    /// fio's flushes: how many, and their latency.
    pub sync: Option<Flushes>,
    /// Zones reset under zonemode=zbd (absent without it).
    #[serde(default)]
    pub zone_resets: u64,
    /// Share of commands (%) by the depth they were issued at.
    pub iodepth_level: BTreeMap<String, f64>,
    /// Share of submissions and reaps (%) by how many commands each took.
    pub iodepth_submit: BTreeMap<String, f64>,
    pub iodepth_complete: BTreeMap<String, f64>,
    /// Share of I/Os (%) by latency bucket, ns, µs and ms.
    pub latency_ns: BTreeMap<String, f64>,
    pub latency_us: BTreeMap<String, f64>,
    pub latency_ms: BTreeMap<String, f64>,
    /// fio's latency target (`latency_target`, its window, percentile and
    /// the depth it settled at).
    #[serde(deserialize_with = "count")]
    pub latency_depth: u64,
    #[serde(deserialize_with = "count")]
    pub latency_target: u64,
    #[serde(deserialize_with = "count")]
    pub latency_window: u64,
    pub latency_percentile: f64,
    /// The steady state a job watched for (`ss`), where it did.
    pub steadystate: Option<SteadyState>,
    /// The errors gone past, where the job continues on errors.
    #[serde(deserialize_with = "some_count")]
    pub total_err: Option<u64>,
    #[serde(deserialize_with = "count")]
    pub first_error: u64,
    /// fio's block_error_percentiles: trims per block at each percentile
    /// and the blocks in each state.
    pub block: Option<BlockInfo>,
    /// hiops' own figures of the job (absent in fio's documents).
    pub hiops: Option<HiopsJob>,
}

/// fio's `block` object (keys as fio writes them: percentiles as
/// "1.000000", states by name).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct BlockInfo {
    pub percentiles: BTreeMap<String, u64>,
    pub states: BTreeMap<String, u64>,
}

/// What hiops adds to a job that decides how fio would have shown it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct HiopsJob {
    /// The engine as hiops names it ("psync (pread/pwrite)", ...).
    pub engine: Option<String>,
    #[serde(deserialize_with = "some_count")]
    pub effective_iodepth: Option<u64>,
    /// What the job was doing when it failed (fio's `func`).
    pub failed_in: Option<String>,
    /// The job's errors, in words.
    #[serde(deserialize_with = "texts")]
    pub errors: Vec<String>,
    /// What verification found.
    pub verify: Option<Verified>,
}

/// What a job's verification found.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Verified {
    #[serde(deserialize_with = "count")]
    pub bad_blocks: u64,
}

/// fio's `sync` of a job: flushes counted and their latency.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Flushes {
    #[serde(deserialize_with = "count")]
    pub total_ios: u64,
    pub lat_ns: Latency,
}

/// fio's `steadystate` of a job that watched for one.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SteadyState {
    /// The criterion's name (`iops`, `bw_slope`, ...).
    pub ss: Option<String>,
    #[serde(deserialize_with = "count")]
    pub attained: u64,
    /// The criterion's limit as fio writes it (`"20.000000%"`).
    #[serde(deserialize_with = "text")]
    pub criterion: String,
    pub data: SteadyData,
}

/// The means of a steady state's window.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SteadyData {
    #[serde(deserialize_with = "count")]
    pub bw_mean: u64,
    #[serde(deserialize_with = "count")]
    pub iops_mean: u64,
}

/// One direction's figures.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Direction {
    #[serde(deserialize_with = "count")]
    pub io_bytes: u64,
    #[serde(deserialize_with = "count")]
    pub total_ios: u64,
    #[serde(deserialize_with = "count")]
    pub short_ios: u64,
    #[serde(deserialize_with = "count")]
    pub drop_ios: u64,
    /// ms.
    #[serde(deserialize_with = "count")]
    pub runtime: u64,
    pub iops: f64,
    /// KiB/s.
    #[serde(deserialize_with = "count")]
    pub bw: u64,
    pub slat_ns: Latency,
    pub clat_ns: Latency,
    pub lat_ns: Latency,
    #[serde(deserialize_with = "count")]
    pub bw_min: u64,
    #[serde(deserialize_with = "count")]
    pub bw_max: u64,
    pub bw_agg: f64,
    pub bw_mean: f64,
    pub bw_dev: f64,
    #[serde(deserialize_with = "count")]
    pub bw_samples: u64,
    #[serde(deserialize_with = "count")]
    pub iops_min: u64,
    #[serde(deserialize_with = "count")]
    pub iops_max: u64,
    pub iops_mean: f64,
    pub iops_stddev: f64,
    #[serde(deserialize_with = "count")]
    pub iops_samples: u64,
    /// Latency by I/O priority, where two or more priorities saw I/O.
    pub prios: Vec<Prio>,
}

/// One I/O priority's latency: lat's where lat percentiles are shown,
/// else clat's.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Prio {
    #[serde(deserialize_with = "count")]
    pub prioclass: u64,
    #[serde(deserialize_with = "count")]
    pub prio: u64,
    pub clat_ns: Option<Latency>,
    pub lat_ns: Option<Latency>,
}

/// A latency's statistics (ns).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Latency {
    #[serde(deserialize_with = "count")]
    pub min: u64,
    #[serde(deserialize_with = "count")]
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    #[serde(rename = "N", deserialize_with = "count")]
    pub n: u64,
    /// Where shown: the latency (ns) at each percentile, keyed as fio
    /// writes them ("99.900000").
    pub percentile: Option<BTreeMap<String, Count>>,
}

impl Latency {
    /// The latency (ns) at percentile `p`, where it is shown.
    pub fn at(&self, p: f64) -> Option<u64> {
        (self.percentiles().into_iter())
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|(_, ns)| ns)
    }

    /// The percentiles as numbers, in ascending order (none if not shown).
    pub fn percentiles(&self) -> Vec<(f64, u64)> {
        let mut points: Vec<(f64, u64)> = (self.percentile.iter().flatten())
            .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.0)))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        points
    }
}

/// One disk's counters.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct DiskUtil {
    #[serde(deserialize_with = "text")]
    pub name: String,
    #[serde(deserialize_with = "count")]
    pub read_ios: u64,
    #[serde(deserialize_with = "count")]
    pub write_ios: u64,
    #[serde(deserialize_with = "count")]
    pub read_merges: u64,
    #[serde(deserialize_with = "count")]
    pub write_merges: u64,
    #[serde(deserialize_with = "count")]
    pub read_ticks: u64,
    #[serde(deserialize_with = "count")]
    pub write_ticks: u64,
    #[serde(deserialize_with = "count")]
    pub in_queue: u64,
    pub util: f64,
}

impl DiskUtil {
    /// The counters in the order of fio's JSON and terse output
    /// ([`crate::json::DISK_COUNTERS`]).
    pub fn counters(&self) -> [u64; 7] {
        [
            self.read_ios,
            self.write_ios,
            self.read_merges,
            self.write_merges,
            self.read_ticks,
            self.write_ticks,
            self.in_queue,
        ]
    }
}

/// A count that may have been written as a float.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count(pub u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
        count(d).map(Count)
    }
}

/// A count from an integer or a float (truncated; negatives and null 0).
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(v.as_u64()
        .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0))
}

/// A string, null read as empty.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Strings, null read as none.
fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

fn some_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    count(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_fields_read_as_zero_and_float_counts_truncated() {
        let doc: FioDoc = serde_json::from_value(json!({
            "jobs": [{"jobname": "j", "read": {"io_bytes": 4096.9, "bw_min": -3,
                "clat_ns": {"N": 2, "percentile": {"99.000000": 120.0, "1.000000": 5}}}}]
        }))
        .unwrap();
        let job = &doc.jobs[0];
        let read = job.read.as_ref().unwrap();
        assert_eq!((read.io_bytes, read.bw_min, read.total_ios), (4096, 0, 0));
        assert_eq!(read.clat_ns.percentiles(), [(1.0, 5), (99.0, 120)]);
        assert!(job.write.is_none() && job.total_err.is_none() && job.hiops.is_none());
        assert!(read.lat_ns.percentile.is_none());
    }

    #[test]
    fn a_document_hiops_writes_reads_back_with_its_figures() {
        let jobs = [hiops_bench::JobBuilder::default_for("unused".into())
            .build()
            .unwrap()];
        let r = hiops_bench::RunResult::not_run(jobs.to_vec());
        let v = crate::json::to_fio_json(&r, false);
        let doc: FioDoc = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(doc.jobs.len(), v["jobs"].as_array().unwrap().len());
        assert_eq!(
            doc.jobs[0].jobname,
            v["jobs"][0]["jobname"].as_str().unwrap()
        );
        assert!(doc.jobs[0].read.is_some());
    }
}
