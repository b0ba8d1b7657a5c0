//! Where a job's I/O goes: its files (named, fio's own, or a temporary
//! one of hiops'), their sizes, zones and trace replay, and the files the
//! plan creates once every option has checked.

use crate::error::FioError;
use crate::options::Draft;
use hiops_hal::EngineKind;
use hiops_job::spec::Amount;
use hiops_job::{Bytes, JobBuilder, JobSpec, TargetSpec};
use std::fs::File;
use std::path::{Path, PathBuf};

/// zoned_abs zones laid end to end must end within the bytes the job works
/// on in each file, `size` (when known here: a device's or an existing
/// file's size is known only when the run opens it). fio stops such a job
/// at run time ("zoned_abs sizes exceed file size", io_u.c).
pub(super) fn zones_fit(
    dist: &hiops_job::Distribution,
    size: Option<Bytes>,
) -> Result<(), FioError> {
    use hiops_job::units::format_bytes;
    use hiops_job::Distribution::{PerDirection, ZonedAbs};
    let Some(size) = size.map(Bytes::get) else {
        return Ok(());
    };
    let dists: Vec<&hiops_job::Distribution> = match dist {
        PerDirection(both) => both.iter().collect(),
        d => vec![d],
    };
    for d in dists {
        let ZonedAbs(zones) = d else { continue };
        let total = zones.iter().fold(0u64, |sum, z| sum.saturating_add(z.1));
        if total > size {
            return Err(format!(
                "random_distribution=zoned_abs: the zones add up to {total} bytes ({}), past the end of the {size} bytes ({}) the job works on in each file: shrink the zones or raise size",
                format_bytes(total as f64),
                format_bytes(size as f64)
            ).into());
        }
    }
    Ok(())
}

impl Draft {
    /// fio's zonemode=strided; zone options without it are refused, as
    /// fio 3.33 refuses them ("--zonemode=none and --zonesize are not
    /// compatible").
    pub(super) fn strided_zones(
        &self,
    ) -> Result<Option<hiops_job::strided::StridedZones>, FioError> {
        let given = self.zonesize.or(self.zonerange).or(self.zoneskip).is_some();
        if self.zonemode_zbd {
            return Ok(None);
        }
        if self.zonemode_strided != Some(true) {
            return match given {
                true => Err("zonesize, zonerange and zoneskip need zonemode=strided or zbd (fio: --zonemode=none and --zonesize are not compatible): add one".into()),
                false => Ok(None),
            };
        }
        let size = self.zonesize.ok_or("zonemode=strided needs zonesize")?;
        Ok(Some(hiops_job::strided::StridedZones {
            size,
            range: self.zonerange.unwrap_or(size),
            skip: self.zoneskip.unwrap_or(0),
        }))
    }

    /// size= in bytes, when it is not a percentage.
    pub(super) fn size_bytes(&self) -> Option<Bytes> {
        match self.size {
            Some(Amount::Bytes(b)) => Some(b),
            _ => None,
        }
    }

    /// The targets and their sizes; true when the target is a temporary
    /// file of hiops' own.
    pub(super) fn set_targets(&self, spec: &mut JobBuilder, fio: bool) -> Result<bool, FioError> {
        self.directory_is_one()?;
        let own = self.set_target_paths(spec, fio)?;
        if self.zonemode_zbd {
            spec.target.zbd = Some(self.zbd_spec(spec)?);
        }
        Ok(own)
    }

