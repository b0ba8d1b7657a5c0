//! The devices' identities: that the paths given are one store's devices,
//! each in its place, or all blank (a new store), checked from their
//! superblocks before anything is opened for writing; and erasing a
//! store's superblocks for an experiment that re-forms it.

use super::error::{config_error, open_error, StoreError};
use crate::format::{Identity, Superblock, PAGE};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Checks that `paths` are one store's devices in its order, or all new,
/// without opening anything for writing (what [`Store::open_devices`](super::devices::Store::open_devices)
/// checks first).
pub fn check_devices(paths: &[PathBuf]) -> Result<(), StoreError> {
    identities(paths).map(|_| ())
}

/// Zeroes the superblock of each of `paths` that holds a hiops kv store,
/// so the next open formats it anew: every record on it is lost. A path
/// holding anything else is refused before any is changed; a missing or
/// blank one is left alone. For experiments that re-form their stores
/// (`hiops kv fig10` over 1..N devices).
pub fn erase_stores(paths: &[PathBuf]) -> Result<(), StoreError> {
    let mut stores = Vec::new();
    for p in paths {
        if peek(p)?.is_some() {
            stores.push(p);
        }
    }
    for p in stores {
        let mut f = std::fs::OpenOptions::new().write(true).open(p)?;
        std::io::Write::write_all(&mut f, &[0u8; PAGE])?;
        f.sync_all()?;
    }
    Ok(())
}

/// The superblock at the start of `path` (`None`: no file, or zeros).
/// Read without opening for writing: nothing is changed before every
/// device has been checked.
fn peek(path: &Path) -> Result<Option<Superblock>, StoreError> {
    let mut page = vec![0u8; PAGE];
    let unreadable = |e: std::io::Error| {
        open_error(
            path,
            format!("reading its first page: {e}; give a file or a block device for the store"),
        )
    };
    match std::fs::File::open(path) {
        Ok(_) if path.is_dir() => return Err(config_error(
            path,
            "is a directory: give a file in it (such as kv.dat) or a block device for the store",
        )),
        Ok(f) => {
            let mut got = 0;
            let mut f = f.take(PAGE as u64);
            while got < PAGE {
                match f.read(&mut page[got..]).map_err(unreadable)? {
                    0 => break,
                    n => got += n,
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(open_error(path, e.to_string())),
    }
    Superblock::decode(&page).map_err(|why| {
        open_error(
            path,
            format!("{why}; give a new file or one a hiops kv store created"),
        )
    })
}

/// A new store's id: never 0 (the id of stores made before ids).
fn new_id(paths: &[PathBuf]) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos} {} {paths:?}", std::process::id());
    xxhash_rust::xxh3::xxh3_64(seed.as_bytes()) | 1
}

/// The identity each of `paths` must have: a new store's for blank
/// devices, or the one their superblocks agree on. Refuses a device
/// missing, swapped, added or from another store, and a path given twice.
pub(super) fn identities(paths: &[PathBuf]) -> Result<Vec<Identity>, StoreError> {
    refuse_repeats(paths)?;
    let found = paths
        .iter()
        .map(|p| peek(p))
        .collect::<Result<Vec<_>, _>>()?;
    let first = paths
        .iter()
        .zip(&found)
        .find_map(|(p, s)| s.map(|s| (p, s)));
    let id = match first {
        // All blank: a new store.
        None => new_id(paths),
        Some((first, sb)) => {
            let id = sb.identity.id;
            for (i, (p, s)) in paths.iter().zip(&found).enumerate() {
                check(p, i, paths.len(), s.map(|s| s.identity), (first, id))?;
            }
            id
        }
    };
    let devices = paths.len() as u32;
    Ok((0..devices)
        .map(|device| Identity {
            id,
            device,
            devices,
        })
        .collect())
}

/// A path given twice (or two names of one file) would be two devices
/// writing one file.
fn refuse_repeats(paths: &[PathBuf]) -> Result<(), StoreError> {
    let real = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].iter().any(|q| real(q) == real(p)) {
            return Err(open_error(
                p,
                "given twice: give each device of the store once",
            ));
        }
    }
    Ok(())
}

/// Whether the device at `path`, given as number `i` of `n`, belongs
/// there (`store`: the first device found and its store id).
fn check(
    path: &Path,
    i: usize,
    n: usize,
    found: Option<Identity>,
    store: (&PathBuf, u64),
) -> Result<(), StoreError> {
    let nothing = "nothing was changed";
    let Some(f) = found else {
        return Err(open_error(
            path,
            format!(
                "holds no store, while {} holds store {:016x}: device {} of the store is missing (wiped or replaced?); give the store's devices as they were first given; {nothing}",
                store.0.display(),
                store.1,
                i + 1
            ),
        ));
    };
    if f.id != store.1 {
        return Err(open_error(
            path,
            format!(
                "belongs to another store ({:016x}, not {:016x} as {} does); give only the devices of one store; {nothing}",
                f.id,
                store.1,
                store.0.display()
            ),
        ));
    }
    if f.devices as usize != n {
        return Err(open_error(
            path,
            format!(
                "is device {} of {} of store {:016x}, but {n} devices were given; give all {} of its devices, in the order they were first given; {nothing}",
                f.device + 1,
                f.devices,
                f.id,
                f.devices
            ),
        ));
    }
    if f.device as usize != i {
        return Err(open_error(
            path,
            format!(
                "is device {} of the store, given as device {}: give the devices in the order they were first given; {nothing}",
                f.device + 1,
                i + 1
            ),
        ));
    }
    Ok(())
}
