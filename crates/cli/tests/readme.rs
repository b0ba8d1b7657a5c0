//! The README agrees with what it describes: its first command builds a
//! feature set crates/cli has and CI checks, its test command is the one
//! `.ci/run` runs, its library sample is crates/path/examples/eight_threads.rs
//! (which every build compiles), and every file it and docs/ link to exists.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The lines of the first fenced block opened with "```" + `info`.
fn fenced(text: &str, info: &str) -> Vec<String> {
    let open = format!("```{info}");
    text.lines()
        .skip_while(|l| l.trim_end() != open)
        .skip(1)
        .take_while(|l| l.trim_end() != "```")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_test_command_is_the_one_ci_runs() {
    let readme = read("README.md");
    let block = fenced(&readme, "sh");
    let test_line = block
        .iter()
        .find(|l| l.contains("cargo test"))
        .expect("the README's first block has the test command");
    let command = test_line
        .split('#')
        .next()
        .unwrap()
        .trim()
        .trim_start_matches("bash .ci/setup && ");
    let ci = read(".ci/run");
    assert!(
        ci.lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains(command)),
        "README's test command `{command}` is not what .ci/run runs"
    );
    assert!(
        ci.contains("bash .ci/setup"),
        ".ci/run no longer runs .ci/setup"
    );
}

/// The `--features` and `--no-default-features` of a cargo command line.
fn feature_flags(line: &str) -> (Vec<String>, bool) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut named = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let list = match w.strip_prefix("--features") {
            Some("") => words.get(i + 1).copied().unwrap_or(""),
            Some(v) => v.trim_start_matches('='),
            None => continue,
        };
        named.extend(
            list.split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_string),
        );
    }
    (named, words.contains(&"--no-default-features"))
}

#[test]
fn the_readme_first_command_builds_a_feature_set_ci_checks() {
    let readme = read("README.md");
    let block = fenced(&readme, "sh");
    let first = block[0].split('#').next().unwrap().trim();
    assert!(
        first.starts_with("bash .ci/setup run && cargo run --release"),
        "the README's first command is `{first}`"
    );
    let (named, no_default) = feature_flags(first);
    let manifest: toml::Table = toml::from_str(&read("crates/cli/Cargo.toml")).unwrap();
    let features = manifest["features"]
        .as_table()
        .expect("crates/cli has features");
    for f in &named {
        assert!(
            features.contains_key(f.as_str()),
            "the README's first command names feature {f}, which crates/cli/Cargo.toml lacks"
        );
    }
    if no_default {
        assert!(
            features.contains_key("default"),
            "--no-default-features in the README, but crates/cli has no default features"
        );
        let ci = read(".ci/run");
        assert!(
            ci.lines()
                .any(|l| !l.trim_start().starts_with('#') && l.contains("--no-default-features")),
            ".ci/run does not check the README's lean build"
        );
    }
}

#[test]
fn the_readme_library_sample_is_the_compiled_example() {
    let readme = read("README.md");
    let sample = fenced(&readme, "rust");
    assert!(!sample.is_empty(), "the README has no rust block");
    let example = read("crates/path/examples/eight_threads.rs");
    let code: Vec<&str> = example
        .lines()
        .skip_while(|l| !l.starts_with("use "))
        .collect();
    assert_eq!(
        sample, code,
        "the README's rust block differs from crates/path/examples/eight_threads.rs"
    );
}

/// The relative links of a Markdown text: `[..](target)`, anchors cut.
fn links(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .map(|l| l.split(')').next().unwrap().split('#').next().unwrap())
        .filter(|t| !t.is_empty() && !t.contains("://"))
        .collect()
}

#[test]
fn every_file_the_readme_and_docs_link_to_exists() {
    let readme = read("README.md");
    let linked = links(&readme);
    assert!(
        linked.len() >= 10,
        "only {} links found: the parser is off",
        linked.len()
    );
    let mut pages = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(Path::new("docs").join(name));
        }
    }
    for page in pages {
        let text = read(page.to_str().unwrap());
        let dir = root().join(page.parent().unwrap());
        for target in links(&text) {
            assert!(
                dir.join(target).exists(),
                "{} links to {target}, which is missing",
                page.display()
            );
        }
    }
}
