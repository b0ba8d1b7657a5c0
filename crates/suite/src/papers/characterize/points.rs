//! Reading a characterize sweep's measured points: a point by its
//! parameters' values, a target's sweep of one kind, a row's cells, and
//! the line through a set of points.

use super::plan::{CharTarget, Plan};
use crate::page::chart_of::fmt_num;
use crate::sweep::SweepDir;
use hiops_report::figures::{Figure, PointFigures};
use std::collections::BTreeMap;

pub type Medians = crate::sweep::PerPoint<f64>;

pub(super) fn get<'a>(m: &'a Medians, values: &[&str]) -> Option<&'a PointFigures> {
    m.iter()
        .find(|(v, _)| v.iter().map(String::as_str).eq(values.iter().copied()))
        .map(|(_, x)| x)
}

pub(super) fn cell(
    m: Option<&PointFigures>,
    figure: impl Fn(&PointFigures) -> Option<f64>,
) -> String {
    m.and_then(figure)
        .map(fmt_num)
        .unwrap_or_else(|| "-".into())
}

/// The targets' sweeps of one kind (`{label}-{kind}`), in the plan's
/// order, for the targets that have one.
pub(super) fn per_target<'a>(
    sweeps: &'a BTreeMap<String, SweepDir>,
    plan: &'a Plan,
    kind: &'a str,
) -> impl Iterator<Item = (&'a CharTarget, &'a SweepDir)> + 'a {
    (plan.targets.iter())
        .filter_map(move |t| Some((t, sweeps.get(&format!("{}-{kind}", t.label))?)))
}

/// A row's cells: each figure of the point, "-" where it has none.
pub(super) fn cells<'a>(
    p: Option<&'a PointFigures>,
    figures: &'a [Figure],
) -> impl Iterator<Item = String> + 'a {
    figures
        .iter()
        .map(move |&f| cell(p, |m| m.figure(f).copied()))
}

/// Least-squares slope of y on x.
pub(super) fn slope(pts: &[(f64, f64)]) -> Option<f64> {
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_least_squares_slope() {
        assert_eq!(slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]), Some(2.0));
        assert_eq!(slope(&[(1.0, 1.0)]), None);
        assert_eq!(slope(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }
}
