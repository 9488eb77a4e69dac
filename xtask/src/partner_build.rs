//! `cargo xtask partner-build`: what depending on `licensing-sdk` costs a partner's first
//! build. Two hello-world programs make the same call (allocate one asset number on the
//! order service): one on `licensing-sdk`, one on reqwest + serde alone, written by hand.
//! Each is built cold, in a target directory of its own (deleted first), in the dev
//! profile, one after the other; the time and the number of crates compiled are compared,
//! and each program is run once against `licensing-sim` so that both are known to work.
//! The result replaces the section between the markers in `BENCHMARKS.md`, which
//! `cargo xtask bench` keeps when it rewrites the rest.
//!
//! Both projects start from the workspace's `Cargo.lock`, so shared dependencies (reqwest,
//! serde, tokio, …) are the same versions on both sides.

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::toolchain::{done, step, target_dir};

/// Where the section starts and ends in `BENCHMARKS.md`.
pub const BEGIN: &str = "<!-- partner-build: written by `cargo xtask partner-build` -->";
/// The section's end marker.
pub const END: &str = "<!-- /partner-build -->";

const SDK_MAIN: &str = r#"//! Hello world on licensing-sdk: one asset number from the order service.
use licensing_sdk::order;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: hello URL APP_TOKEN")?;
    let token = std::env::args().nth(2).ok_or("usage: hello URL APP_TOKEN")?;
    let client = order::Client::builder(&url).application_token(token).build()?;
    let numbers = client
        .allocate_shell_nums()
        .body(order::types::AllocateShellNumsRequest::builder().size(1u32))
        .await?;
    println!("{}", numbers[0]);
    Ok(())
}
"#;

const PLAIN_MAIN: &str = r#"//! Hello world on reqwest + serde: the same call, written by hand.
use serde::{Deserialize, Serialize};

#[derive(Serialize)]
struct Request {
    size: u32,
}

#[derive(Deserialize)]
struct Reply {
    code: serde_json::Value,
    message: String,
    data: Option<Vec<String>>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: hello URL APP_TOKEN")?;
    let token = std::env::args().nth(2).ok_or("usage: hello URL APP_TOKEN")?;
    let nonce = format!("{:032x}", std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos());
    let reply: Reply = reqwest::Client::new()
        .post(format!("{url}/order/api/order/v1/shellnums?g_nonce={nonce}"))
        .bearer_auth(token)
        .json(&Request { size: 1 })
        .send()
        .await?
        .json()
        .await?;
    if reply.code != 0 {
        return Err(format!("{}: {}", reply.code, reply.message).into());
    }
    println!("{}", reply.data.unwrap_or_default()[0]);
    Ok(())
}
"#;

/// One side of the comparison.
struct Side {
    name: &'static str,
    dependencies: String,
    main: &'static str,
}

/// What one cold build took.
struct Built {
    time: Duration,
    crates: usize,
    exe: PathBuf,
}

pub fn run(root: &Path) -> Result<()> {
    let started = Instant::now();
    let section = measure(root, None, "cargo xtask partner-build")?;
    let path = root.join("BENCHMARKS.md");
    let text = fs::read_to_string(&path).unwrap_or_default();
    fs::write(&path, replace_section(&text, &section))?;
    println!("{section}");
    eprintln!(
        "\npartner-build done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Builds and runs both hello worlds; the section for `BENCHMARKS.md`, markers included,
/// saying it was measured by the command `by`. Each program runs against `sim_exe`, or
/// against a debug build of `licensing-sim` made here.
pub fn measure(root: &Path, sim_exe: Option<&Path>, by: &str) -> Result<String> {
    let target = target_dir(root)?;
    let work = target.join("partner-build");
    let lock = fs::read_to_string(root.join("Cargo.lock")).context("reading Cargo.lock")?;
    let sdk_path = root.display().to_string().replace('\\', "/");
    let sides = [
        Side {
            name: "reqwest-serde",
            dependencies: [
                r#"reqwest = { version = "0.13", features = ["json"] }"#,
                r#"serde = { version = "1", features = ["derive"] }"#,
                r#"serde_json = "1""#,
                r#"tokio = { version = "1", features = ["macros", "rt-multi-thread"] }"#,
            ]
            .join("\n"),
            main: PLAIN_MAIN,
        },
        Side {
            name: "licensing-sdk",
            dependencies: [
                format!(r#"licensing-sdk = {{ path = "{sdk_path}" }}"#),
                r#"tokio = { version = "1", features = ["macros", "rt-multi-thread"] }"#.into(),
            ]
            .join("\n"),
            main: SDK_MAIN,
        },
    ];
    let mut built = Vec::new();
    for side in &sides {
        let t = step(&format!("cold build: hello world on {}", side.name));
        let result = cold_build(&work.join(side.name), side, &lock)?;
        done(t);
        eprintln!(
            "    {} crates compiled in {:.1} s",
            result.crates,
            result.time.as_secs_f64()
        );
        built.push(result);
    }

    let t = step("each hello world against licensing-sim");
    let sim_exe = match sim_exe {
        Some(exe) => exe.to_path_buf(),
        None => licensing_clients::simulator::build_simulator(root)?,
    };
    for (side, result) in sides.iter().zip(&built) {
        let number = run_against_sim(&sim_exe, &result.exe)?;
        eprintln!("    {}: allocated {number}", side.name);
    }
    done(t);
    // Two full dependency trees, of no use once measured.
    for side in &sides {
        let _ = fs::remove_dir_all(work.join(side.name).join("target"));
    }

    let [plain, sdk] = [&built[0], &built[1]];
    Ok(section(plain, sdk, by))
}

fn cold_build(dir: &Path, side: &Side, lock: &str) -> Result<Built> {
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(dir.join("src"))?;
    fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"hello\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\n{}\n\n[workspace]\n",
            side.dependencies
        ),
    )?;
    fs::write(dir.join("src/main.rs"), side.main)?;
    fs::write(dir.join("Cargo.lock"), lock)?;
    let target = dir.join("target");
    let started = Instant::now();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--color", "never"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("building {}", dir.display()))?;
    let time = started.elapsed();
    let log = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("the {} hello world did not build:\n{log}", side.name);
    }
    Ok(Built {
        time,
        crates: compiled(&log),
        exe: target.join("debug").join("hello"),
    })
}