    /// zonemode=zbd's zones, checked as fio's init_zone_info and
    /// zbd_setup_files check them, on targets that may have them.
    fn zbd_spec(&self, spec: &JobBuilder) -> Result<hiops_job::spec::ZbdSpec, FioError> {
        let TargetSpec::Paths(paths) = &spec.target.targets else {
            return Err("zonemode=zbd needs a file or a block device: give filename".into());
        };
        let zone_size = self.zonesize.ok_or(
            "zonemode=zbd needs zonesize, the size of a zone (fio: \"Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd\"): give it",
        )?;
        if zone_size < 512 {
            return Err("zonemode=zbd: zone size must be at least 512 bytes for --zonemode=zbd: raise zonesize".into());
        }
        let capacity = self.zone_capacity.filter(|&c| c > 0).unwrap_or(zone_size);
        if capacity > zone_size {
            return Err(format!("zonemode=zbd: zonecapacity {capacity} is larger than zone size {zone_size}: lower it").into());
        }
        if let Some(skip) = self.zoneskip {
            return Err(match skip % zone_size {
                0 => "zonemode=zbd with zoneskip is not implemented: drop zoneskip".to_string(),
                _ => format!("zonemode=zbd: zoneskip {skip} is not a multiple of the device zone size {zone_size}: make it one"),
            }
            .into());
        }
        let max_open = self.max_open_zones.unwrap_or(0);
        if max_open > hiops_job::spec::ZBD_MAX_OPEN_ZONES {
            return Err(format!(
                "zonemode=zbd: max_open_zones is larger than {}: lower it",
                hiops_job::spec::ZBD_MAX_OPEN_ZONES
            )
            .into());
        }
        if self.experimental_verify {
            return Err("zonemode=zbd does not support experimental verify (fio 3.34 and later refuse it: its replay of the writes cannot follow zone resets): drop experimental_verify; hiops' verify checks the blocks written last without it".into());
        }
        let job_max = self.job_max_open_zones.unwrap_or(0);
        if job_max > 0 && max_open == 0 {
            return Err("job_max_open_zones cannot be used without a global open zones limit: give max_open_zones too".into());
        }
        for p in paths {
            super::zbd::check_target(p, zone_size, Path::new("/sys"))?;
        }
        Ok(hiops_job::spec::ZbdSpec {
            zone_size,
            capacity,
            read_beyond_wp: self.read_beyond_wp.unwrap_or(false),
            max_open_zones: max_open,
            job_max_open_zones: job_max,
            reset_threshold: self.zone_reset_threshold.unwrap_or(0.0),
            reset_frequency: self.zone_reset_frequency.unwrap_or(0.0),
        })
    }

    /// The job's files or devices; true when hiops makes a temporary file.
    fn set_target_paths(&self, spec: &mut JobBuilder, fio: bool) -> Result<bool, FioError> {
        let engine = spec.io.engine;
        let nrfiles = self.nrfiles.unwrap_or(1);
        let size_bytes = self.size_bytes();
        spec.target.size_pct = match self.size {
            Some(Amount::Percent(p)) => Some(p),
            _ => None,
        };
        if !engine.needs_file() {
            // fio's null engine takes a filename and opens nothing (it is
            // diskless): job files written for a device run on it as is.
            if !self.filename.is_empty() && engine != EngineKind::Null {
                return Err(format!("ioengine={engine} uses its own RAM device: drop filename, or pick a kernel engine to use the file").into());
            }
            spec.target.targets = TargetSpec::Ram;
            spec.target.size = Some(size_bytes.or(self.filesize).unwrap_or(OWN_FILE_SIZE));
        } else if !self.filename.is_empty() {
            let files = self.named_files();
            // fio's size is the job's total, divided among its files.
            spec.target.size = self
                .filesize
                .or(size_bytes.map(|s| per_file(s, files.len() as u64)));
            spec.target.targets = TargetSpec::Paths(files);
        } else if fio {
            spec.target.targets = TargetSpec::Paths(self.fio_files(spec, nrfiles)?);
            spec.target.size = self
                .filesize
                .or(size_bytes.map(|s| per_file(s, nrfiles.into())));
            spec.target.files_per_clone = Some(nrfiles);
        } else {
            let (target, own_file) = self.one_target()?;
            spec.target.targets = TargetSpec::Paths(vec![target]);
            spec.target.size = Some(size_bytes.or(self.filesize).unwrap_or(OWN_FILE_SIZE));
            return Ok(own_file);
        }
        Ok(false)
    }

    /// read_iolog: the trace's I/Os on the job's files; true when a trace
    /// is replayed (its targets are then no temporary file of hiops').
    pub(super) fn set_replay(&self, spec: &mut JobBuilder) -> Result<bool, FioError> {
        let Some(trace) = &self.read_iolog else {
            return Ok(false);
        };
        let files = match &spec.target.targets {
            TargetSpec::Paths(p) if !self.filename.is_empty() => p.clone(),
            _ => Vec::new(),
        };
        let trace = match &self.merge_blktrace_file {
            Some(out) => {
                crate::replay::merge_into(self, trace, out, &spec.target.allow_write_devices)?;
                out
            }
            None => trace,
        };
        crate::replay::replay_into(self, spec, trace, &files)?;
        Ok(true)
    }

