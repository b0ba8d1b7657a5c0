//! # hiops-plot: the charts of a report
//!
//! One model, [`Chart`], of line charts: a sweep's metric against its
//! parameter, one series per strategy or device; a latency CDF; a time
//! series. [`Chart::svg`] and [`Chart::png`] draw the same picture
//! with plotters, so the HTML page (SVG) and a slide (PNG) agree. Text is
//! laid out with DejaVu Sans, compiled in, so a plot looks the same on a
//! machine without fonts.
//!
//! Log axes are drawn as a linear axis of the logarithm with labels written
//! back in the axis' units: ticks then fall on powers (1K, 2K, 4K...), which
//! is how block sizes and thread counts are read.

#![forbid(unsafe_code)]

use plotters::prelude::*;
use std::sync::Once;

/// Width and height in pixels of every chart: readable on a laptop screen
/// and two side by side in the HTML page.
pub const SIZE: (u32, u32) = (800, 500);

const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

/// Colours that stay distinct for the six strategies and on grey print
/// (Okabe–Ito's colour-blind-safe palette, with black).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// Stacked bars' colours: the palette above, then lighter twins, so a
/// dozen layers stay apart.
const BAR_PALETTE: [RGBColor; 14] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(60, 60, 60),
    RGBColor(240, 228, 66),
    RGBColor(120, 170, 220),
    RGBColor(240, 160, 110),
    RGBColor(120, 210, 180),
    RGBColor(230, 180, 210),
    RGBColor(160, 160, 160),
    RGBColor(180, 120, 60),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    Linear,
    /// Powers of two: block sizes, threads, queue depths.
    Log2,
    /// Powers of ten: latencies.
    Log10,
}

/// How tick labels are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    /// 1500 → 1.5k, 2000000 → 2M.
    Number,
    /// Binary sizes: 4096 → 4K, 1048576 → 1M.
    Bytes,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Axis {
    /// The quantity and its unit, as the reader should see it: "IOPS",
    /// "latency (µs)", "block size (bytes)".
    pub label: String,
    pub scale: Scale,
    pub units: Units,
    /// Named positions 0, 1, 2...: strategies, engines, devices. Empty for
    /// a numeric axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// Label only whole values (thread counts, queue depths): a tick at
    /// 1.5 threads stays a grid line without a label.
    #[serde(default)]
    pub integers: bool,
}

