//! The figures of one run point, typed: a reader that asks for a figure by
//! field fails to compile when the figure is renamed or gone, where a name
//! looked up in a map would print "-". Stored and read back as one flat
//! JSON object of the names docs/output.md lists (`iops`,
//! `layer_KEY_clocks_per_io`, `timeline_KEY_p99_us`, ...), so saved sweeps
//! keep loading.
//!
//! `PointFigures<T>` holds f64 for one point; the same shape holds a fold
//! over rounds (a median, a spread, a mean and deviation) of each figure.

use hiops_profile::Layer;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use std::collections::BTreeMap;
use std::fmt;

/// Defines [`PointFigures`]' scalar fields and [`Figure`], the name of each,
/// from one list, so the two cannot drift apart.
macro_rules! point_figures {
    ($( $(#[$doc:meta])* $field:ident => $variant:ident = $key:literal, )*) => {
        /// The figures of one point (a run, or a key-value store's phase);
        /// a figure its run could not give is None, never zero.
        #[derive(Clone, Debug, PartialEq)]
        pub struct PointFigures<T = f64> {
            $( $(#[$doc])* pub $field: Option<T>, )*
            /// Clocks per I/O by layer of the I/O path (`--profile`).
            pub layers: BTreeMap<Layer, LayerClocks<T>>,
            /// The gaps of the I/O's timeline (`--timeline`).
            pub timeline: BTreeMap<TimelineGap, GapFigures<T>>,
        }

        impl<T> Default for PointFigures<T> {
            fn default() -> Self {
                PointFigures {
                    $( $field: None, )*
                    layers: BTreeMap::new(),
                    timeline: BTreeMap::new(),
                }
            }
        }

        /// A scalar figure of a point: what a chart or a table column
        /// names generically.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Figure { $( $variant, )* }

        impl Figure {
            pub const ALL: &'static [Figure] = &[ $( Figure::$variant, )* ];

            /// Its name in saved points, CSV headers and docs/output.md.
            pub fn key(self) -> &'static str {
                match self { $( Figure::$variant => $key, )* }
            }
        }

        impl<T> PointFigures<T> {
            pub fn figure(&self, f: Figure) -> Option<&T> {
                match f { $( Figure::$variant => self.$field.as_ref(), )* }
            }

            pub fn figure_mut(&mut self, f: Figure) -> &mut Option<T> {
                match f { $( Figure::$variant => &mut self.$field, )* }
            }
        }
    };
}

point_figures! {
    /// I/Os per second, reads and writes (trims are in neither direction).
    iops => Iops = "iops",
    read_iops => ReadIops = "read_iops",
    write_iops => WriteIops = "write_iops",
    /// Bytes per second, in MB/s (10^6).
    bw_mbps => BwMbps = "bw_mbps",
    runtime_s => RuntimeS = "runtime_s",
    /// Completion latency of all I/O.
    lat_mean_us => LatMeanUs = "lat_mean_us",
    lat_p50_us => LatP50Us = "lat_p50_us",
    lat_p99_us => LatP99Us = "lat_p99_us",
    lat_p99_9_us => LatP99_9Us = "lat_p99_9_us",
    lat_max_us => LatMaxUs = "lat_max_us",
    /// Clocks per I/O of the whole machine.
    clocks_per_io => ClocksPerIo = "clocks_per_io",
    /// Clocks per I/O of hiops' own process.
    process_clocks_per_io => ProcessClocksPerIo = "process_clocks_per_io",
    cpu_busy_pct => CpuBusyPct = "cpu_busy_pct",
    irq_cpu_pct => IrqCpuPct = "irq_cpu_pct",
    steal_pct => StealPct = "steal_pct",
    ctx_per_io => CtxPerIo = "ctx_per_io",
    machine_ctx_per_io => MachineCtxPerIo = "machine_ctx_per_io",
    block_softirq_per_io => BlockSoftirqPerIo = "block_softirq_per_io",
    call_ipi_per_io => CallIpiPerIo = "call_ipi_per_io",
    resched_ipi_per_io => ReschedIpiPerIo = "resched_ipi_per_io",
    irq_us_per_interrupt => IrqUsPerInterrupt = "irq_us_per_interrupt",
    /// Device interrupts per I/O, over the devices with their own vectors.
    irq_per_io => IrqPerIo = "irq_per_io",
    /// How well `--profile`'s layers add up to the machine's busy time.
    profile_sum_gap_pct => ProfileSumGapPct = "profile_sum_gap_pct",
    profile_unsampled_clocks_per_io => ProfileUnsampledClocksPerIo = "profile_unsampled_clocks_per_io",
    profile_sampled_throughout_gap_pct => ProfileSampledThroughoutGapPct = "profile_sampled_throughout_gap_pct",
    profile_cost_pct => ProfileCostPct = "profile_cost_pct",
    /// The latency split of reads (or the first direction): device,
    /// application and platform.
    device_us => DeviceUs = "device_us",
    split_app_us => SplitAppUs = "split_app_us",
    platform_us => PlatformUs = "platform_us",
    /// 1 where the device time could not be split from the platform's.
    platform_not_split => PlatformNotSplit = "platform_not_split",
    /// 1 where the device time came from tracepoints, not diskstats.
    device_traced => DeviceTraced = "device_traced",
    diskstats_us => DiskstatsUs = "diskstats_us",
    /// Requests that reached the devices per I/O.
    device_ios_per_io => DeviceIosPerIo = "device_ios_per_io",
    /// Reads completed by the devices per read I/O: ~1 when each read
    /// reaches the device once, ~0 for page-cache hits.
    device_reads_per_io => DeviceReadsPerIo = "device_reads_per_io",
    /// `--timeline`: the I/Os followed, events lost, and 1 where nearly
    /// every completion was seen.
    timeline_ios => TimelineIos = "timeline_ios",
    timeline_lost => TimelineLost = "timeline_lost",
    timeline_completions_seen => TimelineCompletionsSeen = "timeline_completions_seen",
    /// fio's steady-state stop: 1 if it came, the rounds, when.
    ss_attained => SsAttained = "ss_attained",
    ss_rounds => SsRounds = "ss_rounds",
    ss_attained_at_s => SsAttainedAtS = "ss_attained_at_s",
    /// The HIOPS path's counters (synchronous-thread strategies).
    handoff_p50_us => HandoffP50Us = "handoff_p50_us",
    handoff_p99_us => HandoffP99Us = "handoff_p99_us",
    handoff_max_us => HandoffMaxUs = "handoff_max_us",
    completion_pass_p99_us => CompletionPassP99Us = "completion_pass_p99_us",
    completion_pass_max_us => CompletionPassMaxUs = "completion_pass_max_us",
    /// A point traced with `--irq_trace` (the suites' flag): the kernel's
    /// own handlers of the device's I/O vectors, entry to exit (µs), how
    /// many per I/O and their time per I/O, the interval between the
    /// device's successive completions, and trace records lost.
    irq_handler_max_us => IrqHandlerMaxUs = "irq_handler_max_us",
    irq_handler_p99_us => IrqHandlerP99Us = "irq_handler_p99_us",
    irq_handler_mean_us => IrqHandlerMeanUs = "irq_handler_mean_us",
    irq_handler_min_us => IrqHandlerMinUs = "irq_handler_min_us",
    irq_traced_per_io => IrqTracedPerIo = "irq_traced_per_io",
    irq_handler_us_per_io => IrqHandlerUsPerIo = "irq_handler_us_per_io",
    completion_interval_p50_us => CompletionIntervalP50Us = "completion_interval_p50_us",
    completion_interval_p99_us => CompletionIntervalP99Us = "completion_interval_p99_us",
    irq_trace_lost => IrqTraceLost = "irq_trace_lost",
    wakeups_per_io => WakeupsPerIo = "wakeups_per_io",
    polls_per_io => PollsPerIo = "polls_per_io",
    empty_poll_share => EmptyPollShare = "empty_poll_share",
    reaped_for_others_share => ReapedForOthersShare = "reaped_for_others_share",
    /// A key-value store's point (`hiops kv`): operations per second,
    /// the store's records, reads served by its RAM cache.
    ops_per_s => OpsPerS = "ops_per_s",
    records => Records = "records",
    hit_pct => HitPct = "hit_pct",
    /// The store's devices' I/Os per second over the phase.
    device_iops => DeviceIops = "device_iops",
    update_p99_us => UpdateP99Us = "update_p99_us",
    warmup_s => WarmupS = "warmup_s",
    cache_full_pct => CacheFullPct = "cache_full_pct",
    machine_clocks_per_op => MachineClocksPerOp = "machine_clocks_per_op",
    server_clocks_per_op => ServerClocksPerOp = "server_clocks_per_op",
    machine_clocks_per_device_io => MachineClocksPerDeviceIo = "machine_clocks_per_device_io",
    server_ctx_switches_per_op => ServerCtxSwitchesPerOp = "server_ctx_switches_per_op",
}

/// One layer's clocks per I/O: the whole machine's and hiops' own threads'.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerClocks<T = f64> {
    pub machine: Option<T>,
    pub process: Option<T>,
}

impl<T> Default for LayerClocks<T> {
    fn default() -> Self {
        LayerClocks {
            machine: None,
            process: None,
        }
    }
}

/// The gaps of an I/O's timeline, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimelineGap {
    SyscallToBlock,
    BlockToIssue,
    Device,
    CompletionToReturn,
    Total,
}

impl TimelineGap {
    pub const ALL: [TimelineGap; 5] = [
        TimelineGap::SyscallToBlock,
        TimelineGap::BlockToIssue,
        TimelineGap::Device,
        TimelineGap::CompletionToReturn,
        TimelineGap::Total,
    ];

    /// Its name in `timeline_KEY_p99_us`.
    pub fn key(self) -> &'static str {
        match self {
            TimelineGap::SyscallToBlock => "syscall_to_block",
            TimelineGap::BlockToIssue => "block_to_issue",
            TimelineGap::Device => "device",
            TimelineGap::CompletionToReturn => "completion_to_return",
            TimelineGap::Total => "total",
        }
    }

    /// The gaps that end or start at the device's completion.
    pub fn at_completion(self) -> bool {
        matches!(self, TimelineGap::Device | TimelineGap::CompletionToReturn)
    }
}