    /// fio 3.33 refuses a directory= that is no directory as it reads the
    /// option (options.c's str_directory_cb, by lstat: a symbolic link is
    /// refused too). Missing directories below it are made as the job
    /// starts (fio's create_work_dirs).
    fn directory_is_one(&self) -> Result<(), FioError> {
        let Some(d) = &self.directory else {
            return Ok(());
        };
        let why = match std::fs::symlink_metadata(d) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(m) if m.file_type().is_symlink() => {
                "a symbolic link, which fio 3.33 refuses too".to_string()
            }
            Ok(_) => "it is no directory".to_string(),
            Err(e) => e.to_string(),
        };
        Err(format!(
            "directory={0}: {0} is not a directory ({why}): create it, or give an existing directory",
            d.display()
        )
        .into())
    }

    /// filename= entries, relative ones in directory=.
    pub(super) fn named_files(&self) -> Vec<PathBuf> {
        let dir = self.directory.clone().unwrap_or_default();
        self.filename
            .iter()
            .map(|f| {
                if f.is_absolute() {
                    f.clone()
                } else {
                    dir.join(f)
                }
            })
            .collect()
    }

    /// fio's own file names: filename_format (`name.clone.file`) in directory=.
    pub(super) fn fio_files(
        &self,
        spec: &JobBuilder,
        nrfiles: u32,
    ) -> Result<Vec<PathBuf>, FioError> {
        // hiops keeps every file open: more than a process may open is refused
        // here, before a list of them fills memory.
        const MAX_FILES: u64 = 1 << 20;
        let total = spec.numjobs as u64 * nrfiles as u64;
        if total > MAX_FILES {
            return Err(format!(
                "numjobs={} times nrfiles={nrfiles} is {total} files, more than the {MAX_FILES} a process may open: lower nrfiles or numjobs",
                spec.numjobs
            ).into());
        }
        let format = self
            .filename_format
            .as_deref()
            .unwrap_or(super::filenames::DEFAULT_FORMAT);
        Ok(super::filenames::job_files(
            format,
            self.directory.as_ref(),
            spec,
            nrfiles,
        ))
    }

    /// hiops' one file, and whether it is a temporary one of its own.
    pub(super) fn one_target(&self) -> Result<(PathBuf, bool), FioError> {
        let file = format!("{}.0.0", self.name.as_deref().unwrap_or("hiops"));
        // Without a directory, a file of our own in $TMPDIR: its name
        // here is a placeholder until the plan is complete (see
        // `make_temp_targets`), so a bad option leaves nothing behind.
        match &self.directory {
            Some(d) => Ok((d.join(file), false)),
            // A temporary file is open before the job starts: there
            // would be nothing for filecreate to create.
            None if self.filecreate || self.dirs => {
                Err("ioengine=filecreate (and the dir engines) make or use the job's own files or directories: give directory= (with nrfiles=) or filename=".into())
            }
            None => {
                let temp = std::env::temp_dir().join(format!("hiops-{}.{file}", std::process::id()));
                Ok((temp, true))
            }
        }
    }

    /// What is done with the files: the trace written, how much, where,
    /// their data, how many open, and whether they go at the end.
    pub(super) fn set_file_options(
        &self,
        spec: &mut JobBuilder,
        own_file: bool,
    ) -> Result<(), FioError> {
        spec.io_logs.write_iolog = self.write_iolog.clone();
        spec.target.io_size = self.io_size()?.or(self.size_within_files(spec));
        spec.target.strided = self.strided_zones()?;
        spec.target.file_service = self.file_service.clone();
        // zero_buffers writes zeros, unless verify writes its own blocks.
        let verifies = self
            .verify
            .is_some_and(|v| v != hiops_job::spec::VerifyMode::Off);
        let zeros = self.zero_buffers == Some(true) && !verifies;
        spec.workload.buffer_pattern = if zeros {
            Some(vec![0])
        } else {
            self.buffer_pattern.clone()
        };
        // As fio: verify's stamps are the payload, whatever shapes buffers.
        if !verifies {
            spec.workload.buffers = self.buffers;
            spec.workload.buffers.dedupe_working_set = self.dedupe_working_set_pages(spec)?;
        }
        self.set_openfiles(spec)?;
        spec.target.unlink = self.unlink.unwrap_or(own_file);
        spec.target.fill_device = self.fill_device;
        spec.target.create_fsync = self.create_fsync.unwrap_or(true);
        spec.target.allow_file_create = self.allow_file_create.unwrap_or(true);
        // fio fills only when no size is given (init.c: size = -1).
        if self.fill_device && self.size.is_none() && self.filesize.is_none() {
            if let TargetSpec::Paths(files) = &spec.target.targets {
                spec.target.size = fill_size(files)?;
            }
        }
        if let Some(o) = self.offset {
            spec.target.offset = o;
        }
        if let Some(o) = self.offset_increment {
            spec.target.offset_increment = o;
        }
        self.set_start_offsets(spec)
    }

    /// With filesize, size is what the job moves (fio's io limit, filesetup.c):
    /// a size below the files' total stops the job there; a larger one
    /// does not go round again.
    fn size_within_files(&self, spec: &JobBuilder) -> Option<Bytes> {
        let (size, filesize) = (self.size_bytes()?, self.filesize?);
        let total = filesize.get().saturating_mul(files_of(spec));
        (size.get() < total).then_some(size)
    }

    /// io_size in bytes; a percentage is a share of size= in bytes.
    pub(super) fn io_size(&self) -> Result<Option<Bytes>, FioError> {
        Ok(match self.io_size {
            None => None,
            Some(Amount::Bytes(b)) => Some(b),
            Some(Amount::Percent(p)) => {
                match self.size_bytes() {
                    Some(s) => Some(Amount::Percent(p).of(s.get()).max(Bytes::new(1))),
                    None => return Err(
                        "io_size=N% is a share of size: give size in bytes, or io_size in bytes"
                            .into(),
                    ),
                }
            }
        })
    }

    /// openfiles below the job's files: served as fio serves them, each
    /// in turn, at most openfiles at a time, each until its range is done
    /// (fio's get_next_file_rr). The random file services are refused.
    pub(super) fn set_openfiles(&self, spec: &mut JobBuilder) -> Result<(), FioError> {
        use hiops_job::file_service::FileServiceKind;
        let files = files_of(spec);
        // filecreate opens and closes a file per I/O: one is open at a
        // time whatever openfiles says.
        let limit = self.openfiles.filter(|_| !self.filecreate);
        let Some(open) = limit.filter(|&n| n < files) else {
            return Ok(());
        };
        match spec.target.file_service.as_ref().map(|s| (&s.kind, s.ios_per_pick)) {
            // sequential serves one file until it is done: within any limit.
            Some((FileServiceKind::Sequential, _)) => {}
            None | Some((FileServiceKind::RoundRobin, 1)) => {
                spec.target.file_service = None;
                spec.target.open_files = Some(open as u32);
            }
            Some(_) => return Err(format!("openfiles={open} below the job's {files} files is implemented with file_service_type=roundrobin (the default) or sequential: use one of them, or drop openfiles").into()),
        }
        Ok(())
    }
}

