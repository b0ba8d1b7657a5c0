//! One grid point's figures among a sweep's medians: what every section
//! of the report reads.

use hiops_report::figures::PointFigures;

/// Median metrics of one grid point, by its values.
pub(super) fn at<'a>(
    medians: &'a [(Vec<String>, PointFigures)],
    values: &[&str],
) -> Option<&'a PointFigures> {
    medians
        .iter()
        .find(|(v, _)| v.iter().map(String::as_str).eq(values.iter().copied()))
        .map(|(_, m)| m)
}

/// One figure of one grid point in each round it was measured:
/// `(round, value)`, for a rule that pairs arms by round.
pub(super) fn rounds(
    s: &crate::sweep::SweepDir,
    values: &[&str],
    figure: impl Fn(&PointFigures) -> Option<f64>,
) -> Vec<(u32, f64)> {
    s.points
        .iter()
        .filter(|p| {
            p.values
                .iter()
                .map(String::as_str)
                .eq(values.iter().copied())
        })
        .filter_map(|p| Some((p.round, figure(&p.metrics)?)))
        .collect()
}