/// One timeline gap's distribution, in µs.
#[derive(Clone, Debug, PartialEq)]
pub struct GapFigures<T = f64> {
    pub mean_us: Option<T>,
    pub p50_us: Option<T>,
    pub p99_us: Option<T>,
}

impl<T> Default for GapFigures<T> {
    fn default() -> Self {
        GapFigures {
            mean_us: None,
            p50_us: None,
            p99_us: None,
        }
    }
}

/// Which of a layer's clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LayerView {
    Machine,
    Process,
}

/// Which statistic of a timeline gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GapStat {
    Mean,
    P50,
    P99,
}

impl GapStat {
    const ALL: [GapStat; 3] = [GapStat::Mean, GapStat::P50, GapStat::P99];

    fn key(self) -> &'static str {
        match self {
            GapStat::Mean => "mean",
            GapStat::P50 => "p50",
            GapStat::P99 => "p99",
        }
    }
}

/// Any figure of a point, for code that treats them all alike (folding
/// rounds, saving and loading).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FigureKey {
    Scalar(Figure),
    Layer(Layer, LayerView),
    Gap(TimelineGap, GapStat),
}

impl FigureKey {
    /// Its name in saved points (docs/output.md).
    pub fn name(self) -> String {
        match self {
            FigureKey::Scalar(f) => f.key().to_string(),
            FigureKey::Layer(l, LayerView::Machine) => format!("layer_{}_clocks_per_io", l.key()),
            FigureKey::Layer(l, LayerView::Process) => {
                format!("layer_{}_process_clocks_per_io", l.key())
            }
            FigureKey::Gap(g, s) => format!("timeline_{}_{}_us", g.key(), s.key()),
        }
    }

