use super::values::{cpu_list, cpu_mask, engine, per_direction, split_filenames};
use super::*;
use hiops_hal::clock::ClockSource;
use hiops_hal::EngineKind;

#[test]
fn names_are_unique_and_documented() {
    let mut seen = std::collections::HashSet::new();
    for d in OPTIONS {
        assert!(!d.help.is_empty(), "{} has no help", d.name);
        for n in std::iter::once(&d.name).chain(d.aliases) {
            assert!(seen.insert(*n), "{n} is listed twice");
        }
    }
    for (n, _) in NOT_IMPLEMENTED.iter().chain(OTHER_ENGINE_OPTIONS) {
        assert!(seen.insert(*n), "{n} is both implemented and not");
    }
}

#[test]
fn typos_get_the_closest_name_and_strangers_none() {
    assert_eq!(suggest("iodpeth"), Some("iodepth"));
    assert_eq!(suggest("thred"), Some("thread"));
    assert_eq!(suggest("ramp_tme"), Some("ramp_time"));
    assert_eq!(suggest("BS"), Some("bs"));
    assert_eq!(suggest("rate_iops_mn"), Some("rate_iops_min"));
    assert_eq!(suggest("frobnicate"), None);
    assert_eq!(suggest("zz"), None);
    assert_eq!(suggest(&"iodepth".repeat(20_000)), None);
}

#[test]
fn fio_aliases_name_the_same_option() {
    for (alias, name) in [
        ("ratemin", "rate_min"),
        ("fileoffset", "offset"),
        ("nr_files", "nrfiles"),
        ("readwrite", "rw"),
        ("blocksize", "bs"),
        ("ba", "blockalign"),
        ("timeout", "runtime"),
        ("disable_bw", "disable_bw_measurement"),
        ("ratecycle", "rate_cycle"),
        ("mem_align", "iomem_align"),
    ] {
        match lookup(alias) {
            Lookup::Known(d) => assert_eq!(d.name, name, "{alias}"),
            _ => panic!("{alias} is not an alias of {name}"),
        }
    }
    let mut d = Draft::default();
    (match lookup("ratemin") {
        Lookup::Known(d) => d.apply,
        _ => unreachable!(),
    })(&mut d, Some("1m,2m"))
    .unwrap();
    assert_eq!(d.rate_min, [Some(1 << 20), Some(2 << 20)]);
}

#[test]
fn clocksource_names_the_clock_as_fio_does() {
    let source = |v: &str| {
        let mut d = Draft::default();
        parse_option(&mut d, "clocksource", Some(v)).map(|()| d.clocksource)
    };
    assert_eq!(source("cpu"), Ok(Some(ClockSource::Tsc)));
    assert_eq!(source("clock_gettime"), Ok(Some(ClockSource::ClockGettime)));
    assert_eq!(source("gettimeofday"), Ok(Some(ClockSource::ClockGettime)));
    assert!(source("hpet")
        .unwrap_err()
        .to_string()
        .contains("use cpu, clock_gettime"));
}

#[test]
fn no_op_options_refuse_values_that_would_change_a_result() {
    let apply = |k: &str, v: &str| match lookup(k) {
        Lookup::Known(d) => (d.apply)(&mut Draft::default(), Some(v)),
        _ => panic!("{k} is not accepted"),
    };
    assert!(apply("gtod_reduce", "1").is_ok());
    assert!(apply("random_generator", "lfsr").is_ok());
    assert!(apply("random_generator", "mt").is_err());
    assert!(apply("rate_cycle", "500").is_ok());
    let e = apply("rate_cycle", "0").unwrap_err().to_string();
    assert!(e.contains("1 or more"), "{e}");
    assert!(apply("create_fsync", "0").is_ok());
    assert!(apply("allow_file_create", "0").is_ok());
    assert!(apply("io_submit_mode", "offload").is_ok());
    assert!(apply("io_submit_mode", "threads").is_err());
    assert!(apply("iomem_align", "4k").is_ok());
    assert!(apply("iomem_align", "64k").is_err());
}

