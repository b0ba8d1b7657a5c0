//! The prices file (`--prices FILE`): each device's price, capacity and
//! data-sheet figures, read from TOML.

use serde::{Deserialize, Serialize};

/// Price and capacity of a device, and optionally its datasheet figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceCost {
    pub label: String,
    /// Unit price in dollars (or any currency: the tables just divide).
    pub price: f64,
    /// Capacity in bytes (`capacity = "1t"` in TOML).
    #[serde(default, deserialize_with = "size_or_number")]
    pub capacity: Option<u64>,
    #[serde(default)]
    pub advertised_seq_read_mbps: Option<f64>,
    #[serde(default)]
    pub advertised_seq_write_mbps: Option<f64>,
    #[serde(default)]
    pub advertised_rand_read_iops: Option<f64>,
    #[serde(default)]
    pub advertised_rand_write_iops: Option<f64>,
}

fn size_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum V {
        N(u64),
        S(String),
    }
    match Option::<V>::deserialize(d)? {
        None => Ok(None),
        Some(V::N(n)) => Ok(Some(n)),
        Some(V::S(s)) => hiops_bench::units::parse_size(&s)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DevicesFile {
    #[serde(default)]
    device: Vec<DeviceCost>,
}

/// The most bytes of a `--prices` file read: a few lines a device.
pub const MAX_DEVICES_FILE: hiops_bench::input::Limit = hiops_bench::input::Limit {
    bytes: 1 << 20,
    what: "a table of devices",
    todo: "give --prices the TOML table of your devices' prices",
};

/// Reads a prices file:
/// ```toml
/// [[device]]
/// label = "disk"                      # a target's label
/// price = 89.0                        # USD
/// capacity = "1t"                     # optional: $ per GB
/// advertised_rand_read_iops = 90000   # optional, for Table VII
/// ```
pub fn parse_devices(text: &str) -> Result<Vec<DeviceCost>, crate::SuiteError> {
    let f: DevicesFile = toml::from_str(text).map_err(crate::SuiteError::DevicesFile)?;
    for d in &f.device {
        if d.price.is_nan() || d.price <= 0.0 {
            return Err(crate::SuiteError::DevicePrice {
                label: d.label.clone(),
            });
        }
    }
    Ok(f.device)
}
