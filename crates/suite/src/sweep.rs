//! A sweep: one workload run across the values of one or more parameters,
//! kept point by point in a directory so an interrupted sweep continues
//! where it stopped.
//!
//! Layout of a sweep directory:
//! - `sweep.json`: the definition (base options, parameters, rounds);
//! - `points.jsonl`: one finished point per line, appended and synced as
//!   each point ends, so a crash loses at most the point in flight;
//! - `raw/NNNN.json`: each point's full fio-schema JSON.

use crate::SuiteError;
use hiops_bench::safety::{create_output, Grants, OutputError, OutputMode};
use hiops_report::figures::PointFigures;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// One swept parameter: a `hiops run` option and the values it takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub values: Vec<String>,
}

impl Param {
    /// `numjobs=1,2,4` as on the command line.
    pub fn parse(text: &str) -> Result<Param, SuiteError> {
        let (name, values) = text
            .split_once('=')
            .ok_or_else(|| SuiteError::ParamForm { text: text.into() })?;
        let name = name.trim().trim_start_matches("--").to_string();
        let values: Vec<String> = values
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if name.is_empty() || values.is_empty() {
            return Err(SuiteError::ParamEmpty { text: text.into() });
        }
        Ok(Param { name, values })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepDef {
    pub title: String,
    /// `hiops run` options every point shares (`--key=value`).
    pub base: Vec<String>,
    /// The grid; the first parameter is the x axis of the plots.
    pub params: Vec<Param>,
    /// Rounds over the whole grid. Points of one round run back to back, so
    /// with several rounds each point's neighbours alternate and a noisy
    /// neighbour hurts every point alike; the report takes the median.
    pub rounds: u32,
}

/// Which point: a round and one value per parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PointKey {
    pub round: u32,
    pub values: Vec<String>,
}

impl SweepDef {
    /// Every point in run order: round by round; within a round the grid
    /// starts one step later than in the round before (A B C, B C A, ...).
    pub fn points(&self) -> Vec<PointKey> {
        let mut grid: Vec<Vec<String>> = vec![Vec::new()];
        for p in &self.params {
            grid = grid
                .into_iter()
                .flat_map(|prefix| {
                    p.values.iter().map(move |v| {
                        let mut k = prefix.clone();
                        k.push(v.clone());
                        k
                    })
                })
                .collect();
        }
        let n = grid.len();
        let keys: Vec<PointKey> = (0..self.rounds.max(1))
            .flat_map(|r| {
                let grid = &grid;
                (0..n).map(move |i| PointKey {
                    round: r,
                    values: grid[(i + r as usize) % n].clone(),
                })
            })
            .collect();
        assert_eq!(
            keys.len(),
            n * self.rounds.max(1) as usize,
            "every round runs every grid point once"
        );
        keys
    }

    /// The grid points in order (one round's values).
    pub fn grid(&self) -> Vec<Vec<String>> {
        self.points()
            .into_iter()
            .filter(|k| k.round == 0)
            .map(|k| k.values)
            .collect()
    }

    /// The `hiops run` options of a point: the base, then each parameter
    /// (a later option overrides an earlier one, as in fio). A base of
    /// several jobs (`--name=...` sections) takes the parameters with its
    /// global options, before the first `--name`, so they apply to every
    /// job, as a `[global]` option does in fio.
    pub fn args_for(&self, key: &PointKey) -> Vec<String> {
        assert_eq!(
            key.values.len(),
            self.params.len(),
            "a point of this sweep has a value for each of its parameters"
        );
        let first_job = self
            .base
            .iter()
            .position(|a| a == "--name" || a.starts_with("--name="))
            .unwrap_or(self.base.len());
        let mut args = self.base[..first_job].to_vec();
        for (p, v) in self.params.iter().zip(&key.values) {
            args.push(format!("--{}={v}", p.name));
        }
        args.extend_from_slice(&self.base[first_job..]);
        args
    }

