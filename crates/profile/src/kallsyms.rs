//! The kernel's function symbols from /proc/kallsyms, sorted by address:
//! an address belongs to the last symbol at or below it.

/// Text symbols (types t, T, w, W: functions), one entry per address.
pub struct Kallsyms {
    addrs: Vec<u64>,
    /// (start, len) of each name in `names`.
    spans: Vec<(u32, u16)>,
    names: String,
}

impl Kallsyms {
    /// Reads /proc/kallsyms; explains what to do when it shows no
    /// addresses (kptr_restrict, or not root).
    pub fn load() -> Result<Kallsyms, crate::ProfileError> {
        let text = std::fs::read_to_string("/proc/kallsyms")
            .map_err(crate::ProfileError::KallsymsUnreadable)?;
        let k = Self::parse(&text);
        if k.addrs.is_empty() {
            return Err(crate::ProfileError::KallsymsHidden);
        }
        Ok(k)
    }

    pub fn parse(text: &str) -> Kallsyms {
        let mut entries: Vec<(u64, &str)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let kind = f.next()?;
                let name = f.next()?;
                let text = matches!(kind, "t" | "T" | "w" | "W");
                (text && addr != 0 && name.len() < u16::MAX as usize).then_some((addr, name))
            })
            .collect();
        // Stable: of several names at one address, the first listed stays.
        entries.sort_by_key(|e| e.0);
        entries.dedup_by_key(|e| e.0);
        let mut k = Kallsyms {
            addrs: Vec::with_capacity(entries.len()),
            spans: Vec::with_capacity(entries.len()),
            names: String::new(),
        };
        for (addr, name) in entries {
            k.addrs.push(addr);
            k.spans.push((k.names.len() as u32, name.len() as u16));
            k.names.push_str(name);
        }
        k
    }

    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// The symbol holding `addr`: the last one at or below it.
    pub fn find(&self, addr: u64) -> Option<u32> {
        match self.addrs.binary_search(&addr) {
            Ok(i) => Some(i as u32),
            Err(0) => None,
            Err(i) => Some(i as u32 - 1),
        }
    }

    pub fn name(&self, index: u32) -> &str {
        let (start, len) = self.spans[index as usize];
        &self.names[start as usize..start as usize + len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_belongs_to_the_function_at_or_below_it() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _stext\nffffffff81000000 T _text\nffffffff81000100 t do_idle\nffffffff81000080 D some_data\nffffffff81000200 T iowrite16 [virtio]\n0000000000000000 T hidden\n",
        );
        assert_eq!(k.len(), 3);
        assert_eq!(
            k.find(0xffffffff81000000).map(|i| k.name(i)),
            Some("_stext")
        );
        assert_eq!(
            k.find(0xffffffff81000150).map(|i| k.name(i)),
            Some("do_idle")
        );
        assert_eq!(
            k.find(0xffffffff810000ff).map(|i| k.name(i)),
            Some("_stext")
        );
        assert_eq!(
            k.find(0xffffffff81000234).map(|i| k.name(i)),
            Some("iowrite16")
        );
        assert_eq!(k.find(0x1000), None);
        // Hidden addresses (kptr_restrict) leave nothing to look up.
        assert!(Kallsyms::parse("0000000000000000 T a\n0000000000000000 t b\n").is_empty());
    }
}
