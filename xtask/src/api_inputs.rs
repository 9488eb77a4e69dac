//! `cargo xtask api-inputs`: a digest of everything the public API listings of
//! licensing-sdk and licensing-sim are made of, which `.ci/semver.sh` records beside them
//! and compares before it documents anything: while it matches, the listings, and so the
//! check's verdict, cannot differ, and the rustdoc JSON of the workspace is not built.
//!
//! What goes in ([`inputs`](crate::inputs)): the toolchain (`rustc -vV`: rustdoc's JSON
//! and the standard library's types), `Cargo.lock` and every member's manifest, what the
//! two crates and their normal and build dependencies ship, and how the listings are made
//! (`.ci/semver.sh`, this job's listing code).

use std::path::Path;

use anyhow::Result;

use crate::inputs::{Inputs, Roots};

/// The crates whose API `.ci/semver.sh` checks, and what their listings are made of.
pub const API: Inputs = Inputs {
    roots: Roots::Named(&["licensing-sdk", "licensing-sim"]),
    dev: false,
    paths: &[
        ".ci/semver.sh",
        "xtask/src/api.rs",
        "xtask/src/api_inputs.rs",
        "xtask/src/inputs.rs",
    ],
    commands: &[&["rustc", "-vV"]],
    env: &[],
};

/// The digest, as hex, of the API listings' inputs of the workspace at `root`.
pub fn digest(root: &Path) -> Result<String> {
    API.digest(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real workspace: both crates and what they build on, not the command line.
    #[test]
    fn the_closure_of_this_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let files = API.collect(root).unwrap();
        for file in [
            "src/lib.rs",
            "build.rs",
            "spec/order.yaml",
            "sim/src/lib.rs",
            "codegen/src/lib.rs",
            "host/src/lib.rs",
            "cli/Cargo.toml",
            "Cargo.lock",
            "xtask/src/inputs.rs",
            "$ rustc -vV",
        ] {
            assert!(files.contains_key(file), "{file} is not an input");
        }
        assert!(!files.contains_key("cli/src/main.rs"));
        assert!(
            !files
                .keys()
                .any(|f| f.starts_with("docs/") && !f.ends_with(".md"))
        );
    }
}
