//! The measured grid: target, test, request size to figures over rounds
//! (median, or the study's mean and standard deviation).

use super::plan::{Measure, Plan};
use crate::page::chart_of::fmt_num;
use crate::sweep::SweepDir;
use hiops_report::figures::{Figure, PointFigures};
use std::collections::BTreeMap;
use std::path::Path;

/// A figure over rounds: their median, or in the study's mode their mean
/// and standard deviation (none from one round).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub sd: Option<f64>,
}

/// Measured figures: target → rw → bs → figures over rounds.
pub(super) type Grid = BTreeMap<String, BTreeMap<String, BTreeMap<String, PointFigures<Estimate>>>>;

pub(super) fn grid(dir: &Path, plan: &Plan) -> Result<Grid, crate::SuiteError> {
    let mut g = Grid::new();
    let labels = plan.sweeps().into_iter().map(|(label, _)| label);
    for (label, s) in SweepDir::load_started(dir, labels)? {
        let figures = if plan.study {
            with_deviations(s.means_and_deviations())
        } else {
            let median = |&value: &f64| Estimate { value, sd: None };
            (s.medians().into_iter())
                .map(|(values, m)| (values, m.map(median)))
                .collect()
        };
        for (values, m) in figures {
            g.entry(label.clone())
                .or_default()
                .entry(values[0].clone())
                .or_default()
                .insert(values[1].clone(), m);
        }
    }
    Ok(g)
}

/// Each point's means, with each figure's deviation where rounds give one.
pub(super) fn with_deviations(
    points: crate::sweep::PerPoint<(f64, f64)>,
) -> crate::sweep::PerPoint<Estimate> {
    let estimate = |&(value, sd): &(f64, f64)| Estimate {
        value,
        sd: sd.is_finite().then_some(sd),
    };
    (points.into_iter())
        .map(|(values, m)| (values, m.map(estimate)))
        .collect()
}

/// A test's figure at the smallest request size: the study's Table VI row
/// (4 KB), for sequential and random tests alike.
pub(super) fn headline(
    g: &Grid,
    target: &str,
    rw: &str,
    sizes: &[String],
    m: Measure,
) -> Option<f64> {
    let by_size = g.get(target)?.get(rw)?;
    Some(by_size.get(sizes.first()?)?.figure(m.metric())?.value)
}

/// A cell of the grid: the figure, and `± SD` where rounds give one.
pub(super) fn cell(m: &PointFigures<Estimate>, metric: Figure) -> Option<String> {
    let e = m.figure(metric)?;
    Some(match e.sd {
        Some(sd) => format!("{} ± {}", fmt_num(e.value), fmt_num(sd)),
        None => fmt_num(e.value),
    })
}
