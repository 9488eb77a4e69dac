//! The journal written to a file when a simulator stops (`LICENSING_SIM_JOURNAL_DIR`).
//!
//! The directory may be one other local users can write in (a shared temporary
//! directory), so nothing there is trusted: the file gets a name no one can know before
//! the simulator picks it, is created new under a temporary name (never opening what is
//! already there, a link included), readable by its owner only (its bodies name the
//! partner's customers and employees), and renamed into place once complete, so a reader
//! of `DIR/*.json` never sees half of one.

use std::{
    fs::{self, File, OpenOptions},
    io::{self, BufWriter, Write},
    path::{Path, PathBuf},
};

use super::Listing;

/// Writes `listing` to a new file `journal-PID-RANDOM-PORT.json` in `dir` (made if
/// missing), `RANDOM` being 64 bits from the operating system's random source; returns
/// its path. An error names the directory or the file it could not write.
pub(crate) fn write(dir: &Path, port: u16, listing: &Listing) -> io::Result<PathBuf> {
    fs::create_dir_all(dir).map_err(|e| named(dir, e))?;
    let random = getrandom::u64().map_err(|e| named(dir, io::Error::other(e.to_string())))?;
    let name = format!("journal-{}-{random:016x}-{port}.json", std::process::id());
    let path = dir.join(&name);
    // A dot file not ending in `.json`: outside the `DIR/*.json` its readers take.
    let tmp = dir.join(format!(".{name}.tmp"));
    let written = write_new(&tmp, |out| {
        serde_json::to_writer(&mut *out, listing).map_err(io::Error::from)
    })
    .map_err(|e| named(&tmp, e))
    .and_then(|()| fs::rename(&tmp, &path).map_err(|e| named(&path, e)));
    if written.is_err() {
        // Ours (created new), so removing it removes nothing of anyone else's.
        let _ = fs::remove_file(&tmp);
    }
    written.map(|()| path)
}

/// Creates `path`, which must not exist (not even as a link), readable and writable by
/// its owner only, and fills it through a buffer.
///
/// Not synced: the file is a measure of a test run, read once it is over, where the state
/// file (which is synced) is the simulator's memory.
fn write_new(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut options = OpenOptions::new();
    // `create_new` is `O_CREAT | O_EXCL`: it fails on anything already at `path`, a
    // dangling link included; `O_NOFOLLOW` says the same where `O_EXCL` is not enough.
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let mut out = BufWriter::with_capacity(64 * 1024, options.open(path)?);
    fill(&mut out)?;
    out.into_inner()
        .map_err(io::IntoInnerError::into_error)
        .map(drop::<File>)
}

/// `e`, saying which path it is about (escaped as Rust prints a path: a name holding a
/// line break or a terminal control stays on one line, inert).
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("the journal cannot be written to {path:?}: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::journal::{Filter, Journal};

    fn listing() -> Listing {
        let journal = Journal::new(4, 1 << 20);
        journal.push(crate::protocol::hooks::Exchange {
            time: 1,
            operation: "op",
            method: axum::http::Method::POST,
            target: "/p".into(),
            request_body: axum::body::Bytes::from_static(b"{}"),
            reply: None,
            fault: None,
            duration: std::time::Duration::ZERO,
        });
        journal.listing(&Filter::default())
    }

    /// A name taken by a directory (here, as only a test can know the name: the temporary
    /// one) is an error naming it, and nothing is left behind.
    #[test]
    fn a_name_taken_is_an_error_naming_it_and_nothing_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let taken = dir.path().join(".taken.tmp");
        fs::create_dir(&taken).unwrap();
        let e = write_new(&taken, |_| Ok(())).map_err(|e| named(&taken, e));
        let e = e.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert!(e.to_string().contains(&format!("{taken:?}")), "{e}");
        #[cfg(unix)]
        {
            let target = dir.path().join("target");
            fs::write(&target, "unchanged").unwrap();
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            write_new(&link, |out| out.write_all(b"x")).unwrap_err();
            assert_eq!(fs::read_to_string(&target).unwrap(), "unchanged");
        }
        let path = write(dir.path(), 1, &listing()).unwrap();
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names.len(),
            4,
            "the journal beside what was there: {names:?}"
        );
        assert!(
            path.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with("-1.json")
        );
    }
}