    /// The figure a saved name stands for; None for a name no hiops wrote.
    pub fn parse(name: &str) -> Option<FigureKey> {
        if let Some(f) = Figure::ALL.iter().find(|f| f.key() == name) {
            return Some(FigureKey::Scalar(*f));
        }
        if let Some(rest) = name.strip_prefix("layer_") {
            let view = |l: Layer| {
                let tail = rest.strip_prefix(l.key())?;
                match tail {
                    "_clocks_per_io" => Some(LayerView::Machine),
                    "_process_clocks_per_io" => Some(LayerView::Process),
                    _ => None,
                }
            };
            return Layer::ALL
                .into_iter()
                .find_map(|l| Some(FigureKey::Layer(l, view(l)?)));
        }
        let rest = name.strip_prefix("timeline_")?.strip_suffix("_us")?;
        TimelineGap::ALL.into_iter().find_map(|g| {
            let stat = rest.strip_prefix(g.key())?.strip_prefix('_')?;
            let s = GapStat::ALL.into_iter().find(|s| s.key() == stat)?;
            Some(FigureKey::Gap(g, s))
        })
    }
}

impl<T> PointFigures<T> {
    /// Every figure the point has, with its key.
    pub fn entries(&self) -> Vec<(FigureKey, &T)> {
        let scalars = Figure::ALL
            .iter()
            .filter_map(|&f| Some((FigureKey::Scalar(f), self.figure(f)?)));
        let layers = self.layers.iter().flat_map(|(&l, c)| {
            [
                (LayerView::Machine, &c.machine),
                (LayerView::Process, &c.process),
            ]
            .into_iter()
            .filter_map(move |(v, x)| Some((FigureKey::Layer(l, v), x.as_ref()?)))
        });
        let gaps = self.timeline.iter().flat_map(|(&g, f)| {
            [
                (GapStat::Mean, &f.mean_us),
                (GapStat::P50, &f.p50_us),
                (GapStat::P99, &f.p99_us),
            ]
            .into_iter()
            .filter_map(move |(s, x)| Some((FigureKey::Gap(g, s), x.as_ref()?)))
        });
        scalars.chain(layers).chain(gaps).collect()
    }