#[test]
fn split_values_follow_fios_read_write_trim_rule() {
    let parse = |t: &str| Ok::<u32, crate::ValueError>(t.parse().unwrap());
    let split = |t: &str| per_direction(t, [Some(1), Some(1), Some(1)], parse).unwrap();
    assert_eq!(split("4"), [Some(4); 3]);
    assert_eq!(split("4,8"), [Some(4), Some(8), Some(8)]);
    assert_eq!(split("4,8,"), [Some(4), Some(8), Some(1)]);
    assert_eq!(split(",8"), [Some(1), Some(8), Some(8)]);
    assert_eq!(split("4,4,8"), [Some(4), Some(4), Some(8)]);
    assert_eq!(split(",,8"), [Some(1), Some(1), Some(8)]);
    // Two directions: a trim value of its own is refused, the write's is not.
    let pair = |t: &str| per_direction(t, [None, None], parse);
    assert_eq!(pair("4,8,8"), Ok([Some(4), Some(8)]));
    assert!(pair("4,8,16")
        .unwrap_err()
        .to_string()
        .contains("trim value of its own"));
}

#[test]
fn filenames_split_on_colons_but_not_escaped_ones() {
    assert_eq!(split_filenames("/a:/b"), vec!["/a", "/b"]);
    assert_eq!(split_filenames("c\\:d:/e"), vec!["c:d", "/e"]);
}

#[test]
fn engines_map_and_unknown_ones_are_named() {
    assert_eq!(engine("sync"), Ok(EngineKind::Psync));
    assert_eq!(engine("io_uring"), Ok(EngineKind::IoUring));
    assert_eq!(engine("posixaio"), Ok(EngineKind::PosixAio));
    assert!(engine("spdk")
        .unwrap_err()
        .to_string()
        .contains("'spdk' is not implemented"));
}

#[test]
fn cpumask_and_lists() {
    assert_eq!(cpu_mask("0x5"), Ok(vec![0, 2]));
    assert_eq!(cpu_list("0-2,5"), Ok(vec![0, 1, 2, 5]));
    assert!(cpu_list("0-4000000000")
        .unwrap_err()
        .to_string()
        .contains("past the 1024"));
    assert_eq!(cpu_list("0-1023").map(|c| c.len()), Ok(1024));
    let e = cpu_list("0-1023,0").unwrap_err().to_string();
    assert!(e.contains("more than 1024 CPUs"), "{e}");
}

