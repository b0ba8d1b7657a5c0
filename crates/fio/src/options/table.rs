//! The option table: every option hiops reads, in fio's names and meanings,
//! each with its parser. Options fio has but hiops lacks are listed too, so a
//! job file using one is refused by name (or skipped with
//! `--ignore-unsupported`) instead of being silently misread.

use super::draft::{Draft, FadviseHint};
use super::values::*;
use crate::error::ValueError;
use crate::value::{self, quoted, KbBase};
use hiops_hal::clock::ClockSource;
use hiops_hal::EngineKind;
use hiops_job::spec::{ExitWhat, FileLockMode, UnifiedRw};
use hiops_job::{BlockSizes, Bytes, Distribution, Percent, QueueDepth, RwMode, VerifyMode};
use std::path::PathBuf;
use std::time::Duration;

pub type Apply = fn(&mut Draft, Option<&str>) -> Result<(), ValueError>;

/// One option hiops reads.
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// A bare `--key` (no value) means true; otherwise a value is required.
    pub flag: bool,
    pub help: &'static str,
    pub apply: Apply,
}

const SEC: u64 = 1_000_000_000;
const USEC: u64 = 1_000;

macro_rules! opt {
    ($name:literal, [$($alias:literal),*], flag, $help:literal, $f:expr) => {
        OptDef { name: $name, aliases: &[$($alias),*], flag: true, help: $help, apply: $f }
    };
    ($name:literal, [$($alias:literal),*], value, $help:literal, $f:expr) => {
        OptDef { name: $name, aliases: &[$($alias),*], flag: false, help: $help, apply: $f }
    };
}

