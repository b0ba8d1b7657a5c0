//! `hiops reproduce DIR`: every experiment of the source papers this
//! machine can run, one after the other, each into a directory of its own
//! under DIR (each resumes where it stopped), then one page whose first
//! table reads every item of the papers against this machine's figures.
//! Each step is the command line a user could type: the page lists them.

use super::kv::{self, KvArgs};
use super::suites::{self, Ended};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

#[derive(Args, Debug, Clone)]
pub struct ReproduceArgs {
    /// Where every experiment's directory and the reading go (resumed if
    /// interrupted: run the same command again).
    #[arg(default_value = "hiops-reproduce")]
    pub dir: PathBuf,
    /// Every item with short points: a check of the whole chain in minutes,
    /// not a measurement to quote.
    #[arg(long)]
    pub quick: bool,
    /// Rounds of every point (at least 3: the rules read an effect against
    /// its spread over rounds).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(3..=100))]
    pub rounds: u32,
    /// Discard the points of sweeps whose definition changed.
    #[arg(long)]
    pub restart: bool,
    /// Only list the steps' command lines.
    #[arg(long)]
    pub list: bool,
    /// Run only these experiments (repeatable): hiops, characterize,
    /// fig10, cache-sweep, iozone. The page still reads every one made.
    #[arg(long, value_name = "STEP", value_parser = STEP_NAMES)]
    pub only: Vec<String>,
}

/// The steps' directories under DIR, which `--only` names.
const STEP_NAMES: [&str; 5] = ["hiops", "characterize", "fig10", "cache-sweep", "iozone"];

/// One experiment of the reproduction: its directory under DIR and the
/// command line that runs it.
struct Step {
    name: &'static str,
    dir: PathBuf,
    argv: Vec<String>,
    /// Seconds it takes on a 2-CPU machine, for the time estimate.
    estimate_s: u64,
}

/// A step's command line parsed as `hiops` parses it.
#[derive(Parser, Debug)]
#[command(name = "hiops", no_binary_name = true)]
struct StepLine {
    #[command(subcommand)]
    cmd: StepCommand,
}

/// The commands a step runs: the experiments among `hiops`' commands.
#[derive(Subcommand, Debug)]
enum StepCommand {
    Kv(KvArgs),
    #[command(subcommand)]
    Experiment(suites::ExperimentCommand),
    Characterize(suites::CharacterizeArgs),
    Iozone(suites::IozoneArgs),
}

/// One experiment as a table row: its name, its directory under DIR, its
/// command line (`{D}` stands for DIR), the options `--quick` adds, and
/// its time on a 2-CPU machine in seconds, quick and full.
struct StepDef {
    name: &'static str,
    dir: &'static str,
    line: &'static str,
    quick: &'static str,
    estimate_s: (u64, u64),
}

/// The steps, in the order they run: the HIOPS paper's experiments, the
/// platform study, the store's Fig 10 and cache sweep, the IOZone study.
const STEP_DEFS: [StepDef; 5] = [
    StepDef {
        name: "HIOPS experiments",
        dir: "hiops",
        line: "experiment hiops --dir {D}/hiops",
        quick: "--quick --runtime 1 --ramp 0 --size 256m",
        estimate_s: (120, 3 * 3600),
    },
    StepDef {
        name: "the platform study (ADMS'10)",
        dir: "characterize",
        line: "characterize --dir {D}/characterize",
        quick: "--quick --runtime 1 --ramp 0 --size 256m",
        // As root with the cores x devices grid on 3 zram devices: 142 s
        // (a debug build, 2 CPUs).
        estimate_s: (180, 3 * 1800),
    },
    StepDef {
        name: "the store's Fig 10",
        dir: "fig10",
        line: "kv fig10 --path {D}/kv-store.dat --output {D}/fig10",
        quick: "--clients 32,256 --strategies pread,coop,poll --time 2 --records 20000 --size 256m",
        estimate_s: (60, 1800),
    },
    StepDef {
        name: "the store's cache sweep",
        dir: "cache-sweep",
        line: "kv cache-sweep --path {D}/kv-cache.dat --output {D}/cache-sweep",
        quick: "--quick",
        estimate_s: (90, 1800),
    },
    StepDef {
        name: "the IOZone study",
        dir: "iozone",
        line: "iozone --study --precondition --dir {D}/iozone",
        quick: "--sizes 4k,64k --runtime 1 --ramp 0 --size 256m",
        estimate_s: (90, 2700),
    },
];