impl Axis {
    fn numeric(label: impl Into<String>, scale: Scale) -> Axis {
        Axis {
            label: label.into(),
            scale,
            units: Units::Number,
            categories: Vec::new(),
            integers: false,
        }
    }
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis::numeric(label, Scale::Linear)
    }
    pub fn log2(label: impl Into<String>) -> Axis {
        Axis::numeric(label, Scale::Log2)
    }
    pub fn log10(label: impl Into<String>) -> Axis {
        Axis::numeric(label, Scale::Log10)
    }
    /// An axis of names: series points are (index of the name, value).
    pub fn categories(label: impl Into<String>, names: Vec<String>) -> Axis {
        Axis {
            categories: names,
            ..Axis::numeric(label, Scale::Linear)
        }
    }
    pub fn integers(mut self) -> Axis {
        self.integers = true;
        self
    }
    pub fn bytes(mut self) -> Axis {
        self.units = Units::Bytes;
        self
    }

    /// Where a value sits on the drawn (linear) axis; `None` where the
    /// scale cannot show it (zero or less on a log axis, NaN).
    fn drawn_at(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        match self.scale {
            Scale::Linear => Some(v),
            Scale::Log2 => (v > 0.0).then(|| v.log2()),
            Scale::Log10 => (v > 0.0).then(|| v.log10()),
        }
    }

    fn value_at(&self, d: f64) -> f64 {
        match self.scale {
            Scale::Linear => d,
            Scale::Log2 => d.exp2(),
            Scale::Log10 => 10f64.powf(d),
        }
    }

    fn tick_label(&self, d: f64) -> String {
        if !self.categories.is_empty() {
            let i = d.round();
            return if (d - i).abs() < 1e-6 && i >= 0.0 {
                self.categories.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            };
        }
        let v = self.value_at(d);
        if self.integers && (v - v.round()).abs() > 1e-6 {
            return String::new();
        }
        format_value(v, self.units)
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Error bars: (x, lowest, highest) of the rounds behind a point, drawn
    /// as a vertical line through it; empty for a single round.
    #[serde(default)]
    pub spread: Vec<(f64, f64, f64)>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Chart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Stacked bars (one bar per x, each series a segment in order, on a
    /// linear y axis) instead of lines.
    #[serde(default)]
    pub stacked: bool,
}

#[derive(Debug)]
pub struct PlotError(String);

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

fn err(e: impl std::fmt::Display) -> PlotError {
    PlotError(format!("cannot draw the chart: {e}"))
}

impl Chart {
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> Chart {
        Chart {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            stacked: false,
        }
    }

    /// Draws the series as stacked bars: a breakdown per category.
    pub fn stacked(mut self) -> Chart {
        self.stacked = true;
        self
    }

    pub fn with_series(mut self, name: impl Into<String>, points: Vec<(f64, f64)>) -> Chart {
        self.series.push(Series {
            name: name.into(),
            points,
            spread: Vec::new(),
        });
        self
    }

    /// Error bars for the last series added: (x, lowest, highest).
    pub fn with_spread(mut self, spread: Vec<(f64, f64, f64)>) -> Chart {
        if let Some(s) = self.series.last_mut() {
            s.spread = spread;
        }
        self
    }

    /// Each series' error bars as drawn: (series, x, low, high).
    fn drawn_spread(&self) -> Vec<(usize, f64, f64, f64)> {
        if self.stacked {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            for &(x, lo, hi) in &s.spread {
                let (Some(x), Some(lo), Some(hi)) =
                    (self.x.drawn_at(x), self.y.drawn_at(lo), self.y.drawn_at(hi))
                else {
                    continue;
                };
                if hi > lo {
                    out.push((i, x, lo, hi));
                }
            }
        }
        out
    }

    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        register_font();
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(err)?;
        }
        Ok(out)
    }

    /// The chart as a PNG image: drawn into an RGB buffer, encoded by the
    /// `png` crate (plotters' own encoder brings the whole `image` crate).
    /// The caller writes it where it goes (past hiops' output gate).
    pub fn png(&self) -> Result<Vec<u8>, PlotError> {
        register_font();
        let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(err)?;
        }
        let cannot = |e: &dyn std::fmt::Display| PlotError(format!("cannot encode the PNG: {e}"));
        let mut bytes = Vec::new();
        let mut png = png::Encoder::new(&mut bytes, SIZE.0, SIZE.1);
        png.set_color(png::ColorType::Rgb);
        png.set_depth(png::BitDepth::Eight);
        let mut w = png.write_header().map_err(|e| cannot(&e))?;
        w.write_image_data(&rgb).map_err(|e| cannot(&e))?;
        w.finish().map_err(|e| cannot(&e))?;
        Ok(bytes)
    }

    /// Room above the data, as a share of its span: a quarter keeps a
    /// legend off the lines; stacked bars' legend has a key per series.
    fn headroom(&self) -> f64 {
        if self.stacked {
            0.25 + 0.085 * self.series.len() as f64
        } else {
            0.25
        }
    }

    /// Stacked bars' segments: (series, x, bottom, top), each series on
    /// top of the ones before it at the same x; negative values are left
    /// out (a breakdown has none).
    fn segments(&self) -> Vec<(usize, f64, f64, f64)> {
        let mut tops: Vec<(f64, f64)> = Vec::new();
        let mut out = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            for &(x, y) in s.points.iter().filter(|p| p.1 > 0.0) {
                let base = match tops.iter_mut().find(|t| t.0 == x) {
                    Some(t) => {
                        let b = t.1;
                        t.1 += y;
                        b
                    }
                    None => {
                        tops.push((x, y));
                        0.0
                    }
                };
                out.push((i, x, base, base + y));
            }
        }
        out
    }

    /// Points as drawn, per series, with what a scale cannot show left out
    /// (for stacked bars: each segment's top, so the ranges hold them).
    fn drawn_series(&self) -> Vec<(&str, Vec<(f64, f64)>)> {
        if self.stacked {
            let segs = self.segments();
            return self
                .series
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let tops = segs.iter().filter(|g| g.0 == i).map(|g| (g.1, g.3));
                    (s.name.as_str(), tops.collect())
                })
                .collect();
        }
        self.series
            .iter()
            .map(|s| {
                let pts = s
                    .points
                    .iter()
                    .filter_map(|&(x, y)| Some((self.x.drawn_at(x)?, self.y.drawn_at(y)?)))
                    .collect();
                (s.name.as_str(), pts)
            })
            .collect()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let series = self.drawn_series();
        let spread = self.drawn_spread();
        let all: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|(_, p)| p.iter().copied())
            .chain(spread.iter().flat_map(|&(_, x, lo, hi)| [(x, lo), (x, hi)]))
            .collect();
        let (xr, yr) = ranges(&all, &self.x, &self.y, self.headroom());
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FAMILY, 22))
            .margin(14)
            .margin_right(32)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(xr.clone(), yr.clone())
            .map_err(err)?;
        let x_ticks = tick_count(&self.x, &xr);
        let y_ticks = tick_count(&self.y, &yr);
        chart
            .configure_mesh()
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .x_labels(x_ticks)
            .y_labels(y_ticks)
            .x_label_formatter(&|v| self.x.tick_label(*v))
            .y_label_formatter(&|v| self.y.tick_label(*v))
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 16))
            .bold_line_style(RGBColor(220, 220, 220))
            .max_light_lines(0)
            .draw()
            .map_err(err)?;
        if all.is_empty() {
            let mid = ((xr.start + xr.end) / 2.0, (yr.start + yr.end) / 2.0);
            chart
                .draw_series(std::iter::once(Text::new("no data", mid, (FAMILY, 18))))
                .map_err(err)?;
            return Ok(());
        }
        if self.stacked {
            return self.draw_bars(&mut chart);
        }
        self.draw_lines(&mut chart, series, &spread)
    }

    /// Each series as a line with its points, its spread as whiskers, and
    /// a legend where a series has a name.
    fn draw_lines<'a, DB: DrawingBackend + 'a>(
        &self,
        chart: &mut Plane<'a, DB>,
        series: Vec<(&str, Vec<(f64, f64)>)>,
        spread: &[(usize, f64, f64, f64)],
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        for (i, (name, pts)) in series.into_iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let style = ShapeStyle::from(&color).stroke_width(2);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), style))
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
            let bars = spread.iter().filter(|b| b.0 == i);
            chart
                .draw_series(bars.map(|&(_, x, lo, hi)| {
                    PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1))
                }))
                .map_err(err)?;
        }
        if self.series.len() > 1 || !self.series[0].name.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(180, 180, 180))
                .label_font((FAMILY, 13))
                .draw()
                .map_err(err)?;
        }
        Ok(())
    }
}