/// The distinct crates a build log says it compiled (`Compiling name vX.Y.Z`).
fn compiled(log: &str) -> usize {
    log.lines()
        .filter_map(|l| l.trim_start().strip_prefix("Compiling "))
        .map(|rest| {
            rest.split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<BTreeSet<_>>()
        .len()
}

/// Starts the simulator, runs `exe URL TOKEN`, returns what it printed.
fn run_against_sim(sim_exe: &Path, exe: &Path) -> Result<String> {
    let mut sim = Command::new(sim_exe)
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", sim_exe.display()))?;
    let mut line = String::new();
    BufReader::new(sim.stdout.take().context("stdout")?).read_line(&mut line)?;
    let result = (|| {
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .with_context(|| format!("unexpected first line from licensing-sim: {line:?}"))?;
        let out = Command::new(exe)
            .args([url, "sim-app-token"])
            .output()
            .with_context(|| format!("running {}", exe.display()))?;
        let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || printed.len() != 10 {
            bail!(
                "{} failed ({}): {printed} {}",
                exe.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(printed)
    })();
    let _ = sim.kill();
    let _ = sim.wait();
    result
}

fn section(plain: &Built, sdk: &Built, by: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let secs = |b: &Built| b.time.as_secs_f64();
    format!(
        "{BEGIN}\n\
         ## A partner's first build\n\n\
         A hello world that allocates one asset number, built cold (a target directory of its \
         own, dev profile) on a {cores}-core machine, one build after the other, by \
         `{by}`. The reqwest + serde program makes the same request by \
         hand (no retries, validation, typed errors or tolerant enums); both are run once \
         against `licensing-sim`. licensing-sdk's build includes generating its clients \
         from the specs (its build script and the generator's dependencies: progenitor, \
         typify, syn).\n\n\
         | hello world on | crates compiled | cold build | ratio |\n\
         |---|---|---|---|\n\
         | reqwest + serde + tokio | {} | {:.0} s | 1 |\n\
         | licensing-sdk + tokio | {} | {:.0} s | {:.2}× |\n\
         {END}\n",
        plain.crates,
        secs(plain),
        sdk.crates,
        secs(sdk),
        secs(sdk) / secs(plain),
    )
}

/// `text` with the marked section replaced by `section`, or `section` appended.
pub fn replace_section(text: &str, section: &str) -> String {
    match (text.find(BEGIN), text.find(END)) {
        (Some(begin), Some(end)) if begin < end => {
            let end = end + END.len();
            let rest = text[end..].strip_prefix('\n').unwrap_or(&text[end..]);
            format!("{}{section}{rest}", &text[..begin])
        }
        _ => format!("{}\n\n{section}", text.trim_end_matches('\n')),
    }
}

/// The marked section of `text`, markers included, if there is one: the section the
/// benchmark lab keeps when it renders the document (by these markers, which its tests
/// read here).
#[cfg(test)]
fn existing_section(text: &str) -> Option<&str> {
    let begin = text.find(BEGIN)?;
    let end = text[begin..].find(END)? + begin + END.len();
    Some(&text[begin..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_replaced_or_appended() {
        let section = format!("{BEGIN}\nnew\n{END}\n");
        let appended = replace_section("# Benchmarks\n\n| a |\n", &section);
        assert_eq!(appended, format!("# Benchmarks\n\n| a |\n\n{section}"));
        let replaced =
            replace_section(&format!("# B\n\n{BEGIN}\nold\n{END}\n\n- note\n"), &section);
        assert_eq!(replaced, format!("# B\n\n{section}\n- note\n"));
        assert_eq!(
            existing_section(&replaced),
            Some(section.trim_end_matches('\n'))
        );
        assert_eq!(existing_section("# B\n"), None);
    }

    #[test]
    fn crates_are_counted_once() {
        let log = "   Compiling syn v2.0.1\n   Compiling syn v3.0.0\n   Compiling syn v2.0.1\n\
                   warning: x\n    Finished `dev` profile\n";
        assert_eq!(compiled(log), 2);
    }
}
