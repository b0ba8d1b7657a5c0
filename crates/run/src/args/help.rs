//! `hiops run --help`, and fio's `--cmdhelp` and `--enghelp`.

use super::fio_flags::{FioFlag, Handling, FIO_FLAGS};
use super::run_flags::RUN_FLAGS;
use hiops_bench::BenchError;
use hiops_fio::options::{lookup, Lookup, OptDef, OPTIONS};

pub fn text() -> String {
    let mut s = String::from(
        "Run a workload. Options carry fio's names, meanings and defaults.

Usage: hiops run [FLAGS] [--OPTION=VALUE...] [--name=JOB --OPTION=VALUE...]... [JOBFILE...]

Under mpirun (a build with --features mpi), every rank runs the jobs, the
ranks start each phase together, and rank 0 prints them merged as fio's
client mode does; {rank}, {nranks} and {host} in filename, directory and
offset (offset={rank}*64g) place each rank, and an --output naming {rank}
gets each rank's own result.

Without --name or a job file, the options change hiops' default job (4 KiB
random reads, iodepth 32, io_uring, direct, about 10 s on a temporary file).
With --name (each starts a job) or a job file, fio's defaults apply
(rw=read, iodepth=1, psync, buffered). As in fio, wherever they stand,
options outside any --name apply to the --name jobs and to the jobs of the
first job file (whose own [global] and job options win over them); later
job files start from the defaults, each in a phase of its own. A job file
holds at most 16 MiB (64 MiB with its includes), and its values at most
64 MiB once ${VAR} is expanded.

hiops flags:
",
    );
    for f in RUN_FLAGS {
        s.push_str(&two_columns(f.usage, f.help));
    }
    s.push_str("\nfio's flags:\n");
    for f in FIO_FLAGS
        .iter()
        .filter(|f| !RUN_FLAGS.iter().any(|r| r.name == f.name))
    {
        if let Handling::Implemented { usage, help } = f.handling {
            s.push_str(&two_columns(usage, help));
        }
    }
    s.push_str(
        "  accepted with a note that they have no effect here:
",
    );
    let no_effect = |f: &&FioFlag| matches!(f.handling, Handling::NoEffect(_));
    s.push_str(&wrapped(FIO_FLAGS.iter().filter(no_effect)));
    s.push_str("  refused, each with a line saying what to use instead:\n");
    let refused = |f: &&FioFlag| matches!(f.handling, Handling::Refused(_));
    s.push_str(&wrapped(FIO_FLAGS.iter().filter(refused)));
    s.push_str("\nJob options (job files: key=value; command line: --key=value):\n");
    for d in OPTIONS {
        s.push_str(&option_help(d));
    }
    s.push_str(
        "\nSizes: 4k, 1m, 2g (kb_base decides 1000 or 1024); times: 10 (s), 500ms, 2m, 100us.\n",
    );
    s
}

/// A flag's line: its usage, then its help wrapped in a column of its own
/// (on the next line when the usage is too wide).
fn two_columns(usage: &str, help: &str) -> String {
    const COLUMN: usize = 39;
    const WIDTH: usize = 80;
    let mut out = String::new();
    let mut line = format!("  {usage}");
    if line.len() >= COLUMN - 1 {
        out.push_str(&line);
        out.push('\n');
        line.clear();
    }
    for word in help.split(' ') {
        if line.len() + 1 + word.len() > WIDTH && line.len() > COLUMN {
            out.push_str(line.trim_end());
            out.push('\n');
            line.clear();
        }
        let pad = COLUMN.saturating_sub(line.len()).max(1);
        line.push_str(&" ".repeat(pad));
        line.push_str(word);
    }
    out + &line + "\n"
}

/// Flag names as indented lines of at most about 76 columns.
fn wrapped<'a>(flags: impl Iterator<Item = &'a FioFlag>) -> String {
    let mut out = String::new();
    let mut line = String::from("   ");
    for f in flags {
        if line.len() + f.name.len() + 3 > 76 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("   ");
        }
        line.push_str(&format!(" --{}", f.name));
    }
    let out = out + &line + "\n";
    assert!(
        out.lines().all(|l| l.len() <= 80),
        "the flag names wrap within 80 columns"
    );
    out
}

fn option_help(d: &OptDef) -> String {
    let names = std::iter::once(d.name)
        .chain(d.aliases.iter().copied())
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "  {names}{}\n      {}\n",
        if d.flag { " [=BOOL]" } else { "=VALUE" },
        d.help
    )
}

/// The values of an unimplemented option that hiops takes: fio's default,
/// where that is what hiops does.
fn fio_default_note(name: &str) -> String {
    hiops_fio::options::FIO_DEFAULTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, values)| {
            format!(
                " (accepted at {}, fio's default, which changes nothing)",
                values.join(" or ")
            )
        })
        .unwrap_or_default()
}

/// fio's `--cmdhelp[=OPTION]`: one option's help, or all (`all` or none).
pub fn cmdhelp(name: &str) -> Result<String, BenchError> {
    if name.is_empty() || name == "all" {
        return Ok(OPTIONS.iter().map(option_help).collect());
    }
    match lookup(name) {
        Lookup::Known(d) => Ok(option_help(d)),
        Lookup::NotImplemented(why) => Ok(format!(
            "  {name}\n      an fio option hiops does not implement: {why}{}\n",
            fio_default_note(name)
        )),
        Lookup::OtherEngine(engines) => Ok(format!(
            "  {name}\n      an option of fio's ioengine {engines}, which hiops does not implement\n"
        )),
        Lookup::Unknown => {
            let near = hiops_fio::options::suggest(name)
                .map(|n| format!("did you mean {n}? "))
                .unwrap_or_default();
            Err(BenchError::usage(format!(
                "--cmdhelp={name}: no such option; {near}--cmdhelp=all lists them"
            )))
        }
    }
}

/// fio's `--enghelp[=ENGINE[,OPTION]]`: hiops' engines, or whether it has
/// one (hiops' engine options are in the option table with the others).
pub fn enghelp(arg: &str) -> String {
    let engine = arg.split(',').next().unwrap_or_default();
    if engine.is_empty() {
        return format!(
            "Available IO engines:\n{}\tfilecreate\n\tnetsplice\n",
            hiops_hal::EngineKind::ALL
                .iter()
                .map(|e| format!("\t{e}\n"))
                .collect::<String>()
        );
    }
    // fio's spellings hiops reads as one of its engines, filecreate, which
    // is the job loop's rather than the HAL's, and netsplice, net's option
    // (hiops-fio's option table).
    let known = hiops_hal::EngineKind::parse(engine).is_some()
        || engine == "pvsync"
        || engine == "filecreate"
        || engine == "netsplice";
    if known {
        format!(
            "ioengine {engine}: in hiops (ioengine={engine}); its options are in `hiops run --help` with the others\n"
        )
    } else {
        format!(
            "ioengine {engine}: not in hiops; its engines are {}\n",
            hiops_fio::options::ENGINES
        )
    }
}