/// Every option against values a mutated job file holds: each comes
/// back Ok or as one bounded line (no panic, no runaway).
#[test]
fn every_option_takes_any_value_without_panic() {
    let long = "9".repeat(120_000);
    let values = [
        "",
        "0",
        "-1",
        "1e400",
        "nan",
        "0x",
        "0xffffffffffffffffff",
        "18446744073709551616",
        ":",
        ",",
        ",,,",
        "/",
        "%",
        "-",
        "0-0",
        "4k-",
        "1/",
        "a:b:c",
        "\u{0}",
        "é",
        "\u{1b}[2J",
        "100%",
        "1:1",
        "zoned:",
        "zipf:",
        "1,2,3,4",
        long.as_str(),
    ];
    for def in OPTIONS {
        for v in values.iter().map(|v| Some(*v)).chain([None]) {
            let mut d = Draft::default();
            if let Err(e) = parse_option(&mut d, def.name, v) {
                let e = e.to_string();
                assert!(
                    !e.contains('\n') && e.len() < 400,
                    "{}={v:?}: {e}",
                    def.name
                );
            }
        }
    }
    let e = parse_option(&mut Draft::default(), "bs", Some(&long))
        .unwrap_err()
        .to_string();
    assert!(e.len() < 300 && e.matches("999").count() < 30, "{e}");
    let e = parse_option(&mut Draft::default(), "nope", None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'nope' is not an option"), "{e}");
}

#[test]
fn fio_defaults_name_options_hiops_refuses_and_match_as_values() {
    for (name, values) in FIO_DEFAULTS {
        assert!(
            NOT_IMPLEMENTED.iter().any(|(n, _)| n == name),
            "{name} is not an option hiops refuses"
        );
        for v in *values {
            assert!(is_fio_default(name, Some(v)), "{name}={v}");
        }
    }
    // Words exactly, around blanks.
    assert!(is_fio_default("cmd_type", Some(" nvme ")));
    assert!(!is_fio_default("cmd_type", Some("nvm")));
    assert!(!is_fio_default("zero_buffers", None));
    assert!(!is_fio_default("rate_ignore_thinktime", Some("1")));
    assert!(
        !is_fio_default("gpu_dev_id", Some("0")),
        "no default listed"
    );
    let mut d = Draft::default();
    assert!(parse_option(&mut d, "cmd_type", Some("nvme")).is_ok());
    assert!(parse_option(&mut d, "cmd_type", Some("zns")).is_err());
}

#[test]
fn zero_is_fio_s_off_for_limits_and_counts() {
    let mut d = Draft::default();
    for (key, value) in [
        ("rate_iops", "100,200"),
        ("rate", "1m"),
        ("number_ios", "10"),
        ("size", "1m"),
        ("io_size", "1m"),
    ] {
        parse_option(&mut d, key, Some(value)).unwrap();
    }
    assert_eq!(d.rate_iops, [Some(100), Some(200)]);
    parse_option(&mut d, "rate_iops", Some("0,")).unwrap();
    assert_eq!(
        d.rate_iops,
        [None, Some(200)],
        "an empty side keeps its value"
    );
    for (key, value) in [
        ("rate_iops", "0"),
        ("rate", "0"),
        ("number_ios", "0"),
        ("size", "0"),
        ("io_size", "0%"),
    ] {
        parse_option(&mut d, key, Some(value)).unwrap();
    }
    assert_eq!((d.rate_iops, d.rate), ([None; 2], [None; 2]));
    assert_eq!((d.number_ios, d.size, d.io_size), (None, None, None));
    parse_option(&mut d, "loops", Some("0")).unwrap();
    assert_eq!(d.loops, Some(1), "fio runs loops=0 once");
}

#[test]
fn rates_and_limits_must_be_finite() {
    let mut d = Draft::default();
    for (key, value) in [
        ("hybrid_iops", "nan"),
        ("hybrid_iops", "inf"),
        ("hybrid_iops", "-1"),
        ("ss", "iops:inf"),
        ("ss", "bw:NaN%"),
    ] {
        assert!(
            parse_option(&mut d, key, Some(value)).is_err(),
            "{key}={value}"
        );
    }
    assert!(parse_option(&mut d, "hybrid_iops", Some("2500.5")).is_ok());
    assert_eq!(d.hybrid_iops, Some(2500.5));
}

#[test]
fn log_window_value_is_fio_3_37s_log_max_value() {
    let mut d = Draft::default();
    for (value, max) in [("max", true), ("avg", false), ("1", true), ("0", false)] {
        parse_option(&mut d, "log_window_value", Some(value)).unwrap();
        assert_eq!(d.logs.max_value, max, "{value}");
    }
    parse_option(&mut d, "log_window_value", Some("both")).unwrap();
    assert!(d.logs.both_values && !d.logs.max_value);
    let e = parse_option(&mut d, "log_window_value", Some("mean")).unwrap_err();
    assert!(e.to_string().contains("use avg, max, both"), "{e}");
}

#[test]
fn options_newer_than_fio_3_33_are_read_or_refused_with_their_release() {
    let mut d = Draft::default();
    parse_option(&mut d, "verify_pattern_interval", Some("512")).unwrap();
    parse_option(&mut d, "verify_write_sequence", Some("0")).unwrap();
    parse_option(&mut d, "verify_header_seed", Some("0")).unwrap();
    parse_option(&mut d, "bwavgtime", Some("250")).unwrap();
    parse_option(&mut d, "log_issue_time", Some("1")).unwrap();
    parse_option(&mut d, "random_sequence_stride", Some("1")).unwrap();
    parse_option(&mut d, "random_distribution", Some("sequence:2,0,1")).unwrap();
    assert!(d.logs.issue_time);
    assert_eq!(d.random_sequence_stride, Some(true));
    assert!(matches!(
        d.distribution,
        Some(hiops_job::Distribution::Sequence(_))
    ));
    assert_eq!(d.verify_pattern_interval, Some(512));
    assert_eq!(
        (d.verify_write_sequence, d.verify_header_seed),
        (Some(false), Some(false))
    );
    assert_eq!(
        d.rate_windows,
        [Some(std::time::Duration::from_millis(250)), None]
    );
    // Those of current fio's own tests hiops does not read.
    for key in [
        "sprandom",
        "spr_op",
        "fdp",
        "plids",
        "steadystate_check_interval",
        "verify_policy",
        "thinkcycles",
    ] {
        let Lookup::NotImplemented(why) = lookup(key) else {
            panic!("{key} is not refused by name")
        };
        assert!(
            why.starts_with("fio 3.") || why.starts_with("fio's master"),
            "{key}: {why}"
        );
        assert!(why.contains("added it"), "{key}: {why}");
    }
}

#[test]
fn job_and_flow_options_read_as_fio_3_33_reads_them() {
    let mut d = Draft::default();
    let mut set = |k: &str, v: &str| parse_option(&mut d, k, Some(v));
    // rw's ':N': a count of I/Os per random offset, a gap otherwise.
    set("rw", "randread:8").unwrap();
    set("rw_sequencer", "identical").unwrap();
    assert!(set("rw_sequencer", "sometimes").is_err());
    assert!(set("rw", "randread:8k").is_err(), "a count, not a size");
    assert_eq!(
        (d.rw_gap, d.rw_seq_nr, d.rw_seq_identical),
        (0, Some(8), Some(true))
    );
    parse_option(&mut d, "rw", Some("read:4k")).unwrap();
    assert_eq!(
        (d.rw_gap, d.rw_seq_nr),
        (4096, None),
        "rw again forgets the count"
    );
    // max_latency: READ,WRITE,TRIM in whole microseconds.
    parse_option(&mut d, "max_latency", Some("1500ns,2ms")).unwrap();
    let ms2 = Some(2_000_000);
    assert_eq!(d.max_latency, [Some(1000), ms2, ms2]);
    // A bs given later replaces the ranges bs_unaligned draws from.
    parse_option(&mut d, "bsrange", Some("1k-4k,8k-16k")).unwrap();
    let (small, big) = (Some((1024, 4096)), Some((8192, 16384)));
    assert_eq!(d.bsrange, [small, big, big]);
    parse_option(&mut d, "bs", Some(",4k")).unwrap();
    assert_eq!(d.bsrange, [small, None, None]);
    // thinktime_iotime is in seconds unless a unit is given.
    parse_option(&mut d, "thinktime_iotime", Some("2")).unwrap();
    assert_eq!(d.thinktime_iotime, Some(2_000_000_000));
    assert!(parse_option(&mut d, "thinktime_blocks_type", Some("eventually")).is_err());
    assert!(parse_option(&mut d, "write_hint", Some("forever")).is_err());
}

#[test]
fn an_engines_own_options_go_with_it() {
    let mut global = Draft::default();
    parse_option(&mut global, "ioengine", Some("e4defrag")).unwrap();
    parse_option(&mut global, "donorname", Some("d")).unwrap();
    parse_option(&mut global, "inplace", Some("1")).unwrap();
    // A job of another engine under that [global] does not take them.
    let mut job = global.clone();
    parse_option(&mut job, "ioengine", Some("libaio")).unwrap();
    assert_eq!((job.donorname, job.inplace), (None, None));
    // An e4defrag job does.
    let mut job = global.clone();
    parse_option(&mut job, "ioengine", Some("e4defrag")).unwrap();
    assert_eq!(job.donorname.as_deref(), Some("d"));
}