    pub fn get(&self, key: FigureKey) -> Option<&T> {
        match key {
            FigureKey::Scalar(f) => self.figure(f),
            FigureKey::Layer(l, v) => {
                let c = self.layers.get(&l)?;
                match v {
                    LayerView::Machine => c.machine.as_ref(),
                    LayerView::Process => c.process.as_ref(),
                }
            }
            FigureKey::Gap(g, s) => {
                let f = self.timeline.get(&g)?;
                match s {
                    GapStat::Mean => f.mean_us.as_ref(),
                    GapStat::P50 => f.p50_us.as_ref(),
                    GapStat::P99 => f.p99_us.as_ref(),
                }
            }
        }
    }

    pub fn set(&mut self, key: FigureKey, value: T) {
        let slot = match key {
            FigureKey::Scalar(f) => self.figure_mut(f),
            FigureKey::Layer(l, v) => {
                let c = self.layers.entry(l).or_default();
                match v {
                    LayerView::Machine => &mut c.machine,
                    LayerView::Process => &mut c.process,
                }
            }
            FigureKey::Gap(g, s) => {
                let f = self.timeline.entry(g).or_default();
                match s {
                    GapStat::Mean => &mut f.mean_us,
                    GapStat::P50 => &mut f.p50_us,
                    GapStat::P99 => &mut f.p99_us,
                }
            }
        };
        *slot = Some(value);
    }

    /// A layer's clocks per I/O on the whole machine.
    pub fn layer_clocks(&self, layer: Layer) -> Option<&T> {
        self.layers.get(&layer)?.machine.as_ref()
    }

