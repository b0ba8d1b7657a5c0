//! What a chunk read back is found to be: good, or bad and why.

use super::stamper::{BadBlock, Found};

/// What a chunk's header says against what the checking thread knows of
/// it: its pass (`pass`; None: any), the write acknowledged last there
/// (`want_seq`), the seed the replayed write drew (`want_seed`).
pub(crate) fn verdict(
    found: Result<Found, BadBlock>,
    pass: Option<u32>,
    want_seq: Option<u32>,
    want_seed: Option<u64>,
) -> Result<(), BadBlock> {
    let f = found?;
    match (f.hiops, pass) {
        (Some((p, _)), Some(expected)) if p != expected => {
            return Err(BadBlock::StalePass { found: p, expected })
        }
        (Some((_, seq)), _) => {
            if let Some(w) = want_seq.filter(|&w| w != seq) {
                return Err(BadBlock::LostWrite {
                    found: seq,
                    expected: w,
                });
            }
        }
        (None, _) if f.header && want_seq.is_some() => return Err(BadBlock::Foreign),
        (None, _) => {}
    }
    match want_seed {
        Some(w) if f.header && f.rand_seed != w => Err(BadBlock::Seed {
            found: f.rand_seed,
            expected: w,
        }),
        _ => Ok(()),
    }
}

/// A trimmed chunk's check (verify.c, verify_trimmed_io_u): zeroes, and
/// nothing else.
pub(crate) fn zeroes(chunk: &[u8]) -> Result<Found, BadBlock> {
    match chunk.iter().position(|&b| b != 0) {
        Some(at) => Err(BadBlock::NotZero { at }),
        None => Ok(Found::default()),
    }
}
