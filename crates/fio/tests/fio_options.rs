//! Every option and alias of fio 3.33 is either read by hiops, accepted as
//! a documented no-op, or refused by name with what to do instead: none is
//! "unknown".

use hiops_fio::options::{lookup, Lookup, OPTIONS};

fn fio_3_33_names() -> Vec<&'static str> {
    include_str!("data/fio-3.33-options.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

#[test]
fn every_fio_3_33_option_has_an_answer() {
    let names = fio_3_33_names();
    assert!(names.len() > 300, "the list holds {} names", names.len());
    let unknown: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| matches!(lookup(n), Lookup::Unknown))
        .collect();
    assert!(
        unknown.is_empty(),
        "fio options hiops does not know: {unknown:?}"
    );
}

#[test]
fn no_op_options_say_why_in_their_help() {
    for d in OPTIONS.iter().filter(|d| d.help.starts_with("Accepted")) {
        assert!(
            d.help.contains("no effect") || d.help.contains(':'),
            "{}: '{}' does not say why it is accepted",
            d.name,
            d.help
        );
    }
    for n in [
        "disable_lat",
        "thread",
        "create_serialize",
        "random_generator",
    ] {
        match lookup(n) {
            Lookup::Known(d) => assert!(d.help.starts_with("Accepted"), "{n}: {}", d.help),
            _ => panic!("{n} is not accepted"),
        }
    }
    // fio reads threads= (its tiobench profile's option) in any job file.
    match lookup("threads") {
        Lookup::Known(d) => assert!(d.help.contains("tiobench"), "{}", d.help),
        _ => panic!("threads is not accepted"),
    }
    assert!(
        matches!(lookup("thred"), Lookup::Unknown),
        "a typo is no option"
    );
}

/// With fio installed, what it lists itself (`fio --cmdhelp=all`) is covered
/// too, whatever its version.
#[test]
fn the_installed_fio_lists_nothing_hiops_does_not_know() {
    let Ok(out) = std::process::Command::new("fio")
        .arg("--cmdhelp=all")
        .output()
    else {
        eprintln!("skipped: fio is not installed");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let unknown: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .filter(|n| !n.is_empty() && matches!(lookup(n), Lookup::Unknown))
        .collect();
    let version = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if version != "fio-3.33" && !unknown.is_empty() {
        eprintln!(
            "fio {version:?} has options newer than 3.33 that hiops does not know: {unknown:?}"
        );
        return;
    }
    assert!(
        unknown.is_empty(),
        "fio lists options hiops does not know: {unknown:?}"
    );
}

/// fio 3.33's options hiops refuses, each for a reason of its own: GPU
/// buffers (no CUDA here) and NVMe passthrough commands (no NVMe
/// character device). Every other option of fio 3.33 is read
/// with fio's meaning; this list may shrink, never grow.
const STILL_REFUSED: &[&str] = &["gpu_dev_id", "cmd_type"];

/// Engines whose options hiops lists but does not have: each needs a
/// library, a server or hardware this machine lacks.
const ABSENT_ENGINES: &[&str] = &[
    "libhdfs",
    "librpma",
    "rbd",
    "rados",
    "dfs",
    "mtd",
    "rdma",
    "sg",
    "http",
    "nbd",
    "libcufile",
    "nfs",
    "xnvme",
];

#[test]
fn fio_3_33_options_are_refused_only_where_the_list_says_why() {
    let mut refused: Vec<&str> = fio_3_33_names()
        .into_iter()
        .filter(|n| matches!(lookup(n), Lookup::NotImplemented(_)))
        .collect();
    refused.sort_unstable();
    let mut allowed = STILL_REFUSED.to_vec();
    allowed.sort_unstable();
    let extra: Vec<_> = refused.iter().filter(|n| !allowed.contains(n)).collect();
    assert!(
        extra.is_empty(),
        "refused without a reason listed here: {extra:?}"
    );
    for n in fio_3_33_names() {
        if let Lookup::OtherEngine(engines) = lookup(n) {
            let named = engines
                .split([',', ' '])
                .filter(|w| !w.is_empty() && *w != "or");
            for e in named {
                assert!(
                    ABSENT_ENGINES.contains(&e),
                    "{n}: engine {e} is not one this machine lacks"
                );
            }
        }
    }
}
