//! The run's progress on stderr.

use std::time::Instant;

/// Prints a step's heading, with the seconds since the first.
pub fn step(what: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let at = START.get_or_init(Instant::now).elapsed().as_secs();
    eprintln!("\n==> [{at} s] {what}");
}