    pub fn label(&self, values: &[String]) -> String {
        self.params
            .iter()
            .zip(values)
            .map(|(p, v)| format!("{}={v}", p.name))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What one point measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub round: u32,
    pub values: Vec<String>,
    /// [`hiops_report::derived::point_metrics`] of the run.
    pub metrics: PointFigures,
    /// Completion latency CDF: (percentile, µs).
    pub cdf: Vec<(f64, f64)>,
    /// IOPS per second of the measured window: (s, IOPS).
    pub series: Vec<(f64, f64)>,
    /// Completion latency histogram: (bucket's upper bound in µs, % of
    /// I/Os), quarter-octave buckets. Absent in points of older hiops.
    #[serde(default)]
    pub hist: Vec<(f64, f64)>,
    /// What the runner says of the point in words (which interrupts
    /// followed its CPUs, or why none did). Absent in older points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Point {
    /// A first-round point with these values and figures and nothing else
    /// (tests of the reports' readers).
    #[cfg(test)]
    pub(crate) fn of(values: &[&str], metrics: PointFigures) -> Point {
        Point {
            round: 0,
            values: values.iter().map(|v| v.to_string()).collect(),
            metrics,
            cdf: vec![],
            series: vec![],
            hist: vec![],
            notes: vec![],
        }
    }

    pub fn key(&self) -> PointKey {
        PointKey {
            round: self.round,
            values: self.values.clone(),
        }
    }
}

/// A point's measurement as a runner returns it.
pub struct Measured {
    pub metrics: PointFigures,
    pub cdf: Vec<(f64, f64)>,
    pub series: Vec<(f64, f64)>,
    pub hist: Vec<(f64, f64)>,
    /// Lines for the report, kept with the point.
    pub notes: Vec<String>,
    /// The run's full fio-schema JSON, kept under raw/.
    pub raw: serde_json::Value,
}

#[derive(Debug)]
pub enum RunFailure {
    /// Ctrl-C: the point is not kept; the sweep stops and can be resumed.
    Interrupted,
    Failed(String),
}

/// Runs one point's options. The suite's [`crate::runner::BenchRunner`] runs them
/// in this process; tests pass their own.
pub trait Runner {
    fn run(&mut self, args: &[String]) -> Result<Measured, RunFailure>;
}

/// Progress of a sweep, for a terminal line.
pub struct SweepProgress<'a> {
    /// Points finished, counting those kept from an earlier run.
    pub done: usize,
    pub total: usize,
    /// The point about to run.
    pub label: &'a str,
    /// From the mean time of the points run so far in this run.
    pub eta_s: Option<f64>,
}

#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub ran: usize,
    pub kept: usize,
    pub total: usize,
    pub interrupted: bool,
}

/// An open sweep directory.
pub struct SweepDir {
    pub path: PathBuf,
    pub def: SweepDef,
    pub points: Vec<Point>,
}

impl SweepDir {
    /// Opens `path` for `def`: creates it, or loads the points a run of the
    /// same definition left there. A directory holding another sweep is
    /// refused unless `restart`, which discards its points.
    pub fn open(path: &Path, def: SweepDef, restart: bool) -> Result<SweepDir, SuiteError> {
        let def_path = path.join("sweep.json");
        if def_path.exists() {
            let old: SweepDef = read_json(&def_path)?;
            // A sweep that measured nothing yet has nothing to lose.
            let empty = load_points(&path.join("points.jsonl"))?.is_empty();
            if old != def && !restart && !empty {
                return Err(SuiteError::OtherSweep {
                    path: path.to_path_buf(),
                    difference: describe_difference(&old, &def),
                });
            }
            // --restart discards the points of a *different* sweep only; the
            // same sweep resumes.
            if restart && old != def {
                let _ = fs::remove_file(path.join("points.jsonl"));
                let _ = fs::remove_dir_all(path.join("raw"));
            }
        } else if path.exists()
            && fs::read_dir(path)
                .map_err(|e| io_err(path, e))?
                .next()
                .is_some()
        {
            return Err(SuiteError::NotSweepDir {
                path: path.to_path_buf(),
            });
        }
        make_dir(path)?;
        make_dir(&path.join("raw"))?;
        write_json_atomic(&def_path, &def)?;
        let points = load_points(&path.join("points.jsonl"))?;
        Ok(SweepDir {
            path: path.to_path_buf(),
            def,
            points,
        })
    }

