//! A report page: sections of findings, charts and tables, written as one
//! self-contained HTML file (SVG inline, no scripts, no network) beside each
//! chart as SVG and PNG files and each table as CSV. [`chart_of`] draws a
//! sweep's charts and tables for it.

pub mod chart_of;

use crate::sweep::{io_err, write_atomic};
use crate::verdicts::claims::ClaimRow;
use crate::SuiteError;
use hiops_plot::Chart;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Debug, Default)]
pub struct Page {
    pub title: String,
    /// Lines under the title: the command, the machine, the date.
    pub about: Vec<String>,
    pub sections: Vec<Section>,
}

#[derive(Clone, Debug, Default)]
pub struct Section {
    pub heading: String,
    /// Sentences a reader should take away, read from the numbers.
    pub findings: Vec<String>,
    pub charts: Vec<Chart>,
    pub tables: Vec<Table>,
    /// Caveats: what could not be measured, and why.
    pub notes: Vec<String>,
    /// The papers' claims this section's figures answer: each is shown as
    /// a line before its findings, and as a row of the page's table of
    /// claims.
    pub claims: Vec<ClaimRow>,
}

impl Section {
    /// What the section says, in the order a page shows it: its claims'
    /// lines, then its findings.
    pub fn lines(&self) -> Vec<String> {
        (self.claims.iter().map(ClaimRow::line))
            .chain(self.findings.iter().cloned())
            .collect()
    }
}

impl Page {
    /// Every claim of the page's sections as one table, or `None` when no
    /// section answers one.
    pub fn claims_table(&self) -> Option<Table> {
        let rows: Vec<Vec<String>> = (self.sections.iter())
            .flat_map(|s| s.claims.iter().map(ClaimRow::cells))
            .collect();
        (!rows.is_empty()).then(|| Table {
            caption: "Read against the papers".into(),
            header: ["paper", "claim", "here", "verdict", "why", "rule"]
                .map(String::from)
                .to_vec(),
            rows,
        })
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn csv(&self) -> String {
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = row.iter().map(|c| csv_cell(c)).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

/// RFC 4180: quote cells holding a comma, quote or line break.
pub fn csv_cell(c: &str) -> String {
    if c.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", c.replace('"', "\"\""))
    } else {
        c.to_string()
    }
}

/// Parses what [`Table::csv`] writes (RFC 4180 quoting).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, '\r') => {}
            (false, c) => cell.push(c),
        }
    }
    if !cell.is_empty() || !row.is_empty() {
        row.push(cell);
        rows.push(row);
    }
    rows
}

