//! fio's option values: the input's first line picks an option (by name,
//! or by its place in the table), the rest is the value (a first line
//! `?KEY` asks for the name KEY misspells instead). The option's
//! parser, and the value parsers under it (sizes, percentages, times,
//! patterns, bs/bssplit, random_distribution's zoned lists),
//! each read the value; what they accept obeys their rules.
#![no_main]

use hiops_bench::spec::Amount;
use hiops_bench::{BlockSizes, Distribution};
use hiops_fio::options::{lookup, parse_option, suggest, Draft, Lookup, OPTIONS};
use hiops_fio::value::{self, KbBase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (key, v) = text.split_once('\n').unwrap_or((text, ""));
    // `?KEY`: the "did you mean" search for a misspelt key (kept to short
    // keys, as written by hand: it compares with every name).
    if let Some(typo) = key.strip_prefix('?') {
        if typo.len() <= 32 {
            let _ = suggest(typo);
        }
        return;
    }
    let def = match lookup(key) {
        Lookup::Known(d) => Some(d),
        _ => key.parse::<usize>().ok().and_then(|i| OPTIONS.get(i)),
    };
    if let Some(def) = def {
        let _ = parse_option(&mut Draft::default(), def.name, Some(v));
        let _ = parse_option(&mut Draft::default(), def.name, None);
    }
    for kb in [KbBase(1024), KbBase(1000)] {
        sizes(v, kb);
    }
    times_and_percents(v);
    patterns(v);
    block_sizes(v);
    distribution(v);
});

fn sizes(v: &str, kb: KbBase) {
    if let Ok(n) = value::size(v, kb) {
        // A size reads back the same, written in hex or (exactly, below
        // 2^53) in decimal.
        assert_eq!(value::size(&format!("{n:#x}"), kb), Ok(n), "{v}");
        if n < 1 << 53 {
            assert_eq!(value::size(&n.to_string(), kb), Ok(n), "{v}");
        }
    }
    let _ = value::int(v, kb);
    for amount in [
        value::size_or_percent(v, kb),
        value::scaled_size_or_percent(v, kb),
    ] {
        if let Ok(Amount::Percent(p)) = amount {
            assert!((0.0..=100.0).contains(&p), "{v}: {p}%");
        }
    }
}

fn times_and_percents(v: &str) {
    let _ = value::time_ns(v, 1_000_000_000);
    let _ = value::time_ns(v, 1_000);
    let _ = hiops_bench::units::parse_duration_ns(v);
    if let Ok(p) = value::percent("rwmixread", v) {
        assert!(p.get() <= 100, "{v}: {p}");
    }
    if let Ok(b) = value::boolean(Some(v)) {
        assert_eq!(value::boolean(Some(if b { "1" } else { "0" })), Ok(b));
    }
}

fn patterns(v: &str) {
    let plain = value::pattern(v);
    if let Ok((bytes, at)) = value::pattern_with_offsets(v) {
        assert!(at.iter().all(|&o| o + 8 <= bytes.len()), "{v}");
        if at.is_empty() {
            assert_eq!(plain, Ok(bytes), "{v}");
        }
    }
}

fn block_sizes(v: &str) {
    let Ok(bs) = BlockSizes::parse(v) else {
        return;
    };
    let total: u32 = bs.split.iter().map(|s| s.1).sum();
    assert_eq!(total, 100, "{v}: {bs:?}");
    assert!(bs.split.iter().all(|s| s.0 > 0 && s.1 > 0), "{v}: {bs:?}");
    assert!(bs.max() > 0);
}

fn distribution(v: &str) {
    let Ok(d) = Distribution::parse(v) else {
        return;
    };
    let zones = |d: &Distribution| match d {
        Distribution::Zoned(z) => z.iter().map(|z| z.0).sum::<f64>(),
        Distribution::ZonedAbs(z) => z.iter().map(|z| z.0).sum::<f64>(),
        _ => 100.0,
    };
    let sides = match &d {
        Distribution::PerDirection(b) => b.to_vec(),
        other => vec![other.clone()],
    };
    for side in &sides {
        let sum = zones(side);
        assert!((sum - 100.0).abs() < 1e-3, "{v}: accesses add up to {sum}");
    }
}
