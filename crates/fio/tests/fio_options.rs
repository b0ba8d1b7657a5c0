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
