//! How a job was given, for the report.

/// What the report needs to know about how a job was given (job files).
#[derive(Clone, Debug)]
pub struct JobMeta {
    pub description: Option<String>,
    /// The job's own options as written, for fio's `"job options"`.
    pub options: Vec<(String, String)>,
    /// fio's group (stonewall / new_group start a new one).
    pub group: u32,
    /// Report the job's threads merged (fio's group_reporting).
    pub group_reporting: bool,
    /// fio's `thread`: fio runs the job's clones as threads, not as the
    /// processes it forks by default (hiops runs threads either way; the
    /// fio-format report says which fio would have started).
    pub thread: bool,
    /// fio's stats=0 clears it: the job runs, the report leaves it out.
    pub reported: bool,
    /// Completion-latency percentiles to report (fio's percentile_list).
    pub percentiles: Option<Vec<f64>>,
    /// Options that were ignored with --ignore-unsupported.
    pub ignored: Vec<String>,
    /// fio's unified_rw_reporting.
    pub unified_rw: UnifiedRw,
    /// Which latencies the report gives percentiles for.
    pub shown_percentiles: LatPercentiles,
    /// fio's block_error_percentiles: each trim-sized block's trims and
    /// state, reported as percentiles of trims per block.
    pub block_error_percentiles: bool,
}

impl Default for JobMeta {
    /// A job reported alone in group 0, with fio's default percentiles.
    fn default() -> Self {
        JobMeta {
            description: None,
            options: Vec::new(),
            group: 0,
            group_reporting: false,
            thread: false,
            reported: true,
            percentiles: None,
            ignored: Vec::new(),
            unified_rw: UnifiedRw::default(),
            shown_percentiles: LatPercentiles::default(),
            block_error_percentiles: false,
        }
    }
}

/// fio's slat_percentiles, clat_percentiles and lat_percentiles: which
/// latencies get percentiles (and json+ bins) in the report; clat's alone
/// by default, as in fio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatPercentiles {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
}

impl Default for LatPercentiles {
    fn default() -> Self {
        LatPercentiles {
            slat: false,
            clat: true,
            lat: false,
        }
    }
}

/// fio's unified_rw_reporting: reads, writes and trims reported apart (its
/// default), summed into one "mixed" direction, or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnifiedRw {
    #[default]
    Apart,
    Mixed,
    Both,
}
