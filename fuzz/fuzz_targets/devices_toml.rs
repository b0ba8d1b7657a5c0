//! The devices file of `hiops iozone --devices FILE.toml` (prices,
//! capacities, datasheet figures): what it accepts has a price above 0,
//! and written back as TOML reads the same (compared as written, so a NaN
//! figure compares too).
#![no_main]

use hiops_suite::papers::iozone::{parse_devices, DeviceCost};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;

#[derive(Serialize)]
struct DevicesFile<'a> {
    device: &'a [DeviceCost],
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(devices) = parse_devices(text) else {
        return;
    };
    for d in &devices {
        assert!(d.price > 0.0, "{d:?}");
    }
    // A capacity past i64::MAX has no TOML integer.
    let Ok(written) = toml::to_string(&DevicesFile { device: &devices }) else {
        return;
    };
    let again = parse_devices(&written)
        .unwrap_or_else(|e| panic!("the devices written back do not parse: {e}\n{written}"));
    let rewritten = toml::to_string(&DevicesFile { device: &again }).unwrap();
    assert_eq!(written, rewritten);
});