    /// The named sweeps under `dir` that have points, by name: one not
    /// started yet has nothing to show, one never made is left out.
    pub fn load_started(
        dir: &Path,
        names: impl IntoIterator<Item = String>,
    ) -> Result<BTreeMap<String, SweepDir>, SuiteError> {
        let mut sweeps = BTreeMap::new();
        for name in names {
            let p = dir.join(&name);
            if p.join("sweep.json").exists() {
                let s = SweepDir::load(&p)?;
                if !s.points.is_empty() {
                    sweeps.insert(name, s);
                }
            }
        }
        Ok(sweeps)
    }

    /// Loads a finished or partial sweep for a report.
    pub fn load(path: &Path) -> Result<SweepDir, SuiteError> {
        let def: SweepDef = read_json(&path.join("sweep.json"))?;
        let points = load_points(&path.join("points.jsonl"))?;
        Ok(SweepDir {
            path: path.to_path_buf(),
            def,
            points,
        })
    }

    /// Runs the points not yet kept.
    pub fn run(
        &mut self,
        runner: &mut dyn Runner,
        progress: &mut dyn FnMut(&SweepProgress),
    ) -> Result<Outcome, SuiteError> {
        let all = self.def.points();
        let todo = self.todo(&all);
        let mut outcome = Outcome {
            ran: 0,
            kept: all.len() - todo.len(),
            total: all.len(),
            interrupted: false,
        };
        tracing::info!(
            "{}: {} of {} points kept, {} to run",
            self.path.display(),
            outcome.kept,
            outcome.total,
            todo.len()
        );
        let started = std::time::Instant::now();
        for (i, (index, key)) in todo.iter().enumerate() {
            let label = format!("{} (round {})", self.def.label(&key.values), key.round + 1);
            let eta_s = (i > 0)
                .then(|| started.elapsed().as_secs_f64() / i as f64 * (todo.len() - i) as f64);
            progress(&SweepProgress {
                done: outcome.kept + i,
                total: all.len(),
                label: &label,
                eta_s,
            });
            let args = self.def.args_for(key);
            tracing::debug!("point {label}: {}", args.join(" "));
            let point_started = std::time::Instant::now();
            let m = match runner.run(&args) {
                Ok(m) => m,
                Err(RunFailure::Interrupted) => {
                    outcome.interrupted = true;
                    break;
                }
                Err(RunFailure::Failed(why)) => return Err(SuiteError::Point { label, why }),
            };
            let point = Point {
                round: key.round,
                values: key.values.clone(),
                metrics: m.metrics,
                cdf: m.cdf,
                series: m.series,
                hist: m.hist,
                notes: m.notes,
            };
            self.keep(*index, &point, &m.raw)?;
            self.points.push(point);
            outcome.ran += 1;
            tracing::info!(
                "point {label} kept after {:.1} s",
                point_started.elapsed().as_secs_f64()
            );
        }
        assert!(
            outcome.interrupted || outcome.kept + outcome.ran == outcome.total,
            "a sweep that ran to its end has every point: {outcome:?}"
        );
        Ok(outcome)
    }

    /// The points of `all` not yet kept, with their index in run order.
    fn todo(&self, all: &[PointKey]) -> Vec<(usize, PointKey)> {
        let kept: std::collections::HashSet<PointKey> =
            self.points.iter().map(Point::key).collect();
        (all.iter().cloned().enumerate())
            .filter(|(_, k)| !kept.contains(k))
            .collect()
    }

    /// Raw JSON first, then the line: a point in points.jsonl always has
    /// its raw file.
    fn keep(&self, index: usize, point: &Point, raw: &serde_json::Value) -> Result<(), SuiteError> {
        let raw_path = self.path.join("raw").join(format!("{index:04}.json"));
        write_json_atomic(&raw_path, raw)?;
        let path = self.path.join("points.jsonl");
        let mut f = create_file(&path, OutputMode::Append)?;
        let mut line = serde_json::to_string(point).expect("points serialise");
        line.push('\n');
        f.write_all(line.as_bytes())
            .and_then(|_| sync_file(&f))
            .map_err(|e| io_err(&path, e))
    }

    /// The median of each metric over rounds, per grid point, in grid order.
    pub fn medians(&self) -> PerPoint<f64> {
        self.over_rounds(median)
    }

