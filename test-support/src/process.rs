//! The binaries under test as child processes: each prints `listening on URL` as its first
//! line once it accepts connections, which is how a test learns where it listens.

use std::{
    io::{BufRead as _, BufReader, Read as _},
    process::Child,
};

/// The first line of `child`'s stdout, which must be piped. What follows that line on the
/// pipe is not read.
pub fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout piped"))
        .read_line(&mut line)
        .unwrap();
    line
}

/// What `child` writes to its stderr, which must be piped, read to the end (the child's
/// exit, or its closing the pipe).
pub fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    child
        .stderr
        .take()
        .expect("stderr piped")
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// The URL of `child`'s first line, `listening on URL`.
#[track_caller]
pub fn listening_url(child: &mut Child) -> String {
    let line = first_line(child);
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}
