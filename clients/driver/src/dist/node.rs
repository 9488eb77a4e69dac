//! The npm packages (`clients/sandbox/node/`): `licensing-sandbox` (the API, its types and
//! the `npx` launchers) and `licensing-sandbox-linux-x64` (the stripped binaries, chosen by
//! npm through `os`, `cpu` and `libc` as an optional dependency), packed by `npm pack`; and
//! their check in a fresh npm project without a Rust toolchain.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{Release, clean_command, copy_tree, file_size, mib, path_without_rust, timed};
use crate::toolchain::{self, done, run, step};

/// The packages' sources, relative to the repository root.
pub const SOURCES: &str = "clients/sandbox/node";
/// The API package, and the platform package built here.
const API: &str = "licensing-sandbox";
const PLATFORM: &str = "licensing-sandbox-linux-x64";
/// The most an install from local files may take (the issue's bound), in seconds.
const INSTALL_LIMIT_SECS: f64 = 30.0;

/// Packs both packages into `<target>/dist/`; returns the tarballs, platform first.
pub fn pack(root: &Path, release: &Release) -> Result<Vec<PathBuf>> {
    let t = step("Node: the licensing-sandbox and licensing-sandbox-linux-x64 packages (npm pack)");
    let sources = root.join(SOURCES);
    let build = release.dist.join("build").join("node");
    let mut tarballs = Vec::new();
    for package in [PLATFORM, API] {
        check_versions(
            &sources.join(package).join("package.json"),
            &release.version,
        )?;
        let staged = build.join(package);
        copy_tree(&sources.join(package), &staged)?;
        toolchain::copy(root, &staged, &["LICENSE-MIT", "LICENSE-APACHE"])?;
        if package == PLATFORM {
            let bin = staged.join("bin");
            fs::create_dir_all(&bin)?;
            for (name, path) in &release.binaries {
                fs::copy(path, bin.join(name))?;
            }
        }
        let tarball = super::npm_pack(release, &staged, package)?;
        eprintln!("{}: {}", tarball.display(), mib(file_size(&tarball)?));
        tarballs.push(tarball);
    }
    done(t);
    Ok(tarballs)
}

/// The committed `package.json` must carry the SDK's version, for itself and for the
/// packages of this project it depends on (the platform package, licensing-client): a
/// release changes them with the workspace's.
pub(super) fn check_versions(manifest: &Path, version: &str) -> Result<()> {
    let text = fs::read_to_string(manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let json: Value = serde_json::from_str(&text)?;
    let mut found = vec![("version".to_owned(), json["version"].clone())];
    for kind in ["dependencies", "optionalDependencies"] {
        if let Some(deps) = json[kind].as_object() {
            found.extend(
                deps.iter()
                    .filter(|(name, _)| name.starts_with("licensing-"))
                    .map(|(name, v)| (name.clone(), v.clone())),
            );
        }
    }
    for (what, value) in found {
        if value.as_str() != Some(version) {
            bail!(
                "{}: {what} is {value}, not the SDK's version {version:?}",
                manifest.display()
            );
        }
    }
    Ok(())
}

/// A fresh npm project installing only the two tarballs and licensing-client's, the API
/// package's dependency and the client the example suite calls the services with (named,
/// so that the project's `package.json` lists it; `--offline`: nothing from the
/// registry), a `PATH` without cargo or rustc, the `npx` programs, and the example suite
/// with its lifecycle checks. Returns the lines of the summary.
pub fn check(
    root: &Path,
    release: &Release,
    tarballs: &[PathBuf],
    client: &Path,
) -> Result<Vec<String>> {
    let t = step("Node: the packages in a fresh npm project, no Rust toolchain on PATH");
    let dir = release.dist.join("check").join("node");
    toolchain::remove(&dir)?;
    copy_tree(&root.join(SOURCES).join("example"), &dir)?;
    let path = path_without_rust(&dir.join("node_modules").join(".bin"))?;
    fs::write(
        dir.join("package.json"),
        "{\"name\": \"partner-example\", \"private\": true}\n",
    )?;
    let install = timed(
        clean_command("npm", &path)
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .args(tarballs)
            .arg(client)
            .current_dir(&dir),
    )?;
    if install > INSTALL_LIMIT_SECS {
        bail!("installing the npm packages took {install:.1} s, more than {INSTALL_LIMIT_SECS} s");
    }
    for program in ["licensing-sim", "licensing-proxy", "licensing"] {
        run(clean_command("npx", &path)
            .args(["--offline", "--no-install", program, "--version"])
            .current_dir(&dir))?;
    }
    let coverage = dir.join("coverage.md");
    let suite = timed(
        clean_command("node", &path)
            .arg("check_lifecycle.mjs")
            .arg(&coverage)
            .current_dir(&dir),
    )?;
    // The types as a TypeScript partner compiles against them, by the clients' pinned tsc.
    let tsc = release
        .dist
        .join("build/clients/typescript/node_modules/typescript/bin/tsc");
    run(clean_command("node", &path)
        .arg(&tsc)
        .args(["--noEmit", "--strict", "--target", "es2022"])
        .args(["--lib", "es2022,esnext.disposable,dom"])
        .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
        .arg("types.mts")
        .current_dir(&dir))?;
    let installed = file_size(
        &dir.join("node_modules")
            .join(PLATFORM)
            .join("bin")
            .join("licensing-sim"),
    )?;
    done(t);
    Ok(vec![
        format!(
            "the npm packages installed in {install:.1} s from the local tarballs \
             (licensing-sim {} in node_modules)",
            mib(installed)
        ),
        format!(
            "Node: the example suite, the lifecycle checks and the tenant suite (concurrent \
             tests, one shared simulator) passed in {suite:.1} s, the types compiled (tsc \
             --strict); coverage report {}",
            coverage.display()
        ),
    ])
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_package_json_of_another_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("package.json");
        std::fs::write(
            &manifest,
            r#"{"version": "0.1.0", "optionalDependencies": {"licensing-sandbox-linux-x64": "0.0.9"}}"#,
        )
        .unwrap();
        let error = super::check_versions(&manifest, "0.1.0").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("licensing-sandbox-linux-x64 is \"0.0.9\""),
            "{error}"
        );
        super::check_versions(&manifest, "0.0.9").unwrap_err();
        std::fs::write(
            &manifest,
            r#"{"version": "0.2.0", "dependencies": {"licensing-client": "0.1.0", "other": "1.0.0"}}"#,
        )
        .unwrap();
        let error = super::check_versions(&manifest, "0.2.0").unwrap_err();
        assert!(
            error.to_string().contains("licensing-client is \"0.1.0\""),
            "{error}"
        );
        std::fs::write(
            &manifest,
            r#"{"version": "0.2.0", "dependencies": {"licensing-client": "0.2.0", "other": "1.0.0"}}"#,
        )
        .unwrap();
        super::check_versions(&manifest, "0.2.0").unwrap();
    }
}
