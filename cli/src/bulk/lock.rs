//! The run holding a results file: `RESULTS.lock` beside it, so that two runs never share
//! one results file.

use std::{
    fs::File,
    io::{Read as _, Write as _},
    path::{Path, PathBuf},
};

use crate::error::CliError;

/// The run holding a results file: `RESULTS.lock` beside it, locked (`flock`) while the
/// run lasts and holding its process id. The file stays when the run ends; the lock
/// goes with the process, however it ends.
pub struct Lock {
    _file: File,
}

/// The lock file of `results`.
pub fn lock_path(results: &Path) -> PathBuf {
    let mut name = results.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the lock of `results`, or says which process holds it.
pub fn lock(results: &Path) -> Result<Lock, CliError> {
    let path = lock_path(results);
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // A link planted at the lock's name is not followed.
        options
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .mode(0o600);
    }
    let mut file = options.open(&path).map_err(|e| {
        CliError::usage(format!(
            "cannot open the lock file {} of {}: {e}",
            path.display(),
            results.display()
        ))
    })?;
    #[cfg(unix)]
    {
        use rustix::fs::{FlockOperation, flock};
        if let Err(e) = flock(&file, FlockOperation::NonBlockingLockExclusive) {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(if e == rustix::io::Errno::WOULDBLOCK {
                CliError::usage(format!(
                    "{} is in use by another run of `licensing orders submit` ({}; lock {}): \
                     wait for it to end, or stop it",
                    results.display(),
                    if holder.is_empty() {
                        "process unknown".to_string()
                    } else {
                        format!("process {holder}")
                    },
                    path.display()
                ))
            } else {
                CliError::usage(format!("cannot lock {}: {e}", path.display()))
            });
        }
    }
    file.set_len(0)
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))?;
    Ok(Lock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn one_run_holds_a_results_file_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let held = lock(&path).unwrap();
        let error = lock(&path).err().unwrap().message;
        assert!(
            error.contains("in use by another run")
                && error.contains(&format!("process {}", std::process::id())),
            "{error}"
        );
        drop(held);
        lock(&path).unwrap();
        // A link planted at the lock's name is not followed.
        let target = dir.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let other = dir.path().join("s.jsonl");
        std::os::unix::fs::symlink(&target, lock_path(&other)).unwrap();
        assert!(lock(&other).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