/// The drawing area of a chart: linear coordinates in both directions
/// (log axes are drawn in their exponents).
type Plane<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

impl Chart {
    fn draw_bars<'a, DB: DrawingBackend + 'a>(
        &self,
        chart: &mut Plane<'a, DB>,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let segs = self.segments();
        for (i, s) in self.series.iter().enumerate() {
            let color = BAR_PALETTE[i % BAR_PALETTE.len()];
            let bars = segs.iter().filter(|g| g.0 == i).map(|&(_, x, y0, y1)| {
                Rectangle::new([(x - 0.35, y0), (x + 0.35, y1)], color.filled())
            });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font((FAMILY, 12))
            .draw()
            .map_err(err)
    }
}

/// The drawn ranges: linear y axes start at zero (IOPS and clocks are read
/// against zero); headroom on top keeps the legend off the lines.
fn ranges(
    all: &[(f64, f64)],
    x: &Axis,
    y: &Axis,
    headroom: f64,
) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
    let span = |vals: &mut dyn Iterator<Item = f64>| {
        vals.fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
    };
    let (x0, x1) = span(&mut all.iter().map(|p| p.0)).unwrap_or((0.0, 1.0));
    let (y0, y1) = span(&mut all.iter().map(|p| p.1)).unwrap_or((0.0, 1.0));
    let xr = match x.scale {
        // Half a step of room around the first and last name.
        Scale::Linear if !x.categories.is_empty() => -0.5..(x.categories.len() as f64 - 0.5),
        Scale::Linear if x0 == x1 => (x0 - 1.0)..(x1 + 1.0),
        Scale::Linear => x0..x1,
        // Whole powers at both ends.
        _ if x0 == x1 => (x0.floor() - 1.0)..(x1.ceil() + 1.0),
        _ => x0.floor()..x1.ceil(),
    };
    let yr = match y.scale {
        Scale::Linear => {
            let lo = y0.min(0.0);
            let hi = if y1 <= lo { lo + 1.0 } else { y1 };
            lo..(hi + (hi - lo) * headroom)
        }
        _ => {
            let lo = y0.floor();
            let hi = y1.ceil().max(lo + 1.0);
            lo..(hi + (hi - lo) * 0.25)
        }
    };
    if all.iter().all(|p| p.0.is_finite() && p.1.is_finite()) {
        assert!(
            xr.start.is_finite() && xr.start < xr.end,
            "x axis range {xr:?} empty or not finite over finite points"
        );
        assert!(
            yr.start.is_finite() && yr.start < yr.end,
            "y axis range {yr:?} empty or not finite over finite points"
        );
    }
    (xr, yr)
}

