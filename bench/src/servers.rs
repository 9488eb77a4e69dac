//! The servers a comparison loads, each a process of its own started on a free port of
//! 127.0.0.1 and killed when dropped, and Prism's install.

use std::{
    io::{BufRead, BufReader},
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use crate::cargo::Binaries;

pub struct Server {
    child: Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("{what} exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!("{what} did not listen on port {port} within 60 s")
}

impl Server {
    /// `licensing-sim` as a user starts it (default settings), plus `extra` flags.
    pub fn licensing_sim(bins: &Binaries, extra: &[&str]) -> Result<Self> {
        Self::listening(&bins.sim, &[], extra)
    }

    /// `licensing-proxy --upstream UPSTREAM` with its default settings, plus `extra`.
    pub fn proxy(bins: &Binaries, upstream: &str, extra: &[&str]) -> Result<Self> {
        Self::listening(&bins.proxy, &["--upstream", upstream], extra)
    }

    /// `exe` (the simulator's binary or the proxy's) with `args` on a free port, once it
    /// prints where it listens.
    fn listening(exe: &Path, args: &[&str], extra: &[&str]) -> Result<Self> {
        let mut child = Command::new(exe)
            .args(args)
            .args(["--addr", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .with_context(|| format!("unexpected first line from {}: {line:?}", exe.display()))?
            .to_string();
        Ok(Self { child, url })
    }

    /// Its process id, to read its memory from `/proc`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn bare(bins: &Binaries) -> Result<Self> {
        Self::bench_load(bins, "bare server", &["bare-server"])
    }

    /// `bench-load bare-forwarder` in front of `upstream` (an `http://` URL).
    pub fn forwarder(bins: &Binaries, upstream: &str) -> Result<Self> {
        Self::in_front(bins, "bare forwarder", "bare-forwarder", upstream)
    }

    /// `bench-load bare-http-proxy` in front of `upstream` (an `http://` URL).
    pub fn http_proxy(bins: &Binaries, upstream: &str) -> Result<Self> {
        Self::in_front(bins, "bare HTTP proxy", "bare-http-proxy", upstream)
    }

    /// `bench-load COMMAND --upstream HOST:PORT`, from `upstream` (an `http://` URL).
    fn in_front(bins: &Binaries, what: &str, command: &str, upstream: &str) -> Result<Self> {
        let to = upstream
            .strip_prefix("http://")
            .with_context(|| format!("the {what}'s upstream is not an http:// URL: {upstream}"))?;
        Self::bench_load(bins, what, &[command, "--upstream", to])
    }

    /// A server of `bench-load` (`command`, then `--port` with a free port), once it listens.
    fn bench_load(bins: &Binaries, what: &str, command: &[&str]) -> Result<Self> {
        let port = free_port()?;
        let mut child = Command::new(&bins.load)
            .args(command)
            .args(["--port", &port.to_string()])
            .spawn()
            .with_context(|| format!("starting the {what}"))?;
        wait_for_port(port, &mut child, what)?;
        Ok(Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }

    pub fn prism(root: &Path, bins: &Binaries) -> Result<Self> {
        // `run` has it installed while cargo builds; anything else installs it here.
        if let Some(install) = PrismInstall::start(&bins.target_dir)? {
            install.wait()?;
        }
        let port = free_port()?;
        Self::quiet(prism_command(root, &bins.target_dir, port), port, "prism")
    }

    /// A peer server started by `cmd` on `port` of 127.0.0.1, its output discarded, once
    /// it accepts connections.
    pub fn quiet(mut cmd: Command, port: u16, what: &str) -> Result<Self> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        wait_for_port(port, &mut child, what)?;
        Ok(Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }
}

/// `prism mock spec/order.yaml` on `port` of 127.0.0.1, as the throughput comparison runs
/// it (installed into the target directory by [`PrismInstall`]).
pub fn prism_command(root: &Path, target_dir: &Path, port: u16) -> Command {
    let mut cmd = Command::new(PrismInstall::bin(target_dir));
    cmd.args([
        "mock",
        "spec/order.yaml",
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ])
    .current_dir(root);
    cmd
}

/// `npm install` of Prism into the target directory, running in the background.
pub struct PrismInstall {
    npm: Child,
}

impl PrismInstall {
    fn prefix(target_dir: &Path) -> PathBuf {
        target_dir.join("bench-node")
    }

    fn bin(target_dir: &Path) -> PathBuf {
        Self::prefix(target_dir).join("node_modules/.bin/prism")
    }

    /// Starts the install; `None` when Prism is installed already.
    pub fn start(target_dir: &Path) -> Result<Option<Self>> {
        if Self::bin(target_dir).exists() {
            return Ok(None);
        }
        let prefix = Self::prefix(target_dir);
        eprintln!("installing @stoplight/prism-cli into {}", prefix.display());
        let npm = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg("@stoplight/prism-cli@5")
            .stdin(Stdio::null())
            .spawn()
            .context("running npm (Node.js and npm are needed for the Prism comparison)")?;
        Ok(Some(Self { npm }))
    }

    pub fn wait(mut self) -> Result<()> {
        if !self.npm.wait()?.success() {
            bail!("npm could not install @stoplight/prism-cli; the Prism comparison needs it");
        }
        Ok(())
    }
}
