//! # hiops-suite: sweeps, suites and their reports
//!
//! A [`sweep::SweepDir`] runs one workload across a grid of parameters and
//! keeps every finished point on disk, so an interrupted sweep resumes. A
//! suite is a directory of named sweeps plus `suite.json`; its report is
//! built from the points alone, so `hiops report DIR` can redraw it at any
//! time. [`commands`] holds what each `hiops` command runs, from its
//! options to its report.
//!
//! The rooms: [`sweep`], the resumable sweep engine; [`papers`], the source
//! papers' experiments (HIOPS, the ADMS'10 platform study, the IOZone
//! study, Table 1) and the method rows; [`verdicts`], the papers' items,
//! the rules that read an effect against its spread over rounds, and the
//! claim rows they give; [`reproduce`], every item read on one page;
//! [`kv`], the store's suites (Fig 10, the cache sweep); [`irq`], the
//! devices' interrupts (confined with the threads, traced, coalesced);
//! [`devices`], the targets a suite makes (zram, loop, the HDD-like
//! device); [`page`], the HTML page, its charts and tables; [`compare`],
//! two reports side by side. A point runs in this process through
//! [`runner`]; [`suite_info`] is what `suite.json` keeps, and [`report`]
//! rebuilds a directory's page from it and the points.

pub mod commands;
pub mod compare;
pub mod devices;
mod error;
pub mod irq;
pub mod kv;
pub mod page;
pub mod papers;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod suite_info;
pub mod sweep;
pub mod verdicts;

pub use error::SuiteError;
