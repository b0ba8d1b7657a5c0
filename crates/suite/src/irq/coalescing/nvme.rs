//! An NVMe controller's interrupt coalescing (feature 08h, NVMe base
//! specification §5.27.1.8): read with Get Features, set with Set
//! Features through the admin passthrough ioctl (NVME_IOCTL_ADMIN_CMD on
//! /dev/nvmeN), and put back as it was when a sweep ends, fails or is
//! interrupted ([`Restore`]). The value is never saved (Set Features'
//! SV bit stays 0), so a controller reset also restores the old one.
//!
//! Aggregation threshold (cdw11 bits 7:0): completion queue entries per
//! interrupt, 0's based. Aggregation time (bits 15:8): the longest an
//! interrupt is held, in 100 µs steps (0: not held).

use std::fs::File;
use std::os::fd::AsRawFd;

/// The feature's identifier.
pub const FEATURE_ID: u8 = 0x08;
/// Admin opcodes.
const SET_FEATURES: u8 = 0x09;
const GET_FEATURES: u8 = 0x0a;

/// Linux's `struct nvme_passthru_cmd` (include/uapi/linux/nvme_ioctl.h),
/// which NVME_IOCTL_ADMIN_CMD takes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdminCmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    /// Completion dword 0, written by the kernel.
    pub result: u32,
}

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`: read and write, size 72.
pub const NVME_IOCTL_ADMIN_CMD: u64 =
    (3 << 30) | ((std::mem::size_of::<AdminCmd>() as u64) << 16) | ((b'N' as u64) << 8) | 0x41;

/// Interrupt coalescing as the controller holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coalescing {
    /// Completions per interrupt, 1..=256 (1: an interrupt for each).
    pub threshold: u16,
    /// The longest an interrupt is held, in 100 µs steps.
    pub time_100us: u8,
}

impl Coalescing {
    /// The controller's default: an interrupt per completion, held never.
    pub const OFF: Coalescing = Coalescing {
        threshold: 1,
        time_100us: 0,
    };

    /// cdw11 of Set Features (and dword 0 of Get Features' completion).
    pub fn encode(self) -> u32 {
        assert!(
            (1..=256).contains(&self.threshold),
            "a threshold of 1 to 256 completions"
        );
        (u32::from(self.time_100us) << 8) | u32::from(self.threshold - 1)
    }

    /// The value in a Get Features completion's dword 0.
    pub fn decode(dword0: u32) -> Coalescing {
        Coalescing {
            threshold: (dword0 & 0xff) as u16 + 1,
            time_100us: ((dword0 >> 8) & 0xff) as u8,
        }
    }

    /// "8 completions or 200 µs".
    pub fn describe(self) -> String {
        format!("{} completions or {} µs", self.threshold, self.time_us())
    }

    /// The longest an interrupt is held, in µs.
    pub fn time_us(self) -> u32 {
        u32::from(self.time_100us) * 100
    }

    /// The value as a sweep names it: "off" (an interrupt per completion,
    /// held never) or "16x200us" (16 completions or 200 µs).
    pub fn name(self) -> String {
        match self == Coalescing::OFF {
            true => "off".into(),
            false => format!("{}x{}us", self.threshold, self.time_us()),
        }
    }

    /// A value named as [`Coalescing::name`] writes it.
    pub fn parse(text: &str) -> Result<Coalescing, String> {
        if text == "off" {
            return Ok(Coalescing::OFF);
        }
        let form = || {
            format!("'{text}': give off, or COMPLETIONSxTIMEus (16x200us: 1 to 256 completions, a time of 0 to 25500 µs in steps of 100)")
        };
        let (n, t) = text.split_once('x').ok_or_else(form)?;
        let threshold: u16 = n.parse().map_err(|_| form())?;
        let time: u32 = t
            .strip_suffix("us")
            .and_then(|t| t.parse().ok())
            .ok_or_else(form)?;
        if !(1..=256).contains(&threshold) || !time.is_multiple_of(100) || time > 25_500 {
            return Err(form());
        }
        Ok(Coalescing {
            threshold,
            time_100us: (time / 100) as u8,
        })
    }
}

/// Get Features 08h, the current value (SEL 000b in cdw10 bits 10:8).
pub fn get_command() -> AdminCmd {
    AdminCmd {
        opcode: GET_FEATURES,
        cdw10: u32::from(FEATURE_ID),
        ..AdminCmd::default()
    }
}

/// Set Features 08h to `value`, not saved (SV, cdw10 bit 31, is 0).
pub fn set_command(value: Coalescing) -> AdminCmd {
    AdminCmd {
        opcode: SET_FEATURES,
        cdw10: u32::from(FEATURE_ID),
        cdw11: value.encode(),
        ..AdminCmd::default()
    }
}

/// Why a feature could not be read or set, in one line.
#[derive(Debug, thiserror::Error)]
pub enum NvmeError {
    #[error("opening {path} for admin commands: {source} (interrupt coalescing is set on the controller, /dev/nvmeN, as root)")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("{what} on {path}: {source}")]
    Admin {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("{what} on {path}: the controller answered status {status:#x} (it may not support feature 08h)")]
    Status {
        what: &'static str,
        path: String,
        status: i32,
    },
}

/// Something admin commands can be sent to: a controller, or a test's
/// stand-in.
pub trait AdminDevice {
    /// Sends `cmd`; `Ok` holds completion dword 0.
    fn admin(&mut self, cmd: &AdminCmd) -> Result<u32, NvmeError>;
}

/// An NVMe controller's character device, opened read-write.
pub struct Controller {
    file: File,
    path: String,
}

impl Controller {
    pub fn open(path: &str) -> Result<Controller, NvmeError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| NvmeError::Open {
                path: path.into(),
                source,
            })?;
        Ok(Controller {
            file,
            path: path.into(),
        })
    }
}

/// Sends `cmd` through NVME_IOCTL_ADMIN_CMD on `fd`; returns the ioctl's
/// value (0, the controller's status, or -1 with errno set).
///
/// # Safety
/// `fd` is an open NVMe controller or namespace device, and `cmd` points
/// to a valid, writable [`AdminCmd`] that outlives the call. Its `addr`
/// is 0 or points to `data_len` bytes the kernel may read and write for
/// the call's length (the commands here carry no data: `addr` 0).
pub unsafe fn admin_ioctl(fd: i32, cmd: *mut AdminCmd) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { libc::ioctl(fd, NVME_IOCTL_ADMIN_CMD as _, cmd) }
}

impl AdminDevice for Controller {
    fn admin(&mut self, cmd: &AdminCmd) -> Result<u32, NvmeError> {
        assert_eq!(
            (cmd.addr, cmd.data_len),
            (0, 0),
            "feature 08h carries no data"
        );
        let what = match cmd.opcode {
            GET_FEATURES => "Get Features 08h",
            _ => "Set Features 08h",
        };
        let mut c = *cmd;
        // SAFETY: the file is open for the call; `c` is a local the kernel
        // writes its result into, and carries no data buffer.
        let rc = unsafe { admin_ioctl(self.file.as_raw_fd(), &mut c) };
        match rc {
            0 => Ok(c.result),
            s if s > 0 => Err(NvmeError::Status {
                what,
                path: self.path.clone(),
                status: s,
            }),
            _ => Err(NvmeError::Admin {
                what,
                path: self.path.clone(),
                source: std::io::Error::last_os_error(),
            }),
        }
    }
}

/// The controller's coalescing as it is now.
pub fn read(dev: &mut impl AdminDevice) -> Result<Coalescing, NvmeError> {
    dev.admin(&get_command()).map(Coalescing::decode)
}

/// A coalescing value set for as long as this lives: dropped (the sweep
/// done, failed, or ended by Ctrl-C), it sets the value read before.
pub struct Restore<'a, D: AdminDevice> {
    dev: &'a mut D,
    old: Coalescing,
}

impl<'a, D: AdminDevice> Restore<'a, D> {
    /// Reads the value in force, then sets `value`. Nothing is changed
    /// when the read fails; a failed set leaves the old value in force.
    pub fn set(dev: &'a mut D, value: Coalescing) -> Result<Restore<'a, D>, NvmeError> {
        let old = read(dev)?;
        dev.admin(&set_command(value))?;
        Ok(Restore { dev, old })
    }

    /// The value that was in force before, and comes back on drop.
    pub fn old(&self) -> Coalescing {
        self.old
    }

    /// The value in force now (a controller may hold another than the
    /// one set).
    pub fn read(&mut self) -> Result<Coalescing, NvmeError> {
        read(self.dev)
    }

    /// Another value while the guard holds the old one.
    pub fn change(&mut self, value: Coalescing) -> Result<(), NvmeError> {
        self.dev.admin(&set_command(value)).map(|_| ())
    }
}

impl<D: AdminDevice> Drop for Restore<'_, D> {
    fn drop(&mut self) {
        if let Err(e) = self.dev.admin(&set_command(self.old)) {
            // Nobody to return it to: the user must know the device kept
            // the sweep's value.
            eprintln!(
                "hiops: restoring interrupt coalescing ({}) failed: {e}; set it back with `nvme set-feature -f 8 -v {:#x}`",
                self.old.describe(),
                self.old.encode()
            );
        }
    }
}