/// The files each thread of the job goes through.
fn files_of(spec: &JobBuilder) -> u64 {
    match (&spec.target.targets, spec.target.files_per_clone) {
        (_, Some(n)) => n as u64,
        (TargetSpec::Paths(p), None) => p.len() as u64,
        _ => 1,
    }
}

/// The size of hiops' own file, and of its RAM device, without size or
/// filesize.
const OWN_FILE_SIZE: Bytes = Bytes::new(512 << 20);

/// The smallest the default file is made to fit its file system: smaller,
/// random reads would stay in the few megabytes a device's own cache holds.
const OWN_FILE_LEAST: Bytes = Bytes::new(64 << 20);

/// fio's size is the job's total: each of `files` files gets its share.
fn per_file(size: Bytes, files: u64) -> Bytes {
    assert!(files > 0, "a job has at least one file");
    Bytes::new(size.get() / files)
}

/// Creates `path`, or `{path}.N` for the first N not taken (a file an older
/// hiops left keeps its name).
fn create_unique(path: &Path) -> Result<(File, PathBuf), FioError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut n = 0u32;
    loop {
        let mut name = path.as_os_str().to_owned();
        if n > 0 {
            name.push(format!(".{n}"));
        }
        let name = PathBuf::from(name);
        let made = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&name);
        match made {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => {
                return Err(format!(
                    "cannot create {}: {e}; set TMPDIR or directory= to a writable place",
                    name.display()
                )
                .into())
            }
        }
    }
}

/// A job of the embedded defaults that gets a temporary file.
pub(super) struct TempJob {
    /// Its index in the plan.
    job: usize,
    /// Whether size or filesize was given (else the file is the default's).
    sized: bool,
}

impl TempJob {
    /// Job `job` of the plan, `sized` where size or filesize was given.
    pub(super) fn at(job: usize, sized: bool) -> TempJob {
        TempJob { job, sized }
    }
}

