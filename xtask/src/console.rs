//! `cargo xtask console [--browser chromium|firefox] [--save-screenshot]`: the simulator's
//! sandbox console in a real browser, against a `licensing-sim --seed demo` on a free
//! loopback port, with SDK calls made by the `licensing` command line.
//!
//! * Chromium (the default): `xtask/console/check.mjs` with playwright-core; the browser
//!   is the system's, `CHROMIUM` or `chromium` on `PATH`; axe-core (pinned in the same
//!   lock file) checks every page of both consoles. The journal's and the Coverage page's
//!   screenshots go to `<target>/console/{journal,coverage}.png`, and with
//!   `--save-screenshot` to `sim/docs/console-{journal,coverage}.png` (the docs'). A
//!   `licensing-proxy` in front of that simulator serves the Conformance and Coverage
//!   pages the check's later steps open; a second simulator, with an admin token, has
//!   the tenants the last step opens the console of.
//! * Firefox: `xtask/console/check_firefox.mjs` with puppeteer-core (pinned in the same
//!   lock file), which speaks WebDriver BiDi to the browser itself, with no driver
//!   between them, against a simulator started with an admin token so that the check
//!   signs in and works through a session. The browser is the system's (`FIREFOX`, or
//!   `firefox-esr` / `firefox` on `PATH`: Debian's `firefox-esr`).
//!
//! What each checks is listed at the top of its script.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Result, bail};
use serde_json::json;

use crate::clients::{Simulator, build_simulator, prebuilt};
use crate::docs::{browser_version, chromium};
use crate::toolchain::{self, done, step};

/// Where the checks and their lock files live.
const CHECK: &str = "xtask/console";

/// The browser a check drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Browser {
    /// Headless Chromium through playwright-core.
    Chromium,
    /// Headless Firefox over WebDriver BiDi, through puppeteer-core.
    Firefox,
}

/// Builds what it needs, starts the simulator and runs the check in `browser`.
pub fn run(root: &Path, browser: Browser, save_screenshot: bool) -> Result<()> {
    match browser {
        Browser::Chromium => run_chromium(root, save_screenshot),
        Browser::Firefox => {
            if save_screenshot {
                bail!("--save-screenshot saves the README's screenshot, which Chromium takes");
            }
            run_firefox(root)
        }
    }
}

