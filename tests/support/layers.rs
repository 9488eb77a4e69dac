//! The test helpers' layer check, for `proxy/tests/architecture.rs`, which still includes
//! this file by path: the check is the `licensing-test-support` package's now
//! (`licensing_test_support::layers`). Removed once that test names the package itself.

use std::path::{Path, PathBuf};

pub use licensing_test_support::layers::{Table, circles, violations};

/// Every `.rs` file under the including package's `src`.
pub fn sources() -> Vec<(PathBuf, String)> {
    licensing_test_support::layers::sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// The including package's files over `max` lines.
pub fn too_long(max: usize) -> Vec<String> {
    licensing_test_support::layers::too_long(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        max,
    )
}