    /// The mean of each metric over rounds and its sample standard
    /// deviation (NaN from a single round), per grid point, in grid order.
    pub fn means_and_deviations(&self) -> PerPoint<(f64, f64)> {
        self.over_rounds(mean_and_deviation)
    }

    /// The lowest and highest of each metric over rounds, per grid point
    /// measured in more than one round (the error bars of its charts).
    pub fn spreads(&self) -> PerPoint<Spread> {
        self.over_rounds(|v| {
            let v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
            let lo = v.iter().copied().reduce(f64::min)?;
            let hi = v.iter().copied().reduce(f64::max)?;
            assert!(lo <= hi, "the lowest round is not above the highest");
            (v.len() > 1).then_some((lo, hi))
        })
    }

    /// Each metric's rounds folded by `fold`, per grid point, in grid order.
    fn over_rounds<T>(&self, fold: impl Fn(Vec<f64>) -> Option<T>) -> PerPoint<T> {
        self.def
            .grid()
            .into_iter()
            .filter_map(|values| {
                let rounds: Vec<&PointFigures> = self
                    .points
                    .iter()
                    .filter(|p| p.values == values)
                    .map(|p| &p.metrics)
                    .collect();
                if rounds.is_empty() {
                    return None;
                }
                Some((values, PointFigures::fold(&rounds, &fold)))
            })
            .collect()
    }
}

/// Checks a suite's sweeps before they are run or read: each keeps its
/// points in a directory of its name, so two of one name would mix their
/// points.
pub fn assert_unique_names(sweeps: &[(String, SweepDef)]) {
    let mut names: Vec<&str> = sweeps.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(
        names.len(),
        before,
        "each sweep of a suite has a name of its own"
    );
}

/// The lowest and highest value of a metric over rounds.
pub type Spread = (f64, f64);

/// A figure per metric, per grid point (its values), in grid order.
pub type PerPoint<T> = Vec<(Vec<String>, PointFigures<T>)>;

/// The mean of the finite values and their sample standard deviation
/// (n - 1; NaN for one value); None for none.
pub fn mean_and_deviation(mut v: Vec<f64>) -> Option<(f64, f64)> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    assert!(
        v.len() == 1 || var >= 0.0,
        "a variance of finite values is not negative"
    );
    Some((mean, if v.len() > 1 { var.sqrt() } else { f64::NAN }))
}

pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let m = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    assert!(
        v[0] <= m && m <= v[n - 1],
        "the median {m} lies within the values"
    );
    Some(m)
}

fn describe_difference(old: &SweepDef, new: &SweepDef) -> String {
    if old.base != new.base {
        format!("options {:?} there, {:?} now", old.base, new.base)
    } else if old.params != new.params {
        let show = |d: &SweepDef| {
            d.params
                .iter()
                .map(|p| format!("{}={}", p.name, p.values.join(",")))
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!("parameters {} there, {} now", show(old), show(new))
    } else if old.rounds != new.rounds {
        format!("{} rounds there, {} now", old.rounds, new.rounds)
    } else {
        format!("titled '{}' there", old.title)
    }
}

/// Points of a sweep file. A last line cut short by a crash is dropped (and
/// cut from the file, so the next append starts a clean line).
fn load_points(path: &Path) -> Result<Vec<Point>, SuiteError> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(path, e)),
    };
    let mut points = Vec::new();
    let mut good_len = 0u64;
    let mut torn = false;
    let bound = MAX_REPORT_FILE.bytes;
    for line in BufReader::new(f.take(bound + 1)).split(b'\n') {
        let line = line.map_err(|e| io_err(path, e))?;
        if good_len + line.len() as u64 > bound {
            return Err(too_large(path).into());
        }
        match serde_json::from_slice::<Point>(&line) {
            Ok(p) => {
                points.push(p);
                good_len += line.len() as u64 + 1;
            }
            Err(_) if line.iter().all(u8::is_ascii_whitespace) => good_len += line.len() as u64 + 1,
            Err(e) => {
                if torn {
                    return Err(SuiteError::DamagedLine {
                        path: path.to_path_buf(),
                        source: e,
                    });
                }
                torn = true;
            }
        }
    }
    if torn {
        let f = create_file(path, OutputMode::Keep)?;
        f.set_len(good_len).map_err(|e| io_err(path, e))?;
    }
    Ok(points)
}

