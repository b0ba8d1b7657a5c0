//! `hiops kv cache-sweep`: YCSB-B and YCSB-C throughput and p99 latency
//! as the data set grows from a quarter of the store's RAM cache to eight
//! times it, on the flash (a file on the disk) against the same store on an
//! HDD-like device (`crate::devices::hdd_like`: a loop device capped at a
//! disk's random IOPS), one line per device and strategy, the knee marked.
//! The slides' TPC-C figure for any machine: while the data set fits the
//! cache, the device hardly matters; past it, the device decides.
//!
//! One store per device holds the largest data set; a point at ratio r
//! runs YCSB over the first r x cache worth of its records, after emptying
//! the cache and warming it: the workload runs until the cache is full,
//! holds the whole data set, or stops growing, for at most `--warmup` (a
//! disk of 180 IOPS fills a cache of N records in no less than N/180 s;
//! each point records how full the cache was when measuring began). Points are kept as they end
//! (resumable, like every hiops sweep) and `hiops report DIR` redraws the
//! report.

pub use super::cache_sweep_plan::CacheSweepOptions;
use super::cache_sweep_plan::{definition, device_args, Plan};
use super::cache_sweep_runner::Runner;
use crate::commands::{failed as fail, usage as bad};
use crate::commands::{say_point, Console};
use crate::devices::hdd_like::HddLike;
use crate::sweep::SweepDir;
use crate::SuiteError;
use hiops_kv::ycsb::{self, Target};
use hiops_kv_cmd::say::{progress_printer, shown};
use hiops_kv_cmd::store::StoreOptions;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// Runs the grid's remaining points, writes the report and prints its
/// table (Markdown) and findings.
pub fn cache_sweep(a: CacheSweepOptions, console: &Console) -> Result<(), SuiteError> {
    crate::commands::check_dir("--output", &a.output)?;
    let mut plan = Plan::new(&a)?;
    if plan.devices.iter().any(|d| d == "hdd") {
        if let Some(why) = hdd_unavailable() {
            eprintln!(
                "{}: no HDD-like device: {why}; the sweep runs on the flash alone",
                console.who
            );
            plan.devices.retain(|d| d != "hdd");
            if plan.devices.is_empty() {
                return Err(fail(
                    "no device left to measure: run as root, or add --devices flash",
                ));
            }
        }
    }
    if a.store.path.len() > 1 {
        return Err(bad(
            "cache-sweep runs on one flash store: give one --path (fig10 sweeps several devices)",
        ));
    }
    let flash = (a.store.path.first().cloned()).unwrap_or_else(|| a.output.join("flash.kv"));
    let def = definition(&plan, &a, &flash);
    let mut dir = SweepDir::open(&a.output, def, a.restart)?;
    let stop = console.interrupt;
    let hdd = setup_hdd(&plan, &a, stop)?;
    if plan.devices.iter().any(|d| d == "flash") {
        load(&plan, &device_args(&plan.store, &flash, false), stop)?;
    }
    save_info(&plan, &a, &flash, hdd.as_ref(), &console.command)?;
    let hdd_dev = hdd.as_ref().map(|h| (h.path().to_path_buf(), h.name()));
    let mut runner = Runner::new(&plan, flash.clone(), hdd_dev, stop);
    let who = console.who;
    let outcome = dir.run(&mut runner, &mut |p| say_point(who, p));
    // Every store on the HDD-like device closes before the device goes.
    drop(runner);
    drop(hdd);
    let outcome = outcome?;
    let html = crate::report::write_report(&a.output)?;
    let section = crate::kv::cache_sweep::section(&SweepDir::load(&a.output)?);
    let mut text = markdown(&section.tables[0]);
    for f in &section.findings {
        text += &format!("{f}\n");
    }
    hiops_run::stdout::print(&text)?;
    super::suite_done(who, &outcome, &html)
}

