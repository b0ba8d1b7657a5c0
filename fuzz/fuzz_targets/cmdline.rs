//! fio's command-line job form (`hiops run --name=a --rw=read ...`): the
//! input's lines are the arguments (`--section=NAME` picks sections, as
//! `hiops run` does). Every `--key` becomes one option, each `--name` a
//! section whose first option is its name; the sources keep only the
//! sections asked for; each job is planned as far as its spec, on one
//! rank of a run across processes too, and the whole plan.
#![no_main]

use hiops_fio::cmdline::{sources, CommandLine};
use hiops_fio::jobfile::sections_from_args;
use hiops_fio::options::takes_value;
use hiops_fio::{plan_sources, Defaults, Placeholders};
use hiops_fuzz::{all_keys_known, env, plan_jobs};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (only, args): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|a| a.starts_with("--section="));
    let args: Vec<String> = args.into_iter().map(String::from).collect();
    let only: Vec<String> = only
        .iter()
        .map(|a| a["--section=".len()..].into())
        .collect();
    if let Ok(sections) = sections_from_args(&args, &takes_value, &env) {
        check_sections(&args, &sections);
    }
    let cl = CommandLine {
        job_args: args,
        files: Vec::new(),
        only_sections: only,
    };
    let rank = Placeholders {
        rank: 3,
        nranks: 4,
        host: "node{rank}".into(),
    };
    for rank in [None, Some(&rank)] {
        let Ok((srcs, defaults)) = sources(&cl, &env, rank) else {
            continue;
        };
        for s in srcs.iter().flat_map(|s| &s.sections) {
            let kept =
                s.is_global() || cl.only_sections.is_empty() || cl.only_sections.contains(&s.name);
            assert!(kept, "--section kept {}", s.name);
        }
        for s in &srcs {
            plan_jobs(&s.sections, defaults);
        }
        // The whole plan, where it makes no file of its own (the embedded
        // job's temporary file), reads none (a trace to replay) and every
        // key is known (see all_keys_known).
        let whole = srcs.iter().all(|s| all_keys_known(&s.sections));
        if defaults == Defaults::Fio && !text.contains("read_iolog") && whole {
            let _ = plan_sources(&srcs, defaults, true);
        }
    }
});

fn check_sections(args: &[String], sections: &[hiops_fio::jobfile::Section]) {
    assert!(sections[0].is_global() && sections[0].origin.file.is_none());
    for s in &sections[1..] {
        let first = &s.options[0];
        assert_eq!(first.key, "name");
        assert_eq!(first.value.as_deref(), Some(s.name.as_str()));
        assert!(!s.name.is_empty());
    }
    // A word not starting with `--` is the value before it, or refused.
    let options: usize = sections.iter().map(|s| s.options.len()).sum();
    let keys = args.iter().filter(|a| a.starts_with("--")).count();
    assert_eq!(options, keys, "{args:?}");
}
