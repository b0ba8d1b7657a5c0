//! fio's `--bandwidth-log[=NAME]` (backend.c, fio_backend; eta.c,
//! calc_thread_status): the bandwidth of all jobs together in
//! `NAME-read_bw.log`, `NAME-write_bw.log` and `NAME-trim_bw.log` (NAME
//! `agg` by default), in the current directory. fio samples it every
//! 500 ms; hiops writes a line per second of the measured window (its
//! series), each direction's KiB/s, in fio's log format: `time, KiB/s,
//! direction, 0, 0`, time in ms from the first phase's start, the phases
//! one after the other.

use hiops_bench::result::SeriesPoint;
use hiops_bench::safety::{check_output, create_output, Grants, OutputError, OutputMode};
use hiops_bench::{BenchError, RunResult};
use std::fmt::Write as _;
use std::path::Path;

/// The three logs' names.
fn paths(name: &str) -> [String; 3] {
    ["read", "write", "trim"].map(|which| format!("{name}-{which}_bw.log"))
}

/// Asks the output gate about the three logs before the run.
pub fn check(name: &str, grants: &Grants) -> Result<(), BenchError> {
    for path in paths(name) {
        check_output(Path::new(&path), grants)
            .map_err(|r| BenchError::refused_by("--bandwidth-log", r))?;
    }
    Ok(())
}

/// Writes the three logs after the run, past the output gate (the jobs'
/// `grants`). The gate's refusal is [`BenchError::Refused`].
pub fn write(name: &str, results: &[RunResult], grants: &Grants) -> Result<(), BenchError> {
    let phases: Vec<(&[SeriesPoint], u64)> = results
        .iter()
        .map(|r| (&r.series[..], r.window_ns))
        .collect();
    for (dir, path) in paths(name).into_iter().enumerate() {
        let file = create_output(Path::new(&path), grants, OutputMode::Truncate);
        let file = file.map_err(|e| match e {
            OutputError::Refused(r) => BenchError::refused_by("--bandwidth-log", r),
            e => BenchError::failed_by("--bandwidth-log", e),
        })?;
        std::io::Write::write_all(&mut &file, lines(&phases, dir).as_bytes()).map_err(|e| {
            BenchError::failed_by(format!("--bandwidth-log: cannot write {path}"), e)
                .cause_in_parens()
                .then(": run from a directory you may write")
        })?;
    }
    Ok(())
}

/// The lines of direction `dir` (0 read, 1 write, 2 trim: hiops' series
/// has no trims, so they log 0) over the phases' (series, window).
fn lines(phases: &[(&[SeriesPoint], u64)], dir: usize) -> String {
    let mut text = String::new();
    let mut start_ms = 0.0;
    for &(series, window_ns) in phases {
        for p in series {
            let bytes = match dir {
                0 => p.read_bytes_per_s,
                1 => p.write_bytes_per_s,
                _ => 0.0,
            };
            let t = (start_ms + p.t_s * 1000.0).round() as u64;
            let _ = writeln!(
                text,
                "{t}, {}, {dir}, 0, 0",
                (bytes / 1024.0).round() as u64
            );
        }
        start_ms += window_ns as f64 / 1e6;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_second_is_a_line_in_kib_per_second() {
        let series = [
            SeriesPoint {
                t_s: 1.0,
                read_bytes_per_s: 2048.0 * 1024.0,
                ..Default::default()
            },
            SeriesPoint {
                t_s: 2.0,
                write_bytes_per_s: 1024.0,
                ..Default::default()
            },
        ];
        let two: [(&[SeriesPoint], u64); 2] = [(&series, 2_000_000_000); 2];
        let read = "1000, 2048, 0, 0, 0\n2000, 0, 0, 0, 0\n3000, 2048, 0, 0, 0\n4000, 0, 0, 0, 0\n";
        assert_eq!(lines(&two, 0), read);
        assert_eq!(lines(&two[..1], 1), "1000, 0, 1, 0, 0\n2000, 1, 1, 0, 0\n");
        assert_eq!(lines(&two[..1], 2), "1000, 0, 2, 0, 0\n2000, 0, 2, 0, 0\n");
    }
}
