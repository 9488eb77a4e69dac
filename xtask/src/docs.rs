//! `cargo xtask docs [--check]`: the API reference, one static HTML page per spec
//! (`<target>/docs/{order,member,sandbox}.html`, git-ignored), rendered by Redocly's
//! `build-docs` with the renderer's scripts inlined, so a page opens without a network.
//!
//! The pages are rendered with `xtask/docs/redocly.yaml` rather than the lint
//! configuration: its plugin (`reference-plugin.js`) writes into each operation's
//! description what the specs keep in extensions, which the renderer does not show: the
//! operation id, whether a repeat is safe, and the business codes with their meanings.
//!
//! `--check` opens each page in headless Chromium (`xtask/docs/check.mjs` with
//! playwright-core; the browser is the system's, `CHROMIUM` or `chromium` on `PATH`) and
//! checks the rendered DOM against the specs: every operation id and every documented code
//! must be on the page, in the operation's own section. It saves a screenshot of each page
//! as `<target>/docs/<name>.png` and prints its path.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::ops::{self, DOCUMENTS};
use crate::toolchain::{self, done, run, step};

/// Where the renderer, its configuration and the check live.
const DOCS: &str = "xtask/docs";

/// Renders the three pages (and checks them in Chromium with `check`), printing each step
/// and how long it took.
pub fn run_all(root: &Path, check: bool) -> Result<()> {
    let started = Instant::now();
    let t = step("tools: @redocly/cli, playwright-core (xtask/docs/package-lock.json)");
    eprintln!(
        "node {}",
        toolchain::version("node", "install Node.js 20.19 or later")?
    );
    let out = toolchain::target_dir(root)?.join("docs");
    let tools = out.join("tools");
    toolchain::npm_ci(&root.join(DOCS), &tools)?;
    done(t);

    let t = step("render: redocly build-docs");
    let redocly = tools.join("node_modules").join(".bin").join("redocly");
    for document in DOCUMENTS {
        render(
            root,
            &redocly,
            document.spec,
            &page(&out, document.name, "html"),
        )?;
    }
    done(t);

    if check {
        let t = step("check: the rendered pages in headless Chromium");
        let browser = chromium()?;
        eprintln!(
            "browser: {} ({})",
            browser.display(),
            browser_version(&browser)
        );
        let mut pages = Vec::new();
        for document in DOCUMENTS {
            let catalogue = ops::load(root, document)?;
            pages.push(json!({
                "name": document.name,
                "html": page(&out, document.name, "html"),
                "screenshot": page(&out, document.name, "png"),
                "service": document.service,
                "operations": catalogue.operations,
                "codes": catalogue.codes,
            }));
        }
        let expected = out.join("expected.json");
        fs::write(
            &expected,
            serde_json::to_string_pretty(&json!({ "browser": browser, "pages": pages }))?,
        )?;
        toolchain::copy(&root.join(DOCS), &tools, &["check.mjs"])?;
        run(Command::new("node")
            .arg("check.mjs")
            .arg(&expected)
            .current_dir(&tools))?;
        done(t);
    }
    eprintln!(
        "\ndocs: {} ({:.0} s)",
        DOCUMENTS
            .iter()
            .map(|d| page(&out, d.name, "html").display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn page(out: &Path, name: &str, extension: &str) -> PathBuf {
    out.join(format!("{name}.{extension}"))
}

/// One page; the renderer's own output only when it fails (it is long otherwise).
fn render(root: &Path, redocly: &Path, spec: &str, output: &Path) -> Result<()> {
    let mut command = Command::new(redocly);
    command
        .args(["build-docs", spec, "--config"])
        .arg(Path::new(DOCS).join("redocly.yaml"))
        .arg("--inlineBundle")
        .arg("--output")
        .arg(output)
        .current_dir(root)
        // Rendering needs no network: no usage report, no update check.
        .env("REDOCLY_TELEMETRY", "off")
        .env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true");
    let result = command.output().context("cannot start redocly")?;
    let text = String::from_utf8_lossy(&result.stdout).to_string()
        + &String::from_utf8_lossy(&result.stderr);
    if !result.status.success() || !output.exists() {
        bail!("redocly build-docs {spec} failed:\n{text}");
    }
    let size = fs::metadata(output)?.len();
    eprintln!("{spec} -> {} ({} KiB)", output.display(), size / 1024);
    Ok(())
}

/// The system's Chromium: `CHROMIUM`, or the first of the usual names on `PATH`.
pub(crate) fn chromium() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Ok(PathBuf::from(path));
    }
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome-stable",
        "google-chrome",
    ];
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    bail!(
        "no Chromium found (looked for {} on PATH): install Debian's `chromium` package \
         (apt-get install chromium) or set CHROMIUM to the browser's path",
        names.join(", ")
    )
}

pub(crate) fn browser_version(browser: &Path) -> String {
    Command::new(browser)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