/// Ticks on every whole power of a log axis when they fit (one per power
/// makes the labels exact), ten on a linear one.
fn tick_count(axis: &Axis, r: &std::ops::Range<f64>) -> usize {
    match axis.scale {
        // One tick per name needs a step of 1; plotters picks steps of
        // 1, 2, 5 × 10^k, so a count above the span gives exactly that.
        Scale::Linear if !axis.categories.is_empty() => axis.categories.len() + 1,
        Scale::Linear => 10,
        _ => ((r.end - r.start).floor() as usize + 1).clamp(2, 12),
    }
}

/// A value as a tick label: short, with a binary or decimal suffix.
pub fn format_value(v: f64, units: Units) -> String {
    let (base, suffixes): (f64, &[&str]) = match units {
        Units::Bytes => (1024.0, &["", "K", "M", "G", "T"]),
        Units::Number => (1000.0, &["", "k", "M", "G", "T"]),
    };
    let mut x = v;
    let mut i = 0;
    while x.abs() >= base && i + 1 < suffixes.len() {
        x /= base;
        i += 1;
    }
    let digits = if x == x.round() {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.digits$}");
    // 1.50 → 1.5; never strip the integer part of 10 or 100.
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{}", suffixes[i])
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in and known to parse, so this cannot fail
        // short of a corrupt build.
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("the compiled-in DejaVu Sans does not parse"));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bars_are_drawn_where_the_scale_can_show_them() {
        let c = Chart::new("t", Axis::linear("x"), Axis::log10("y"))
            .with_series("a", vec![(1.0, 5.0), (2.0, 6.0)])
            .with_spread(vec![(1.0, 2.0, 9.0), (2.0, 0.0, 7.0), (3.0, 4.0, 4.0)]);
        // log10: a zero low end cannot be drawn; an empty range is no bar.
        assert_eq!(c.drawn_spread(), vec![(0, 1.0, 2f64.log10(), 9f64.log10())]);
        assert!(c.svg().unwrap().contains("<svg"));
    }

    fn sample() -> Chart {
        Chart::new(
            "IOPS vs block size",
            Axis::log2("block size (bytes)").bytes(),
            Axis::linear("IOPS"),
        )
        .with_series(
            "coop",
            vec![(512.0, 90_000.0), (4096.0, 80_000.0), (131072.0, 9_000.0)],
        )
        .with_series(
            "pread",
            vec![(512.0, 70_000.0), (4096.0, 60_000.0), (131072.0, 8_000.0)],
        )
    }

    #[test]
    fn tick_labels_read_as_sizes_and_counts() {
        assert_eq!(format_value(4096.0, Units::Bytes), "4K");
        assert_eq!(format_value(512.0, Units::Bytes), "512");
        assert_eq!(format_value(1536.0, Units::Bytes), "1.5K");
        assert_eq!(format_value(131072.0, Units::Bytes), "128K");
        assert_eq!(format_value(1_500.0, Units::Number), "1.5k");
        assert_eq!(format_value(2_000_000.0, Units::Number), "2M");
        assert_eq!(format_value(10.0, Units::Number), "10");
        assert_eq!(format_value(0.25, Units::Number), "0.25");
    }

    /// The texts of an SVG's <text> elements, trimmed.
    pub(crate) fn svg_texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_string())
            })
            .collect()
    }

    #[test]
    fn the_svg_has_title_axes_legend_and_one_line_per_series() {
        let svg = sample().svg().unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        let texts = svg_texts(&svg);
        for text in [
            "IOPS vs block size",
            "block size (bytes)",
            "IOPS",
            "coop",
            "pread",
            "512",
            "4K",
            "128K",
        ] {
            assert!(
                texts.iter().any(|t| t == text),
                "no text {text:?} in {texts:?}"
            );
        }
        // Data lines are 2 px wide (axes and ticks 1 px): one per series with
        // all its points, and one short sample per legend entry.
        let wide: Vec<usize> = svg
            .lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
            .map(|l| {
                l.split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .count()
            })
            .collect();
        assert_eq!(wide, vec![3, 3, 2, 2], "{svg}");
        // A marker per point.
        assert_eq!(svg.matches("<circle").count(), 6);
    }

    #[test]
    fn points_a_log_axis_cannot_show_are_left_out_not_fatal() {
        let c = Chart::new("t", Axis::log2("threads"), Axis::log10("latency (µs)")).with_series(
            "s",
            vec![
                (0.0, 5.0),
                (1.0, 0.0),
                (2.0, 50.0),
                (4.0, f64::NAN),
                (8.0, 500.0),
            ],
        );
        let drawn = c.drawn_series();
        assert_eq!(
            drawn[0].1,
            vec![(1.0, 50f64.log10()), (3.0, 500f64.log10())]
        );
        assert!(c.svg().unwrap().contains("<circle"));
    }

    #[test]
    fn an_integer_axis_labels_only_whole_values() {
        let c = Chart::new(
            "t",
            Axis::linear("threads").integers(),
            Axis::linear("IOPS"),
        )
        .with_series("s", vec![(1.0, 5.0), (2.0, 6.0)]);
        let texts = svg_texts(&c.svg().unwrap());
        assert!(
            texts.iter().any(|t| t == "1") && texts.iter().any(|t| t == "2"),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t == "1.2" || t == "1.5"), "{texts:?}");
    }

    #[test]
    fn a_category_axis_names_its_positions() {
        let names: Vec<String> = ["pread", "coop", "poll"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = Chart::new(
            "hand-off",
            Axis::categories("strategy", names),
            Axis::linear("µs"),
        )
        .with_series("p99", vec![(0.0, 5.0), (1.0, 9.0), (2.0, 30.0)]);
        let texts = svg_texts(&c.svg().unwrap());
        for n in ["pread", "coop", "poll"] {
            assert_eq!(texts.iter().filter(|t| *t == n).count(), 1, "{texts:?}");
        }
    }

    #[test]
    fn stacked_bars_pile_each_series_on_the_ones_before() {
        let names: Vec<String> = ["psync", "io_uring"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = Chart::new(
            "by layer",
            Axis::categories("engine", names),
            Axis::linear("clocks"),
        )
        .with_series("syscall", vec![(0.0, 100.0), (1.0, 50.0)])
        .with_series("block", vec![(0.0, 300.0), (1.0, 0.0)])
        .with_series("driver", vec![(1.0, 200.0)])
        .stacked();
        assert_eq!(
            c.segments(),
            vec![
                (0, 0.0, 0.0, 100.0),
                (0, 1.0, 0.0, 50.0),
                (1, 0.0, 100.0, 400.0),
                (2, 1.0, 50.0, 250.0)
            ]
        );
        let svg = c.svg().unwrap();
        let texts = svg_texts(&svg);
        for n in ["psync", "io_uring", "syscall", "block", "driver"] {
            assert!(texts.iter().any(|t| t == n), "{n}: {texts:?}");
        }
        // Four segments (the zero one is left out) and three legend keys.
        assert!(svg.matches("<rect").count() >= 7);
    }

    #[test]
    fn an_empty_chart_says_so() {
        let c =
            Chart::new("nothing", Axis::linear("x"), Axis::linear("y")).with_series("s", vec![]);
        assert!(svg_texts(&c.svg().unwrap()).contains(&"no data".to_string()));
    }

    #[test]
    fn the_png_is_a_png_of_the_chart_size() {
        let bytes = sample().png().unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height, big-endian, right after the chunk header.
        let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!((w, h), SIZE);
    }
}
