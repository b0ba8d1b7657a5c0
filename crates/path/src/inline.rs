//! Which targets complete reads inline (zram, a loop device over tmpfs)
//! or in the submitting call: the path and the task ring issue those
//! synchronously, whatever the strategy.

use hiops_hal::Target;

/// Why every target completes reads inline, if they all do (zram, a loop
/// device over tmpfs): a thread then does best with a plain pread, so the
/// path issues synchronously ([`hiops_hal::device::BlockDev::completes_inline`]).
pub fn inline_reason(targets: &[Target]) -> Option<String> {
    every_target(targets, hiops_hal::device::BlockDev::completes_inline)
}

/// Why every target completes a bio in the submitting call (zram), if
/// they all do: a task ring then reads them synchronously.
pub fn in_submitter_reason(targets: &[Target]) -> Option<String> {
    every_target(targets, hiops_hal::device::BlockDev::completes_in_submitter)
}

/// Why `target` completes reads inline, if it does.
pub fn target_completes_inline(target: &Target) -> Option<String> {
    block_dev(target)?.completes_inline()
}

/// Why `target` completes a bio in the submitting call, if it does.
pub fn target_completes_in_submitter(target: &Target) -> Option<String> {
    block_dev(target)?.completes_in_submitter()
}

fn block_dev(target: &Target) -> Option<hiops_hal::device::BlockDev> {
    let Target::Fd(fd) = target else { return None };
    hiops_hal::device::BlockDev::of_fd(*fd)
}

fn every_target(
    targets: &[Target],
    why: impl Fn(&hiops_hal::device::BlockDev) -> Option<String>,
) -> Option<String> {
    let mut all = Vec::new();
    for t in targets {
        all.push(why(&block_dev(t)?)?);
    }
    all.dedup();
    (!all.is_empty()).then(|| all.join("; "))
}
