use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn sections_comments_bare_booleans_and_lines() {
    let text = "; a comment\n# another\n[global]\nbs = 4k\ntime_based\n\n[job1]\nrw=randread\n";
    let s = parse_text(text, "t.fio", Path::new("."), &no_env).unwrap();
    assert_eq!(s.len(), 2);
    assert!(s[0].is_global());
    assert_eq!(s[0].options[0].key, "bs");
    assert_eq!(s[0].options[0].value.as_deref(), Some("4k"));
    assert_eq!(s[0].options[1].value, None);
    assert_eq!(s[1].options[0].origin.line, 8);
    assert_eq!(s[1].options[0].origin.to_string(), "t.fio:8");
}

#[test]
fn inline_comments_end_the_line_as_in_fio() {
    let text = "[global] ; shared\nnumjobs=4 ; 4 jobs\nbs=4k # block\niodepth=8;tight\n\
                [j]#job\nrw=randread\t# random\ntime_based ; flag\n\
                filename=${F}\n";
    let env = |v: &str| (v == "F").then(|| "/tmp/a;b#c".to_string());
    let s = parse_text(text, "t", Path::new("."), &env).unwrap();
    assert_eq!((s[0].name.as_str(), s[1].name.as_str()), ("global", "j"));
    let kv: Vec<(&str, Option<&str>)> = s
        .iter()
        .flat_map(|s| &s.options)
        .map(|o| (o.key.as_str(), o.value.as_deref()))
        .collect();
    assert_eq!(
        kv,
        [
            ("numjobs", Some("4")),
            ("bs", Some("4k")),
            ("iodepth", Some("8")),
            ("rw", Some("randread")),
            ("time_based", None),
            // Expanded after the comment is cut: the value keeps both.
            ("filename", Some("/tmp/a;b#c")),
        ]
    );
    assert_eq!(strip_comment(b"a=b"), b"a=b");
}

#[test]
fn env_expansion_and_unset_variables() {
    let env = |v: &str| (v == "DEV").then(|| "/dev/zram0".to_string());
    let s = parse_text("[j]\nfilename=${DEV}\n", "t", Path::new("."), &env).unwrap();
    assert_eq!(s[0].options[0].value.as_deref(), Some("/dev/zram0"));
    let e = parse_text("[j]\nfilename=${NOPE}\n", "t", Path::new("."), &env)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t:2") && e.contains("NOPE is not set"), "{e}");
    let s = parse_text("[j]\nnumjobs=$ncpus\n", "t", Path::new("."), &no_env).unwrap();
    assert!(
        s[0].options[0]
            .value
            .as_deref()
            .unwrap()
            .parse::<u32>()
            .unwrap()
            >= 1
    );
}

#[test]
fn includes_read_in_place_and_cycles_stop() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("common.fio"), "bs=8k\niodepth=4\n").unwrap();
    std::fs::write(
        dir.path().join("main.fio"),
        "[global]\ninclude common.fio\n[j]\nrw=read\n",
    )
    .unwrap();
    let s = parse_file(&dir.path().join("main.fio"), &no_env).unwrap();
    assert_eq!(s[0].options.len(), 2);
    assert!(s[0].options[0].origin.to_string().ends_with("common.fio:1"));
    std::fs::write(dir.path().join("loop.fio"), "[g]\ninclude loop.fio\n").unwrap();
    let e = parse_file(&dir.path().join("loop.fio"), &no_env)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("loop.fio:2: the file includes itself: remove this include line"),
        "{e}"
    );
    assert_eq!(e.matches("loop.fio").count(), 1, "{e}");
}

#[test]
fn an_include_loop_is_named_once_with_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.fio"), dir.path().join("b.fio"));
    std::fs::write(&a, "[g]\ninclude b.fio\n").unwrap();
    std::fs::write(&b, "bs=4k\ninclude a.fio\n").unwrap();
    let e = parse_file(&a, &no_env).unwrap_err().to_string();
    let (a, b) = (a.display(), b.display());
    assert_eq!(
        e,
        format!(
            "{b}:2: {a} includes itself ({a} -> {b} -> {a}): remove one of these include lines"
        )
    );
    // Deep but finite nesting is still refused, once.
    for i in 0..20 {
        let next = format!("include n{}.fio\n", i + 1);
        std::fs::write(dir.path().join(format!("n{i}.fio")), next).unwrap();
    }
    std::fs::write(dir.path().join("n20.fio"), "").unwrap();
    let e = parse_text("[g]\ninclude n0.fio\n", "t", dir.path(), &no_env)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("nest deeper than 16") && !e.contains('\n'),
        "{e}"
    );
    assert_eq!(e.matches("n1.fio").count(), 0, "{e}");
}

#[test]
fn only_regular_files_are_included() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (target, what) in [
        ("/dev/zero", "is a character device"),
        (".", "is a directory"),
        ("fifo", "is a fifo"),
        ("missing.fio", "cannot read job file"),
    ] {
        let text = format!("[g]\ninclude {target}\n");
        let e = parse_text(&text, "t", dir.path(), &no_env)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t:2: ") && e.contains(what), "{target}: {e}");
    }
    // A job file of the command line may be a pipe, not a device.
    let e = parse_file(Path::new("/dev/zero"), &no_env)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero is a character device, not a job file"),
        "{e}"
    );
    let big = dir.path().join("big.fio");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let e = parse_file(&big, &no_env).unwrap_err().to_string();
    assert!(e.contains("more than 16 MiB"), "{e}");
    // A reader that never ends (as a /proc file or a pipe can) stops too.
    let e = read_bounded(std::io::repeat(b'#'), "endless")
        .unwrap_err()
        .to_string();
    assert!(e.contains("endless holds more than 16 MiB"), "{e}");
}

