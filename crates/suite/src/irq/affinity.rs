//! Interrupts that follow a point's `cpus_allowed`.
//!
//! `cpus_allowed` confines hiops' threads, not the device's interrupts nor
//! the kernel's completion work they start: a point "at 1 CPU" can keep
//! every CPU busy, and IOPS per core is then overstated (ADMS'10 Fig 8, 9
//! count the whole platform's work). A point run with [`FLAG`] moves the
//! interrupt vectors of its targets' devices to its allowed CPUs
//! (`/proc/irq/N/smp_affinity_list`, root only) for the point's lifetime
//! and puts them back after, by a guard, on error and Ctrl-C too; a hiops
//! killed mid-point leaves a journal the next one puts them back from.
//!
//! What happened is one line, [`Confinement::note`], kept with the point so
//! the report can say it for the sweep.

use crate::SuiteError;
use hiops_bench::{JobSpec, TargetSpec};
use hiops_hal::device::BlockDev;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The sweep option that asks for it (taken out of the job's options).
pub const FLAG: &str = "--confine_irqs";

/// Where the kernel lists interrupt vectors and takes their affinity.
const PROC_IRQ: &str = "/proc/irq";
const PROC_INTERRUPTS: &str = "/proc/interrupts";
const SYS: &str = "/sys";

/// A point's [`FLAG`], taken out of its job options.
pub fn confine_flag(args: &[String]) -> (Vec<String>, bool) {
    let rest: Vec<String> = args.iter().filter(|a| *a != FLAG).cloned().collect();
    let on = rest.len() != args.len();
    (rest, on)
}

/// One interrupt vector of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    pub irq: u32,
    /// Its name in /proc/interrupts (`virtio1-req.0`, `nvme0q3`), or "".
    pub name: String,
}

impl std::fmt::Display for Vector {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.name.is_empty() {
            write!(f, "IRQ {}", self.irq)
        } else {
            write!(f, "IRQ {} ({})", self.irq, self.name)
        }
    }
}

/// Each numbered vector's name from /proc/interrupts text: the last word of
/// its line (`36: 0 30965998 PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0`).
pub fn interrupt_names(text: &str) -> BTreeMap<u32, String> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|line| {
            let (irq, rest) = line.trim_start().split_once(':')?;
            let irq: u32 = irq.parse().ok()?;
            // The per-CPU counts, then the chip, its vector and the name.
            let words: Vec<&str> = rest.split_whitespace().skip(cpus).collect();
            let name = if words.len() >= 2 {
                words[words.len() - 1]
            } else {
                ""
            };
            Some((irq, name.to_string()))
        })
        .collect()
}

/// Why a disk has no interrupt of its own, by its kernel name.
pub fn without_interrupt(disk: &str) -> Option<String> {
    let why = if disk.starts_with("zram") || disk.starts_with("ram") || disk.starts_with("pmem") {
        "a RAM disk: its I/O completes in the submitting thread"
    } else if disk.starts_with("loop") {
        "a loop device: its I/O runs in the loop's kernel worker threads, which cpus_allowed does not confine"
    } else if disk.starts_with("nbd") || disk.starts_with("rbd") {
        "a network block device: its completions arrive with the network card's interrupts"
    } else if disk.starts_with("nullb") {
        "null_blk: its completions are timers or the submitter's own"
    } else {
        return None;
    };
    Some(format!("{disk} is {why}"))
}

