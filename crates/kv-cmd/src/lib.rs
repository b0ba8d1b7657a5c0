//! # hiops-kv-cmd: `hiops kv`'s commands on the store
//!
//! What `hiops kv serve`, `hiops kv ycsb` and `hiops kv check` run, from
//! their options as the command line takes them ([`clap`] argument
//! structs) to what they print. The store itself ([`hiops_kv`]) knows
//! nothing of options, exit codes or stdout: this crate is where they
//! meet it.
//!
//! The suites' experiments (`hiops kv fig10`, `kv cache-sweep`) build on
//! these: fig10 runs `hiops kv ycsb --server` as a child process, its
//! command line built by [`ycsb_args::YcsbOptions::to_argv`] and its JSON
//! read back as the [`ycsb_report::YcsbReport`] the child wrote.
//!
//! Modules: [`store`] (a store as the user names it), [`serve`], [`ycsb`]
//! and [`ycsb_ranks`] (YCSB on one host or across MPI ranks),
//! [`ycsb_args`] (YCSB's options and their command line), [`ycsb_report`]
//! (what YCSB prints), [`check`] (the scrub), [`errors`] and [`flags`]
//! (options checked into the library's errors), [`say`] (lines on stderr)
//! and [`server_cache`] (a server's RAM cache counters).

#![forbid(unsafe_code)]

pub mod check;
pub mod errors;
pub mod flags;
pub mod say;
pub mod serve;
pub mod server_cache;
pub mod store;
pub mod ycsb;
pub mod ycsb_args;
mod ycsb_ranks;
pub mod ycsb_report;
