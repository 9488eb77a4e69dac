//! `cargo xtask api-surface JSON OUT`: the public API of a crate, one item a line, from its
//! rustdoc JSON (by the `public-api` library), written to OUT.
//!
//! `.ci/semver.sh` keeps the listings of licensing-sdk and licensing-sim that
//! cargo-semver-checks last passed against the release baseline under `.ci/api/`; a
//! listing that still matches needs no second check, so the tool is built only on the
//! machines of a change that moves the API. Blanket impls (`impl<T> From<T> for T`, …) are
//! left out: they follow from the standard library, not from this API, and are most of
//! the listing. Auto-trait impls stay: losing `Send` or `Sync` breaks callers.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

pub fn surface(json: &Path, out: &Path) -> Result<()> {
    let api = public_api::Builder::from_rustdoc_json(json)
        .omit_blanket_impls(true)
        .build()
        .with_context(|| format!("reading the rustdoc JSON {}", json.display()))?;
    let mut listing = String::new();
    for item in api.items() {
        listing.push_str(&item.to_string());
        listing.push('\n');
    }
    fs::write(out, listing).with_context(|| format!("writing {}", out.display()))?;
    Ok(())
}
