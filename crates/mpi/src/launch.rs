//! Was this process started by an MPI launcher? Each launcher leaves its
//! ranks a variable or two in the environment; nothing else is touched, so
//! a plain `hiops run` stays exactly as it was.

/// What the environment says about the launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The launcher family, for messages.
    pub via: &'static str,
    /// The ranks in the job, when the launcher says.
    pub size: Option<usize>,
}

/// (launcher, variable with the job's size, variable present in every rank)
const LAUNCHERS: [(&str, &str, &str); 3] = [
    (
        "Open MPI's mpirun",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_RANK",
    ),
    (
        "a PMI launcher (MPICH, Intel MPI, Slurm)",
        "PMI_SIZE",
        "PMI_RANK",
    ),
    ("a PMIx launcher", "PMIX_SIZE", "PMIX_RANK"),
];

/// The launch this process's environment records, if any.
pub fn detect() -> Option<Launch> {
    detect_in(&|k| std::env::var(k).ok())
}

/// [`detect`] over any environment (tests).
pub fn detect_in(env: &dyn Fn(&str) -> Option<String>) -> Option<Launch> {
    LAUNCHERS.iter().find_map(|&(via, size, rank)| {
        let n = env(size);
        (n.is_some() || env(rank).is_some()).then(|| Launch {
            via,
            size: n.and_then(|n| n.trim().parse().ok()),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_are_recognised_by_their_variables_and_nothing_else() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(detect_in(&env(&[("HOME", "/root")])), None);
        let ompi = detect_in(&env(&[
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_RANK", "2"),
        ]));
        assert_eq!(ompi.map(|l| l.size), Some(Some(4)));
        let pmix = detect_in(&env(&[("PMIX_RANK", "0")])).unwrap();
        assert_eq!((pmix.via, pmix.size), ("a PMIx launcher", None));
    }
}
