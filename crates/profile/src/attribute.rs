//! Each sample charged to one layer: by who ran (this process, a kernel
//! thread, another program, the profiler itself) and, in the kernel, by
//! the innermost function of its call chain that belongs to a layer.

use crate::kallsyms::Kallsyms;
use crate::layers::{classify, is_interrupt_entry, Class, Layer};
use std::collections::HashMap;

/// A sample's symbol for the top lists when it has none (user mode).
pub(crate) const USER_SPACE: u32 = u32::MAX;

/// Who a sample's task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    /// This process (its threads, io_uring workers included).
    Us,
    /// The idle task or a kernel thread (kworkers, ksoftirqd...): work
    /// done for whoever asked, the I/O path's included.
    Kernel,
    /// Another program.
    Other,
}

/// A symbol's cached class: its layer (or Shared/Unknown) and whether it
/// is an interrupt entry.
#[derive(Clone, Copy)]
struct Cached {
    class: Class,
    entry: bool,
}

/// The counts so far; grows only when a new symbol or task is first seen.
pub(crate) struct Tally {
    pub samples: u64,
    pub lost: u64,
    pub layers: [u64; Layer::ALL.len()],
    /// The samples of this process's own threads, by layer.
    pub process_layers: [u64; Layer::ALL.len()],
    /// Samples whose chain passes through an interrupt or softirq entry.
    pub interrupt_context: u64,
    /// (layer, leaf symbol) -> samples.
    pub symbols: HashMap<(Layer, u32), u64>,
    classes: Vec<Option<Cached>>,
    tasks: HashMap<u32, Who>,
    self_pid: u32,
    profiler_tid: u32,
}

/// Whether /proc/PID/stat says the task is a kernel thread (PF_KTHREAD in
/// its flags, the ninth field; the name before it may hold spaces).
fn is_kernel_thread(pid: u32) -> Option<bool> {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let flags: u64 = after_name.split_whitespace().nth(6)?.parse().ok()?;
    Some(flags & PF_KTHREAD != 0)
}

/// Context markers (PERF_CONTEXT_*) sit at the top of the address space.
fn is_marker(addr: u64) -> bool {
    addr >= perf_event_open_sys::bindings::PERF_CONTEXT_MAX
}

impl Tally {
    pub(crate) fn new(symbols: usize, self_pid: u32, profiler_tid: u32) -> Tally {
        Tally {
            samples: 0,
            lost: 0,
            layers: [0; Layer::ALL.len()],
            process_layers: [0; Layer::ALL.len()],
            interrupt_context: 0,
            symbols: HashMap::with_capacity(1024),
            classes: vec![None; symbols],
            tasks: HashMap::with_capacity(256),
            self_pid,
            profiler_tid,
        }
    }

    fn who(&mut self, pid: u32) -> Who {
        if pid == self.self_pid {
            return Who::Us;
        }
        if pid == 0 {
            return Who::Kernel;
        }
        *self
            .tasks
            .entry(pid)
            .or_insert_with(|| match is_kernel_thread(pid) {
                Some(true) => Who::Kernel,
                // A task gone before it was looked at is taken for a program.
                _ => Who::Other,
            })
    }

    fn class(&mut self, syms: &Kallsyms, index: u32) -> Cached {
        *self.classes[index as usize].get_or_insert_with(|| {
            let name = syms.name(index);
            Cached {
                class: classify(name),
                entry: is_interrupt_entry(name),
            }
        })
    }

    /// The layer of a kernel chain (leaf first), its leaf symbol, and
    /// whether it ran in interrupt context. Interrupt context is the
    /// interrupt layer's whatever its code (a driver's completion handler,
    /// the block layer's completion softirq): the other layers are work
    /// done in the context of a task.
    fn walk(&mut self, syms: &Kallsyms, ip: u64, chain: &[u64]) -> (Layer, u32, bool) {
        let (mut layer, mut leaf, mut in_irq) = (None, None, false);
        let frames = chain.iter().copied().filter(|&a| !is_marker(a));
        let frames = frames.chain(chain.is_empty().then_some(ip));
        for addr in frames {
            let Some(i) = syms.find(addr) else { continue };
            leaf.get_or_insert(i);
            let c = self.class(syms, i);
            if let (None, Class::Layer(l)) = (layer, c.class) {
                layer = Some(l);
            }
            in_irq |= c.entry;
        }
        let layer = if in_irq {
            Layer::Interrupt
        } else {
            layer.unwrap_or(Layer::Other)
        };
        (layer, leaf.unwrap_or(USER_SPACE), in_irq)
    }