/// Runs `measure` at each of `values` in turn with the controller's
/// coalescing set to it, the value before put back at the end, on the
/// first error, or when `measure` panics. Returns each value's result.
pub fn sweep<D: AdminDevice, T, E: From<NvmeError>>(
    dev: &mut D,
    values: &[Coalescing],
    mut measure: impl FnMut(Coalescing) -> Result<T, E>,
) -> Result<Vec<(Coalescing, T)>, E> {
    let Some((&first, rest)) = values.split_first() else {
        return Ok(Vec::new());
    };
    let mut guard = Restore::set(dev, first)?;
    let mut out = vec![(first, measure(first)?)];
    for &v in rest {
        guard.change(v)?;
        out.push((v, measure(v)?));
    }
    Ok(out)
}

/// The sweep's grid, aggregation threshold x time: off (the controller's
/// default), then 4, 16 and 64 completions, each held at most 100 or
/// 500 µs. ADMS'10 Fig 6 read clocks per I/O as the completions coalesced
/// per interrupt grow; at QD32 a threshold of 64 is never reached, so
/// its points show the time alone deciding.
pub fn grid() -> Vec<Coalescing> {
    let mut out = vec![Coalescing::OFF];
    for threshold in [4, 16, 64] {
        for time_100us in [1, 5] {
            out.push(Coalescing {
                threshold,
                time_100us,
            });
        }
    }
    assert!(
        out.iter().all(|c| Coalescing::decode(c.encode()) == *c),
        "every point of the grid survives the controller's encoding"
    );
    out
}

