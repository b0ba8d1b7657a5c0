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
