//! `cargo xtask console [--save-screenshot]`: the simulator's sandbox console in headless
//! Chromium (`xtask/console/check.mjs`, playwright-core; the browser is the system's,
//! `CHROMIUM` or `chromium` on `PATH`), against a `licensing-sim --seed demo` on a free
//! loopback port, with SDK calls made by the `licensing` command line. What it checks is
//! listed at the top of `check.mjs`. The journal's screenshot goes to
//! `<target>/console/journal.png`, and with `--save-screenshot` to
//! `sim/docs/console-journal.png` (the README's). A `licensing-sim proxy` in front of that
//! simulator serves the Conformance page the check's last step opens.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::Result;
use serde_json::json;

use crate::clients::{Simulator, build_simulator};
use crate::docs::{browser_version, chromium};
use crate::toolchain::{self, done, step};

/// Where the check and its lock file live.
const CHECK: &str = "xtask/console";

/// Builds what it needs, starts the simulator and runs the check.
pub fn run(root: &Path, save_screenshot: bool) -> Result<()> {
    let started = Instant::now();
    let t = step("tools: playwright-core (xtask/console/package-lock.json)");
    let out = toolchain::target_dir(root)?.join("console");
    let tools = out.join("tools");
    toolchain::npm_ci(&root.join(CHECK), &tools)?;
    toolchain::copy(&root.join(CHECK), &tools, &["check.mjs"])?;
    done(t);

    let t = step("licensing-sim and the licensing command line (cargo build)");
    let sim = build_simulator(root)?;
    toolchain::run(
        Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "-p",
                "licensing-cli",
                "--bin",
                "licensing",
            ])
            .current_dir(root),
    )?;
    let cli = sim.with_file_name("licensing");
    done(t);

    let t = step("the console in headless Chromium");
    let browser = chromium()?;
    eprintln!(
        "browser: {} ({})",
        browser.display(),
        browser_version(&browser)
    );
    let simulator = Simulator::start(&sim, &["--seed", "demo"], &out.join("licensing-sim.log"))?;
    let proxy = Simulator::proxy(&sim, &simulator.url, &out.join("licensing-sim-proxy.log"))?;
    let config_dir = out.join("cli-config");
    fs::create_dir_all(&config_dir)?;
    let screenshot = out.join("journal.png");
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
        }))?,
    )?;
    toolchain::run(
        Command::new("node")
            .arg("check.mjs")
            .arg(&config)
            .current_dir(&tools),
    )?;
    drop(proxy);
    drop(simulator);
    done(t);
    if save_screenshot {
        let saved = root.join("sim").join("docs").join("console-journal.png");
        fs::create_dir_all(saved.parent().expect("a folder"))?;
        fs::copy(&screenshot, &saved)?;
        eprintln!("screenshot saved as {}", saved.display());
    }
    eprintln!(
        "\nconsole: every check passed ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