/// The grid's most coalescing point: the paper's "large numbers of
/// coalesced interrupts", which its rule reads against off.
pub fn strongest() -> Coalescing {
    let g = grid();
    let s = *g.last().expect("a grid of points");
    assert!(g
        .iter()
        .all(|c| c.threshold <= s.threshold && c.time_100us <= s.time_100us));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A controller that keeps every command and answers from a value of
    /// its own; it refuses the command numbered `fail_at`.
    struct Fake {
        value: u32,
        sent: Vec<AdminCmd>,
        fail_at: Option<usize>,
    }

    impl Fake {
        fn new(value: Coalescing) -> Fake {
            Fake {
                value: value.encode(),
                sent: Vec::new(),
                fail_at: None,
            }
        }

        /// (opcode, cdw10, cdw11) of each command sent.
        fn log(&self) -> Vec<(u8, u32, u32)> {
            self.sent
                .iter()
                .map(|c| (c.opcode, c.cdw10, c.cdw11))
                .collect()
        }
    }

    impl AdminDevice for Fake {
        fn admin(&mut self, cmd: &AdminCmd) -> Result<u32, NvmeError> {
            self.sent.push(*cmd);
            if self.fail_at == Some(self.sent.len() - 1) {
                return Err(NvmeError::Status {
                    what: "Set Features 08h",
                    path: "fake".into(),
                    status: 0x2,
                });
            }
            match cmd.opcode {
                GET_FEATURES => Ok(self.value),
                _ => {
                    self.value = cmd.cdw11;
                    Ok(0)
                }
            }
        }
    }

    const OLD: Coalescing = Coalescing {
        threshold: 10,
        time_100us: 3,
    };

    #[test]
    fn the_feature_is_encoded_as_the_specification_lays_it_out() {
        assert_eq!(std::mem::size_of::<AdminCmd>(), 72);
        assert_eq!(NVME_IOCTL_ADMIN_CMD, 0xc048_4e41);
        let get = get_command();
        assert_eq!((get.opcode, get.cdw10, get.cdw11), (0x0a, 0x08, 0));
        // 16 completions (0's based: 15) or 200 µs (2 steps); not saved.
        let v = Coalescing {
            threshold: 16,
            time_100us: 2,
        };
        let set = set_command(v);
        assert_eq!((set.opcode, set.cdw10, set.cdw11), (0x09, 0x08, 0x020f));
        assert_eq!(set.cdw10 >> 31, 0, "SV clear: never saved across resets");
        assert_eq!(Coalescing::decode(0x020f), v);
        assert_eq!(Coalescing::decode(0xffff_00ff).threshold, 256);
        assert_eq!(Coalescing::decode(0), Coalescing::OFF);
        assert_eq!(v.describe(), "16 completions or 200 µs");
        for p in grid() {
            assert_eq!(Coalescing::decode(p.encode()), p);
            assert_eq!(Coalescing::parse(&p.name()), Ok(p));
        }
        assert_eq!(strongest().name(), "64x500us");
        assert!(Coalescing::parse("16x250us").is_err(), "100 µs steps");
        assert!(Coalescing::parse("0x100us").is_err() && Coalescing::parse("16").is_err());
    }

    #[test]
    fn a_sweep_reads_first_and_restores_last() {
        let mut dev = Fake::new(OLD);
        let points = grid();
        let seen = sweep(&mut dev, &points, |v| Ok::<_, NvmeError>(v.threshold)).unwrap();
        assert_eq!(
            seen.iter().map(|p| p.1).collect::<Vec<_>>(),
            [1, 4, 4, 16, 16, 64, 64]
        );
        let log = dev.log();
        assert_eq!(log[0], (GET_FEATURES, 0x08, 0), "the old value read first");
        let sets: Vec<u32> = log[1..].iter().map(|c| c.2).collect();
        let mut want: Vec<u32> = points.iter().map(|p| p.encode()).collect();
        want.push(OLD.encode());
        assert_eq!(sets, want, "each point, then the old value");
        assert_eq!(Coalescing::decode(dev.value), OLD);
    }

    #[test]
    fn a_failed_point_or_a_panic_still_restores() {
        let mut dev = Fake::new(OLD);
        let failed = sweep(&mut dev, &grid(), |v| match v.threshold {
            16 => Err(NvmeError::Status {
                what: "a measurement",
                path: "fake".into(),
                status: 1,
            }),
            t => Ok(t),
        });
        assert!(failed.is_err());
        assert_eq!(Coalescing::decode(dev.value), OLD);
        assert_eq!(dev.log().last().unwrap().2, OLD.encode());
        let mut dev = Fake::new(OLD);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = sweep(&mut dev, &grid(), |_| -> Result<(), NvmeError> {
                panic!("a measurement panicked")
            });
        }));
        assert!(panicked.is_err());
        assert_eq!(Coalescing::decode(dev.value), OLD);
    }

    #[test]
    fn nothing_is_set_when_the_old_value_cannot_be_read() {
        let mut dev = Fake::new(OLD);
        dev.fail_at = Some(0);
        assert!(Restore::set(&mut dev, grid()[1]).is_err());
        assert_eq!(dev.log().len(), 1, "only the refused read");
        // A refused set leaves the old value, and no restore is sent.
        let mut dev = Fake::new(OLD);
        dev.fail_at = Some(1);
        assert!(Restore::set(&mut dev, grid()[1]).is_err());
        assert_eq!(dev.log().len(), 2);
        assert_eq!(Coalescing::decode(dev.value), OLD);
    }
}
