//! Which failed I/Os a job goes on past: fio's `continue_on_error` and
//! `ignore_error` (fio 3.33's td_error.c). An error belongs to a class (the
//! I/O's direction, or verify for EILSEQ); a class the job continues on
//! goes on past the errnos of its list (EIO and EILSEQ unless
//! `ignore_error` names others) and counts them; any other error stops the
//! job.

/// EIO and EILSEQ: the errors fio goes on past when no list names others.
pub const DEFAULT_NON_FATAL: [i32; 2] = [libc::EIO, libc::EILSEQ];

/// fio's error classes (td_error.h's error_type_bit), in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    Read = 0,
    Write = 1,
    Verify = 2,
}

impl ErrorClass {
    /// fio's td_error_type: EILSEQ is verify's, a read's error a read's,
    /// anything else (writes, trims, flushes) a write's.
    pub fn of(is_read: bool, errno: i32) -> ErrorClass {
        match (errno, is_read) {
            (libc::EILSEQ, _) => ErrorClass::Verify,
            (_, true) => ErrorClass::Read,
            (_, false) => ErrorClass::Write,
        }
    }
}

/// What a job does with a failed I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// The job goes on; the error is counted.
    GoesOn,
    /// The job stops; `counted` when its class is one the job continues
    /// on (fio counts such an error where the engine completes the I/O in
    /// its submission, as fio's break_on_this_error does).
    Stops { counted: bool },
}

/// fio's `continue_on_error` classes and `ignore_error` lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContinueOnError {
    /// The classes the job continues on (read, write, verify).
    pub classes: [bool; 3],
    /// Each class's errnos; `None`: [`DEFAULT_NON_FATAL`].
    pub lists: [Option<Vec<i32>>; 3],
}

impl ContinueOnError {
    /// fio's JSON then carries `total_err` and `first_error`: the job
    /// continues on some class (fio's `ts->continue_on_error`).
    pub fn reported(&self) -> bool {
        self.classes.iter().any(|&c| c)
    }

    /// fio's td_non_fatal_error, and whether a fatal error is counted.
    pub fn judge(&self, class: ErrorClass, errno: i32) -> Judged {
        let c = class as usize;
        if !self.classes[c] {
            return Judged::Stops { counted: false };
        }
        let listed = match &self.lists[c] {
            Some(list) => list.contains(&errno),
            None => DEFAULT_NON_FATAL.contains(&errno),
        };
        match listed {
            true => Judged::GoesOn,
            false => Judged::Stops { counted: true },
        }
    }
}

/// A job's error count as fio keeps it (td->total_err_count and
/// td->first_error).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorCount {
    pub total: u64,
    /// The errno of the first error counted (0: none).
    pub first: i32,
}

impl ErrorCount {
    pub fn add(&mut self, errno: i32) {
        assert!(errno > 0, "an errno is positive: {errno}");
        if self.total == 0 {
            self.first = errno;
        }
        self.total += 1;
    }

    /// Another thread's count: totals add, the first error stays the
    /// first thread's that had one.
    pub fn merge(&mut self, other: ErrorCount) {
        if self.total == 0 {
            self.first = other.first;
        }
        self.total += other.total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(classes: [bool; 3]) -> ContinueOnError {
        ContinueOnError {
            classes,
            lists: Default::default(),
        }
    }

    #[test]
    fn a_class_not_continued_on_stops_uncounted() {
        let c = on([true, false, false]);
        assert_eq!(
            c.judge(ErrorClass::Write, libc::EIO),
            Judged::Stops { counted: false }
        );
        assert_eq!(c.judge(ErrorClass::Read, libc::EIO), Judged::GoesOn);
    }

    #[test]
    fn without_a_list_only_eio_and_eilseq_go_on() {
        let c = on([true, true, true]);
        assert_eq!(c.judge(ErrorClass::Read, libc::EIO), Judged::GoesOn);
        assert_eq!(c.judge(ErrorClass::Verify, libc::EILSEQ), Judged::GoesOn);
        assert_eq!(
            c.judge(ErrorClass::Write, libc::ENOSPC),
            Judged::Stops { counted: true }
        );
    }

    #[test]
    fn a_list_replaces_the_default() {
        let mut c = on([false, true, false]);
        c.lists[1] = Some(vec![libc::ENOSPC]);
        assert_eq!(c.judge(ErrorClass::Write, libc::ENOSPC), Judged::GoesOn);
        assert_eq!(
            c.judge(ErrorClass::Write, libc::EIO),
            Judged::Stops { counted: true }
        );
    }

    #[test]
    fn classes_follow_fio() {
        assert_eq!(ErrorClass::of(true, libc::EILSEQ), ErrorClass::Verify);
        assert_eq!(ErrorClass::of(true, libc::EIO), ErrorClass::Read);
        assert_eq!(ErrorClass::of(false, libc::EIO), ErrorClass::Write);
    }

    #[test]
    fn the_first_error_is_kept() {
        let mut a = ErrorCount::default();
        a.add(28);
        a.add(5);
        let mut b = ErrorCount::default();
        b.merge(ErrorCount::default());
        b.merge(a);
        assert_eq!((b.total, b.first), (2, 28));
    }
}
