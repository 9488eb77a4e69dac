//! The Java client (`clients/java`, a Maven project): openapi-generator's Java client
//! (library `native`) generated from the specs at build time, the helper and the JUnit 5
//! extension, proven by its own suite, `mvn -q verify`, against the simulator the driver
//! built (`LICENSING_SIM_BIN`). It runs beside the TypeScript and Python scenarios, its
//! output in a log printed when it ends; its build goes into `<target>/clients/java`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::toolchain::{self, done, step};

/// The Maven project, relative to the repository root.
pub const JAVA: &str = "clients/java";

/// Where Maven keeps what it downloads, when set (CI: under its cache); else `~/.m2`.
pub const MAVEN_REPO_VARIABLE: &str = "LICENSING_MAVEN_REPO";

/// `mvn -q verify` under way.
pub struct Suite {
    child: Option<Child>,
    log: PathBuf,
    reports: PathBuf,
    line: String,
    started: Instant,
}

/// Checks for Java and Maven, then starts the suite with `sim` as the simulator.
pub fn start(root: &Path, out: &Path, sim: &Path) -> Result<Suite> {
    let java = toolchain::version(
        "java",
        "install Java 17 or later (Debian: apt-get install openjdk-17-jdk-headless)",
    )?;
    let maven = toolchain::version(
        "mvn",
        "install Maven 3.8 or later (Debian: apt-get install maven)",
    )?;
    let dir = out.join("java");
    fs::create_dir_all(&dir)?;
    let log = out.join("java.log");
    let mut command = Command::new("mvn");
    command
        .args(["-q", "-B", "-Dstyle.color=never", "verify"])
        .arg(format!("-Dlicensing.build.dir={}", dir.display()))
        .current_dir(root.join(JAVA))
        .env("LICENSING_SIM_BIN", sim);
    if let Some(repo) = std::env::var_os(MAVEN_REPO_VARIABLE) {
        command.arg(format!("-Dmaven.repo.local={}", Path::new(&repo).display()));
    }
    let line = toolchain::display(&command);
    eprintln!(
        "\n==> Java: {line} (beside the others; {java}, {maven}; log: {})",
        log.display()
    );
    let output = fs::File::create(&log)?;
    let child = command
        .stdin(Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(output)
        .spawn()
        .with_context(|| format!("cannot start `{line}`"))?;
    Ok(Suite {
        child: Some(child),
        log,
        reports: dir.join("surefire-reports"),
        line,
        started: Instant::now(),
    })
}

impl Suite {
    /// Waits for the suite; fails with its log when it fails or ran no test.
    pub fn finish(mut self) -> Result<()> {
        let t = step("Java: the suite's result");
        let status = self.child.take().context("waited for twice")?.wait()?;
        let log = fs::read_to_string(&self.log).unwrap_or_default();
        // Not the generator's donation banner, which it prints whatever Maven's -q says.
        for line in log.lines().filter(|l| !l.starts_with('#')) {
            eprintln!("{line}");
        }
        if !status.success() {
            bail!("`{}` failed ({status}); its output is above", self.line);
        }
        let counts = counts(&self.reports)?;
        if counts.tests == 0 {
            bail!("`{}` ran no test ({})", self.line, self.reports.display());
        }
        eprintln!(
            "Java: {} passed, {} failed, {} skipped",
            counts.tests - counts.failed - counts.skipped,
            counts.failed,
            counts.skipped,
        );
        eprintln!(
            "({} test classes; the suite took {:.0} s beside the others)",
            counts.classes,
            self.started.elapsed().as_secs_f64()
        );
        done(t);
        Ok(())
    }
}

impl Drop for Suite {
    fn drop(&mut self) {
        // A failure elsewhere ends the run: Maven goes too (its test JVM and the simulators
        // under it follow: the simulators stop at their standard input's end).
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What the surefire reports of one run count.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub classes: u64,
    pub tests: u64,
    pub failed: u64,
    pub skipped: u64,
}

/// Adds up the `<testsuite>` attributes of `dir`'s `TEST-*.xml`.
pub fn counts(dir: &Path) -> Result<Counts> {
    let mut counts = Counts::default();
    let entries =
        fs::read_dir(dir).with_context(|| format!("no surefire reports in {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if !(name.starts_with("TEST-") && name.ends_with(".xml")) {
            continue;
        }
        let text = fs::read_to_string(&path)?;
        let suite = text
            .split("<testsuite ")
            .nth(1)
            .and_then(|rest| rest.split('>').next())
            .with_context(|| format!("{}: no <testsuite>", path.display()))?;
        let number = |name: &str| -> Result<u64> {
            let key = format!("{name}=\"");
            let value = suite
                .split(&key)
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .with_context(|| format!("{}: <testsuite> without {name}", path.display()))?;
            value
                .parse()
                .with_context(|| format!("{}: {name}=\"{value}\"", path.display()))
        };
        counts.classes += 1;
        counts.tests += number("tests")?;
        counts.failed += number("failures")? + number("errors")?;
        counts.skipped += number("skipped")?;
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_added_up() {
        let dir = tempfile::tempdir().unwrap();
        let suite = |tests, failures, errors, skipped| {
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite xmlns:xsi=\"x\" \
                 name=\"licensing.A\" time=\"1.5\" tests=\"{tests}\" errors=\"{errors}\" \
                 skipped=\"{skipped}\" failures=\"{failures}\">\n<properties/>"
            )
        };
        fs::write(dir.path().join("TEST-licensing.A.xml"), suite(3, 1, 0, 0)).unwrap();
        fs::write(dir.path().join("TEST-licensing.B.xml"), suite(4, 0, 1, 1)).unwrap();
        fs::write(dir.path().join("licensing.A.txt"), "not a report").unwrap();
        let counts = counts(dir.path()).unwrap();
        assert_eq!(
            counts,
            Counts {
                classes: 2,
                tests: 7,
                failed: 2,
                skipped: 1
            }
        );
        fs::write(
            dir.path().join("TEST-licensing.C.xml"),
            "<testsuite tests=\"x\">",
        )
        .unwrap();
        let error = format!("{:#}", super::counts(dir.path()).unwrap_err());
        assert!(error.contains("TEST-licensing.C.xml"), "{error}");
    }
}