#[test]
fn comments_may_hold_any_bytes_as_in_fio() {
    let clean: &[u8] = b"[global] ; all\nbs=4k # block\n;\n[j]\nrw=read\n";
    let dirty: &[u8] = b"[global] ; \xff\xfe all\nbs=4k # bl\xe9ck\n;\x80\x00\n[j]\nrw=read\n";
    let parse = |b: &[u8]| parse_bytes(b, "t", Path::new("."), &no_env);
    assert_eq!(parse(dirty).unwrap(), parse(clean).unwrap());
    let e = parse(b"[j]\nfilename=/tmp/caf\xe9\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t:2: byte 18 of the line (0xe9) is not UTF-8"),
        "{e}"
    );
    let e = parse(b"[j]\nbs=4k\x00\n").unwrap_err().to_string();
    assert!(e.starts_with("t:2: a NUL byte at byte 6"), "{e}");
    // Windows line ends read as lines.
    let s = parse(b"[j]\r\nbs=4k\r\n").unwrap();
    assert_eq!(s[0].options[0].value.as_deref(), Some("4k"));
}

#[test]
fn sizes_counts_and_expansions_are_bounded() {
    let many = "[j]\n".repeat(MAX_SECTIONS + 1);
    let e = parse_text(&many, "t", Path::new("."), &no_env)
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than 4096 sections"), "{e}");
    let big = |_: &str| Some("x".repeat(1 << 20));
    let e = parse_text(
        &format!("[j]\nf={}\n", "${X}".repeat(65)),
        "t",
        Path::new("."),
        &big,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("past 64 MiB once their variables are expanded") && e.len() < 300,
        "{e}"
    );
    let long = format!("[j]\n{}\n", "k ".repeat(60_000));
    let e = parse_text(&long, "t", Path::new("."), &no_env)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not an option") && e.len() < 300, "{e}");
}

#[test]
fn options_before_a_section_are_refused() {
    let e = parse_text("bs=4k\n", "t", Path::new("."), &no_env)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t:1") && e.contains("[global]"), "{e}");
    assert!(parse_text("[j\n", "t", Path::new("."), &no_env).is_err());
}

#[test]
fn command_line_jobs_split_at_name() {
    let args: Vec<String> = [
        "--bs=8k",
        "--name=a",
        "--rw",
        "read",
        "--name=b",
        "--time_based",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let s = sections_from_args(&args, &|k| k == "rw", &no_env).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(s[0].options[0].key, "bs");
    assert_eq!(s[1].name, "a");
    assert_eq!(s[1].options[1].value.as_deref(), Some("read"));
    assert_eq!(s[2].options[1].value, None);
}

/// The bound on expansion is on all of a job file's values together: a
/// 120 KiB variable named by many short lines grows by doubling with each
/// line the file adds, and stops at 64 MiB however the bytes are spread.
#[test]
fn expansion_is_bounded_across_values_and_the_command_line() {
    let big = |_: &str| Some("x".repeat(120 << 10));
    let lines = "a=${X}${X}${X}${X}${X}${X}${X}${X}\n".repeat(80);
    let e = parse_text(&format!("[j]\n{lines}"), "t", Path::new("."), &big)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("past 64 MiB once their variables are expanded: use fewer or shorter variables"),
        "{e}"
    );
    // Line 69 is the first whose values pass 64 MiB (8 x 120 KiB a line).
    let per_line = 8 * (120u64 << 10);
    let line = MAX_EXPANDED_BYTES / per_line + 1 + 1;
    assert!(e.starts_with(&format!("t:{line}:")), "{e}");
    // Under the bound the same lines parse, each value whole.
    let s = parse_text(
        &format!("[j]\n{}", "a=${X}${X}\n".repeat(8)),
        "t",
        Path::new("."),
        &big,
    )
    .unwrap();
    assert_eq!(
        s[0].options[7].value.as_ref().unwrap().len(),
        2 * (120 << 10)
    );
    let args: Vec<String> = std::iter::once("--name=j".to_string())
        .chain((0..600).map(|_| "--a=${X}".to_string()))
        .collect();
    let e = sections_from_args(&args, &|_| false, &big)
        .unwrap_err()
        .to_string();
    assert!(e.contains("past 64 MiB once"), "{e}");
}

#[test]
fn room_is_taken_byte_for_byte() {
    let origin = Origin {
        file: None,
        line: 1,
    };
    let env = |_: &str| Some("abc".to_string());
    let mut room = Room::full();
    let v = expand("a${V}$ncpus$x", &env, &origin, &mut room).unwrap();
    assert_eq!(MAX_EXPANDED_BYTES - room.left(), v.len() as u64);
    assert!(v.starts_with("aabc") && v.ends_with("$x"), "{v}");
}