/// The steps' command lines for these arguments.
fn steps(a: &ReproduceArgs) -> Vec<Step> {
    let dir = a.dir.display().to_string();
    let words = |text: &str| -> Vec<String> {
        text.split_whitespace()
            .map(|w| w.replace("{D}", &dir))
            .collect()
    };
    STEP_DEFS
        .iter()
        .map(|def| {
            assert!(
                def.estimate_s.0 <= def.estimate_s.1,
                "{}: the quick run is the shorter",
                def.name
            );
            let mut argv = words(def.line);
            // The IOZone study's own 5 runs at the least, unless quick.
            let rounds = match (def.dir, a.quick) {
                ("iozone", false) => a.rounds.max(5),
                _ => a.rounds,
            };
            argv.extend(["--rounds".to_string(), rounds.to_string()]);
            if a.quick {
                argv.extend(words(def.quick));
            }
            if def.dir == "hiops" && hiops_suite::irq::affinity::is_root() {
                // Beside the disk, the RAM devices root can make, and
                // Fig 1 over alike devices.
                argv.extend(words("--zram --loop --alike 3"));
            }
            if def.dir == "characterize" && hiops_suite::irq::affinity::is_root() {
                // ADMS'10 Fig 9-11 and the slides' one core per 2 SSDs:
                // the cores x devices grid over alike devices root makes.
                argv.extend(words("--zram 3"));
            }
            if a.restart {
                argv.push("--restart".into());
            }
            Step {
                name: def.name,
                dir: a.dir.join(def.dir),
                argv,
                estimate_s: if a.quick {
                    def.estimate_s.0
                } else {
                    def.estimate_s.1
                },
            }
        })
        .collect()
}

/// Runs one step in this process, as `hiops ARGV` would.
fn run_step(step: &Step) -> anyhow::Result<Ended> {
    let line = StepLine::try_parse_from(&step.argv)?;
    match line.cmd {
        StepCommand::Experiment(a) => suites::experiment(a),
        StepCommand::Characterize(a) => suites::characterize(a),
        StepCommand::Iozone(a) => suites::iozone(a),
        StepCommand::Kv(k) => kv::main(*k.command).map(|()| Ended::Done),
    }
}

/// "1 h 05 min", "4 min", "40 s".
fn duration(s: u64) -> String {
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s.div_ceil(60)),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// Whether `--only` leaves the step to run.
fn chosen(a: &ReproduceArgs, st: &Step) -> bool {
    a.only.is_empty()
        || a.only
            .iter()
            .any(|o| st.dir.file_name() == Some(o.as_ref()))
}

pub fn reproduce(a: ReproduceArgs) -> anyhow::Result<Ended> {
    let all = steps(&a);
    assert!(
        STEP_DEFS.iter().zip(STEP_NAMES).all(|(s, n)| s.dir == n),
        "--only names every step"
    );
    let steps: Vec<&Step> = all.iter().filter(|st| chosen(&a, st)).collect();
    if a.list {
        for st in &steps {
            println!("hiops {}", st.argv.join(" "));
        }
        return Ok(Ended::Done);
    }
    let interrupt = hiops_run::progress::arm_signals();
    // hiops makes only the directory it owns, never the ones above it.
    hiops_suite::commands::check_dir("reproduce DIR", &a.dir)?;
    hiops_suite::sweep::make_dir(&a.dir)?;
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut ended = Ended::Done;
    for (i, st) in steps.iter().enumerate() {
        let left: u64 = steps[i..].iter().map(|s| s.estimate_s).sum();
        eprintln!(
            "hiops reproduce: step {} of {}, {} (about {} left): hiops {}",
            i + 1,
            steps.len(),
            st.name,
            duration(left),
            st.argv.join(" ")
        );
        match run_step(st) {
            Ok(Ended::Done) => {}
            Ok(Ended::Interrupted) => {
                ended = Ended::Interrupted;
                break;
            }
            // One experiment failing (a device it could not make) does not
            // lose the others: the page names it.
            Err(e) => {
                eprintln!("hiops reproduce: {}: {e}", st.name);
                failures.push(format!("{} failed: {e}", st.name));
            }
        }
        if interrupt.load(Ordering::Relaxed) {
            ended = Ended::Interrupted;
            break;
        }
    }
    let page = write_page(&a, &all, failures)?;
    eprintln!(
        "hiops reproduce: {} in {}; the reading: {}",
        if matches!(ended, Ended::Done) {
            "done"
        } else {
            "interrupted (run the same command to resume)"
        },
        duration(started.elapsed().as_secs()),
        page.display()
    );
    Ok(ended)
}

/// The reading's page: the machine, each step's command, and what failed.
fn write_page(a: &ReproduceArgs, steps: &[Step], failures: Vec<String>) -> anyhow::Result<PathBuf> {
    let mut about = vec![hiops_suite::report::machine_about()];
    about.extend(
        steps
            .iter()
            .map(|s| format!("{}: `hiops {}`", s.name, s.argv.join(" "))),
    );
    about.extend(failures);
    let parts: Vec<PathBuf> = steps.iter().map(|s| s.dir.clone()).collect();
    Ok(hiops_suite::reproduce::write_reading(
        Path::new(&a.dir),
        &parts,
        about,
    )?)
}