/// The disks under a stacked device (dm, md): its slaves, recursively;
/// the disk itself otherwise.
pub fn underlying_disks(sys: &Path, disk: &str) -> Vec<String> {
    let slaves = sys.join("block").join(disk).join("slaves");
    let mut names: Vec<String> = fs::read_dir(&slaves)
        .map(|d| {
            d.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        return vec![disk.to_string()];
    }
    names.sort();
    let mut out = Vec::new();
    for n in names {
        // A slave may be a partition: its disk is its sysfs parent.
        let disk_of = fs::canonicalize(sys.join("class/block").join(&n))
            .ok()
            .filter(|p| p.join("partition").exists())
            .and_then(|p| Some(p.parent()?.file_name()?.to_string_lossy().into_owned()))
            .unwrap_or(n);
        out.extend(underlying_disks(sys, &disk_of));
    }
    out.dedup();
    out
}

/// A disk's interrupt numbers from sysfs: the vectors of the first device
/// above it that has any (a PCI function's `msi_irqs`, or its legacy `irq`).
pub fn disk_irqs(sys: &Path, disk: &str) -> Vec<u32> {
    let Ok(mut dev) = fs::canonicalize(sys.join("block").join(disk).join("device")) else {
        return Vec::new();
    };
    loop {
        let mut irqs: Vec<u32> = fs::read_dir(dev.join("msi_irqs"))
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        if irqs.is_empty() {
            let legacy = fs::read_to_string(dev.join("irq")).ok();
            irqs.extend(
                legacy
                    .and_then(|t| t.trim().parse::<u32>().ok())
                    .filter(|&n| n != 0),
            );
        }
        if !irqs.is_empty() {
            irqs.sort_unstable();
            return irqs;
        }
        if !dev.pop() || dev.file_name().is_none_or(|n| n == "devices") {
            return Vec::new();
        }
    }
}

/// The disks behind a target path, or why there are none.
fn disks_of(path: &Path) -> Result<Vec<String>, SuiteError> {
    let dev = BlockDev::of_path(path).ok_or_else(|| SuiteError::NoDeviceInterrupt {
        path: path.to_path_buf(),
    })?;
    Ok(underlying_disks(Path::new(SYS), &dev.disk))
}

/// The interrupt vectors of the devices behind `paths`, or why they have
/// none to move.
pub fn vectors_of(paths: &[PathBuf]) -> Result<(Vec<String>, Vec<Vector>), SuiteError> {
    let names = fs::read_to_string(PROC_INTERRUPTS)
        .map(|t| interrupt_names(&t))
        .unwrap_or_default();
    let mut disks: Vec<String> = Vec::new();
    for p in paths {
        for d in disks_of(p)? {
            if !disks.contains(&d) {
                disks.push(d);
            }
        }
    }
    let vectors = disks_vectors(Path::new(SYS), &disks, &names)?;
    Ok((disks, vectors))
}

/// The vectors of `disks` named from /proc/interrupts, or why a disk has
/// none of its own.
pub fn disks_vectors(
    sys: &Path,
    disks: &[String],
    names: &BTreeMap<u32, String>,
) -> Result<Vec<Vector>, SuiteError> {
    let mut vectors: Vec<Vector> = Vec::new();
    for d in disks {
        if let Some(why) = without_interrupt(d) {
            return Err(SuiteError::SharedInterrupt(why));
        }
        let irqs = disk_irqs(sys, d);
        if irqs.is_empty() {
            return Err(SuiteError::NoInterrupt { disk: d.clone() });
        }
        // Two disks of one controller (NVMe namespaces) share its vectors.
        for irq in irqs {
            if !vectors.iter().any(|v| v.irq == irq) {
                let name = names.get(&irq).cloned().unwrap_or_default();
                vectors.push(Vector { irq, name });
            }
        }
    }
    Ok(vectors)
}

/// `0-3,6` from CPU numbers, as the kernel writes affinity lists.
pub fn cpu_list_text(cpus: &[usize]) -> String {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    let mut parts: Vec<String> = Vec::new();
    let (mut i, mut listed) = (0, 0);
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        listed += j - i + 1;
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    assert_eq!(listed, cpus.len(), "the list's ranges name each CPU once");
    parts.join(",")
}

/// Where affinities are written, and where the ones to put back are kept
/// while vectors are moved: a hiops killed mid-point (a second Ctrl-C,
/// SIGKILL) cannot run its guard, so the next one puts them back from
/// there ([`put_back_left_over`]).
#[derive(Clone, Debug)]
pub struct IrqFiles {
    /// `/proc/irq`.
    pub proc_irq: PathBuf,
    /// `/run`, which holds `hiops-irq-affinity.PID.txt` (`IRQ LIST` per
    /// vector) while process PID has vectors moved.
    pub journal_dir: PathBuf,
}

impl IrqFiles {
    pub fn system() -> IrqFiles {
        IrqFiles {
            proc_irq: PROC_IRQ.into(),
            // /run is cleared at boot, as the affinities are.
            journal_dir: "/run".into(),
        }
    }

    /// The journal of process `pid`.
    pub fn journal(&self, pid: u32) -> PathBuf {
        self.journal_dir
            .join(format!("hiops-irq-affinity.{pid}.txt"))
    }
}

/// Vectors moved to a point's CPUs; dropping it writes back what each had.
#[derive(Debug)]
pub struct AffinityGuard {
    files: IrqFiles,
    /// (vector, its smp_affinity_list before the move)
    saved: Vec<(Vector, String)>,
}

impl AffinityGuard {
    /// Moves every vector to `cpus`, or none: a vector the kernel will not
    /// move undoes the ones moved before it, and the error says which and
    /// why.
    pub fn move_to(
        vectors: &[Vector],
        cpus: &[usize],
        files: &IrqFiles,
    ) -> Result<Self, SuiteError> {
        let mut guard = AffinityGuard {
            files: files.clone(),
            saved: Vec::new(),
        };
        let list = cpu_list_text(cpus);
        for v in vectors {
            let file = affinity_file(&files.proc_irq, v.irq);
            let before = fs::read_to_string(&file).map_err(|source| SuiteError::IrqUnreadable {
                vector: v.to_string(),
                path: file.clone(),
                source,
            })?;
            if is_read_only(&file) {
                let on = fs::read_to_string(file.with_file_name("effective_affinity_list"))
                    .map_or(String::new(), |e| format!(", delivered to {}", e.trim()));
                return Err(SuiteError::IrqManaged {
                    vector: v.to_string(),
                    before: before.trim().into(),
                    on,
                });
            }
            guard.saved.push((v.clone(), before.trim().to_string()));
            // Kept before the move: a kill between the two leaves a vector
            // to put back on the CPUs it already has, no harm.
            guard.keep_journal()?;
            if let Err(e) = fs::write(&file, &list) {
                guard.saved.pop();
                return Err(refused(v, &file, e));
            }
        }
        Ok(guard)
    }

    /// What the vectors' affinity was before the move.
    pub fn saved(&self) -> &[(Vector, String)] {
        &self.saved
    }

    fn keep_journal(&self) -> Result<(), SuiteError> {
        let text: String = (self.saved.iter())
            .map(|(v, before)| format!("{} {before}\n", v.irq))
            .collect();
        crate::sweep::write_atomic(&self.files.journal(std::process::id()), text.as_bytes())
            .map_err(|e| SuiteError::IrqJournal(Box::new(e)))
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        let mut all_back = true;
        for (v, before) in self.saved.iter().rev() {
            all_back &= put_back(&self.files.proc_irq, &v.to_string(), v.irq, before);
        }
        if all_back && !self.saved.is_empty() {
            let _ = fs::remove_file(self.files.journal(std::process::id()));
        }
    }
}

/// Writes `before` back to a vector's affinity, or says how to by hand.
fn put_back(proc_irq: &Path, what: &str, irq: u32, before: &str) -> bool {
    let file = affinity_file(proc_irq, irq);
    match fs::write(&file, before) {
        Ok(()) => true,
        Err(e) => {
            tracing::error!(
                "could not put {what} back on CPUs {before} ({e}): run `echo {before} > {}` as root",
                file.display()
            );
            false
        }
    }
}

/// Puts back the affinities hiops processes that are no longer running
/// left moved (killed before their guards ran); says what it did.
pub fn put_back_left_over(files: &IrqFiles) -> Option<String> {
    let dead = |pid: &u32| !Path::new(&format!("/proc/{pid}")).exists();
    let pids: Vec<u32> = fs::read_dir(&files.journal_dir)
        .ok()?
        .filter_map(|e| {
            let name = e.ok()?.file_name();
            let pid = name.to_str()?.strip_prefix("hiops-irq-affinity.")?;
            pid.strip_suffix(".txt")?.parse().ok()
        })
        .filter(dead)
        .collect();
    let mut said = Vec::new();
    for pid in pids {
        let journal = files.journal(pid);
        let text = fs::read_to_string(&journal).unwrap_or_default();
        let mut back = Vec::new();
        for (irq, before) in text.lines().filter_map(|l| l.split_once(' ')) {
            let Ok(irq) = irq.parse::<u32>() else {
                continue;
            };
            if put_back(&files.proc_irq, &format!("IRQ {irq}"), irq, before) {
                back.push(format!("IRQ {irq} on CPUs {before}"));
            }
        }
        let _ = fs::remove_file(&journal);
        said.push(format!(
            "put back {}, left moved by a hiops (pid {pid}) that ended before it could",
            back.join(", ")
        ));
    }
    (!said.is_empty()).then(|| said.join("; "))
}

fn affinity_file(proc_irq: &Path, irq: u32) -> PathBuf {
    proc_irq.join(irq.to_string()).join("smp_affinity_list")
}

/// The kernel makes a managed vector's affinity file read only (0444).
fn is_read_only(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(file).is_ok_and(|m| m.permissions().mode() & 0o222 == 0)
}

fn refused(v: &Vector, file: &Path, e: std::io::Error) -> SuiteError {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied if !is_root() => SuiteError::IrqNeedsRoot,
        _ => SuiteError::IrqRefused {
            vector: v.to_string(),
            path: file.to_path_buf(),
            source: e,
        },
    }
}

