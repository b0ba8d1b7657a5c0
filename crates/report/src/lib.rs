//! # hiops-report: what a run prints
//!
//! [`text::summary`] is the terminal summary; [`json::to_fio_json`] writes
//! fio 3.x's JSON schema for every field whose meaning hiops shares, and puts
//! hiops' own figures (clocks per I/O, the device/platform latency split,
//! machine CPU, the per-second series) under the `hiops` key; [`ranks`]
//! prints a run across ranks (MPI) as fio's client mode does;
//! [`fio_doc`] reads fio's JSON back typed. See docs/output.md for the
//! field list.

#![forbid(unsafe_code)]

pub mod derived;
pub mod figures;
pub mod fio_doc;
pub mod json;
pub mod layers;
pub mod platform;
pub mod ranks;
pub mod split;
pub mod text;
pub mod timeline;
