//! The gate's errors other than a refusal: a grant that names no device,
//! and a device libblkid could not probe.

use std::path::PathBuf;

/// A value of `--allow-write-device` that names no device or FIFO.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("not a device or FIFO: --allow-write-device names a device or FIFO to write, such as /dev/loop3 (files need no permission)")]
    NotDevice { path: PathBuf },
    #[error(
        "{source}: --allow-write-device must name an existing block device, character device or FIFO, such as /dev/loop3"
    )]
    Missing {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Which of libblkid's steps failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeStep {
    #[error("the path holds a NUL byte")]
    NulInPath,
    #[error("{0}")]
    Open(std::io::Error),
    #[error("enabling the probe's chains failed ({code})")]
    Enable { code: i32 },
    #[error("the probe failed ({code})")]
    Probe { code: i32 },
}

/// libblkid could not look at a device (or image file).
#[derive(Debug, thiserror::Error)]
#[error("libblkid could not probe {}: {step}", path.display())]
pub struct ProbeError {
    pub path: PathBuf,
    pub step: ProbeStep,
}
