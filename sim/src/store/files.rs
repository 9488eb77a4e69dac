//! Files replaced whole or not at all, readable by their owner only, and the lock that
//! keeps a second simulator away.

use std::{
    fs::{self, File, OpenOptions},
    io::{self, BufWriter, Write},
    path::{Path, PathBuf},
};

use super::StateFileError;

/// `path` with `suffix` appended to its file name (`state.json` → `state.json.log`).
pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A new file only the owner can read: it holds the employees' passwords. Made with
/// `O_CREAT | O_EXCL`, which never follows a link: whatever stands at `path` (a crash's
/// leftover, or a link planted by another local user to have the state written over a
/// file of theirs) is removed first, the link itself and never its target.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    let open = || {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(path)
    };
    match open() {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(path)?;
            open()
        }
        opened => opened,
    }
}

/// Makes a rename in `path`'s directory durable.
pub(crate) fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Writes `bytes` to `path` whole or not at all: aside, synced, renamed over it.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<File> {
    replace_file_with(path, |out| out.write_all(bytes)).map(|(file, _)| file)
}

/// As [`replace_file`], with the contents written by `write` through a buffer, so that a
/// snapshot of the whole state never has to be held in memory; returns the file and its
/// length.
pub(crate) fn replace_file_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<(File, u64)> {
    let tmp = sibling(path, ".tmp");
    let mut out = Counted {
        inner: BufWriter::with_capacity(64 * 1024, create_private(&tmp)?),
        written: 0,
    };
    write(&mut out)?;
    let written = out.written;
    let file = out
        .inner
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    sync_dir(path)?;
    Ok((file, written))
}

/// A writer that counts what it is given.
struct Counted<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Holds `PATH.lock` for as long as the simulator runs, so that two simulators never
/// write one state file.
pub(crate) fn lock(path: &Path) -> Result<File, StateFileError> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(path)
        .map_err(|e| StateFileError::new(path, format!("cannot be opened: {e}")))?;
    // (std's `File::try_lock` needs Rust 1.89, past the stated minimum.)
    #[cfg(unix)]
    {
        use rustix::fs::{FlockOperation, flock};
        if let Err(e) = flock(&file, FlockOperation::NonBlockingLockExclusive) {
            let e = io::Error::from(e);
            return Err(StateFileError::new(
                path,
                format!("the state file is in use by another simulator ({e})"),
            ));
        }
    }
    Ok(file)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A link planted where the state is written aside is replaced, its target untouched.
    #[test]
    fn a_link_at_the_aside_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("theirs");
        fs::write(&target, "their file").unwrap();
        let path = dir.path().join("state.json");
        std::os::unix::fs::symlink(&target, sibling(&path, ".tmp")).unwrap();
        replace_file(&path, b"{}").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "their file");
        assert_eq!(fs::read(&path).unwrap(), b"{}");
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