    /// One statistic of a timeline gap.
    pub fn gap(&self, gap: TimelineGap, stat: GapStat) -> Option<&T> {
        self.get(FigureKey::Gap(gap, stat))
    }

    /// Each figure turned into another (a mean and deviation into text,
    /// a median into an estimate).
    pub fn map<U>(&self, f: impl Fn(&T) -> U) -> PointFigures<U> {
        let mut out = PointFigures::default();
        for (k, v) in self.entries() {
            out.set(k, f(v));
        }
        out
    }

    /// Each figure folded over several points (rounds of one grid point):
    /// `fold` takes the values of the points that have the figure.
    pub fn fold<U>(
        points: &[&PointFigures<T>],
        fold: impl Fn(Vec<T>) -> Option<U>,
    ) -> PointFigures<U>
    where
        T: Clone,
    {
        let mut keys: Vec<FigureKey> = points
            .iter()
            .flat_map(|p| p.entries().into_iter().map(|(k, _)| k))
            .collect();
        keys.sort();
        keys.dedup();
        let mut out = PointFigures::default();
        for k in keys {
            let values = points.iter().filter_map(|p| p.get(k).cloned()).collect();
            if let Some(v) = fold(values) {
                out.set(k, v);
            }
        }
        out
    }
}

/// A flat object of named figures, sorted by name as the maps of older
/// hiops wrote them.
impl serde::Serialize for PointFigures<f64> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut named: Vec<(String, f64)> = self
            .entries()
            .into_iter()
            .map(|(k, v)| (k.name(), *v))
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let mut map = s.serialize_map(Some(named.len()))?;
        for (k, v) in &named {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for PointFigures<f64> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FiguresVisitor)
    }
}

struct FiguresVisitor;

impl<'de> Visitor<'de> for FiguresVisitor {
    type Value = PointFigures<f64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of named figures")
    }

    /// A name no hiops of today writes is passed over: no reader asks for it.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = PointFigures::default();
        while let Some((name, value)) = map.next_entry::<String, f64>()? {
            if let Some(k) = FigureKey::parse(&name) {
                out.set(k, value);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_key() -> Vec<FigureKey> {
        let scalars = Figure::ALL.iter().map(|&f| FigureKey::Scalar(f));
        let layers = Layer::ALL
            .into_iter()
            .flat_map(|l| [LayerView::Machine, LayerView::Process].map(|v| FigureKey::Layer(l, v)));
        let gaps = TimelineGap::ALL
            .into_iter()
            .flat_map(|g| GapStat::ALL.map(|s| FigureKey::Gap(g, s)));
        scalars.chain(layers).chain(gaps).collect()
    }

    #[test]
    fn every_name_reads_back_as_its_figure_and_no_two_share_a_name() {
        let keys = every_key();
        let mut names: Vec<String> = keys.iter().map(|k| k.name()).collect();
        for (k, n) in keys.iter().zip(&names) {
            assert_eq!(FigureKey::parse(n), Some(*k), "{n}");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), keys.len());
        assert_eq!(FigureKey::parse("layer_nowhere_clocks_per_io"), None);
        assert_eq!(FigureKey::parse("timeline_device_p42_us"), None);
    }

    #[test]
    fn a_fold_takes_each_figure_over_the_points_that_have_it() {
        let mut a = PointFigures {
            iops: Some(10.0),
            ..PointFigures::default()
        };
        a.set(FigureKey::Layer(Layer::Block, LayerView::Machine), 4.0);
        let b = PointFigures {
            iops: Some(30.0),
            clocks_per_io: Some(7.0),
            ..PointFigures::default()
        };
        let sum = PointFigures::fold(&[&a, &b], |v| Some(v.iter().sum::<f64>()));
        assert_eq!(sum.iops, Some(40.0));
        assert_eq!(sum.clocks_per_io, Some(7.0));
        assert_eq!(sum.layer_clocks(Layer::Block), Some(&4.0));
        assert_eq!(sum.layers[&Layer::Block].process, None);
        assert_eq!(sum.lat_p99_us, None);
    }
}
