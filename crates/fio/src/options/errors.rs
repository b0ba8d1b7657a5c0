//! fio's `continue_on_error` and `ignore_error` values (options.c of fio
//! 3.33): which classes of failed I/O a job goes on past, and each class's
//! list of errnos.

use crate::error::ValueError;
use crate::value::quoted;
use hiops_job::spec::ContinueOnError;

/// The errno names fio's ignore_error reads (options.c's str2error), in
/// errno order: the name at index i is errno i + 1.
const NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// `continue_on_error=`: the classes (read, write, verify) the job
/// continues on, replacing what was set before (ignore_error's too).
pub(super) fn continue_on(c: &mut ContinueOnError, v: &str) -> Result<(), ValueError> {
    c.classes = match v {
        "none" | "0" => [false, false, false],
        "read" => [true, false, false],
        "write" => [false, true, false],
        "io" => [true, true, false],
        "verify" => [false, false, true],
        "all" | "1" => [true, true, true],
        other => {
            return Err(format!(
                "{}: use none, read, write, io, verify, all, 0 or 1",
                quoted(other)
            )
            .into())
        }
    };
    Ok(())
}

/// `ignore_error=READ,WRITE,VERIFY`: each a ':'-separated list of errno
/// names (EIO) or numbers (5); a class given a list is continued on, with
/// that list in place of fio's EIO and EILSEQ. An empty list leaves its
/// class as it was.
pub(super) fn ignore(c: &mut ContinueOnError, v: &str) -> Result<(), ValueError> {
    let lists: Vec<&str> = v.trim().split(',').collect();
    if lists.len() > 3 {
        return Err(format!(
            "{} lists are more than fio's three (read,write,verify): drop the extra commas",
            lists.len()
        )
        .into());
    }
    for (class, list) in lists.into_iter().enumerate() {
        let errnos = errno_list(list)?;
        if !errnos.is_empty() {
            c.classes[class] = true;
            c.lists[class] = Some(errnos);
        }
    }
    Ok(())
}

/// One class's list; like fio, it ends at its first empty entry.
fn errno_list(list: &str) -> Result<Vec<i32>, ValueError> {
    list.split(':')
        .take_while(|e| !e.is_empty())
        .map(errno)
        .collect()
}

/// An errno by fio's name or by number (a negative number is its errno).
fn errno(entry: &str) -> Result<i32, ValueError> {
    let unknown = || {
        ValueError::Said(format!(
            "{} is not an error fio knows: give an errno number (28) or one of EPERM..ERANGE",
            quoted(entry)
        ))
    };
    if entry.starts_with('E') {
        let i = NAMES.iter().position(|n| *n == entry).ok_or_else(unknown)?;
        return Ok(i as i32 + 1);
    }
    match entry.parse::<i32>() {
        Ok(n) if n != 0 && n != i32::MIN => Ok(n.abs()),
        _ => Err(unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_linux_errnos() {
        let by_name = |n: &str| errno(n).unwrap();
        assert_eq!(by_name("EPERM"), libc::EPERM);
        assert_eq!(by_name("EIO"), libc::EIO);
        assert_eq!(by_name("EINVAL"), libc::EINVAL);
        assert_eq!(by_name("ENOSPC"), libc::ENOSPC);
        assert_eq!(by_name("ERANGE"), libc::ERANGE);
        assert_eq!(by_name("-28"), 28);
        assert!(errno("EILSEQ").is_err(), "fio's list has no EILSEQ");
        assert!(errno("0").is_err());
        assert!(errno("eio").is_err());
    }

    #[test]
    fn lists_go_to_their_class_and_continue_on_it() {
        let mut c = ContinueOnError::default();
        ignore(&mut c, ",ENOSPC:5").unwrap();
        assert_eq!(c.classes, [false, true, false]);
        assert_eq!(c.lists[1], Some(vec![28, 5]));
        assert_eq!(c.lists[0], None);
        ignore(&mut c, "EIO::EINVAL,,84").unwrap();
        assert_eq!(c.lists[0], Some(vec![5]), "a list ends at an empty entry");
        assert_eq!(
            c.lists[1],
            Some(vec![28, 5]),
            "an empty list keeps its class"
        );
        assert_eq!(c.classes, [true, true, true]);
        assert!(ignore(&mut c, "5,5,5,5").is_err());
    }

    #[test]
    fn continue_on_error_replaces_the_classes() {
        let mut c = ContinueOnError::default();
        ignore(&mut c, ",ENOSPC").unwrap();
        continue_on(&mut c, "read").unwrap();
        assert_eq!(c.classes, [true, false, false]);
        continue_on(&mut c, "1").unwrap();
        assert_eq!(c.classes, [true, true, true]);
        assert!(continue_on(&mut c, "yes").is_err());
    }
}
