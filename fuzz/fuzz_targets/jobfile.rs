//! fio job files: parsed (`jobfile::parse_bytes`, any bytes), printed back as a job
//! file and parsed again to the same sections and options, printed as a
//! command line (`--showcmd`) and read back to the same options, then
//! each job planned as far as its spec, and the whole plan.
#![no_main]

use hiops_fio::cmdline::showcmd;
use hiops_fio::jobfile::{
    parse_bytes, parse_text, sections_from_args, Section, MAX_EXPANDED_BYTES,
};
use hiops_fio::options::takes_value;
use hiops_fio::{plan_sources, Defaults, Source};
use hiops_fuzz::{all_keys_known, env, known, options_of, plan_jobs, shell_words, KeyValue};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    // `include` reads a file: not the parser's input.
    if data.windows(7).any(|w| w == b"include") {
        return;
    }
    let Ok(sections) = parse_bytes(data, "fuzz.fio", Path::new("/nonexistent"), &env) else {
        return;
    };
    let values: usize = sections
        .iter()
        .flat_map(|s| &s.options)
        .filter_map(|o| o.value.as_ref())
        .map(String::len)
        .sum();
    assert!(
        values as u64 <= MAX_EXPANDED_BYTES,
        "{values} bytes of values"
    );
    let printed = print(&sections);
    let again = parse_text(&printed, "fuzz.fio", Path::new("/nonexistent"), &env)
        .unwrap_or_else(|e| panic!("the printed job file does not parse: {e}\n{printed}"));
    assert_eq!(options_of(&sections), options_of(&again), "{printed}");
    command_line_round_trip(&sections);
    // The whole plan (phases, groups, thread numbers) when every job
    // planned alone, nothing reads a file (a trace to replay) and every
    // key is known (see all_keys_known).
    let reads_trace = data.windows(10).any(|w| w == b"read_iolog");
    let whole = !reads_trace && all_keys_known(&sections);
    plan_jobs(&sections, Defaults::Fio);
    if whole {
        let _ = plan_sources(&[Source { sections }], Defaults::Fio, true);
    }
});

/// The sections as a job file, one option a line.
fn print(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out += &format!("[{}]\n", s.name);
        for o in &s.options {
            match &o.value {
                Some(v) => out += &format!("{}={v}\n", o.key),
                None => out += &format!("{}\n", o.key),
            }
        }
    }
    out
}

/// `--showcmd` writes each job file as one shell command; read back as the
/// shell and fio's command line read it, it holds the same options.
fn command_line_round_trip(sections: &[Section]) {
    // A bare option that takes a value cannot be written as `--key`.
    let bare_value = |s: &Section| {
        s.options
            .iter()
            .any(|o| o.value.is_none() && takes_value(&o.key))
    };
    if sections.iter().any(bare_value) {
        return;
    }
    if sections
        .iter()
        .any(|s| known::showcmd_changes_name(&s.name))
    {
        return;
    }
    let source = Source {
        sections: sections.to_vec(),
    };
    let line = showcmd(std::slice::from_ref(&source)).remove(0);
    let words = shell_words(&line).unwrap_or_else(|| panic!("unbalanced quotes: {line}"));
    assert_eq!(words[..2], ["hiops", "run"], "{line}");
    let read = sections_from_args(&words[2..], &takes_value, &env)
        .unwrap_or_else(|e| panic!("--showcmd's line does not read back: {e}\n{line}"));
    assert_eq!(events(sections, false), events(&read, true), "{line}");
}

/// The options in order, each `--name` (a job, or a `[global]` after one)
/// marked, as `--showcmd` orders them.
fn events(sections: &[Section], from_args: bool) -> Vec<KeyValue> {
    let mut out = Vec::new();
    let mut after_job = false;
    for (i, s) in sections.iter().enumerate() {
        let named = if from_args {
            i > 0
        } else {
            !s.is_global() || after_job
        };
        after_job |= !s.is_global();
        if named {
            out.push(("--name".to_string(), Some(s.name.clone())));
        }
        let opts = s.options.iter().filter(|o| o.key != "name");
        out.extend(opts.map(|o| (o.key.clone(), o.value.clone())));
    }
    out
}