/// Every option hiops reads, in the order `hiops run --help-options` lists them.
pub static OPTIONS: &[OptDef] = &[
    opt!("name", [], value, "Job name; on the command line each --name starts a new job.", |d, v| { d.name = Some(need(v)?.to_string()); Ok(()) }),
    opt!("description", [], value, "Free text shown with the job.", |d, v| { d.description = v.map(str::to_string); Ok(()) }),
    opt!("kb_base", [], value, "1024 (default: k=1024, KiB=1000, fio's compatibility mode) or 1000 (k=1000, KiB=1024).", |d, v| {
        d.kb_base = match need(v)? { "1024" => KbBase(1024), "1000" => KbBase(1000), s => return Err(format!("{}: use 1000 or 1024", quoted(s)).into()) }; Ok(())
    }),
    opt!("filename", [], value, "Files or block devices, ':'-separated ('\\:' for a literal colon).", |d, v| {
        let names = split_filenames(need(v)?);
        if names.len() > 1 << 20 { return Err(format!("{} files are more than a process may open: name fewer", names.len()).into()); }
        d.filename = names.into_iter().map(PathBuf::from).collect(); Ok(())
    }),
    opt!("lockfile", [], value, "Serialise each I/O's submission to a file across the run's threads that lock it: none (the default), exclusive (one at a time) or readwrite (reads together, each write alone); on psync and other engines that do the I/O in the call, the I/O itself.", |d, v| {
        d.lockfile = Some(match need(v)? { "none" => FileLockMode::None, "exclusive" => FileLockMode::Exclusive, "readwrite" => FileLockMode::ReadWrite, s => return Err(format!("{}: use none, exclusive or readwrite", quoted(s)).into()) }); Ok(())
    }),
    opt!("write_hint", [], value, "The write lifetime hint each file the job opens gets with fcntl: none, short, medium, long or extreme (F_SET_RW_HINT on the inode; with direct=1 F_SET_FILE_RW_HINT, which Linux 5.17 and later refuse, failing the job as in fio).", |d, v| {
        d.write_hint = Some(match need(v)? { "none" => 1, "short" => 2, "medium" => 3, "long" => 4, "extreme" => 5, s => return Err(format!("{}: use none, short, medium, long or extreme", quoted(s)).into()) }); Ok(())
    }),
    opt!("opendir", [], value, "Every regular file below this directory, its subdirectories too, as the job's files (added to filename's; symbolic links left out, as fio).", |d, v| {
        let found = opendir_files(need(v)?)?;
        if d.filename.len() + found.len() > 1 << 20 { return Err(format!("{} files are more than a process may open: name fewer", d.filename.len() + found.len()).into()); }
        d.filename.extend(found); Ok(())
    }),
    opt!("directory", [], value, "Where job files go when filename is not given.", |d, v| { d.directory = Some(PathBuf::from(need(v)?.split(':').next().unwrap())); Ok(()) }),
    opt!("size", [], value, "Bytes of I/O per job (a pass over this range), or a % of each existing target, or Nz: N zones (of zonesize); 0, as not given, is each existing target's size (fio's).", |d, v| {
        if let Some(n) = zones(need(v)?)? { d.in_zones.size = Some(n); return Ok(()); }
        let a = value::size_or_percent(need(v)?, d.kb_base)?;
        d.size = (!a.is_zero()).then_some(a); Ok(())
    }),
    opt!("io_size", ["io_limit"], value, "Bytes of I/O each thread does within the size region, as fio: fewer than size stops early, more goes round the region again; with loops, each loop does up to io_size and the job at least io_size. A % is a share of size, Nz N zones (of zonesize); 0, as not given, is size (fio's).", |d, v| {
        if let Some(n) = zones(need(v)?)? { d.in_zones.io_size = Some(n); return Ok(()); }
        let a = value::size_or_percent(need(v)?, d.kb_base)?;
        d.io_size = (!a.is_zero()).then_some(a); Ok(())
    }),
    opt!("file_service_type", [], value, "Which file the next I/O goes to: roundrobin (default), random, sequential (each file's range, then the next), zipf:THETA, pareto:H, normal:DEV (gauss:DEV); ':N' keeps a file for N I/Os (random:4).", |d, v| { d.file_service = Some(hiops_job::file_service::FileService::parse(need(v)?).map_err(ValueError::refused)?); Ok(()) }),
    opt!("openfiles", [], value, "How many of the job's files are in service at a time. Below the job's files, as fio: the files are served in turn, at most this many at a time, each until its range is done, then the next joins (hiops keeps every file open all the same); with file_service_type roundrobin (the default) or sequential. At or above the job's files, or 0 (fio's default): no effect.", |d, v| { d.openfiles = Some(value::int(need(v)?, d.kb_base)?).filter(|&n| n > 0); Ok(()) }),
    opt!("buffer_pattern", [], value, "Payload of written blocks: 0xHEX, a decimal number, \"text\", 'FILE' (the file's bytes, up to 128 MiB, as fio 3.34), or a mix (as verify_pattern), repeated over each block. Not with verify, whose stamps are the payload (use verify_pattern).", |d, v| {
        let p = value::pattern(need(v)?)?;
        if p.is_empty() { return Err("gives no bytes: write a pattern such as 0xdeadbeef".into()); }
        d.buffer_pattern = Some(p); Ok(())
    }),
    opt!("zonemode", [], value, "none; strided: I/O stays in a zone of zonerange bytes until zonesize bytes were moved there, then skips zoneskip bytes further (wrapping at the end); zbd: zones of zonesize emulated on a file or a device without zones, as fio 3.33 does (writes at each zone's write pointer, reads below it); a zoned device itself (host-managed or host-aware) is refused before any I/O.", |d, v| {
        let v = need(v)?;
        d.zonemode_zbd = v == "zbd";
        d.zonemode_strided = Some(match v {
            "none" | "zbd" => false,
            "strided" => true,
            s => return Err(format!("{}: use none, strided or zbd", quoted(s)).into()),
        });
        Ok(())
    }),
    opt!("zonecapacity", [], value, "zonemode=zbd: bytes of each zone that can be written, from its start (0, the default: the zone size).", |d, v| { d.zone_capacity = Some(value::size(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("read_beyond_wp", [], flag, "zonemode=zbd: reads may go past a zone's write pointer (default 0: they stay below it).", |d, v| { d.read_beyond_wp = Some(value::boolean(v)?); Ok(()) }),
    opt!("max_open_zones", [], value, "zonemode=zbd: zones written at once per file, over its jobs (0, the default: no limit; at most 4096).", |d, v| { d.max_open_zones = Some(u32_of(value::int(need(v)?, d.kb_base)?, "max_open_zones")?); Ok(()) }),
    opt!("job_max_open_zones", [], value, "zonemode=zbd: zones written at once per thread (0: no limit; needs max_open_zones).", |d, v| { d.job_max_open_zones = Some(u32_of(value::int(need(v)?, d.kb_base)?, "job_max_open_zones")?); Ok(()) }),
    opt!("ignore_zone_limits", [], flag, "zonemode=zbd: accepted, no effect on emulated zones (fio: ignore a zoned device's own open-zone limit).", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("zone_reset_threshold", [], value, "zonemode=zbd: past this share (0 to 1) of the range holding data, zones are reset as zone_reset_frequency says.", |d, v| { d.zone_reset_threshold = Some(unit_share(need(v)?)?); Ok(()) }),
    opt!("zone_reset_frequency", [], value, "zonemode=zbd: past zone_reset_threshold, a zone is reset every 1/this writes (0 to 1; 0: never).", |d, v| { d.zone_reset_frequency = Some(unit_share(need(v)?)?); Ok(()) }),
    opt!("zonesize", [], value, "zonemode=strided: bytes moved in a zone before the next one; zonemode=zbd: the size of a zone (0, fio's default: no zones).", |d, v| { d.zonesize = Some(value::size(need(v)?, d.kb_base)?).filter(|&n| n > 0); Ok(()) }),
    opt!("zonerange", [], value, "zonemode=strided: the size of a zone (0, the default: zonesize); below zonesize a zone is gone over again.", |d, v| { d.zonerange = Some(value::size(need(v)?, d.kb_base)?).filter(|&n| n > 0); Ok(()) }),
    opt!("zoneskip", [], value, "zonemode=strided: bytes (or Nz: zones) skipped after each zone (default 0).", |d, v| {
        if let Some(n) = zones(need(v)?)? { d.in_zones.zoneskip = Some(n); return Ok(()); }
        d.zoneskip = Some(value::size(need(v)?, d.kb_base)?).filter(|&n| n > 0); Ok(())
    }),
    opt!("filesize", [], value, "Size of each file (default: size divided among the files).", |d, v| { d.filesize = Some(Bytes::nonzero("filesize", value::size(need(v)?, d.kb_base)?)?); Ok(()) }),
    opt!("offset", ["fileoffset"], value, "Start of the job's range in each target (bytes or %, or N*SIZE as in {rank}*64g, or Nz: N zones of zonesize).", |d, v| {
        if let Some(n) = zones(need(v)?)? { d.in_zones.offset = Some(n); return Ok(()); }
        d.offset = Some(value::scaled_size_or_percent(need(v)?, d.kb_base)?); Ok(())
    }),
    opt!("offset_increment", [], value, "Each clone starts this much further (bytes or %, or Nz: zones).", |d, v| {
        if let Some(n) = zones(need(v)?)? { d.in_zones.offset_increment = Some(n); return Ok(()); }
        d.offset_increment = Some(value::size_or_percent(need(v)?, d.kb_base)?); Ok(())
    }),
    opt!("offset_align", [], value, "A start given as a % (offset or offset_increment) is rounded up to a multiple of this (0, the default: the job's block alignment); a multiple of the block alignment.", |d, v| { d.offset_align = Bytes::given(value::size(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("file_append", [], flag, "Work on each regular file from its end, as its size is when the run is planned (a new file from 0), whatever offset says: writes extend it. Block devices keep offset, as in fio.", |d, v| { d.file_append = value::boolean(v)?; Ok(()) }),
    opt!("nrfiles", ["nr_files"], value, "Files per clone when filename is not given.", |d, v| {
        let n = u32_of(value::int(need(v)?, d.kb_base)?, "nrfiles")?;
        if n == 0 { return Err("must be at least 1".into()); }
        d.nrfiles = Some(n); Ok(())
    }),
    opt!("filename_format", [], value, "How the job's files are named without filename: $jobname, $jobnum (the clone), $filenum and $clientuid (empty: hiops has no client/server mode) are replaced, in any case (default $jobname.$jobnum.$filenum). A name that leaves clones sharing their first clone's files is refused: fio 3.33 runs such clones without a file.", |d, v| { d.filename_format = Some(need(v)?.to_string()); Ok(()) }),
    opt!("rw", ["readwrite"], value, "read, write, randread, randwrite, readwrite (rw), randrw, trim, randtrim, trimwrite, randtrimwrite (a trim then a write of the same block); trims discard (BLKDISCARD on a device, a punched hole in a file), sized and paced as writes; ':N' adds N bytes after each sequential I/O: holes, or backwards with a negative N (read:-8k); a random job's ':N' takes a new random offset every N I/Os (see rw_sequencer).", |d, v| {
        let text = need(v)?;
        let (mode, gap) = text.split_once(':').unwrap_or((text, ""));
        let mode = RwMode::parse(mode.trim()).ok_or_else(|| ValueError::Said(format!("unknown rw {}: use read, write, randread, randwrite, readwrite (rw), randrw, trim, randtrim, trimwrite or randtrimwrite", quoted(mode))))?;
        d.rw = Some(mode);
        (d.rw_gap, d.rw_seq_nr) = rw_postfix(gap.trim(), mode, d.kb_base)?;
        Ok(())
    }),
    opt!("rw_sequencer", [], value, "With a random job's rw=MODE:N, the I/Os between random offsets: sequential (after the last, the default) or identical (the same offset again).", |d, v| {
        d.rw_seq_identical = Some(match need(v)? { "sequential" => false, "identical" => true, s => return Err(format!("{}: use sequential or identical", quoted(s)).into()) }); Ok(())
    }),
    opt!("bs_is_seq_rand", [], flag, "Read bs=A,B (and bsrange, bssplit) as sequential,random instead of read,write: each I/O takes the sizes of its kind, whatever its direction.", |d, v| { d.bs_is_seq_rand = Some(value::boolean(v)?); Ok(()) }),
    opt!("rwmixread", [], value, "Percentage of reads in a mixed workload.", |d, v| { d.rwmixread = Some(value::percent("rwmixread", need(v)?)?); Ok(()) }),
    opt!("rwmixwrite", [], value, "Percentage of writes in a mixed workload.", |d, v| { d.rwmixwrite = Some(value::percent("rwmixwrite", need(v)?)?); Ok(()) }),
    opt!("bs", ["blocksize"], value, "Block size; fio's READ,WRITE,TRIM form sets each direction (bs=4k,64k; bs=4k,4k,8k gives trims 8k).", |d, v| {
        let kb = d.kb_base;
        d.bs = per_direction(need(v)?, d.bs.clone(), |t| Ok(BlockSizes::fixed(block_size(t, kb)?)))?;
        forget_ranges(d, need(v)?)
    }),
    opt!("bsrange", ["blocksize_range"], value, "Block sizes from MIN-MAX: every multiple of MIN, equally likely, and a MAX that is no multiple of MIN as often as MAX mod MIN allows (fio's draw; READ,WRITE,TRIM ranges as in fio).", |d, v| {
        let kb = d.kb_base;
        let ranges = per_direction(need(v)?, d.bsrange, |text| bs_range(text, kb))?;
        d.bs = per_direction(need(v)?, d.bs.clone(), |text| {
            let (a, b) = bs_range(text, kb)?;
            if b / a > MAX_BSRANGE_SIZES { return Err(format!("{}: MIN to MAX in steps of MIN is {} block sizes, more than the {MAX_BSRANGE_SIZES} hiops draws from: raise MIN or lower MAX", quoted(text), b / a).into()); }
            let sizes: Vec<u32> = (1..=b / a).map(|i| i * a).collect();
            Ok(BlockSizes::equal(&sizes))
        })?;
        d.bsrange = ranges; Ok(())
    }),
    opt!("bs_unaligned", ["blocksize_unaligned"], flag, "A bsrange's I/Os take any size from MIN to MAX, not only multiples of MIN, drawn as fio draws them (MIN + a uniform share of MAX, cut to MAX); not with direct=1 on most devices.", |d, v| { d.bs_unaligned = Some(value::boolean(v)?); Ok(()) }),
    opt!("bssplit", [], value, "Block size mix: SIZE/PERCENT:SIZE/PERCENT... (READ,WRITE,TRIM mixes as in fio); a size that is no multiple of the smallest is rounded down to one, as fio does unless bs_unaligned.", |d, v| {
        let kb = d.kb_base;
        d.bs = per_direction(need(v)?, d.bs.clone(), |t| Ok(BlockSizes::parse_with(t, &|s| value::size(s, kb))?))?;
        forget_ranges(d, need(v)?)
    }),
    opt!("blockalign", ["ba"], value, "Random offsets are multiples of this (default: the smallest block size).", |d, v| {
        let a = u32_of(value::size(first_of_pair(need(v)?), d.kb_base)?, "blockalign")?;
        if a == 0 { return Err("must be above 0".into()); }
        d.blockalign = Some(a); Ok(())
    }),
    opt!("ioengine", [], value, "sync, psync, vsync, pvsync, pvsync2, libaio, posixaio, io_uring, mmap, net, netsplice, splice, e4defrag, null (and hiops' mem), filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, falloc, ftruncate, cpuio, exec.", |d, v| {
        use hiops_hal::backends::sync::PsyncCall;
        use hiops_job::spec::{FileOp, StatCall};
        let v = need(v)?;
        // An engine's own options go with it, as fio's engine option
        // data does: a job of another engine under a [global] of
        // e4defrag's does not take its donor (fio's e4defrag2.fio).
        if v != "e4defrag" {
            (d.donorname, d.inplace) = (None, None);
        }
        d.filecreate = matches!(v, "filecreate" | "dircreate");
        d.dirs = matches!(v, "dircreate" | "dirstat" | "dirdelete");
        d.psync_call = match v {
            "falloc" => PsyncCall::Fallocate,
            "ftruncate" => PsyncCall::Ftruncate,
            _ => PsyncCall::Data,
        };
        d.file_op = match v {
            "filestat" | "dirstat" => Some(FileOp::Stat(StatCall::Stat)),
            "filedelete" | "dirdelete" => Some(FileOp::Delete),
            _ => None,
        };
        let psync = d.filecreate || d.file_op.is_some() || d.psync_call != PsyncCall::Data;
        d.cpuio = v == "cpuio";
        d.exec = v == "exec";
        d.netsplice = v == "netsplice";
        d.ioengine = Some(match () {
            _ if psync => EngineKind::Psync,
            _ if d.netsplice => EngineKind::Net,
            _ if d.cpuio || d.exec => EngineKind::Null,
            _ => engine(v)?,
        });
        Ok(())
    }),
    opt!("cpuload", [], value, "ioengine=cpuio: the share (1-100) of a CPU each thread keeps busy.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        d.cpuload = Some(n.min(100) as u32); Ok(())
    }),
    opt!("cpuchunks", [], value, "ioengine=cpuio: how long each burn lasts, in µs (default 50000).", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        if n == 0 { return Err("must be above 0".into()); }
        d.cpuchunks = Some(n); Ok(())
    }),
    opt!("cpumode", [], value, "ioengine=cpuio: noop (spin, default) or qsort (sort 256 Ki integers four times per burn).", |d, v| {
        d.cpumode_qsort = match need(v)? {
            "noop" => false,
            "qsort" => true,
            other => return Err(format!("{}: use noop or qsort", quoted(other)).into()),
        };
        Ok(())
    }),
    opt!("exit_on_io_done", [], flag, "ioengine=cpuio: end the job once the jobs beside it that move data have ended (0, the default: burn until the runtime). As in fio, it burns on while a later phase has such jobs.", |d, v| { d.exit_on_io_done = value::boolean(v)?; Ok(()) }),
    opt!("program", [], value, "ioengine=exec: the program the job runs for its runtime.", |d, v| { d.program = Some(need(v)?.to_string()); Ok(()) }),
    opt!("arguments", [], value, "ioengine=exec: the program's arguments, split at spaces; %r is the runtime in seconds, %n the job's name.", |d, v| { d.arguments = Some(need(v)?.to_string()); Ok(()) }),
    opt!("grace_time", [], value, "ioengine=exec: seconds the program has to end after SIGTERM before SIGKILL (default 1).", |d, v| { d.grace_time = Some(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("std_redirect", [], flag, "ioengine=exec: the program's stdout and stderr go to NAME.stdout and NAME.stderr (1, the default), or to hiops' own (0).", |d, v| { d.std_redirect = Some(value::boolean(v)?); Ok(()) }),
    opt!("prio", [], value, "The I/O priority level (0-7, 0 highest) each thread of the job sets for itself with ioprio_set, in prioclass (best effort when not given), as fio's thread does before its engine opens.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        if n > 7 { return Err("must be 0 to 7".into()); }
        d.prio = Some(n as u16); Ok(())
    }),
    opt!("prioclass", [], value, "The I/O priority class each thread of the job sets for itself: 1 realtime (root or CAP_SYS_ADMIN), 2 best effort, 3 idle; 0 is best effort, as fio takes it.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        if n > 3 { return Err("must be 0 to 3".into()); }
        d.prioclass = Some(n as u16); Ok(())
    }),
    opt!("nice", [], value, "Added to each thread's nice value (-20 to 19; below 0 needs root), as fio's thread does with nice(2).", |d, v| { d.thread_setup.nice = super::thread::nice(need(v)?)?; Ok(()) }),
    opt!("uid", [], value, "The user id each thread switches to before it opens its files (root only), as fio's setuid.", |d, v| { d.thread_setup.uid = Some(super::thread::id(need(v)?)?); Ok(()) }),
    opt!("gid", [], value, "The group id each thread switches to before its user (root only), as fio's setgid.", |d, v| { d.thread_setup.gid = Some(super::thread::id(need(v)?)?); Ok(()) }),
    opt!("lockmem", [], value, "Memory each thread locks (mlock) for its run: that much less for the page cache and the rest. Capped at RAM less 128 MiB, as fio caps it.", |d, v| { d.thread_setup.lockmem = value::size(need(v)?, d.kb_base)?; Ok(()) }),
    opt!("ioscheduler", [], value, "The I/O scheduler each thread writes to /sys/block/DEV/queue/scheduler for the device of the job's first file, then reads back (fio's switch; it stays after the run, as with fio).", |d, v| { d.thread_setup.ioscheduler = Some(need(v)?.trim().to_string()); Ok(()) }),
    opt!("exec_prerun", [], value, "A shell command each thread runs before its I/O, its output in NAME.prerun.txt; if it fails the thread does no I/O, as in fio.", |d, v| { d.thread_setup.exec_prerun = Some(need(v)?.to_string()); Ok(()) }),
    opt!("exec_postrun", [], value, "A shell command each thread runs after its I/O, its output in NAME.postrun.txt.", |d, v| { d.thread_setup.exec_postrun = Some(need(v)?.to_string()); Ok(()) }),
    opt!("numa_cpu_nodes", [], value, "The NUMA nodes whose CPUs the job's threads run on (all, 0, 0-1, 0,2): in place of cpus_allowed, as fio's numa_run_on_node_mask.", |d, v| { d.numa_cpu_nodes = Some(super::thread::nodes(need(v)?)?); Ok(()) }),
    opt!("numa_mem_policy", [], value, "Where each thread's memory comes from: default, local, prefer:N, bind:NODES or interleave[:NODES] (set_mempolicy, per thread).", |d, v| { d.numa_mem_policy = Some(super::thread::mem_policy(need(v)?)?); Ok(()) }),
    opt!("gtod_cpu", [], value, "fio's CPU for its time-keeping thread, which the job's cpus_allowed then leaves out. hiops reads the clock itself (no time thread): the CPU is only left out (0 is off, as in fio).", |d, v| {
        d.gtod_cpu = Some(usize::try_from(value::int(need(v)?, d.kb_base)?).map_err(|_| "past this machine's CPUs")?); Ok(())
    }),
    opt!("donorname", [], value, "ioengine=e4defrag: the donor file whose blocks each write moves into the job's file (in directory when given; created if absent).", |d, v| { d.donorname = Some(need(v)?.to_string()); Ok(()) }),
    opt!("inplace", [], value, "ioengine=e4defrag: 1 allocates the donor's blocks in each write and frees them after; 0 (default) preallocates the donor once.", |d, v| {
        d.inplace = Some(match value::int(need(v)?, d.kb_base)? {
            0 => false,
            1 => true,
            _ => return Err("must be 0 or 1".into()),
        });
        Ok(())
    }),
    opt!("stat_type", [], value, "ioengine=filestat: the call that looks each file up: stat (default), lstat or statx.", |d, v| {
        use hiops_job::spec::StatCall;
        d.stat_type = Some(match need(v)? {
            "stat" => StatCall::Stat,
            "lstat" => StatCall::Lstat,
            "statx" => StatCall::Statx,
            other => return Err(format!("{}: use stat, lstat or statx", quoted(other)).into()),
        });
        Ok(())
    }),
    opt!("iodepth", [], value, "Commands in flight per thread (async engines), or the shared queue's depth with strategy.", |d, v| {
        d.iodepth = Some(QueueDepth::new("iodepth", value::int(need(v)?, d.kb_base)?)?); Ok(())
    }),
    opt!("iodepth_batch_submit", ["iodepth_batch"], value, "Stage this many commands before issuing (0: all that fit).", |d, v| { d.iodepth_batch_submit = Some(u32_of(value::int(need(v)?, d.kb_base)?, "batch")?); Ok(()) }),
    opt!("iodepth_batch_complete_min", ["iodepth_batch_complete"], value, "Wait for at least this many completions per reap.", |d, v| { d.iodepth_batch_complete_min = Some(QueueDepth::new("iodepth_batch_complete_min", value::int(need(v)?, d.kb_base)?.max(1))?); Ok(()) }),
    opt!("iodepth_batch_complete_max", [], value, "Take at most this many completions per reap (raised to iodepth_batch_complete_min where below it). hiops' default takes a quarter of iodepth and leaves the rest in the ring for the next turn; fio's takes iodepth_batch_complete_min.", |d, v| { d.iodepth_batch_complete_max = Some(u32_of(value::int(need(v)?, d.kb_base)?, "batch")?); Ok(()) }),
    opt!("iodepth_low", [], value, "Once the queue has filled to iodepth, wait until at most this many are in flight before issuing again (0, or iodepth or more: refill as completions come, fio's default).", |d, v| { d.iodepth_low = Some(u32_of(value::int(need(v)?, d.kb_base)?, "iodepth_low")?); Ok(()) }),
    opt!("numjobs", [], value, "Threads (clones) of this job.", |d, v| {
        let n = u32_of(value::int(need(v)?, d.kb_base)?, "numjobs")?;
        if n == 0 { return Err("must be at least 1".into()); }
        d.numjobs = Some(n); Ok(())
    }),
    opt!("thread", [], flag, "Accepted: hiops runs jobs as threads either way; the fio-format report then says the job starts threads, not processes, as fio's does.", |d, v| { d.thread = value::boolean(v)?; Ok(()) }),
    // One setting in fio (buffered is direct negated): the last given wins.
    opt!("direct", [], flag, "O_DIRECT (bypass the page cache).", |d, v| { d.direct = Some(value::boolean(v)?); d.buffered = None; Ok(()) }),
    opt!("buffered", [], flag, "The opposite of direct (the later of the two given wins, as in fio).", |d, v| { d.buffered = Some(value::boolean(v)?); d.direct = None; Ok(()) }),
    opt!("runtime", ["timeout"], value, "Stop after this long (seconds unless a unit is given).", |d, v| {
        let t = value::time_ns(need(v)?, SEC)?;
        d.runtime = (t > 0).then_some(t); Ok(())
    }),
    opt!("time_based", [], flag, "Run for runtime even when size is done (wrapping around).", |d, v| { d.time_based = Some(value::boolean(v)?); Ok(()) }),
    opt!("ramp_time", [], value, "Run this long before measuring.", |d, v| { d.ramp_time = Some(value::time_ns(need(v)?, SEC)?); Ok(()) }),
    opt!("startdelay", [], value, "Wait this long before the job starts.", |d, v| { d.startdelay = Some(value::time_ns(first_of_pair(need(v)?).split('-').next().unwrap(), SEC)?); Ok(()) }),
    opt!("loops", [], value, "Repeat a size-based job this many times (0 is 1, as in fio).", |d, v| {
        let n = u32_of(value::int(need(v)?, d.kb_base)?, "loops")?;
        d.loops = Some(n.max(1)); Ok(())
    }),
    opt!("randrepeat", [], flag, "Same random sequence every run (default 1).", |d, v| { d.randrepeat = Some(value::boolean(v)?); Ok(()) }),
    opt!("randseed", [], value, "Seed of the random offsets and data; given, it overrides randrepeat.", |d, v| { d.randseed = Some(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("norandommap", [], flag, "Random offsets drawn with replacement (default: each block once per pass).", |d, v| { d.norandommap = Some(value::boolean(v)?); Ok(()) }),
    opt!("random_distribution", [], value, "random, zipf:THETA, pareto:H, normal:DEV, zoned:A/R:... (a zone A/ without a range takes the rest; READS,WRITES lists), zoned_abs:A/SIZE:..., sequence:B,B,... (fio 3.42's: a direction's Nth I/O goes to block B[N mod len], blocks of blockalign)", |d, v| { d.distribution = Some(Distribution::parse(need(v)?).map_err(ValueError::refused)?); Ok(()) }),
    opt!("random_sequence_stride", [], flag, "fio 3.42's, with random_distribution=sequence: the pattern moves on by its length each round (block (N div len) * len + B[N mod len]), and the file is done when it passes its end.", |d, v| { d.random_sequence_stride = Some(value::boolean(v)?); Ok(()) }),
    opt!("percentage_random", [], value, "Share of random offsets in a random job, the rest sequential.", |d, v| { d.percentage_random = Some(value::percent("percentage_random", first_of_pair(need(v)?))?); Ok(()) }),
    opt!("rate_iops", [], value, "Per-thread IOPS limit, READ,WRITE as in fio (latency counted from the intended time); 0: no limit, as not given.", |d, v| {
        let kb = d.kb_base;
        d.rate_iops = off_at_zero(per_direction(need(v)?, d.rate_iops, |t| value::int(t, kb))?); Ok(())
    }),
    opt!("rate", [], value, "Per-thread bandwidth limit in bytes/s, READ,WRITE as in fio (paced per I/O by the direction's mean block size); 0: no limit, as not given.", |d, v| {
        let kb = d.kb_base;
        d.rate = off_at_zero(per_direction(need(v)?, d.rate, |t| value::size(t, kb))?); Ok(())
    }),
    opt!("rate_min", ["ratemin"], value, "The job fails if a direction moves fewer bytes/s than this over rate_cycle, a second by default (READ,WRITE; 0: no check, as not given).", |d, v| {
        let kb = d.kb_base;
        d.rate_min = off_at_zero(per_direction(need(v)?, d.rate_min, |t| value::size(t, kb))?); Ok(())
    }),
    opt!("rate_iops_min", [], value, "The job fails if a direction completes fewer I/Os than this over rate_cycle, a second by default (READ,WRITE; 0: no check, as not given).", |d, v| {
        let kb = d.kb_base;
        d.rate_iops_min = off_at_zero(per_direction(need(v)?, d.rate_iops_min, |t| value::int(t, kb))?); Ok(())
    }),
    opt!("rate_process", [], value, "How rate and rate_iops space I/Os: linear (fixed gaps, the default) or poisson (exponential gaps of the same mean, from the job's seed).", |d, v| {
        d.rate_poisson = Some(match need(v)? { "linear" => false, "poisson" => true, s => return Err(format!("{}: use linear or poisson", quoted(s)).into()) }); Ok(())
    }),
    opt!("number_ios", [], value, "Each thread stops after this many I/Os (or at the end of size or runtime, whichever comes first); 0: no such limit, as not given. With time_based=1 it has no effect, as in fio 3.33: the job runs its runtime.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        d.number_ios = (n > 0).then_some(n); Ok(())
    }),
    opt!("exitall", [], flag, "When one thread of this job is done, the jobs of its group stop (exit_what says which).", |d, v| { d.exitall = value::boolean(v)?; Ok(()) }),
    opt!("exitall_on_error", [], flag, "When a thread of this job ends with an error (an I/O or setup error, a missed rate_min, a bad block found by verify), the jobs exit_what names stop, as with exitall.", |d, v| { d.exitall_on_error = value::boolean(v)?; Ok(()) }),
    opt!("exit_what", [], value, "What exitall stops: group (the job's reporting group, the default), stonewall (every job running, up to the next stonewall) or all (every job; later ones never run).", |d, v| {
        d.exit_what = Some(match need(v)? {
            "group" => ExitWhat::Group,
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            s => return Err(format!("{}: use group, stonewall or all", quoted(s)).into()),
        });
        Ok(())
    }),
    opt!("flow", [], value, "Weight in flow control (0 to 1000, 0: off): jobs of one flow_id keep their I/O in proportion to their weights (flow=3 against flow=1: three I/Os to one).", |d, v| {
        let w = value::int(need(v)?, d.kb_base)?;
        if w > 1000 { return Err("give 0 to 1000".into()); }
        d.flow = Some(w as u32); Ok(())
    }),
    opt!("flow_id", [], value, "The flow a job's weight counts in (default 0).", |d, v| { d.flow_id = Some(u32_of(value::int(need(v)?, d.kb_base)?, "flow_id")?); Ok(()) }),
    opt!("flow_sleep", [], value, "How long a job held back by its flow waits before it asks again (microseconds unless a unit is given; default 0: at once).", |d, v| { d.flow_sleep = Some(value::time_ns(need(v)?, USEC)?); Ok(()) }),
    opt!("max_latency", [], value, "A job fails (ETIMEDOUT) when an I/O's latency exceeds this (microseconds unless a unit is given; READ,WRITE,TRIM as in fio, which checks no trim); 0: no check, as not given.", |d, v| {
        // fio keeps whole microseconds (init.c scales them to ns).
        let micros = |t: &str| value::time_ns(t, USEC).map(|ns| ns / USEC * USEC);
        d.max_latency = off_at_zero(per_direction(need(v)?, d.max_latency, micros)?); Ok(())
    }),
    opt!("latency_target", [], value, "Find the deepest queue (up to iodepth) whose I/Os meet this latency (microseconds unless a unit is given); the job reports that depth (latency_depth) and its figures at it.", |d, v| {
        let t = value::time_ns(need(v)?, USEC)?;
        d.latency_target = (t > 0).then_some(t); Ok(())
    }),
    opt!("latency_window", [], value, "latency_target judges each depth over windows this long (microseconds unless a unit is given).", |d, v| { d.latency_window = Some(value::time_ns(need(v)?, USEC)?).filter(|&w| w > 0); Ok(()) }),
    opt!("latency_percentile", [], value, "The share of a window's I/Os (percent, default 100) that must meet latency_target.", |d, v| {
        let p: f64 = need(v)?.parse().map_err(|_| "not a number".to_string())?;
        if !(p > 0.0 && p <= 100.0) { return Err("give a percentage above 0, up to 100".into()); }
        // 100 is fio's default, as not given.
        d.latency_percentile = (p < 100.0).then_some(p); Ok(())
    }),
    opt!("latency_run", [], flag, "With latency_target: keep adjusting the depth for the whole run (1) instead of ending the job once it is found (0, the default).", |d, v| { d.latency_run = value::boolean(v)?.then_some(true); Ok(()) }),
    opt!("pre_read", [], flag, "Read each thread's range of its files into the page cache before its I/O (not measured); the cache is then not dropped (no invalidate). Not with direct=1.", |d, v| { d.pre_read = Some(value::boolean(v)?); Ok(()) }),
    opt!("unlink_each_loop", [], flag, "Before each loop after the first, unlink the job's files; a job that writes creates them anew, empty, any other fails to open them (ENOENT), as fio. Not with clones sharing files, mmap, or registerfiles.", |d, v| { d.unlink_each_loop = Some(value::boolean(v)?); Ok(()) }),
    opt!("create_only", [], flag, "Lay the job's files out (create or extend them as for the job) and do no I/O.", |d, v| { d.create_only = Some(value::boolean(v)?); Ok(()) }),
    opt!("thinktime", [], value, "Pause after an I/O completes, the queue drained, before the next is issued (microseconds unless a unit is given); the thinktime_* options say when and how.", |d, v| { d.thinktime = Some(value::time_ns(need(v)?, USEC)?); Ok(()) }),
    opt!("rate_ignore_thinktime", [], flag, "With a rate limit and thinktime: after each think the rate goes on from where it was, not catching up the time thought (fio moves its next I/O's due time by the think).", |d, v| { d.rate_ignore_thinktime = value::boolean(v)?; Ok(()) }),
    opt!("thinktime_spin", [], value, "With thinktime: spend this much of each think busy on the CPU, sleep the rest (microseconds unless a unit is given; at most thinktime).", |d, v| { d.thinktime_spin = Some(value::time_ns(need(v)?, USEC)?); Ok(()) }),
    opt!("thinktime_blocks", [], value, "With thinktime: think after this many I/Os (default 1: after every I/O, which caps the queue depth at 1).", |d, v| { d.thinktime_blocks = Some(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("thinktime_blocks_type", [], value, "With thinktime: count thinktime_blocks as complete (completed I/Os, the default) or issue (issued ones).", |d, v| {
        d.thinktime_on_issue = Some(match need(v)? { "complete" => false, "issue" => true, s => return Err(format!("{}: use complete or issue", quoted(s)).into()) }); Ok(())
    }),
    opt!("thinktime_iotime", [], value, "With thinktime: think after this much I/O time (seconds unless a unit is given), or after thinktime_blocks I/Os where given too, whichever comes first.", |d, v| { d.thinktime_iotime = Some(value::time_ns(need(v)?, SEC)?); Ok(()) }),
    opt!("cpus_allowed", [], value, "CPUs the job's threads may use: 0-3,6.", |d, v| { d.cpus_allowed = Some(cpu_list(need(v)?)?); Ok(()) }),
    opt!("cpumask", [], value, "CPUs as a bit mask: 0x3 is CPUs 0 and 1.", |d, v| { d.cpus_allowed = Some(cpu_mask(need(v)?)?); Ok(()) }),
    opt!("cpus_allowed_policy", [], value, "shared (all threads all CPUs) or split (one CPU each).", |d, v| {
        d.cpus_split = Some(match need(v)? { "shared" => false, "split" => true, p => return Err(format!("{}: use shared or split", quoted(p)).into()) }); Ok(())
    }),
    opt!("fsync", [], value, "fsync after this many writes.", |d, v| { d.fsync = Some(u32_of(value::int(need(v)?, d.kb_base)?, "fsync")?); Ok(()) }),
    opt!("fdatasync", [], value, "fdatasync after this many writes.", |d, v| { d.fdatasync = Some(u32_of(value::int(need(v)?, d.kb_base)?, "fdatasync")?); Ok(()) }),
    opt!("sync_file_range", [], value, "sync_file_range(2) after this many writes (FLAGS:N; 1 where :N is left out) over the range the file's writes covered since the last one; FLAGS: wait_before, write, wait_after, joined by commas.", |d, v| { d.sync_range = Some(sync_range(need(v)?)?); Ok(()) }),
    opt!("end_fsync", [], flag, "fsync each file when the job's I/O is done.", |d, v| { d.end_fsync = Some(value::boolean(v)?); Ok(()) }),
    opt!("overwrite", [], flag, "0 or 1, the same here: a write job's new or short file is laid out whole before the job writes to it, as fio 3.33 lays it out with either value; a file already large enough is written as it is.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("fsync_on_close", [], flag, "fsync each file as it is closed: hiops keeps a job's files open until its I/O is done, so this is end_fsync's sync.", |d, v| { d.fsync_on_close = Some(value::boolean(v)?); Ok(()) }),
    opt!("sync", [], value, "Open the files with O_SYNC (sync or 1) or O_DSYNC (dsync), so each write returns once it is stable; none or 0 (fio's default): neither.", |d, v| {
        use hiops_job::spec::SyncWrites;
        d.sync_writes = Some(match need(v)? {
            "none" | "0" => None,
            "sync" | "1" => Some(SyncWrites::Sync),
            "dsync" => Some(SyncWrites::Dsync),
            s => return Err(format!("{}: use none, sync or dsync (or 0, 1)", quoted(s)).into()),
        });
        Ok(())
    }),
    opt!("buffer_compress_percentage", [], value, "Make written data compress to about (100-N)%: each buffer_compress_chunk of a write is (100-N)% random bytes, then zeros (or buffer_pattern), as fio. 100 writes zeros. Ignored under verify, whose blocks carry their own pattern, as in fio.", |d, v| {
        d.buffers.compress_percentage = value::percent("buffer_compress_percentage", need(v)?)?; Ok(())
    }),
    opt!("buffer_compress_chunk", [], value, "Bytes per chunk for buffer_compress_percentage (default 512): each chunk is random bytes, then the part that compresses away.", |d, v| {
        let c = value::int(need(v)?, d.kb_base)?;
        d.buffers.compress_chunk = u32::try_from(c).ok().filter(|&c| c > 0).ok_or_else(|| format!("{c}: give 1 byte to 4g (e.g. 512, 4k)"))?; Ok(())
    }),
    opt!("dedupe_percentage", [], value, "Share (0-100) of writes that repeat, byte for byte, the content of the previous unique write (fio's dedupe_mode=repeat), so a deduplicating device keeps about (100-N)% of the blocks. Ignored under verify, as in fio.", |d, v| {
        d.buffers.dedupe_percentage = value::percent("dedupe_percentage", need(v)?)?; Ok(())
    }),
    opt!("refill_buffers", [], flag, "1: fresh random data for every write (as fio). 0 (default): each buffer is filled with random data once at start and stamped with 8 varying bytes per 512 on every write (scramble_buffers). Ignored under verify, as in fio.", |d, v| { d.buffers.refill = value::boolean(v)?; Ok(()) }),
    opt!("dedupe_mode", [], value, "What a dedupe_percentage write repeats: repeat (default) the previous unique write, or working_set one of the first unique writes of a set of dedupe_working_set_percentage of size, drawn at random, as fio.", |d, v| {
        d.dedupe_working_set = match need(v)? { "repeat" => false, "working_set" => true, s => return Err(format!("{}: use repeat or working_set", quoted(s)).into()) }; Ok(())
    }),
    opt!("dedupe_global", [], flag, "dedupe_mode=working_set: the jobs with dedupe_global share one working set, each thread's spread over every thread's first unique writes (fio's rotation), so their files hold each other's blocks.", |d, v| { d.buffers.dedupe_global = value::boolean(v)?.then_some(0); Ok(()) }),
    opt!("dedupe_working_set_percentage", [], value, "dedupe_mode=working_set: the set is this share of size (default 5), in blocks of the smallest write size.", |d, v| { d.dedupe_working_set_percentage = Some(value::percent("dedupe_working_set_percentage", need(v)?)?); Ok(()) }),
    opt!("scramble_buffers", [], flag, "1 (default): each write stamps 8 varying bytes per 512 into its buffer (filled with random data once at start), so no two written blocks are alike. 0: writes carry the buffer as filled once (or as the last read into it left it), as fio. No effect with refill_buffers, buffer_compress_percentage, dedupe_percentage, buffer_pattern or verify.", |d, v| { d.buffers.scramble = value::boolean(v)?; Ok(()) }),
    opt!("zero_buffers", [], flag, "Write zeros (a buffer_pattern of one zero byte): what compresses and deduplicates best. Ignored under verify, whose blocks carry their own pattern, as in fio.", |d, v| { d.zero_buffers = Some(value::boolean(v)?); Ok(()) }),
    opt!("atomic", [], flag, "1: direct I/O, as in fio 3.33, which sets O_DIRECT and its own O_ATOMIC bit (040000000), a flag Linux does not have and ignores; Linux's atomic writes (RWF_ATOMIC, 6.11) are another thing, fio 3.33 does not ask for them.", |d, v| { d.atomic = value::boolean(v)?; Ok(()) }),
    opt!("write_barrier", [], value, "Accepted, with no effect: fio 3.33 marks every Nth write as a barrier and none of its engines acts on the mark (io_u.c), so its writes are what they are without it.", |d, v| { value::int(need(v)?, d.kb_base).map(|_| ()) }),
    opt!("create_on_open", [], flag, "Accepted: hiops creates files when it opens them.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("fallocate", [], value, "Accepted (none, native, posix, keep, truncate, 0, 1): hiops lays files out with written data, which makes preallocation moot.", |_, v| {
        match need(v)? { "none" | "native" | "posix" | "keep" | "truncate" | "0" | "1" => Ok(()), s => Err(format!("{}: use none, native, posix, keep or truncate", quoted(s)).into()) }
    }),
    opt!("unlink", [], flag, "Remove the job's files when it ends.", |d, v| { d.unlink = Some(value::boolean(v)?); Ok(()) }),
    opt!("invalidate", [], flag, "Buffered jobs: each thread drops its range's cached pages as it starts, before each of its loops and, time-based, each time it wraps around (default 1, fio's; 0 reads what the cache holds). A verify pass always reads the device.", |d, v| { d.invalidate = Some(value::boolean(v)?); Ok(()) }),
    opt!("stonewall", ["wait_for_previous"], flag, "Wait for the jobs before this one to finish; starts a new group.", |d, v| { d.stonewall = value::boolean(v)?; Ok(()) }),
    opt!("wait_for", [], value, "Start this job once the named earlier job is done, as in fio. hiops runs jobs in phases: this job starts when the phase holding the named job ends, so jobs running beside that one are waited for too.", |d, v| { d.wait_for = Some(need(v)?.to_string()); Ok(()) }),
    opt!("new_group", [], flag, "Start a new reporting group (without waiting).", |d, v| { d.new_group = value::boolean(v)?; Ok(()) }),
    opt!("group_reporting", [], flag, "Report each group merged instead of per job.", |d, v| { d.group_reporting = value::boolean(v)?; Ok(()) }),
    opt!("verify", [], flag, "Stamp each written block in fio's layout and check it on read-back: md5, crc64, crc32, crc32c (crc32c-intel), crc16, crc7, sha1, sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, xxhash, meta (the header only), pattern (verify_pattern alone, no header), pattern_hdr (fio 3.40's: a header and verify_pattern, as verify_pattern without verify), null (read back, not checked); 0 or none: off. Blocks either tool writes check in the other (docs/output.md, Verify).", |d, v| {
        let name = v.unwrap_or("crc32c");
        d.verify = Some(VerifyMode::parse(name).ok_or_else(|| ValueError::Said(format!("{} is not one of fio's verify modes: use {}", quoted(name), VerifyMode::NAMES)))?);
        Ok(())
    }),
    opt!("verify_pattern", [], value, "Payload of verified blocks: 0xHEX, a decimal number, \"text\", 'FILE' (its bytes), %o (the block's offset, 8 bytes), or a mix; alone it means a header and the pattern (fio's rule).", |d, v| {
        let (bytes, at) = value::pattern_with_offsets(need(v)?)?;
        d.verify_pattern = Some(bytes);
        d.verify_pattern_offsets = at;
        Ok(())
    }),
    opt!("verify_pattern_interval", [], value, "fio 3.40's: start verify_pattern anew every this many bytes of a block, %o being the offset of that piece (so verify_pattern=%o with 512 stamps each 512 bytes with their own offset); 0, the default: once per block, as fio 3.33.", |d, v| {
        let n = u32_of(value::size(need(v)?, d.kb_base)?, "verify_pattern_interval")?;
        d.verify_pattern_interval = Some(n).filter(|&n| n > 0); Ok(())
    }),
    opt!("verify_write_sequence", [], flag, "fio 3.38's: 1 (default): each block a writing job reads back must be the last write it made there (hiops' write number in the header; fio's numberio); 0: the header and the checksum or pattern alone, e.g. for jobs that write the same blocks.", |d, v| { d.verify_write_sequence = Some(value::boolean(v)?); Ok(()) }),
    opt!("verify_header_seed", [], flag, "fio 3.40's: 1 (default): where the check knows the seed a block's write drew (verify_only of a job that reads and writes, as fio 3.33 checks it), the header's rand_seed must be it; 0: not checked.", |d, v| { d.verify_header_seed = Some(value::boolean(v)?); Ok(()) }),
    opt!("do_verify", [], flag, "Check written blocks (1, default); 0 only stamps them.", |d, v| { d.do_verify = Some(value::boolean(v)?); Ok(()) }),
    opt!("verify_only", [], flag, "Do not write: check the blocks the job's writes would have left (a read job: every block), as a previous run with the same options wrote them.", |d, v| { d.verify_only = Some(value::boolean(v)?); Ok(()) }),
    opt!("verify_interval", [], value, "A verify header every this many bytes of a block (default: the smallest block size; it must divide every block size).", |d, v| {
        let n = u32_of(value::size(need(v)?, d.kb_base)?, "verify_interval")?;
        if n < 80 { return Err("must be at least 80 (twice fio's header)".into()); }
        d.verify_interval = Some(n); Ok(())
    }),
    opt!("verify_offset", [], value, "Keep each verify header this many bytes into its chunk, swapped with the payload there (at least 40, fio's header; the header must end within verify_interval).", |d, v| {
        let n = u32_of(value::size(need(v)?, d.kb_base)?, "verify_offset")?;
        if n < 40 { return Err("must be at least 40 (fio's verify header)".into()); }
        d.verify_offset = Some(n); Ok(())
    }),
    opt!("verify_fatal", [], flag, "Stop the job at the first bad block even where continue_on_error goes on past verify errors (without it the job stops there anyway, as fio's; a bad block makes the exit code 4, fio's 1 under hiops fio).", |d, v| { d.verify_fatal = Some(value::boolean(v)?); Ok(()) }),
    opt!("verify_dump", [], flag, "Write each bad block (at most 64 a thread) as fio does: FILE.OFFSET.received and FILE.OFFSET.expected in the current directory, or FILE.OFFSET.hdr_fail when its header is wrong.", |d, v| { d.verify_dump = Some(value::boolean(v)?); Ok(()) }),
    opt!("verify_backlog", [], value, "During the writes, after every this many writes read back and check the oldest done writes not checked yet (verify_backlog_batch of them); the check after the writes reads only the rest.", |d, v| { d.verify_backlog = Some(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("verify_backlog_batch", [], value, "How many writes each verify_backlog check reads back (default: verify_backlog).", |d, v| { d.verify_backlog_batch = Some(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("trim_percentage", [], value, "Verify jobs: each written block is picked for a trim with this chance (0-100, %); trim_backlog says when picked blocks are trimmed, and the check expects zeroes there (trim_verify_zero). Without trim_backlog no trim is issued, as in fio 3.33 (which then warns of 'trim entries leaked'); without verify it has no effect, as in fio.", |d, v| {
        d.trim_percentage = Some(Percent::new("trim_percentage", value::int(need(v)?.trim_end_matches('%'), d.kb_base)?)?); Ok(())
    }),
    opt!("trim_verify_zero", [], flag, "Check that trimmed blocks read back as zeroes (1, default); 0 leaves them out of the check.", |d, v| { d.trim_verify_zero = Some(value::boolean(v)?); Ok(()) }),
    opt!("trim_backlog", [], value, "Trim picked blocks (trim_percentage) when the written blocks reach a multiple of this and the last I/O was not a read (fio: trim after this many blocks are written).", |d, v| { d.trim_backlog = Some(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("trim_backlog_batch", [], value, "How many picked blocks each trim_backlog round trims (default: trim_backlog).", |d, v| { d.trim_backlog_batch = Some(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("verify_async", [], value, "This many threads per job thread check the blocks it reads back (0, default: the job's thread checks each as its read completes); a read's bytes are copied to one of two preallocated buffers a verify thread, and the verdicts are booked as the job reaps, so verify_fatal stops a few reads later.", |d, v| { d.verify_async = Some(u32_of(value::int(need(v)?, d.kb_base)?, "verify_async")?); Ok(()) }),
    opt!("verify_async_cpus", [], value, "Accepted, no effect: hiops' verify threads run where the scheduler puts them.", |_, v| { cpu_list(need(v)?).map(|_| ()) }),
    opt!("experimental_verify", [], flag, "Accepted: hiops' check already knows every block the job wrote last (its block map), which fio's experimental_verify rebuilds by replaying the workload; the same blocks are checked. Refused with zonemode=zbd, as fio 3.34 and later.", |d, v| { d.experimental_verify = value::boolean(v)?; Ok(()) }),
    opt!("hostname", [], value, "net: the host the sending side connects to (default 127.0.0.1), the address the listening side binds (default all), or protocol=unix's socket path.", |d, v| { net(d).host = need(v)?.to_string(); Ok(()) }),
    opt!("port", [], value, "net: the TCP or UDP port.", |d, v| { net(d).port = net_port(need(v)?)?; Ok(()) }),
    opt!("protocol", ["proto"], value, "net: tcp (default), udp or unix.", |d, v| { net(d).proto = net_proto(need(v)?)?; Ok(()) }),
    opt!("listen", [], flag, "net, protocol=tcp: the receiving side: bind the port and wait for the sender (reads receive). With udp or unix it is refused, as fio 3.33 refuses it: the job that reads binds.", |d, v| { net(d).listen = value::boolean(v)?; Ok(()) }),
    opt!("pingpong", [], flag, "net: each message is echoed back: the sender waits for its bytes, the receiver returns them.", |d, v| { net(d).pingpong = value::boolean(v)?; Ok(()) }),
    opt!("nodelay", [], flag, "net: TCP_NODELAY.", |d, v| { net(d).nodelay = value::boolean(v)?; Ok(()) }),
    opt!("window_size", [], value, "net: the socket's send and receive buffers (SO_SNDBUF, SO_RCVBUF).", |d, v| { let w = u32_of(value::size(need(v)?, d.kb_base)?, "window_size")?; net(d).window_size = Some(w); Ok(()) }),
    opt!("ttl", [], value, "net, udp to an IPv4 multicast group: the sender's time-to-live for the group's datagrams (IP_MULTICAST_TTL; default 1, the local network).", |d, v| { let t = u32_of(value::int(need(v)?, d.kb_base)?, "ttl")?; net(d).ttl = Some(t); Ok(()) }),
    opt!("interface", [], value, "net, udp multicast: the IP address of the local interface the group is sent through (IP_MULTICAST_IF) and joined on.", |d, v| {
        let a = need(v)?.trim();
        net(d).interface = Some(a.parse().map_err(|_| format!("{}: give the interface's IPv4 address, as 10.0.0.2", quoted(a)))?); Ok(())
    }),
    opt!("mss", [], value, "net: TCP's maximum segment size (TCP_MAXSEG).", |d, v| { let m = u32_of(value::size(need(v)?, d.kb_base)?, "mss")?; net(d).mss = Some(m); Ok(()) }),
    opt!("hipri", [], flag, "Polled completions: IOPOLL (io_uring) or RWF_HIPRI (pvsync2).", |d, v| { d.hipri = Some(value::boolean(v)?); Ok(()) }),
    opt!("userspace_reap", [], flag, "libaio: completions read from the AIO ring in user space before io_getevents is called (fio's userspace_reap; fio reads the ring only where it waits for none).", |d, v| { d.userspace_reap = Some(value::boolean(v)?); Ok(()) }),
    opt!("force_async", [], value, "io_uring: every Nth command goes with IOSQE_ASYNC, to an io-wq worker at once (0: none).", |d, v| { d.force_async = Some(u32_of(value::int(need(v)?, d.kb_base)?, "force_async")?); Ok(()) }),
    opt!("hipri_percentage", [], value, "pvsync2 with hipri: the share of I/Os, 0-100%, that poll (default 100); spread evenly.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        if n > 100 { return Err("must be 0 to 100".into()); }
        d.hipri_percentage = Some(n as u8); Ok(())
    }),
    opt!("uncached", [], value, "pvsync2, io_uring: buffered reads and writes with RWF_DONTCACHE, their pages dropped once done (1; Linux 6.14's flag for what fio 3.33 called RWF_UNCACHED, whose number is RWF_ATOMIC in today's kernels). No effect with direct=1, as in fio.", |d, v| { d.uncached = Some(value::int(need(v)?, d.kb_base)? != 0); Ok(()) }),
    opt!("nowait", [], flag, "pvsync2: RWF_NOWAIT.", |d, v| { d.nowait = Some(value::boolean(v)?); Ok(()) }),
    opt!("fixedbufs", [], flag, "io_uring: registered buffers.", |d, v| { d.fixedbufs = Some(value::boolean(v)?); Ok(()) }),
    opt!("registerfiles", [], flag, "io_uring: registered files.", |d, v| { d.registerfiles = Some(value::boolean(v)?); Ok(()) }),
    opt!("sqthread_poll", [], flag, "io_uring: a kernel thread polls the submission queue.", |d, v| { d.sqthread_poll = Some(value::boolean(v)?); Ok(()) }),
    opt!("sqthread_poll_cpu", [], value, "io_uring: CPU of the submission-queue thread.", |d, v| { d.sqthread_poll_cpu = Some(u32_of(value::int(need(v)?, d.kb_base)?, "cpu")?); Ok(()) }),
    opt!("sqthread_idle", [], value, "io_uring: SQ thread idle time before it sleeps (ms).", |d, v| { d.sqthread_idle_ms = Some(u32_of(value::time_ns(need(v)?, 1_000_000)? / 1_000_000, "idle")?); Ok(()) }),
    opt!("nonvectored", [], flag, "Accepted (1, 0, or -1, fio's default: non-vectored where the kernel has it): hiops' io_uring always uses non-vectored reads and writes.", |_, v| { if v.map(str::trim) == Some("-1") { return Ok(()); } value::boolean(v).map(|_| ()) }),
    opt!("defer_taskrun", [], value, "io_uring SINGLE_ISSUER+DEFER_TASKRUN: auto, 1, 0 (hiops).", |d, v| { d.defer_taskrun = Some(feature(v)?); Ok(()) }),
    opt!("coop_taskrun", [], value, "io_uring COOP_TASKRUN: auto, 1, 0 (hiops).", |d, v| { d.coop_taskrun = Some(feature(v)?); Ok(()) }),
    opt!("allow_mounted_write", [], flag, "Allow writes to the job's block devices while mounted or in use, if --allow-write-device names them too.", |d, v| { d.allow_mounted_write = value::boolean(v)?; Ok(()) }),
    opt!("allow-write-device", ["allow_write_device"], value, "Write this block device even though libblkid finds a filesystem, partition table or RAID label on it; also lets --output, logs and I/O logs go to this block device, character device or FIFO, which are refused otherwise (hiops; repeatable; must name an existing device or FIFO).", |d, v| {
        let dev = PathBuf::from(need(v)?);
        hiops_safety::check_grant(&dev)?;
        d.allow_write_devices.push(dev);
        Ok(())
    }),
    opt!("fill_device", ["fill_fs"], flag, "Size the job to the free space of the file's filesystem (or the whole device).", |d, v| { d.fill_device = value::boolean(v)?; Ok(()) }),
    opt!("block_error_percentiles", [], flag, "Count the trims of each trim-sized block of the job's one file and report percentiles of trims per block with each block's state (JSON `block`), as fio documents it (fio 3.33's own report fails an assertion on them).", |d, v| { d.block_error_percentiles = value::boolean(v)?; Ok(()) }),
    opt!("percentile_list", [], value, "Completion-latency percentiles to report: 50:99:99.9", |d, v| {
        let mut list = Vec::new();
        for p in need(v)?.split(':').filter(|p| !p.is_empty()) {
            let x: f64 = p.parse().map_err(|_| ValueError::Said(format!("{} is not a percentile", quoted(p))))?;
            if !(0.0..=100.0).contains(&x) { return Err(format!("percentile {x} is outside 0..100").into()); }
            list.push(x);
        }
        if list.is_empty() || list.len() > 20 { return Err("give 1 to 20 percentiles".into()); }
        d.percentile_list = Some(list); Ok(())
    }),
    opt!("ss", ["steadystate"], value, "Stop at steady state: iops:LIMIT, iops_slope:LIMIT, bw:LIMIT, bw_slope:LIMIT (LIMIT absolute or %).", |d, v| { d.ss = Some(steady_state(v)?); Ok(()) }),
    opt!("ss_dur", ["steadystate_duration"], value, "Steady-state window (seconds unless a unit is given).", |d, v| { d.ss_dur = Some(value::time_ns(need(v)?, SEC)?).filter(|&t| t > 0); Ok(()) }),
    opt!("ss_ramp", ["steadystate_ramp_time"], value, "Time before steady-state data collection starts.", |d, v| { d.ss_ramp = Some(value::time_ns(need(v)?, SEC)?).filter(|&t| t > 0); Ok(()) }),
    opt!("strategy", [], value, "hiops: synchronous-thread mode through a HIOPS path strategy: pread, completion-thread, per-thread-ring, coop (a ring per thread by default), coop-shared (coop with every thread on one ring, the paper's single queue), poll, hybrid; or tasks (coop on the task path, as many tasks as numjobs).", |d, v| {
        let s = need(v)?;
        d.tasks_from_numjobs = s == "tasks";
        d.coop_shared = s == "coop-shared";
        let s = if d.tasks_from_numjobs || d.coop_shared { "coop" } else { s };
        d.strategy = Some(hiops_path::Strategy::parse(s).ok_or_else(|| ValueError::Said(format!("unknown strategy {}: use one of pread, completion-thread, per-thread-ring, coop, coop-shared, poll, hybrid, tasks", quoted(s))))?); Ok(())
    }),
    opt!("tasks", [], value, "hiops coop: N application tasks (the task path) instead of threads, shared out over one thread per allowed CPU, each thread with its own ring of iodepth tags.", |d, v| {
        let n = u32_of(value::int(need(v)?, d.kb_base)?, "tasks")?;
        if n == 0 || n > 1 << 20 { return Err("give 1 to 1048576 tasks".into()); }
        d.tasks = Some(n); Ok(())
    }),
    opt!("spin", [], value, "hiops coop/poll/hybrid: spin this long before sleeping.", |d, v| { d.spin = Some(value::time_ns(need(v)?, 1)?); Ok(()) }),
    opt!("poll_interval", [], value, "hiops poll/hybrid: time between two polls (default 16us).", |d, v| { d.poll_interval = Some(value::time_ns(need(v)?, USEC)?.max(1_000)); Ok(()) }),
    opt!("coop_peeks", [], flag, "hiops poll: application threads peek and reap too (1) or not (0).", |d, v| { d.coop_peeks = Some(value::boolean(v)?); Ok(()) }),
    opt!("coop_parts", [], value, "hiops coop: the parts of the strategy that are on, the paper's Fig 8 ablation: issue (non-blocking issue only; one completion thread reaps, wakes and issues), lazy (+ the waiting thread reaps on the doorbell), all (+ every thread reaps for the others; default).", |d, v| {
        let v = need(v)?;
        d.coop_parts = Some(hiops_path::CoopParts::parse(v).ok_or_else(|| ValueError::Said(format!("unknown coop_parts {}: use issue, lazy or all", quoted(v))))?);
        Ok(())
    }),
    opt!("coop_wait", [], value, "hiops coop on io_uring: how waiting threads sleep: own (each until its own completion is posted, which wakes it once; default) or doorbell (one thread sleeps on the completion eventfd and wakes the owners).", |d, v| {
        let v = need(v)?;
        d.coop_wait = Some(hiops_path::CoopWait::parse(v).ok_or_else(|| ValueError::Said(format!("unknown coop_wait {}: use own or doorbell", quoted(v))))?);
        Ok(())
    }),
    opt!("rings", [], value, "hiops: shared queues of the path; each thread keeps one, given round robin; iodepth tags are split among them.", |d, v| {
        let n = u32_of(value::int(need(v)?, d.kb_base)?, "rings")?;
        if n == 0 { return Err("must be at least 1".into()); }
        d.rings = Some(n); Ok(())
    }),
    opt!("raid0", [], value, "hiops: stripe the job's files (filename=a:b:...) as one RAID0 volume with chunks of this size (0: off, files take turns per I/O).", |d, v| {
        d.raid0 = Bytes::given(value::size(need(v)?, d.kb_base)?); Ok(())
    }),
    opt!("hybrid_depth", [], value, "hiops hybrid: poll while at least this many commands are in flight (off: never poll).", |d, v| { d.hybrid_depth = Some(hybrid_depth(need(v)?)?); Ok(()) }),
    opt!("hybrid_iops", [], value, "hiops hybrid: ...and completions arrive at least this fast (IOPS).", |d, v| {
        match need(v)?.parse::<f64>() {
            Ok(r) if r >= 0.0 && r.is_finite() => { d.hybrid_iops = Some(r); Ok(()) }
            _ => Err("give a rate in IOPS: a number, 0 or more".into()),
        }
    }),
    // fio options that cannot change what hiops measures: accepted, with the
    // reason in their help. Values are still checked, and a value that would
    // change a result in fio is refused with what to do instead.
    opt!("gtod_reduce", [], flag, "No clock read per I/O, as in fio: IOPS and bandwidth are measured; slat, clat, lat, their percentiles and the time-weighted depth are not (the output says so). The runtime is kept with a tick-grained clock. The HIOPS strategies (strategy=, tasks=) still time I/O inside the path, but report no latency either.", |d, v| { d.gtod_reduce = Some(value::boolean(v)?); Ok(()) }),
    opt!("disable_lat", [], flag, "Accepted, no effect: hiops always measures lat (one clock read per batch); the figure stays in the output.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("disable_clat", [], flag, "Accepted, no effect: hiops always measures clat (one clock read per batch); the figure stays in the output.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("disable_slat", [], flag, "Accepted, no effect: hiops always measures slat (one clock read per batch); the figure stays in the output.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("disable_bw_measurement", ["disable_bw"], flag, "Accepted, no effect: hiops' per-second series reads shared counters once a second, which costs the I/O path nothing.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("clat_percentiles", [], flag, "Report completion-latency (clat) percentiles (default 1, as fio).", |d, v| { d.clat_percentiles = Some(value::boolean(v)?); Ok(()) }),
    opt!("lat_percentiles", [], flag, "Report total-latency (lat: submission and completion) percentiles too (default 0, as fio).", |d, v| { d.lat_percentiles = Some(value::boolean(v)?); Ok(()) }),
    opt!("slat_percentiles", [], flag, "Report submission-latency (slat) percentiles too (default 0, as fio).", |d, v| { d.slat_percentiles = Some(value::boolean(v)?); Ok(()) }),
    opt!("disk_util", [], flag, "Accepted, no effect: hiops reports disk_util for every block device it finds under the targets.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("clocksource", [], value, "How I/O is timed, as in fio: cpu (the time-stamp counter scaled to CLOCK_MONOTONIC's nanoseconds; the default where the kernel itself keeps time with it) or clock_gettime (CLOCK_MONOTONIC through the vDSO; gettimeofday reads it too).", |d, v| {
        d.clocksource = Some(match need(v)? {
            "cpu" => ClockSource::Tsc,
            "clock_gettime" | "gettimeofday" => ClockSource::ClockGettime,
            other => return Err(format!("unknown clocksource {}: use cpu, clock_gettime or gettimeofday", crate::value::quoted(other)).into()),
        });
        Ok(())
    }),
    opt!("random_generator", [], value, "Accepted (tausworthe, lfsr, tausworthe64): hiops draws offsets from its own generator (hiops-rng), keeping lfsr's promise: every block once per pass, even with norandommap.", |d, v| {
        let g = need(v)?;
        one_of(g, &["tausworthe", "lfsr", "tausworthe64"], "hiops uses its own generator")?;
        d.lfsr = g == "lfsr";
        Ok(())
    }),
    opt!("allrandrepeat", [], flag, "randrepeat by another name (as in fio since 3.36): hiops seeds every random stream of a job from one seed.", |d, v| { d.randrepeat = Some(value::boolean(v)?); Ok(()) }),
    opt!("softrandommap", [], flag, "Accepted, no effect: it only changes what fio does when it cannot allocate its random map.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("profile", [], value, "Accepted, with no effect, as in fio 3.33: a job file's profile= is stored and never read there; fio's built-in profiles (tiobench, act) run only from its command line.", |_, v| { need(v).map(|_| ()) }),
    opt!("threads", [], value, "Accepted, no effect, as in fio: an option of fio's tiobench profile (profile=tiobench), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("block", [], value, "Accepted, no effect, as in fio: an option of fio's tiobench profile (profile=tiobench), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("numruns", [], value, "Accepted, no effect, as in fio: an option of fio's tiobench profile (profile=tiobench), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("dir", [], value, "Accepted, no effect, as in fio: an option of fio's tiobench profile (profile=tiobench), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("device-names", [], value, "Accepted, no effect, as in fio: an option of fio's act profile (profile=act), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("load", [], value, "Accepted, no effect, as in fio: an option of fio's act profile (profile=act), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("test-duration", [], value, "Accepted, no effect, as in fio: an option of fio's act profile (profile=act), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("threads-per-queue", [], value, "Accepted, no effect, as in fio: an option of fio's act profile (profile=act), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("read-req-num-512-blocks", [], value, "Accepted, no effect, as in fio: an option of fio's act profile (profile=act), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("large-block-op-kbytes", [], value, "Accepted, no effect, as in fio: an option of fio's act profile (profile=act), which fio reads in any job file and uses only under that profile.", |_, v| { need(v).map(|_| ()) }),
    opt!("prep", [], flag, "Accepted, no effect, as in fio: an option of fio's act profile (profile=act), which fio reads in any job file and uses only under that profile.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("create_serialize", [], flag, "Accepted, no effect: hiops lays out every file before any job starts measuring, so creation never overlaps measured I/O.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("create_fsync", [], flag, "fsync each file after laying it out (1, fio's default); 0 leaves its write-back to the kernel, which may then overlap the run, as in fio.", |d, v| { d.create_fsync = Some(value::boolean(v)?); Ok(()) }),
    opt!("allow_file_create", [], flag, "Create a target file that does not exist (1, fio's default); 0 makes a missing file an error, as in fio.", |d, v| { d.allow_file_create = Some(value::boolean(v)?); Ok(()) }),
    opt!("fadvise_hint", [], value, "The access-pattern hint (posix_fadvise) each job thread gives for its files as it starts: 1 (fio's default) random for a random workload and sequential otherwise, random, sequential, or 0 for none. Random turns readahead off, which is what buffered random reads measure.", |d, v| {
        d.fadvise_hint = Some(match need(v)? {
            "0" => None,
            "1" => Some(FadviseHint::ByWorkload),
            "sequential" => Some(FadviseHint::Fixed(hiops_job::spec::Fadvise::Sequential)),
            "random" => Some(FadviseHint::Fixed(hiops_job::spec::Fadvise::Random)),
            s => return Err(format!("{}: use 0, 1, sequential or random", quoted(s)).into()),
        });
        Ok(())
    }),
    opt!("serialize_overlap", [], flag, "An I/O that overlaps one of the job thread's I/Os in flight on the same file waits for it to complete (fio's meaning, for jobs that write, trim or replay a trace with more than one I/O in flight; with io_submit_mode=offload fio also compares the I/Os of other offload jobs, hiops those of the same thread only).", |d, v| { d.serialize_overlap = Some(value::boolean(v)?); Ok(()) }),
    opt!("cmdprio_percentage", [], value, "io_uring, libaio: this percentage of the I/Os (READ,WRITE) is issued at the priority of cmdprio_class and cmdprio, the rest at the thread's; the latencies are reported per priority as well, as fio does.", |d, v| {
        d.cmdprio.percentage = per_direction(need(v)?, d.cmdprio.percentage, |p| Ok(value::percent("cmdprio_percentage", p)?.get()))?; Ok(())
    }),
    opt!("cmdprio_class", [], value, "io_uring, libaio: the I/O priority class of cmdprio_percentage's and cmdprio_bssplit's I/Os: 1 realtime (the default, as fio; the kernel gives it to CAP_SYS_ADMIN or CAP_SYS_NICE only), 2 best effort, 3 idle (READ,WRITE).", |d, v| {
        d.cmdprio.class = per_direction(need(v)?, d.cmdprio.class, crate::cmdprio::class)?; Ok(())
    }),
    opt!("cmdprio", [], value, "io_uring, libaio: the priority level (0 highest to 7) within cmdprio_class (READ,WRITE; default 0).", |d, v| {
        d.cmdprio.level = per_direction(need(v)?, d.cmdprio.level, crate::cmdprio::level)?; Ok(())
    }),
    opt!("cmdprio_bssplit", [], value, "io_uring, libaio: priorities by block size, BS/PERCENT[/CLASS/LEVEL]:... (READ,WRITE lists as in fio; without CLASS/LEVEL, cmdprio_class's and cmdprio's).", |d, v| {
        d.cmdprio.bssplit = Some(need(v)?.to_string()); Ok(())
    }),
    opt!("io_submit_mode", [], value, "inline (fio's default: the job's thread submits and reaps) or offload (iodepth worker threads each do one I/O at a time, handed to them by the job's thread).", |d, v| {
        d.offload = Some(match need(v)? { "inline" => false, "offload" => true, s => return Err(format!("{}: use inline or offload", quoted(s)).into()) }); Ok(())
    }),
    opt!("unified_rw_reporting", [], value, "How a job's directions are reported, as fio does: none or 0 (the default) reads, writes and trims apart; mixed or 1 summed into one \"mixed\" direction; both or 2 apart and summed.", |d, v| {
        d.unified_rw = Some(match need(v)? {
            "none" | "0" => UnifiedRw::Apart,
            "mixed" | "1" => UnifiedRw::Mixed,
            "both" | "2" => UnifiedRw::Both,
            s => return Err(format!("{}: use none, mixed or both (or 0, 1, 2)", quoted(s)).into()),
        });
        Ok(())
    }),
    opt!("rate_cycle", ["ratecycle"], value, "The window in ms over which rate_min and rate_iops_min are judged (fio's default: 1000).", |d, v| {
        let ms = value::int(need(v)?, d.kb_base)?;
        if ms == 0 { return Err("give the window in ms, 1 or more".into()); }
        d.rate_cycle = Some(ms); Ok(())
    }),
    opt!("stats", [], flag, "0: the job runs but is left out of the report and of its group's totals, as fio leaves it out (fio 3.33's JSON keeps a nameless placeholder entry; hiops' JSON leaves the job out). Its errors still set the exit status.", |d, v| { d.stats = Some(value::boolean(v)?); Ok(()) }),
    opt!("verify_state_save", [], flag, "Keep fio's verify state file, local-JOB-N-verify.state in the current directory or --aux-path (N: the thread's number from 0), up to date while a writing job with verify runs (every 250 ms, and as it ends), so a stopped or killed run can be checked with verify_state_load. 1 is fio's default in job files; on hiops' own command line only when given.", |d, v| { d.verify_state_save = Some(value::boolean(v)?); Ok(()) }),
    opt!("verify_state_load", [], flag, "With verify_only, or in a read job with verify: read local-JOB-N-verify.state (in the current directory or --aux-path; at most 16 MiB) and check only the writes it names as done (what a stopped or killed run completed); a read job ends at the first read whose write was not done.", |d, v| { d.verify_state_load = Some(value::boolean(v)?); Ok(()) }),
    opt!("mem", ["iomem"], value, "How I/O buffers are allocated: malloc (default), shm, mmap and mmapshared give what hiops' page-aligned anonymous buffers are (allocated once per thread); mmap:FILE and mmapshared:FILE map each thread's buffers from FILE (private, or shared: the buffers are the file's bytes), created if missing and then removed at the end, as fio; shmhuge and mmaphuge (huge pages) are refused, saying why.", |d, v| { d.buffer_file = super::iomem::check(need(v)?)?; Ok(()) }),
    opt!("iomem_align", ["mem_align"], value, "Accepted when 0 or a power of two up to 4096, no effect: hiops' buffers are page-aligned. Larger alignments are refused.", |d, v| {
        let a = value::int(need(v)?, d.kb_base)?;
        if a == 0 || (a.is_power_of_two() && a <= 4096) { Ok(()) } else { Err(format!("{a} is an alignment hiops does not implement: its buffers are page-aligned (4096); drop it").into()) }
    }),
    opt!("unique_filename", [], flag, "Accepted, no effect: it only applies to fio's client/server mode, which hiops does not have.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("significant_figures", [], value, "Accepted (1 to 10), no effect: it only shapes fio's text output; hiops prints its own summary and full-precision JSON.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        if (1..=10).contains(&n) { Ok(()) } else { Err("give 1 to 10".into()) }
    }),
    opt!("unit_base", [], value, "Accepted (0, 1, 8), no effect: it only shapes fio's text output; hiops' summary shows bytes and its JSON is fio's.", |_, v| {
        one_of(need(v)?, &["0", "1", "8"], "use 0, 1 or 8")
    }),
    opt!("continue_on_error", [], value, "Which failed I/Os the job goes on past, as fio: none (0, the default), read, write, io (read and write), verify, all (1). Only the errors of ignore_error's list for the class go on (EIO and EILSEQ without one); each is counted in the JSON's total_err and first_error. Any other error stops the job.", |d, v| { super::errors::continue_on(&mut d.continue_on_error, need(v)?) }),
    opt!("ignore_error", [], value, "READ,WRITE,VERIFY lists of errors to go on past, each ':'-separated names (ENOSPC, EPERM..ERANGE) or numbers (28), e.g. ignore_error=,ENOSPC:EIO; a class with a list is continued on (as continue_on_error) and the list replaces EIO and EILSEQ.", |d, v| { super::errors::ignore(&mut d.continue_on_error, need(v)?) }),
    opt!("error_dump", [], flag, "Accepted, no effect: hiops puts a job's error in the JSON (hiops.errors) and on stderr.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("hugepage-size", [], value, "Accepted, no effect: it only applies to mem=mmaphuge, which hiops does not implement.", |_, v| { need(v).map(|_| ()) }),
    opt!("cgroup", [], value, "Each thread of the job joins the blkio cgroup of this name (cgroup v1: the thread alone, through its tasks file), made if missing and removed when the run ends, as fio's (on cgroup v2, which moves whole processes, refused: run hiops in the cgroup).", |d, v| { d.cgroup = Some(need(v)?.trim().to_string()); Ok(()) }),
    opt!("cgroup_weight", [], value, "With cgroup: written to the cgroup's blkio.weight (100-1000), as fio; a kernel whose blkio has no weight fails the job, as fio's.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        if !(100..=1000).contains(&n) { return Err("must be 100 to 1000".into()); }
        d.cgroup_weight = Some(n as u32); Ok(())
    }),
    opt!("cgroup_nodelete", [], flag, "With cgroup: leave the cgroup the run made when it ends (fio removes it).", |d, v| { d.cgroup_nodelete = value::boolean(v)?; Ok(()) }),
    opt!("write_bw_log", [], flag, "Write fio's bandwidth log, PREFIX_bw.N.log (PREFIX: the value, or the job's name; N: the thread's number).", |d, v| { d.logs.bw = Some(v.unwrap_or("").to_string()); Ok(()) }),
    opt!("write_lat_log", [], flag, "Write fio's latency logs, PREFIX_slat.N.log, PREFIX_clat.N.log and PREFIX_lat.N.log (ns).", |d, v| { d.logs.lat = Some(v.unwrap_or("").to_string()); Ok(()) }),
    opt!("write_iops_log", [], flag, "Write fio's IOPS log, PREFIX_iops.N.log.", |d, v| { d.logs.iops = Some(v.unwrap_or("").to_string()); Ok(()) }),
    opt!("write_hist_log", [], flag, "Write fio's completion-latency histogram log, PREFIX_clat_hist.N.log (empty without log_hist_msec, as in fio).", |d, v| { d.logs.hist = Some(v.unwrap_or("").to_string()); Ok(()) }),
    opt!("log_avg_msec", [], value, "Logs hold one line per window of this many ms and direction (mean, or max with log_max_value; KiB/s and IOPS over the window) instead of one per I/O (0, the default).", |d, v| { d.logs.avg_window = Duration::from_millis(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("bwavgtime", [], value, "Sample each thread's bandwidth over windows of this many ms for the report's bw min/max/mean/dev and samples (default 500; with write_bw_log and no bwavgtime, log_avg_msec when set).", |d, v| { d.rate_windows[0] = Some(Duration::from_millis(value::int(need(v)?, d.kb_base)?)); Ok(()) }),
    opt!("iopsavgtime", [], value, "Sample each thread's IOPS over windows of this many ms for the report's iops min/max/mean/dev and samples (default 500; with write_iops_log and no iopsavgtime, log_avg_msec when set).", |d, v| { d.rate_windows[1] = Some(Duration::from_millis(value::int(need(v)?, d.kb_base)?)); Ok(()) }),
    opt!("log_hist_msec", [], value, "The histogram log's window in ms (0, the default: no histogram lines).", |d, v| { d.logs.hist_window = Duration::from_millis(value::int(need(v)?, d.kb_base)?); Ok(()) }),
    opt!("log_hist_coarseness", [], value, "0 to 6: the histogram log adds 2^N of fio's 1856 bins together per column.", |d, v| {
        let c = value::int(need(v)?, d.kb_base)?;
        if c > 6 { return Err("give 0 to 6".into()); }
        d.logs.hist_coarseness = c as u32; Ok(())
    }),
    opt!("log_max_value", [], flag, "With log_avg_msec, latency logs hold each window's largest value instead of its mean.", |d, v| { (d.logs.max_value, d.logs.both_values) = (value::boolean(v)?, false); Ok(()) }),
    opt!("log_window_value", [], value, "fio 3.37's name for log_max_value: avg (or 0, the default) logs each window's mean, max (or 1) its largest value, both the two, a column each (the mean first).", |d, v| {
        (d.logs.max_value, d.logs.both_values) = match need(v)?.trim() {
            "avg" | "0" => (false, false),
            "max" | "1" => (true, false),
            "both" => (false, true),
            s => return Err(format!("{}: use avg, max, both, 0 or 1", quoted(s)).into()),
        };
        Ok(())
    }),
    opt!("log_issue_time", [], flag, "fio 3.38's: the logs get a last column, each I/O's issue time in ns from the log's start in the clat and slat logs' lines per I/O, 0 elsewhere (with write_lat_log and log_offset, as fio asks).", |d, v| { d.logs.issue_time = value::boolean(v)?; Ok(()) }),
    opt!("per_job_logs", [], flag, "1 (default): a log file per thread (NAME_bw.N.log); 0: the job's threads append to NAME_bw.log.", |d, v| { d.logs.per_job = value::boolean(v)?; Ok(()) }),
    opt!("log_offset", [], flag, "Log lines carry the I/O's offset (a column before the priority).", |d, v| { d.logs.offset = value::boolean(v)?; Ok(()) }),
    opt!("log_prio", [], flag, "The logs' last column is the I/O priority value (0x0000: hiops uses the default priority) instead of 0/1.", |d, v| { d.logs.prio = value::boolean(v)?; Ok(()) }),
    opt!("log_unix_epoch", [], flag, "Log times count from the Unix epoch (ms) instead of the job's start.", |d, v| { d.log_unix_epoch = value::boolean(v)?; Ok(()) }),
    opt!("log_alternate_epoch", [], flag, "Log times count from the epoch of log_alternate_epoch_clock_id's clock.", |d, v| { d.log_alternate_epoch = value::boolean(v)?; Ok(()) }),
    opt!("log_alternate_epoch_clock_id", [], value, "The clock (clock_gettime id, default 0: CLOCK_REALTIME) of log_unix_epoch and log_alternate_epoch.", |d, v| {
        let id = value::int(need(v)?, d.kb_base)?;
        d.log_clock_id = i32::try_from(id).map_err(|_| ValueError::Said(format!("clock id {id} is past the largest, {}", i32::MAX)))?; Ok(())
    }),
    opt!("write_iolog", [], value, "Each thread records every I/O it issues to this file in fio's iolog v3 text format (with numjobs>1, FILE.N for thread N from 0), for read_iolog to replay in hiops or fio. With read_iolog it records the replay (fio drops write_iolog there).", |d, v| { d.write_iolog = Some(PathBuf::from(need(v)?)); Ok(()) }),
    opt!("read_iolog", [], value, "Replay this trace instead of the job's workload: fio's iolog v2 or v3 text, or a blktrace binary file (with replay_redirect). Its files map to the job's filenames by name, or become the job's files. Read within bounds: lines of at most 4096 bytes (as fio reads them), at most 4096 file names, 2^32 lines or events.", |d, v| { d.read_iolog = Some(PathBuf::from(need(v)?)); Ok(()) }),
    opt!("merge_blktrace_file", [], value, "With read_iolog=A:B (blktraces): merge them, in time order, into this file, then replay it (fio's HOWTO, Merging traces).", |d, v| { d.merge_blktrace_file = Some(need(v)?.trim().into()); Ok(()) }),
    opt!("merge_blktrace_scalars", [], value, "With merge_blktrace_file: each trace's times in percent, A:B (50 runs it in half the time; default 100).", |d, v| { d.merge_blktrace_scalars = super::values::float_list(need(v)?)?; Ok(()) }),
    opt!("merge_blktrace_iters", [], value, "With merge_blktrace_file: how many passes of each trace, A:B (default 1), one after another.", |d, v| { d.merge_blktrace_iters = super::values::float_list(need(v)?)?; Ok(()) }),
    opt!("read_iolog_chunked", [], flag, "hiops always reads a trace gradually as it replays it, through a bounded buffer (fio's read_iolog_chunked=1), whatever the value.", |_, v| { value::boolean(v).map(|_| ()) }),
    opt!("replay_no_stall", [], flag, "Replay a v3 trace as fast as the queue takes it, ignoring its times.", |d, v| { d.replay_no_stall = Some(value::boolean(v)?); Ok(()) }),
    opt!("replay_time_scale", [], value, "Replay a v3 trace's times at this percentage of speed (default 100; 200 is twice as fast).", |d, v| {
        let p = value::int(need(v)?, d.kb_base)?;
        if p == 0 { return Err("must be at least 1 (a percentage)".into()); }
        d.replay_time_scale = Some(u32_of(p, "replay_time_scale")?); Ok(())
    }),
    opt!("replay_redirect", [], value, "Replay every I/O of the trace on this file or device, whatever file the trace names (needed for blktrace traces).", |d, v| { d.replay_redirect = Some(PathBuf::from(need(v)?)); Ok(()) }),
    opt!("replay_scale", [], value, "Divide the trace's offsets by this (default 1; 0 is 1, as in fio).", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        d.replay_scale = Some(n.max(1)); Ok(())
    }),
    opt!("replay_align", [], value, "Round the trace's offsets down to a multiple of this power of 2.", |d, v| {
        let n = value::int(need(v)?, d.kb_base)?;
        if !n.is_power_of_two() { return Err(format!("{n} is not a power of 2").into()); }
        d.replay_align = Some(n); Ok(())
    }),
    opt!("replay_skip", [], value, "Leave these kinds of the trace's I/O out: a comma-separated list of read, write, trim, sync (fio 3.33 applies it to blktrace traces only; hiops to text traces too).", |d, v| {
        let mut skip = hiops_job::spec::ReplaySkip::default();
        for kind in need(v)?.split(',').map(str::trim) {
            match kind {
                "read" => skip.read = true,
                "write" => skip.write = true,
                "trim" => skip.trim = true,
                "sync" => skip.sync = true,
                other => return Err(format!("unknown kind {}: give read, write, trim or sync", quoted(other)).into()),
            }
        }
        d.replay_skip = Some(skip); Ok(())
    }),
    opt!("log_entries", [], value, "Accepted, no effect: hiops' logs go through a fixed 64 KiB buffer per file to the file as it fills, so nothing is allocated while the job runs.", |d, v| { value::int(need(v)?, d.kb_base).map(|_| ()) }),
    opt!("log_compression", [], value, "Above 0: with log_avg_msec, the bw and iops logs hold the window's mean per-I/O rate, as fio's; the memory bound it sets is not needed (hiops' logs keep a 64 KiB buffer per file).", |d, v| { d.logs.compression = value::size(need(v)?, d.kb_base)? > 0; Ok(()) }),
    opt!("log_compression_cpus", [], value, "Accepted, no effect: hiops compresses a log (log_store_compressed) on the thread that ends it.", |_, v| { need(v).map(|_| ()) }),
    opt!("log_store_compressed", [], flag, "Store each log compressed as NAME.log.fz (zlib streams, one per thread, as fio); --inflate-log=FILE prints its text (a file of at most 256 MiB, inflating at most 1000:1 to at most 1 GiB of text).", |d, v| { d.logs.store_compressed = value::boolean(v)?; Ok(()) }),
    opt!("verifysort", [], flag, "Accepted, no effect: fio 3.33 ignores it too (deprecated).", |_, _| Ok(())),
    opt!("verifysort_nr", [], flag, "Accepted, no effect: fio 3.33 ignores it too (deprecated).", |_, _| Ok(())),
    opt!("flow_watermark", [], flag, "Accepted, no effect: fio 3.33 ignores it too (deprecated).", |_, _| Ok(())),
    opt!("percentage_sequential", [], flag, "Accepted, no effect: fio 3.33 ignores it too (deprecated).", |_, _| Ok(())),
    opt!("rwmixcycle", [], flag, "Accepted, no effect: fio 3.33 ignores it too (deprecated).", |_, _| Ok(())),
];

/// fio options hiops knows but does not implement: why, and what to do
/// instead. Aliases have rows of their own.
pub static NOT_IMPLEMENTED: &[(&str, &str)] = &[
    // Options of fio releases after 3.33, named by the release that added
    // each (fio's options.c history), and what to use in hiops instead.
    ("comm", "fio 3.42 added it; hiops' threads keep its name: drop it"),
    ("end_syncfs", "fio 3.42 added it; use end_fsync=1, which syncs each written file"),
    ("filetype", "fio 3.41 added it; hiops looks at each file once as it plans: drop it"),
    ("job_start_clock_id", "fio 3.36 added it; hiops' job_start is CLOCK_REALTIME's, fio's default: drop it"),
    ("num_range", "fio 3.37 added it for io_uring_cmd trims, which hiops has not: drop it"),
    ("priohint", "fio 3.36 added it; I/O priority hints are not supported: drop it"),
    ("ramp_size", "fio 3.42 added it; use ramp_time"),
    ("recover_zbd_write_error", "fio 3.40 added it for zoned devices' write errors; hiops emulates zones only, where writes do not fail so: drop it"),
    ("sprandom", "fio 3.41 added it; precondition with a rw=randwrite job over the whole device first"),
    ("spr_num_regions", "fio 3.41 added it with sprandom, which hiops has not: drop it"),
    ("spr_op", "fio 3.41 added it with sprandom, which hiops has not: drop it"),
    ("spr_cs", "fio 3.42 added it with sprandom, which hiops has not: drop it"),
    ("steadystate_check_interval", "fio 3.35 added it; hiops judges ss on a point per second, fio 3.33's: drop it"),
    ("ss_interval", "fio 3.35 added it; hiops judges ss on a point per second, fio 3.33's: drop it"),
    ("thinkcycles", "fio 3.37 added it; use thinktime (microseconds)"),
    ("verify_policy", "fio's master added it; hiops' verify_state_load checks every completed write (its default, completed): drop it"),
    ("write_zone_remainder", "fio 3.42 added it; hiops' emulated zones take only whole blocks: drop it"),
    ("fdp", "fio 3.34 added it for NVMe flexible data placement, which hiops does not drive: drop it"),
    ("dataplacement", "fio 3.38 added it for NVMe data placement, which hiops does not drive: drop it"),
    ("dp_scheme", "fio 3.38 added it for NVMe data placement, which hiops does not drive: drop it"),
    ("data_placement", "fio 3.38 added it for NVMe data placement, which hiops does not drive: drop it"),
    ("plids", "fio 3.38 added it for NVMe data placement, which hiops does not drive: drop it"),
    ("fdp_pli", "fio 3.34 added it for NVMe data placement, which hiops does not drive: drop it"),
    ("plid_select", "fio 3.38 added it for NVMe data placement, which hiops does not drive: drop it"),
    ("fdp_pli_select", "fio 3.34 added it for NVMe data placement, which hiops does not drive: drop it"),
    ("gpu_dev_id", "GPU (CUDA) buffers are not supported"),
    // Options of engines hiops has.
    (
        "cmd_type",
        "io_uring_cmd (NVMe passthrough) is not supported",
    ),
];

/// fio 3.33's default or "off" value of options hiops does not implement,
/// where that value is what hiops does anyway: given, the option is
/// accepted and changes nothing, as in fio (options.c's `.def`, or the
/// value its code reads as off: init.c's fixup_options takes iodepth_low=0
/// as iodepth; backend.c sets no I/O priority for prio=0 with
/// prioclass=0). Any other value is refused as `NOT_IMPLEMENTED` says.
#[rustfmt::skip]
pub static FIO_DEFAULTS: &[(&str, &[&str])] = &[
    ("cmd_type", &["nvme"]),
];

/// Options of fio's engines that hiops does not have (fio 3.33's HOWTO),
/// with the engines they belong to.
#[rustfmt::skip]
pub static OTHER_ENGINE_OPTIONS: &[(&str, &str)] = &[
    ("namenode", "libhdfs"), ("hdfsdirectory", "libhdfs"), ("serverip", "librpma"), ("direct_write_to_pmem", "librpma"),
    ("busy_wait_polling", "librpma"),
    ("clustername", "rbd or rados"), ("rbdname", "rbd"), ("clientname", "rbd or rados"), ("conf", "rados"),
    ("busy_poll", "rbd or rados"), ("touch_objects", "rados"), ("pool", "rbd, rados or dfs"), ("cont", "dfs"),
    ("chunk_size", "dfs"), ("object_class", "dfs"), ("skip_bad", "mtd"), ("verb", "rdma"),
    ("bindname", "rdma"), ("readfua", "sg"), ("writefua", "sg"),
    ("sg_write_mode", "sg"), ("stream_id", "sg"), ("http_host", "http"), ("http_user", "http"),
    ("http_pass", "http"), ("https", "http"), ("http_mode", "http"), ("http_s3_region", "http"),
    ("http_s3_key", "http"), ("http_s3_keyid", "http"), ("http_s3_sse_customer_key", "http"),
    ("http_s3_sse_customer_algorithm", "http"), ("http_s3_storage_class", "http"),
    ("http_swift_auth_token", "http"), ("http_verbose", "http"), ("uri", "nbd"),
    ("gpu_dev_ids", "libcufile"), ("cuda_io", "libcufile"), ("nfs_url", "nfs"),
    ("xnvme_async", "xnvme"),
    ("xnvme_sync", "xnvme"), ("xnvme_admin", "xnvme"), ("xnvme_dev_nsid", "xnvme"), ("xnvme_iovec", "xnvme"),
];
