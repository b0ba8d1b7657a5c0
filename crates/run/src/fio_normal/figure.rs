//! A figure of fio's JSON as a number, 0 where fio's JSON has none.

use serde_json::Value;

/// A JSON figure as an unsigned integer (0 when absent).
pub(crate) fn int(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0)
}

/// A JSON figure as a float (0 when absent).
pub(crate) fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}
