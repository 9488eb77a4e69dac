//! Installing the two stub servers from npm at their pinned versions, and the runtimes
//! they run on.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{MOCKOON_VERSION, WIREMOCK_VERSION};

/// `npm install` of both stub servers into the target directory (beside Prism's prefix),
/// running in the background.
pub struct PeersInstall {
    npm: Child,
}

impl PeersInstall {
    fn prefix(target_dir: &Path) -> PathBuf {
        target_dir.join("bench-node-peers")
    }

    pub(super) fn package(target_dir: &Path, name: &str) -> PathBuf {
        Self::prefix(target_dir).join("node_modules").join(name)
    }

    /// Both packages are there at their pinned versions.
    fn installed(target_dir: &Path) -> bool {
        [
            ("wiremock", WIREMOCK_VERSION),
            ("@mockoon/cli", MOCKOON_VERSION),
        ]
        .iter()
        .all(|(name, version)| {
            std::fs::read(Self::package(target_dir, name).join("package.json"))
                .ok()
                .and_then(|text| serde_json::from_slice::<Value>(&text).ok())
                .is_some_and(|p| p["version"] == *version)
        })
    }

    /// Checks that Java is there (WireMock runs on it), then starts the install; `None`
    /// when both are installed already.
    pub fn start(target_dir: &Path) -> Result<Option<Self>> {
        java_version()?;
        if Self::installed(target_dir) {
            return Ok(None);
        }
        let prefix = Self::prefix(target_dir);
        eprintln!(
            "installing wiremock {WIREMOCK_VERSION} and @mockoon/cli {MOCKOON_VERSION} into {}",
            prefix.display()
        );
        let npm = Command::new("npm")
            .args([
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--save-exact",
            ])
            .arg("--prefix")
            .arg(&prefix)
            .arg(format!("wiremock@{WIREMOCK_VERSION}"))
            .arg(format!("@mockoon/cli@{MOCKOON_VERSION}"))
            .stdin(Stdio::null())
            .spawn()
            .context(
                "running npm (Node.js and npm are needed for the WireMock and Mockoon comparison)",
            )?;
        Ok(Some(Self { npm }))
    }

    /// Waits for npm, then checks both versions are there.
    pub fn wait(mut self, target_dir: &Path) -> Result<()> {
        if !self.npm.wait()?.success() || !Self::installed(target_dir) {
            bail!(
                "npm could not install wiremock {WIREMOCK_VERSION} and @mockoon/cli \
                 {MOCKOON_VERSION}; the stub-server comparison needs them"
            );
        }
        Ok(())
    }
}

/// The Java runtime and its version, from `java -version`'s first line (`openjdk version
/// "17.0.15" …` gives `openjdk 17.0.15`), or an error saying how to get Java.
pub fn java_version() -> Result<String> {
    let out = Command::new("java").arg("-version").output().ok();
    match out {
        Some(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stderr);
            let first = text.lines().next().unwrap_or_default().trim();
            Ok(match first.split('"').collect::<Vec<_>>().as_slice() {
                [name, version, ..] => {
                    let name = name.trim().trim_end_matches("version").trim();
                    format!("{name} {version}")
                }
                _ => first.to_string(),
            })
        }
        _ => bail!(
            "WireMock, in the throughput comparison, runs on Java, and no `java` runs here: \
             install a Java runtime (`apt-get install default-jre-headless`), or leave the \
             throughput section out (`--only` with the other sections)"
        ),
    }
}

/// `node --version` (`v20.20.2`), for the report.
pub fn node_version() -> String {
    Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The standalone jar the npm package ships (`build/wiremock-standalone-*.jar`).
pub(super) fn wiremock_jar(target_dir: &Path) -> Result<PathBuf> {
    let build = PeersInstall::package(target_dir, "wiremock").join("build");
    let jars: Vec<PathBuf> = std::fs::read_dir(&build)
        .with_context(|| format!("reading {}", build.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jar"))
        .collect();
    match <[PathBuf; 1]>::try_from(jars) {
        Ok([jar]) => Ok(jar),
        Err(jars) => bail!(
            "expected one jar in {}, found {}",
            build.display(),
            jars.len()
        ),
    }
}