/// Whether the HDD-like device can be made here; the reason if not.
fn hdd_unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("it needs root (a loop device and a cgroup)".into());
    }
    crate::devices::hdd_like::Mechanism::find()
        .err()
        .map(|e| e.to_string())
}

/// Loads the largest data set into the store at `args.path` (kept from an
/// earlier run when it is there).
fn load(plan: &Plan, args: &StoreOptions, stop: &AtomicBool) -> Result<(), SuiteError> {
    let records = plan.records(plan.max_ratio());
    let store = Arc::new(args.open()?);
    if store.len() >= records {
        return Ok(());
    }
    let p = progress_printer(records, "load");
    let target = Target::Embedded(store.clone());
    let r = ycsb::load(&target, &plan.workload("C"), records, 32, stop, &p)
        .map_err(|e| fail(e.to_string()))?;
    eprint!("\r");
    if let Some(e) = r.first_error {
        return Err(fail(format!("loading {}: {e}", shown(&args.path))));
    }
    if stop.load(Relaxed) {
        return Err(fail(
            "interrupted while loading: run the same command to continue",
        ));
    }
    eprintln!(
        "hiops kv cache-sweep: loaded {} records into {} in {:.1} s",
        r.operations,
        shown(&args.path),
        r.runtime_ms / 1e3
    );
    Ok(())
}

/// The HDD-like device, loaded at full speed and then capped (None when
/// the sweep has no hdd device).
fn setup_hdd(
    plan: &Plan,
    a: &CacheSweepOptions,
    stop: &AtomicBool,
) -> Result<Option<HddLike>, SuiteError> {
    if !plan.devices.iter().any(|d| d == "hdd") {
        return Ok(None);
    }
    let mut hdd = HddLike::create(&a.output, plan.size).map_err(|e| {
        fail(format!(
            "the HDD-like device: {e}; or leave it out with --devices flash"
        ))
    })?;
    load(plan, &device_args(&plan.store, hdd.path(), true), stop)?;
    hdd.cap(a.hdd_iops)
        .map_err(|e| fail(format!("capping the HDD-like device: {e}")))?;
    eprintln!("hiops kv cache-sweep: HDD-like device: {}", hdd.describe());
    Ok(Some(hdd))
}

fn save_info(
    plan: &Plan,
    a: &CacheSweepOptions,
    flash: &Path,
    hdd: Option<&HddLike>,
    command: &str,
) -> Result<(), SuiteError> {
    let mut about = vec![
        crate::report::machine_about(),
        format!(
            "Store: write blocks of {}, durability {}; a cache of {} bytes (each record weighs {} bytes in it); YCSB records of 10 fields x 100 bytes, {} request distribution, {} clients in this process; each point empties the cache, warms it until it is full, holds the data set or stops growing (at most {:?}), then measures {:?}.",
            plan.store.block_size, plan.store.durability, plan.cache, plan.weight, a.distribution, plan.clients, plan.warmup, plan.time
        ),
        format!("flash: {}", flash.display()),
    ];
    match hdd {
        Some(h) => about.push(format!("hdd: {}", h.describe())),
        None => about.push("hdd: not measured".into()),
    }
    crate::suite_info::SuiteInfo {
        kind: crate::suite_info::SuiteKind::CacheSweep,
        title: "hiops kv cache-sweep: the data set against the RAM cache, flash against HDD".into(),
        command: command.into(),
        about,
        extra: serde_json::Value::Null,
        platform: crate::report::platform_of([flash.to_string_lossy().as_ref()]),
    }
    .save(&a.output)
}

/// A table as Markdown (for BENCHMARKS.md).
fn markdown(t: &crate::page::Table) -> String {
    let row = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut out = format!("{}\n\n", t.caption);
    out += &row(&t.header);
    out += &row(&vec!["---".to_string(); t.header.len()]);
    for r in &t.rows {
        out += &row(r);
    }
    out
}
