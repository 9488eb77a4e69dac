//! The binaries under test as child processes: each prints `listening on URL` as its first
//! line once it accepts connections, which is how a test learns where it listens.

use std::{
    io::{BufRead as _, BufReader},
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

/// The URL of `child`'s first line, `listening on URL`.
#[track_caller]
pub fn listening_url(child: &mut Child) -> String {
    let line = first_line(child);
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}