/// A file name from a title: lower case, dashes.
pub fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_matches('-');
    s.chars()
        .take(60)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string()
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:DejaVu Sans,Verdana,sans-serif;max-width:1700px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
.about{color:#555;font-size:.9em}.about code{background:#f4f4f4;padding:0 .3em}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{flex:0 1 800px;margin:0}.chart svg{width:100%;height:auto}
.chart .files{font-size:.8em;color:#666}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}caption{text-align:left;font-weight:bold;padding:.3em 0}
td,th{border:1px solid #ddd;padding:.25em .6em}td{text-align:right}th{background:#f4f4f4}
td:first-child{text-align:left}.findings li{margin:.3em 0}.notes{color:#844;font-size:.9em}";

/// Writes `dir/index.html`, `dir/plots/*.svg|png` and `dir/tables/*.csv`.
/// Returns the paths of the chart files written.
pub fn write(dir: &Path, page: &Page) -> Result<Vec<std::path::PathBuf>, SuiteError> {
    let plots = dir.join("plots");
    let tables = dir.join("tables");
    crate::sweep::make_dir(&plots)?;
    crate::sweep::make_dir(&tables)?;
    remove_old_files(&plots, &tables)?;
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(&page.title),
        escape(&page.title)
    );
    for line in &page.about {
        let _ = writeln!(html, "<p class=\"about\">{}</p>", code_spans(line));
    }
    let mut written = Vec::new();
    // Plots and tables live in separate directories: names clash only within one.
    let mut used_plots = std::collections::HashSet::new();
    let mut used_tables = std::collections::HashSet::new();
    let summary = page.claims_table().map(|t| Section {
        heading: "Read against the papers".into(),
        findings: vec!["Each claim of the source papers this report's figures answer, with its verdict on this machine; the sections below show the figures.".into()],
        tables: vec![t],
        ..Section::default()
    });
    for s in summary.iter().chain(&page.sections) {
        let _ = writeln!(html, "<section><h2>{}</h2>", escape(&s.heading));
        if !(s.findings.is_empty() && s.claims.is_empty()) {
            html.push_str("<ul class=\"findings\">\n");
            for f in s.lines() {
                let _ = writeln!(html, "<li>{}</li>", code_spans(&f));
            }
            html.push_str("</ul>\n");
        }
        if !s.charts.is_empty() {
            html.push_str("<div class=\"charts\">\n");
            for c in &s.charts {
                let name = unique_name(&mut used_plots, &c.title, &s.heading);
                written.extend(chart_files(&mut html, c, &plots, &name)?);
            }
            html.push_str("</div>\n");
        }
        for t in &s.tables {
            let name = unique_name(&mut used_tables, &t.caption, &s.heading);
            write_atomic(&tables.join(format!("{name}.csv")), t.csv().as_bytes())?;
            table_html(&mut html, t, &name);
        }
        for n in &s.notes {
            let _ = writeln!(html, "<p class=\"notes\">{}</p>", code_spans(n));
        }
        html.push_str("</section>\n");
    }
    html.push_str("</body></html>\n");
    assert_eq!(
        written.len(),
        2 * used_plots.len(),
        "each chart's SVG and PNG under a name of its own"
    );
    write_atomic(&dir.join("index.html"), html.as_bytes())?;
    Ok(written)
}

/// A chart's SVG and PNG files, named `name` in `plots`, and the chart
/// inline in the page.
fn chart_files(
    html: &mut String,
    c: &Chart,
    plots: &Path,
    name: &str,
) -> Result<[std::path::PathBuf; 2], SuiteError> {
    let svg = c.svg().map_err(|e| SuiteError::Chart(e.to_string()))?;
    let svg_path = plots.join(format!("{name}.svg"));
    let png_path = plots.join(format!("{name}.png"));
    write_atomic(&svg_path, svg.as_bytes())?;
    let png = c.png().map_err(|e| SuiteError::Chart(e.to_string()))?;
    write_atomic(&png_path, &png)?;
    let _ = writeln!(
        html,
        "<figure class=\"chart\">{}\n<figcaption class=\"files\">plots/{name}.svg · plots/{name}.png</figcaption></figure>",
        strip_xml_header(&svg)
    );
    Ok([svg_path, png_path])
}

/// A redrawn report replaces the old charts and tables: names may have
/// changed.
fn remove_old_files(plots: &Path, tables: &Path) -> Result<(), SuiteError> {
    for (d, exts) in [(plots, &["svg", "png"][..]), (tables, &["csv"][..])] {
        for e in std::fs::read_dir(d).map_err(|e| io_err(d, e))?.flatten() {
            let p = e.path();
            if p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| exts.contains(&x))
            {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    Ok(())
}

/// A table as HTML, its caption naming its CSV file.
fn table_html(html: &mut String, t: &Table, name: &str) {
    let _ = write!(
        html,
        "<table><caption>{} <span class=\"files\">(tables/{name}.csv)</span></caption>\n<tr>",
        escape(&t.caption)
    );
    for h in &t.header {
        let _ = write!(html, "<th>{}</th>", escape(h));
    }
    html.push_str("</tr>\n");
    for r in &t.rows {
        html.push_str("<tr>");
        for c in r {
            let _ = write!(html, "<td>{}</td>", escape(c));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
}

/// A file name from a title; where another section has the same title,
/// the section's heading goes in front, then a number.
fn unique_name(used: &mut std::collections::HashSet<String>, title: &str, heading: &str) -> String {
    let plain = slug(title);
    if used.insert(plain.clone()) {
        return plain;
    }
    let long = format!("{}-{plain}", slug(heading));
    if used.insert(long.clone()) {
        return long;
    }
    (2..)
        .map(|n| format!("{long}-{n}"))
        .find(|n| used.insert(n.clone()))
        .expect("some number is free")
}

/// Escapes text and renders `code` in backticks as <code>.
fn code_spans(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

fn strip_xml_header(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiops_plot::Axis;

    #[test]
    fn csv_round_trips_awkward_cells() {
        let t = Table {
            caption: "c".into(),
            header: vec!["name".into(), "value".into()],
            rows: vec![
                vec!["a,b".into(), "1".into()],
                vec!["say \"hi\"".into(), "two\nlines".into()],
                vec!["".into(), "3".into()],
            ],
        };
        let back = parse_csv(&t.csv());
        assert_eq!(back[0], t.header);
        assert_eq!(&back[1..], &t.rows[..]);
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(
            slug("IOPS vs block size (128 threads)"),
            "iops-vs-block-size-128-threads"
        );
        assert_eq!(slug("µs/IO"), "s-io");
    }

    #[test]
    fn the_page_inlines_each_chart_and_writes_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let chart = Chart::new(
            "IOPS <vs> threads",
            Axis::log2("threads"),
            Axis::linear("IOPS"),
        )
        .with_series("coop", vec![(1.0, 10.0), (2.0, 20.0)]);
        let page = Page {
            title: "a & b".into(),
            about: vec!["made by `hiops sweep`".into()],
            sections: vec![Section {
                claims: Vec::new(),
                heading: "Scaling".into(),
                findings: vec!["coop peaks at 2 threads".into()],
                charts: vec![chart.clone(), chart],
                tables: vec![Table {
                    caption: "points".into(),
                    header: vec!["x".into()],
                    rows: vec![vec!["<1>".into()]],
                }],
                notes: vec![],
            }],
        };
        let files = write(tmp.path(), &page).unwrap();
        assert_eq!(
            files.len(),
            4,
            "two charts with distinct names, SVG and PNG each"
        );
        assert!(files.iter().all(|f| f.exists()));
        let html = std::fs::read_to_string(tmp.path().join("index.html")).unwrap();
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("<title>a &amp; b</title>"));
        assert!(html.contains("<code>hiops sweep</code>"));
        assert!(html.contains("<td>&lt;1&gt;</td>"));
        assert!(
            !html.contains("<script") && !html.contains("http://")
                || html.contains("xmlns=\"http://www.w3.org/2000/svg\"")
        );
        assert!(tmp.path().join("tables/points.csv").exists());
    }

    #[test]
    fn the_papers_claims_open_the_page_as_one_table() {
        use crate::verdicts::claims::Verdict;
        let claim = |source: &str, verdict| ClaimRow {
            item: "hiops-fig7-4k-gain",
            source: source.into(),
            claim: "a claim".into(),
            measured: "a figure".into(),
            verdict,
            why: "a reason".into(),
            rule: String::new(),
        };
        let section = |heading: &str, claims| Section {
            heading: heading.into(),
            findings: vec!["a finding".into()],
            claims,
            ..Section::default()
        };
        let page = Page {
            title: "t".into(),
            about: vec![],
            sections: vec![
                section("one", vec![claim("HIOPS Fig 7", Verdict::Partly)]),
                section("two", vec![]),
                section("three", vec![claim("ADMS'10 Fig 6", Verdict::Reproduced)]),
            ],
        };
        let t = page.claims_table().unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(
            t.rows[0],
            [
                "HIOPS Fig 7",
                "a claim",
                "a figure",
                "partly reproduced",
                "a reason",
                "-"
            ]
        );
        assert_eq!(t.rows[1][3], "reproduced");
        assert_eq!(t.rows[1][4], "", "no why for a reproduced claim");
        assert_eq!(page.sections[0].lines()[1], "a finding");
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), &page).unwrap();
        let html = std::fs::read_to_string(tmp.path().join("index.html")).unwrap();
        let table = html.find("<h2>Read against the papers</h2>").unwrap();
        assert!(
            table < html.find("<h2>one</h2>").unwrap(),
            "the table comes first"
        );
        assert!(tmp
            .path()
            .join("tables/read-against-the-papers.csv")
            .exists());
        let empty = Page {
            sections: vec![section("two", vec![])],
            ..page
        };
        assert!(empty.claims_table().is_none());
    }
}
