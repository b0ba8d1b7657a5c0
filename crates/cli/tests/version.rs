//! `hiops --version` names the release, the commit it was built from and
//! what the build carries; hiops answering as fio keeps fio's form
//! (tests/fio_link.rs checks that one through the link).

mod common;

fn version_line(args: &[&str]) -> String {
    let o = common::hiops().args(args).output().expect("hiops starts");
    assert!(o.status.success(), "{}", common::text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
fn the_version_names_the_commit_and_the_features() {
    let line = version_line(&["--version"]);
    let release = format!("hiops {} (", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&release), "{line}");
    let details = line[release.len()..].trim_end_matches(')');
    let fields: Vec<&str> = details.split("; ").collect();
    let commit = fields[0].strip_prefix("commit ").expect("a commit field");
    // A short hash (with its date) from a git checkout, else "unknown".
    let hash = commit.split(", ").next().unwrap();
    assert!(
        hash == "unknown" || (hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit())),
        "{line}"
    );
    assert!(fields.iter().any(|f| f.starts_with("features: ")), "{line}");
    let engines = fields
        .iter()
        .find_map(|f| f.strip_prefix("engines: "))
        .expect("an engines field");
    assert!(engines.split(", ").any(|e| e == "io_uring"), "{line}");
    assert_eq!(version_line(&["-V"]), line);
}

#[test]
fn hiops_fio_keeps_fios_version_form() {
    let line = version_line(&["fio", "--version"]);
    assert_eq!(
        line,
        format!("fio-3.33-hiops-{}", env!("CARGO_PKG_VERSION"))
    );
}
