//! The store's suites read back from their points: HIOPS Fig 10's
//! throughput against clients ([`fig10`], its claims in [`fig10_claims`], by device in
//! [`fig10_devices`]) and the data set against the cache ([`cache_sweep`]).
//! Their commands are in `commands::kv`.

pub mod cache_sweep;
pub mod fig10;
pub mod fig10_claims;
pub mod fig10_devices;