/// Whether this process runs as root (its effective uid, /proc/self/status).
pub fn is_root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
            .unwrap_or(false)
    })
}

/// What a point did with its devices' interrupts.
pub struct Confinement {
    /// Holds the moved vectors until the point ends.
    pub guard: Option<AffinityGuard>,
    /// One line for the report: which vectors followed, or why none did.
    pub note: String,
}

/// Moves the interrupts of the devices `jobs` read or write to the CPUs
/// they are allowed, if they are confined to some.
pub fn confine(jobs: &[JobSpec]) -> Confinement {
    let files = IrqFiles::system();
    if let Some(done) = put_back_left_over(&files) {
        tracing::warn!("{done}");
    }
    let mut cpus: Vec<usize> = jobs
        .iter()
        .filter_map(|j| j.cpus_allowed.as_ref())
        .flatten()
        .copied()
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let paths: Vec<PathBuf> = jobs
        .iter()
        .filter_map(|j| match &j.target.targets {
            TargetSpec::Paths(p) => Some(p.iter().cloned()),
            TargetSpec::Ram => None,
        })
        .flatten()
        .collect();
    let not = |why: String| Confinement {
        guard: None,
        note: format!("Interrupts not confined: {why}."),
    };
    if cpus.is_empty() || jobs.iter().any(|j| j.cpus_allowed.is_none()) {
        return not("a job has no cpus_allowed, so there are no CPUs to move them to".into());
    }
    if paths.is_empty() {
        return not("the jobs read no device (a RAM target)".into());
    }
    let (disks, vectors) = match vectors_of(&paths) {
        Ok(found) => found,
        Err(why) => return not(why.to_string()),
    };
    if !is_root() {
        return not(
            "moving an interrupt takes root (/proc/irq/N/smp_affinity_list): run hiops as root"
                .into(),
        );
    }
    match AffinityGuard::move_to(&vectors, &cpus, &files) {
        Ok(guard) => Confinement {
            guard: Some(guard),
            note: format!(
                "Interrupts confined: {} of {} moved to each point's allowed CPUs and put back after.",
                vectors.iter().map(Vector::to_string).collect::<Vec<_>>().join(", "),
                disks.join(", ")
            ),
        },
        Err(why) => not(why.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    const INTERRUPTS: &str = "           CPU0       CPU1       
 26:          0         14  IO-APIC   4-edge      ttyS0
 35:          0          1 PCI-MSIX-0000:00:02.0   0-edge      virtio1-config
 36:          0   30965998 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
 52:       1200        300  IR-PCI-MSIX-0000:01:00.0    3-edge      nvme0q3
 60:          0          0  dummy
NMI:          0          0   Non-maskable interrupts
LOC:    6145012    6197155   Local timer interrupts
ERR:          0
";

    #[test]
    fn proc_interrupts_names_each_numbered_vector() {
        let names = interrupt_names(INTERRUPTS);
        assert_eq!(names[&36], "virtio1-req.0");
        assert_eq!(names[&35], "virtio1-config");
        assert_eq!(names[&52], "nvme0q3");
        assert_eq!(names[&26], "ttyS0");
        // A line with the chip only names nothing; NMI, LOC... are not vectors.
        assert_eq!(names[&60], "");
        assert_eq!(names.len(), 5);
    }

    #[test]
    fn ram_loop_and_network_disks_have_no_interrupt_of_their_own() {
        for d in ["zram1", "loop7", "ram0", "nbd0", "pmem0", "nullb0"] {
            assert!(
                without_interrupt(d).is_some_and(|w| w.starts_with(d)),
                "{d}"
            );
        }
        for d in ["vda", "nvme0n1", "sda"] {
            assert_eq!(without_interrupt(d), None, "{d}");
        }
    }

    /// A sysfs tree: vda on a virtio PCI function with MSI-X vectors 35
    /// and 36, sdb under a SCSI host on a legacy-interrupt function, and
    /// dm-0 over vda's partition vda1 and sdb.
    fn fake_sysfs() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let mk = |p: &str| fs::create_dir_all(root.join(p)).unwrap();
        let pci = "devices/pci0000:00/0000:00:02.0";
        mk(&format!("{pci}/msi_irqs/35"));
        mk(&format!("{pci}/msi_irqs/36"));
        mk(&format!("{pci}/virtio1/block/vda/vda1"));
        mk(&format!("{pci}/virtio1/block/vdb"));
        fs::write(
            root.join(format!("{pci}/virtio1/block/vda/vda1/partition")),
            "1",
        )
        .unwrap();
        let ahci = "devices/pci0000:00/0000:00:1f.2";
        mk(&format!("{ahci}/host0/target0:0:0/0:0:0:0/block/sdb"));
        fs::write(root.join(format!("{ahci}/irq")), "19\n").unwrap();
        mk("devices/virtual/block/dm-0/slaves");
        mk("devices/virtual/block/zram1");
        mk("block");
        mk("class/block");
        let link = |to: &str, at: &str| symlink(root.join(to), root.join(at)).unwrap();
        link(&format!("{pci}/virtio1/block/vda"), "block/vda");
        link(&format!("{pci}/virtio1/block/vdb"), "block/vdb");
        link(
            &format!("{pci}/virtio1"),
            &format!("{pci}/virtio1/block/vdb/device"),
        );
        link(
            &format!("{pci}/virtio1"),
            &format!("{pci}/virtio1/block/vda/device"),
        );
        link(
            &format!("{ahci}/host0/target0:0:0/0:0:0:0/block/sdb"),
            "block/sdb",
        );
        link(
            &format!("{ahci}/host0/target0:0:0/0:0:0:0"),
            &format!("{ahci}/host0/target0:0:0/0:0:0:0/block/sdb/device"),
        );
        link("devices/virtual/block/dm-0", "block/dm-0");
        link("devices/virtual/block/zram1", "block/zram1");
        link(&format!("{pci}/virtio1/block/vda/vda1"), "class/block/vda1");
        link(
            &format!("{pci}/virtio1/block/vda/vda1"),
            "devices/virtual/block/dm-0/slaves/vda1",
        );
        link(
            &format!("{ahci}/host0/target0:0:0/0:0:0:0/block/sdb"),
            "devices/virtual/block/dm-0/slaves/sdb",
        );
        t
    }

    #[test]
    fn sysfs_leads_from_a_disk_to_its_interrupts() {
        let t = fake_sysfs();
        let sys = t.path();
        assert_eq!(disk_irqs(sys, "vda"), [35, 36]);
        assert_eq!(disk_irqs(sys, "sdb"), [19]);
        assert!(disk_irqs(sys, "zram1").is_empty(), "no device above it");
        assert!(disk_irqs(sys, "nvme9n1").is_empty(), "no such disk");
        // A stacked device resolves to the disks under it (a partition to
        // its disk).
        assert_eq!(underlying_disks(sys, "dm-0"), ["sdb", "vda"]);
        assert_eq!(underlying_disks(sys, "vda"), ["vda"]);
        // Disks of one controller share its vectors: each moved once, named
        // from /proc/interrupts.
        let names = interrupt_names(INTERRUPTS);
        let disks = |d: &[&str]| d.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let vs = disks_vectors(sys, &disks(&["vda", "vdb"]), &names).unwrap();
        let shown: Vec<String> = vs.iter().map(Vector::to_string).collect();
        assert_eq!(shown, ["IRQ 35 (virtio1-config)", "IRQ 36 (virtio1-req.0)"]);
        let e = disks_vectors(sys, &disks(&["vda", "zram1"]), &names).unwrap_err();
        assert!(e.to_string().starts_with("zram1 is a RAM disk"), "{e}");
        let e = disks_vectors(sys, &disks(&["nvme9n1"]), &names).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("no interrupt of nvme9n1 was found"),
            "{e}"
        );
    }

    #[test]
    fn cpu_lists_are_written_as_the_kernel_writes_them() {
        assert_eq!(cpu_list_text(&[0]), "0");
        assert_eq!(cpu_list_text(&[3, 0, 1, 2, 6]), "0-3,6");
        assert_eq!(cpu_list_text(&[1, 3, 5]), "1,3,5");
    }

    #[test]
    fn the_flag_is_taken_out_of_the_options() {
        let args: Vec<String> = ["--bs=4k", FLAG, "--cpus_allowed=0"]
            .map(String::from)
            .to_vec();
        let (rest, on) = confine_flag(&args);
        assert!(on);
        assert_eq!(rest, ["--bs=4k", "--cpus_allowed=0"]);
        assert!(!confine_flag(&rest).1);
    }

    fn files(t: &tempfile::TempDir) -> IrqFiles {
        IrqFiles {
            proc_irq: t.path().into(),
            journal_dir: t.path().into(),
        }
    }

    fn fake_proc_irq(irqs: &[(u32, &str, bool)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for &(irq, list, writable) in irqs {
            let f = affinity_file(t.path(), irq);
            fs::create_dir_all(f.parent().unwrap()).unwrap();
            fs::write(&f, format!("{list}\n")).unwrap();
            let mode = if writable { 0o644 } else { 0o444 };
            fs::set_permissions(&f, fs::Permissions::from_mode(mode)).unwrap();
        }
        t
    }

    fn vector(irq: u32, name: &str) -> Vector {
        Vector {
            irq,
            name: name.into(),
        }
    }

    fn affinity(proc_irq: &Path, irq: u32) -> String {
        fs::read_to_string(affinity_file(proc_irq, irq))
            .unwrap()
            .trim()
            .to_string()
    }

    #[test]
    fn the_guard_moves_the_vectors_and_puts_them_back() {
        let t = fake_proc_irq(&[(35, "0-3", true), (36, "2", true)]);
        let vs = [vector(35, "virtio1-config"), vector(36, "virtio1-req.0")];
        let guard = AffinityGuard::move_to(&vs, &[0, 1], &files(&t)).unwrap();
        assert_eq!(affinity(t.path(), 35), "0-1");
        assert_eq!(affinity(t.path(), 36), "0-1");
        assert_eq!(guard.saved()[1], (vs[1].clone(), "2".to_string()));
        // What to put back is kept while moved, under this process's id.
        let mine = files(&t).journal(std::process::id());
        assert_eq!(fs::read_to_string(&mine).unwrap(), "35 0-3\n36 2\n");
        assert_eq!(put_back_left_over(&files(&t)), None, "a live process's");
        drop(guard);
        assert_eq!(affinity(t.path(), 35), "0-3");
        assert_eq!(affinity(t.path(), 36), "2");
        assert!(!mine.exists());
    }

    #[test]
    fn what_a_killed_hiops_left_moved_is_put_back() {
        let t = fake_proc_irq(&[(35, "1", true), (36, "1", true)]);
        // Above any pid_max: no such process.
        let theirs = files(&t).journal(99999999);
        fs::write(&theirs, "35 0-3\n36 2\n").unwrap();
        let said = put_back_left_over(&files(&t)).unwrap();
        assert_eq!(said, "put back IRQ 35 on CPUs 0-3, IRQ 36 on CPUs 2, left moved by a hiops (pid 99999999) that ended before it could");
        assert_eq!(affinity(t.path(), 35), "0-3");
        assert_eq!(affinity(t.path(), 36), "2");
        assert!(!theirs.exists());
        assert_eq!(put_back_left_over(&files(&t)), None);
    }

    #[test]
    fn a_managed_vector_undoes_the_move_and_says_why() {
        let t = fake_proc_irq(&[(35, "0-3", true), (36, "0-3", false)]);
        let vs = [vector(35, "virtio1-config"), vector(36, "virtio1-req.0")];
        let e = AffinityGuard::move_to(&vs, &[0], &files(&t)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("IRQ 36 (virtio1-req.0) is managed by the kernel"),
            "{e}"
        );
        assert_eq!(
            affinity(t.path(), 35),
            "0-3",
            "the vector moved first is back"
        );
        assert!(!files(&t).journal(std::process::id()).exists());
    }
}