    /// Charges one sample.
    pub(crate) fn add(
        &mut self,
        syms: &Kallsyms,
        user: bool,
        ip: u64,
        pid: u32,
        tid: u32,
        chain: &[u64],
    ) {
        self.samples += 1;
        let (layer, leaf) = if tid == self.profiler_tid {
            (Layer::Profiler, USER_SPACE)
        } else {
            let who = self.who(pid);
            if user {
                let l = if who == Who::Us {
                    Layer::Application
                } else {
                    Layer::OtherProcesses
                };
                (l, USER_SPACE)
            } else {
                let (l, leaf, in_irq) = self.walk(syms, ip, chain);
                self.interrupt_context += u64::from(in_irq);
                // Another program's own kernel work is its own; an
                // interrupt that landed in it is the machine's.
                let l = if who == Who::Other && !in_irq {
                    Layer::OtherProcesses
                } else {
                    l
                };
                (l, leaf)
            }
        };
        self.layers[layer.index()] += 1;
        if pid == self.self_pid {
            self.process_layers[layer.index()] += 1;
        }
        *self.symbols.entry((layer, leaf)).or_insert(0) += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYMS: &str = "\
ffffffff81000000 T entry_SYSCALL_64
ffffffff81000100 T do_syscall_64
ffffffff81000200 T blk_mq_submit_bio
ffffffff81000300 T _raw_spin_unlock_irqrestore
ffffffff81000400 T vp_notify
ffffffff81000500 T iowrite16
ffffffff81000600 T asm_common_interrupt
ffffffff81000700 T pv_native_safe_halt
ffffffff81000800 T mystery_helper
ffffffff81000900 T another_mystery
";

    const KERNEL: u64 = perf_event_open_sys::bindings::PERF_CONTEXT_KERNEL;

    fn at(offset: u64) -> u64 {
        0xffff_ffff_8100_0000 + offset
    }

    #[test]
    fn a_sample_goes_to_the_innermost_layer_of_its_chain() {
        let syms = Kallsyms::parse(SYMS);
        let me = std::process::id();
        let mut t = Tally::new(syms.len(), me, 1);
        // A lock released under the block layer is the block layer's.
        let lock = [KERNEL, at(0x310), at(0x210), at(0x110), at(0x10)];
        t.add(&syms, false, at(0x310), me, 5, &lock);
        // The doorbell under virtio's notify is the driver's.
        t.add(
            &syms,
            false,
            at(0x510),
            me,
            5,
            &[KERNEL, at(0x510), at(0x410), at(0x210)],
        );
        // An interrupt: whatever its handler's code, interrupt context is
        // the interrupt layer's (here the doorbell, in the idle task).
        let doorbell_in_irq = [KERNEL, at(0x510), at(0x410), at(0x610), at(0x710)];
        t.add(&syms, false, at(0x510), 0, 0, &doorbell_in_irq);
        // No frame with a layer: other kernel.
        t.add(
            &syms,
            false,
            at(0x810),
            me,
            5,
            &[KERNEL, at(0x810), at(0x910)],
        );
        // The halted CPU.
        t.add(&syms, false, at(0x710), 0, 0, &[KERNEL, at(0x710)]);
        // User mode of this process, and the profiler's own thread.
        t.add(&syms, true, 0x4000, me, 5, &[]);
        t.add(&syms, true, 0x4000, me, 1, &[]);
        let count = |l: Layer| t.layers[l.index()];
        assert_eq!(count(Layer::Block), 1);
        assert_eq!(count(Layer::Driver), 1);
        assert_eq!(count(Layer::Interrupt), 1);
        assert_eq!(count(Layer::Other), 1);
        assert_eq!(count(Layer::Idle), 1);
        assert_eq!(count(Layer::Application), 1);
        assert_eq!(count(Layer::Profiler), 1);
        assert_eq!(t.samples, 7);
        assert_eq!(t.layers.iter().sum::<u64>(), t.samples);
        assert_eq!(t.interrupt_context, 1);
        // This process's own samples: all but the two in the idle task.
        assert_eq!(t.process_layers.iter().sum::<u64>(), 5);
        assert_eq!(t.process_layers[Layer::Interrupt.index()], 0);
        // The top symbol of the block layer is the lock that ran.
        let lock_index = syms.find(at(0x300)).unwrap();
        assert_eq!(t.symbols.get(&(Layer::Block, lock_index)), Some(&1));
    }
}
