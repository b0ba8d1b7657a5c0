//! The tag pool: `get_free_tags` and `release_tags` of the HIOPS HAL.

use crate::Tag;

/// A bounded pool of tags `0..depth`. Allocation never blocks: an empty pool
/// means the device is busy, and the caller decides what to do (the HIOPS
/// non-blocking issue path queues the command in software).
#[derive(Debug)]
pub struct TagPool {
    free: Vec<Tag>,
    /// `in_use[tag]` is true while the tag is bound to a command: catches a
    /// double release or a completion for a tag nobody issued.
    in_use: Vec<bool>,
}

impl TagPool {
    pub fn new(depth: u32) -> TagPool {
        assert!(depth > 0, "a queue needs at least one tag");
        // Hand out low tags first: their buffers are the warmest.
        let free = (0..depth).rev().collect();
        TagPool {
            free,
            in_use: vec![false; depth as usize],
        }
    }

    pub fn depth(&self) -> u32 {
        self.in_use.len() as u32
    }

    pub fn free_count(&self) -> u32 {
        self.free.len() as u32
    }

    pub fn busy_count(&self) -> u32 {
        self.depth() - self.free_count()
    }

    /// `get_free_tags` for one tag: `None` when every tag is in flight.
    pub fn get(&mut self) -> Option<Tag> {
        let tag = self.free.pop()?;
        let slot = &mut self.in_use[tag as usize];
        assert!(!*slot, "tag {tag} was free and in use at once");
        *slot = true;
        Some(tag)
    }

    /// `release_tags` for one tag.
    pub fn release(&mut self, tag: Tag) {
        let slot = self
            .in_use
            .get_mut(tag as usize)
            .unwrap_or_else(|| panic!("tag {tag} is outside this queue"));
        assert!(*slot, "tag {tag} released twice or never taken");
        *slot = false;
        self.free.push(tag);
        debug_assert!(self.free.len() <= self.in_use.len());
    }

    pub fn is_in_use(&self, tag: Tag) -> bool {
        self.in_use.get(tag as usize).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tag_is_handed_out_once_until_released() {
        let mut pool = TagPool::new(4);
        let mut got: Vec<Tag> = std::iter::from_fn(|| pool.get()).collect();
        got.sort();
        assert_eq!(got, vec![0, 1, 2, 3]);
        assert_eq!(
            pool.get(),
            None,
            "an empty pool says busy instead of blocking"
        );
        pool.release(2);
        assert_eq!(pool.get(), Some(2));
        assert_eq!(pool.busy_count(), 4);
    }

    #[test]
    #[should_panic(expected = "released twice")]
    fn double_release_is_caught() {
        let mut pool = TagPool::new(2);
        let tag = pool.get().unwrap();
        pool.release(tag);
        pool.release(tag);
    }
}