fn run_chromium(root: &Path, save_screenshot: bool) -> Result<()> {
    let started = Instant::now();
    let t = step("tools: playwright-core (xtask/console/package-lock.json)");
    let out = toolchain::target_dir(root)?.join("console");
    let tools = out.join("tools");
    toolchain::npm_ci(&root.join(CHECK), &tools)?;
    toolchain::copy(
        &root.join(CHECK),
        &tools,
        &["check.mjs", "shared.mjs", "tenants.mjs"],
    )?;
    done(t);

    let (sim, cli) = build(root)?;
    let t = step("licensing-proxy (cargo build)");
    let proxy_exe = built(root, "licensing-proxy", "licensing-proxy")?;
    done(t);

    let t = step("the console in headless Chromium");
    let browser = chromium()?;
    eprintln!(
        "browser: {} ({})",
        browser.display(),
        browser_version(&browser)
    );
    let simulator = Simulator::start(&sim, &["--seed", "demo"], &out.join("licensing-sim.log"))?;
    let proxy = Simulator::proxy(&proxy_exe, &simulator.url, &out.join("licensing-proxy.log"))?;
    // The tenants' step: a simulator with an admin token, whose tenants' tokens then
    // differ from its own in what they open.
    let tenants_token = random_token();
    let tenants = Simulator::start_with(
        &sim,
        &[],
        &[("LICENSING_SIM_ADMIN_TOKEN", &tenants_token)],
        &out.join("licensing-sim-tenants.log"),
    )?;
    let config_dir = out.join("cli-config");
    fs::create_dir_all(&config_dir)?;
    let screenshot = out.join("journal.png");
    let coverage_screenshot = out.join("coverage.png");
    let config = out.join("config.json");
    fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "browser": browser,
            "url": simulator.url,
            "proxyUrl": proxy.url,
            "cli": cli,
            "configDir": config_dir,
            "screenshot": screenshot,
            "coverageScreenshot": coverage_screenshot,
            "tenantsUrl": tenants.url,
            "tenantsAdminToken": tenants_token,
        }))?,
    )?;
    let outcome = toolchain::run(
        Command::new("node")
            .arg("check.mjs")
            .arg(&config)
            .current_dir(&tools),
    );
    // The token was for that simulator only; it goes with it.
    let _ = fs::remove_file(&config);
    drop(tenants);
    drop(proxy);
    drop(simulator);
    outcome?;
    done(t);
    if save_screenshot {
        for (taken, name) in [
            (&screenshot, "console-journal.png"),
            (&coverage_screenshot, "console-coverage.png"),
        ] {
            let saved = root.join("sim").join("docs").join(name);
            fs::create_dir_all(saved.parent().expect("a folder"))?;
            fs::copy(taken, &saved)?;
            eprintln!("screenshot saved as {}", saved.display());
        }
    }
    eprintln!(
        "\nconsole: every check passed ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `licensing-sim` and the `licensing` command line, built.
fn build(root: &Path) -> Result<(PathBuf, PathBuf)> {
    let t = step("licensing-sim and the licensing command line (cargo build)");
    let sim = build_simulator(root)?;
    let cli = built(root, "licensing-cli", "licensing")?;
    done(t);
    Ok((sim, cli))
}

/// `bin` of `package`: the one of [`prebuilt`]'s directory when it is set, otherwise
/// built by cargo.
fn built(root: &Path, package: &str, bin: &str) -> Result<PathBuf> {
    if let Some(path) = prebuilt(bin)? {
        return Ok(path);
    }
    toolchain::run(
        Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", package, "--bin", bin])
            .current_dir(root),
    )?;
    Ok(toolchain::target_dir(root)?.join("debug").join(bin))
}

fn run_firefox(root: &Path) -> Result<()> {
    let started = Instant::now();
    let t = step("tools: puppeteer-core (xtask/console/package-lock.json)");
    let out = toolchain::target_dir(root)?.join("console");
    let tools = out.join("tools");
    toolchain::npm_ci(&root.join(CHECK), &tools)?;
    toolchain::copy(
        &root.join(CHECK),
        &tools,
        &["check_firefox.mjs", "shared.mjs"],
    )?;
    done(t);

    let (sim, cli) = build(root)?;

    let t = step("the console in headless Firefox");
    let browser = firefox()?;
    eprintln!(
        "browser: {} ({})",
        browser.display(),
        browser_version(&browser)
    );
    let token = random_token();
    let simulator = Simulator::start_with(
        &sim,
        &["--seed", "demo"],
        &[("LICENSING_SIM_ADMIN_TOKEN", &token)],
        &out.join("licensing-sim-firefox.log"),
    )?;
    let config_dir = out.join("cli-config-firefox");
    fs::create_dir_all(&config_dir)?;
    let screenshot = out.join("journal-firefox.png");
    let config = out.join("config-firefox.json");
    fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "firefox": browser,
            "url": simulator.url,
            "adminToken": token,
            "cli": cli,
            "configDir": config_dir,
            "screenshot": screenshot,
        }))?,
    )?;
    let outcome = toolchain::run(
        Command::new("node")
            .arg("check_firefox.mjs")
            .arg(&config)
            .current_dir(&tools),
    );
    // The token was for this simulator only; it goes with it.
    let _ = fs::remove_file(&config);
    drop(simulator);
    outcome?;
    done(t);
    eprintln!(
        "\nconsole in Firefox: every check passed ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Firefox: `FIREFOX`, or Debian's `firefox-esr` (or a `firefox`) on `PATH`.
fn firefox() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("FIREFOX") {
        return Ok(PathBuf::from(path));
    }
    let names = ["firefox-esr", "firefox"];
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in names {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    bail!(
        "no Firefox found (looked for {} on PATH): install Debian's `firefox-esr` package \
         (apt-get install firefox-esr) or set FIREFOX to the browser's path",
        names.join(", ")
    )
}

/// A token for one run of the simulator, unguessable enough for a loopback listener that
/// lives for a minute.
fn random_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut token = String::new();
    for _ in 0..2 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        token.push_str(&format!("{:016x}", hasher.finish()));
    }
    token
}