/// Creates the embedded jobs' files (every option has checked by now) and
/// unlinks each at once; the job opens it again through `/proc/self/fd/N`
/// (O_DIRECT included), so nothing is left in $TMPDIR even after SIGKILL.
/// A default-sized file is made smaller where its file system is short of
/// room (see `fitted_own_size`), with a note saying so.
pub(super) fn make_temp_targets(
    specs: &mut [JobSpec],
    temp_files: &mut Vec<File>,
    notes: &mut Vec<String>,
    jobs: &[TempJob],
) -> Result<(), FioError> {
    use std::os::fd::AsRawFd;
    for temp in jobs {
        let spec = &specs[temp.job];
        let TargetSpec::Paths(given) = &spec.target.targets else {
            continue;
        };
        let size = match temp.sized {
            true => spec.target.size,
            false => Some(fit_own_file(given, notes)),
        };
        let mut opened = Vec::with_capacity(given.len());
        for path in given {
            let (file, name) = create_unique(path)?;
            std::fs::remove_file(&name).map_err(|e| {
                FioError::Invalid(format!("cannot unlink {} once open: {e}", name.display()))
            })?;
            opened.push(PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd())));
            temp_files.push(file);
        }
        assert_eq!(opened.len(), given.len(), "each file of the job made");
        specs[temp.job] = specs[temp.job].with(|job| {
            job.target.targets = TargetSpec::Paths(opened);
            job.target.size = size;
        })?;
    }
    Ok(())
}

/// The default file's size on the file system of `files` (their
/// directory), noted in `notes` when it is not the default's.
fn fit_own_file(files: &[PathBuf], notes: &mut Vec<String>) -> Bytes {
    let dir = files[0].parent().unwrap_or(Path::new("."));
    let Ok(space) = hiops_os::fs_space(dir) else {
        return OWN_FILE_SIZE;
    };
    let size = fitted_own_size(space.available);
    if size != OWN_FILE_SIZE {
        use hiops_job::units::format_bytes;
        notes.push(format!(
            "{} has {} free: the default job's file is {} instead of {} (give --size, or set TMPDIR to a file system with room)",
            dir.display(),
            format_bytes(space.available as f64),
            format_bytes(size.get() as f64),
            format_bytes(OWN_FILE_SIZE.get() as f64),
        ));
    }
    size
}

/// The default file's size where `free` bytes are free: the default while
/// it takes at most half of them, else the largest power of two that does,
/// down to `OWN_FILE_LEAST`. Below that, the default: the room check then
/// refuses the layout and says what to do.
fn fitted_own_size(free: u64) -> Bytes {
    let half = free / 2;
    if half >= OWN_FILE_SIZE.get() || half < OWN_FILE_LEAST.get() {
        return OWN_FILE_SIZE;
    }
    let fitted = 1u64 << (63 - half.leading_zeros());
    assert!(fitted <= half && fitted >= OWN_FILE_LEAST.get());
    Bytes::new(fitted)
}

/// fill_device: the free space of the filesystem holding the (first) file,
/// less 1% so metadata fits; a block device is used whole (None: its own
/// size; the filesystem of its node in /dev says nothing of it).
fn fill_size(files: &[PathBuf]) -> Result<Option<Bytes>, FioError> {
    use std::os::unix::fs::FileTypeExt;
    let first = &files[0];
    if std::fs::metadata(first).is_ok_and(|m| m.file_type().is_block_device()) {
        return Ok(None);
    }
    let dir: &Path = if first.exists() {
        first
    } else {
        first
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| "a file name holds a NUL byte".to_string())?;
    // SAFETY: statvfs writes only into `st`, which outlives the call; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(format!(
            "fill_device: cannot stat the filesystem of {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        )
        .into());
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    let per_file = free / 100 * 99 / files.len() as u64;
    Ok(Some(Bytes::new(per_file / 4096 * 4096)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_default_file_keeps_its_size_where_it_takes_half_the_room_or_less() {
        assert_eq!(fitted_own_size(1024 * MIB), OWN_FILE_SIZE);
        assert_eq!(fitted_own_size(u64::MAX), OWN_FILE_SIZE);
    }

    #[test]
    fn a_short_file_system_gets_the_largest_power_of_two_within_half_its_room() {
        assert_eq!(fitted_own_size(1023 * MIB), Bytes::new(256 * MIB));
        assert_eq!(fitted_own_size(369 * MIB), Bytes::new(128 * MIB));
        assert_eq!(fitted_own_size(128 * MIB), Bytes::new(64 * MIB));
    }

    #[test]
    fn below_the_least_the_default_is_kept_for_the_room_check_to_refuse() {
        assert_eq!(fitted_own_size(127 * MIB), OWN_FILE_SIZE);
        assert_eq!(fitted_own_size(0), OWN_FILE_SIZE);
    }
}