/// The most bytes of a report's JSON file read: a sweep's definition,
/// points or suite file, a hiops or fio JSON result to compare. Real ones
/// hold KiBs to a few MiB, with room for results of thousands of jobs; the
/// parsed tree takes several times the text, so the bound stays low.
pub const MAX_REPORT_FILE: hiops_bench::input::Limit = hiops_bench::input::Limit {
    bytes: 128 << 20,
    what: "a report's JSON file",
    todo: "give a hiops or fio JSON result, or a report directory",
};

pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SuiteError> {
    let text = hiops_bench::input::read_text(path, &MAX_REPORT_FILE)?;
    serde_json::from_str(&text).map_err(|source| SuiteError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Makes the directory `path` unless it exists: only its last component,
/// so a mistyped parent is an error, not a tree of new directories.
pub fn make_dir(path: &Path) -> Result<(), SuiteError> {
    match fs::create_dir(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        r => r.map_err(|e| io_err(path, e)),
    }
}

/// Opens a file of a report directory past the output gate (a device or
/// FIFO there is refused).
pub fn create_file(path: &Path, mode: OutputMode) -> Result<File, SuiteError> {
    create_output(path, &Grants::default(), mode).map_err(|e| match e {
        OutputError::Refused(r) => SuiteError::Refused(r),
        e => io_err(path, std::io::Error::other(e)),
    })
}

/// Syncs a regular file's data (/dev/null, which the output gate lets
/// through, has none to sync).
fn sync_file(f: &File) -> std::io::Result<()> {
    match f.metadata()?.is_file() {
        true => f.sync_data(),
        false => Ok(()),
    }
}

/// Write to a temporary name and rename, so a reader never sees half a file.
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), SuiteError> {
    let text = serde_json::to_string_pretty(value).expect("values serialise") + "\n";
    write_atomic(path, text.as_bytes())
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SuiteError> {
    let tmp = path.with_extension("tmp");
    let mut f = create_file(&tmp, OutputMode::Truncate)?;
    f.write_all(bytes)
        .and_then(|_| sync_file(&f))
        .map_err(|e| io_err(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| io_err(path, e))
}

/// A report file past [`MAX_REPORT_FILE`].
fn too_large(path: &Path) -> hiops_bench::input::InputError {
    hiops_bench::input::InputError::TooLarge {
        name: path.display().to_string(),
        limit: MAX_REPORT_FILE.bytes,
        what: MAX_REPORT_FILE.what,
        todo: MAX_REPORT_FILE.todo,
    }
}

pub fn io_err(path: &Path, source: std::io::Error) -> SuiteError {
    SuiteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The points' notes of some sweeps, each said once.
pub fn point_notes<'a>(sweeps: impl IntoIterator<Item = &'a SweepDir>) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for n in sweeps
        .into_iter()
        .flat_map(|s| &s.points)
        .flat_map(|p| &p.notes)
    {
        if !notes.contains(n) {
            notes.push(n.clone());
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(rounds: u32) -> SweepDef {
        SweepDef {
            title: "t".into(),
            base: vec!["--rw=randread".into()],
            params: vec![
                Param::parse("numjobs=1,2,4").unwrap(),
                Param::parse("strategy=pread,coop").unwrap(),
            ],
            rounds,
        }
    }

    /// Measures nothing: returns the point's own options as its metrics,
    /// and stops (as Ctrl-C would) before the `stop_at`th call.
    struct Fake {
        calls: Vec<Vec<String>>,
        stop_at: Option<usize>,
    }

    /// A runner that stops (as if interrupted) after `stop_at` points.
    fn fake(stop_at: Option<usize>) -> Fake {
        Fake {
            calls: Vec::new(),
            stop_at,
        }
    }

    /// What a run of `def(2)`'s 12 points did.
    fn outcome(ran: usize, kept: usize, interrupted: bool) -> Outcome {
        Outcome {
            ran,
            kept,
            total: 12,
            interrupted,
        }
    }

    /// Half a line at the end of points.jsonl, as a crash mid-append leaves.
    fn append_torn_line(dir: &Path) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("points.jsonl"))
            .unwrap();
        // Half of a point's JSON object; its opening brace is written as
        // \x7b so that brace-counting tools see where this function ends.
        f.write_all(b"\x7b\"round\":1,\"val").unwrap();
    }

    impl Runner for Fake {
        fn run(&mut self, args: &[String]) -> Result<Measured, RunFailure> {
            if Some(self.calls.len()) == self.stop_at {
                return Err(RunFailure::Interrupted);
            }
            self.calls.push(args.to_vec());
            let jobs: f64 = args
                .iter()
                .find_map(|a| a.strip_prefix("--numjobs="))
                .unwrap()
                .parse()
                .unwrap();
            let coop = args.iter().any(|a| a == "--strategy=coop");
            let metrics = PointFigures {
                iops: Some(
                    jobs * 1000.0 + if coop { 1.0 } else { 0.0 } + self.calls.len() as f64 * 0.001,
                ),
                ..PointFigures::default()
            };
            Ok(Measured {
                metrics,
                cdf: vec![(50.0, 10.0)],
                series: vec![(1.0, 5.0)],
                hist: vec![(64.0, 100.0)],
                notes: Vec::new(),
                raw: serde_json::json!({"args": args}),
            })
        }
    }

    #[test]
    fn the_grid_rotates_by_round_and_options_follow_the_base() {
        let d = def(2);
        let pts = d.points();
        assert_eq!(pts.len(), 12);
        assert_eq!(pts[0].values, vec!["1", "pread"]);
        assert_eq!(pts[5].values, vec!["4", "coop"]);
        assert_eq!(
            pts[6],
            PointKey {
                round: 1,
                values: vec!["1".into(), "coop".into()]
            }
        );
        assert_eq!(
            d.args_for(&pts[5]),
            vec!["--rw=randread", "--numjobs=4", "--strategy=coop"]
        );
        // With job sections in the base, the parameters are global.
        let jobs = SweepDef {
            base: ["--bs=4k", "--name=a", "--filename=x", "--name=b"]
                .map(String::from)
                .to_vec(),
            ..d.clone()
        };
        assert_eq!(
            jobs.args_for(&pts[5]),
            [
                "--bs=4k",
                "--numjobs=4",
                "--strategy=coop",
                "--name=a",
                "--filename=x",
                "--name=b"
            ]
        );
        assert!(Param::parse("numjobs").is_err());
        assert!(Param::parse("numjobs=").is_err());
    }

    #[test]
    fn an_interrupted_sweep_keeps_its_points_and_resumes_where_it_stopped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut sweep = SweepDir::open(&dir, def(2), false).unwrap();
        let mut first = fake(Some(5));
        let out = sweep.run(&mut first, &mut |_| {}).unwrap();
        assert_eq!(out, outcome(5, 0, true));
        assert_eq!(std::fs::read_dir(dir.join("raw")).unwrap().count(), 5);

        // A crash mid-append leaves half a line: it is dropped, not fatal.
        append_torn_line(&dir);
        let mut again = SweepDir::open(&dir, def(2), false).unwrap();
        assert_eq!(again.points.len(), 5);
        let mut second = fake(None);
        let mut seen = Vec::new();
        let out = again
            .run(&mut second, &mut |p| seen.push((p.done, p.total)))
            .unwrap();
        assert_eq!(out, outcome(7, 5, false));
        assert_eq!(seen.first(), Some(&(5, 12)));
        // The resumed run did exactly the points the first did not.
        let mut all: Vec<Vec<String>> = first.calls.into_iter().chain(second.calls).collect();
        assert_eq!(all.len(), 12);
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 6, "each grid point twice (two rounds), no more");
        let loaded = SweepDir::load(&dir).unwrap();
        assert_eq!(loaded.points.len(), 12);
        let med = loaded.medians();
        assert_eq!(med.len(), 6);
        assert_eq!(med[5].0, vec!["4", "coop"]);
        assert!((med[5].1.iops.unwrap() - 4001.0).abs() < 0.1);
    }

    #[test]
    fn a_directory_of_another_sweep_is_refused_unless_restarted() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        // Nothing measured yet: a new definition simply takes its place.
        SweepDir::open(&dir, def(3), false).unwrap();
        let mut s = SweepDir::open(&dir, def(1), false).unwrap();
        s.run(&mut fake(None), &mut |_| {}).unwrap();
        let e = SweepDir::open(&dir, def(2), false)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("1 rounds there, 2 now") && e.contains("--restart"),
            "{e}"
        );
        // --restart with the same definition keeps its points.
        assert_eq!(SweepDir::open(&dir, def(1), true).unwrap().points.len(), 6);
        let s = SweepDir::open(&dir, def(2), true).unwrap();
        assert!(s.points.is_empty());
        std::fs::create_dir_all(tmp.path().join("other")).unwrap();
        std::fs::write(tmp.path().join("other/x"), "x").unwrap();
        let e = SweepDir::open(&tmp.path().join("other"), def(1), false)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a sweep directory"), "{e}");
    }

    /// A line of points.jsonl as hiops wrote it when a point's figures were
    /// a map by name: profiled layers, a timeline, the latency split and a
    /// key-value store's figures.
    const SAVED_POINT: &str = concat!(
        r#"{"round":1,"values":["1","psync"],"metrics":{"clocks_per_io":70490.17662898943,"#,
        r#""device_traced":1.0,"device_us":52.79802370631597,"iops":16296.148161890073,"#,
        r#""lat_p99_us":134.144,"layer_idle_exit_clocks_per_io":48.31798520564872,"#,
        r#""layer_idle_process_clocks_per_io":0.0,"layer_other_process_clocks_per_io":3.5,"#,
        r#""layer_other_processes_clocks_per_io":0.0,"ops_per_s":72772.6801767489,"#,
        r#""platform_not_split":1.0,"profile_sum_gap_pct":18.04302190211622,"#,
        r#""timeline_completions_seen":1.0,"timeline_device_p99_us":104.96,"#,
        r#""timeline_ios":40833.0,"timeline_total_mean_us":71.6784575710822},"#,
        r#""cdf":[[50.0,64.256]],"series":[],"hist":[[64.0,38.5]]}"#,
    );

    #[test]
    fn a_point_saved_with_figures_by_name_loads_with_the_same_figures() {
        use hiops_profile::Layer;
        use hiops_report::figures::{GapStat, TimelineGap};
        let p: Point = serde_json::from_str(SAVED_POINT).unwrap();
        let m = &p.metrics;
        assert_eq!(m.iops, Some(16296.148161890073));
        assert_eq!(m.clocks_per_io, Some(70490.17662898943));
        assert_eq!(m.lat_p99_us, Some(134.144));
        assert_eq!(m.ops_per_s, Some(72772.6801767489));
        assert_eq!(
            (m.platform_not_split, m.device_traced),
            (Some(1.0), Some(1.0))
        );
        assert_eq!(m.layer_clocks(Layer::IdleExit), Some(&48.31798520564872));
        assert_eq!(m.layers[&Layer::Idle].process, Some(0.0));
        assert_eq!(m.layers[&Layer::Other].process, Some(3.5));
        assert_eq!(m.layer_clocks(Layer::OtherProcesses), Some(&0.0));
        assert_eq!(m.gap(TimelineGap::Device, GapStat::P99), Some(&104.96));
        assert_eq!(
            m.gap(TimelineGap::Total, GapStat::Mean),
            Some(&71.6784575710822)
        );
        assert_eq!(m.timeline_ios, Some(40833.0));
        assert_eq!(
            m.iops,
            p.metrics
                .figure(hiops_report::figures::Figure::Iops)
                .copied()
        );
        // Saved again, it is the same line: no name lost, renamed or moved.
        assert_eq!(serde_json::to_string(&p).unwrap(), SAVED_POINT);
    }

    #[test]
    #[should_panic(expected = "a name of its own")]
    fn two_sweeps_of_one_name_would_mix_their_points() {
        assert_unique_names(&[("a".into(), def(1)), ("a".into(), def(2))]);
    }

    #[test]
    #[should_panic(expected = "a value for each of its parameters")]
    fn a_point_of_another_sweep_has_no_options_here() {
        def(1).args_for(&PointKey {
            round: 0,
            values: Vec::new(),
        });
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![f64::NAN]), None);
    }
}
