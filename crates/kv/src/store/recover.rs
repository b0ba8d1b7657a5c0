//! Opening a store that holds data: every block of the current epoch is
//! scanned and the index rebuilt from the newest record of each key.

use super::{Inner, Recovery, StoreError, ON_DEVICE};
use crate::format::{self, PAGE};
use crate::index::{digest, Digest, Location};
use hiops_path::AlignedBuf;
use std::sync::atomic::Ordering::*;

impl Inner {
    /// Rebuilds the index by scanning every block of the current epoch.
    pub(super) fn rebuild(&mut self, rec: &mut Recovery) -> Result<(), StoreError> {
        let mut versions: hashbrown::HashMap<Digest, u64> = hashbrown::HashMap::new();
        let mut page = AlignedBuf::new(PAGE);
        let mut block = AlignedBuf::new(self.sb.block_size as usize);
        let (mut max_version, mut max_seq) = (0u64, 0u64);
        let mut free = Vec::new();
        for idx in 0..self.sb.blocks {
            let off = self.sb.block_offset(idx);
            self.io.read_at(0, &mut page, off)?;
            let Some(seq) = format::decode_block_header(&page, self.sb.epoch) else {
                free.push(idx);
                continue;
            };
            self.io.read_at(0, &mut block, off)?;
            rec.blocks_scanned += 1;
            max_seq = max_seq.max(seq);
            let info = &self.blocks[idx as usize];
            info.seq.store(seq, Relaxed);
            info.state.store(ON_DEVICE, Relaxed);
            for (at, r) in format::records(&block, seq) {
                rec.records_scanned += 1;
                if info.min_version.load(Relaxed) == u64::MAX {
                    info.min_version.store(r.version, Relaxed);
                }
                max_version = max_version.max(r.version);
                let d = digest(r.key);
                let newer = versions.get(&d).is_none_or(|&v| r.version > v);
                if newer {
                    versions.insert(d, r.version);
                    self.index.insert(
                        d,
                        Location {
                            block: idx,
                            offset: at as u32,
                            len: r.len as u32,
                            tombstone: r.is_tombstone(),
                        },
                    );
                }
            }
        }
        drop(versions);
        let blocks = &self.blocks;
        self.index.for_each(|_, l| {
            blocks[l.block as usize]
                .live
                .fetch_add(l.len as u64, Relaxed);
        });
        let w = self.writer.get_mut().unwrap_or_else(|p| p.into_inner());
        free.reverse();
        w.free = free;
        w.next_version = max_version + 1;
        w.next_seq = max_seq + 1;
        Ok(())
    }
}
