//! How the three test targets of `licensing` (its commands, `licensing mcp`, `licensing
//! probe`) run the binary and its simulator. They are separate test binaries, so each
//! includes this file with `#[path]`.

use std::{path::Path, process::Command};

/// The runtime an in-process simulator serves on: two workers, so that the simulator
/// answers while a test blocks on it from its own thread.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The binary without the `LICENSING_*` variables the tests were started with: settings
/// of the machine's own would otherwise reach the command under test.
pub fn licensing() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("licensing"));
    for (name, _) in std::env::vars() {
        if name.starts_with("LICENSING_") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// [`licensing`] configured for the simulator at `url` through the environment only:
/// the simulator's default tokens, and `config_dir` for its configuration.
pub fn for_simulator(url: &str, config_dir: &Path) -> Command {
    let mut cmd = licensing();
    cmd.env("LICENSING_ORDER_URL", url)
        .env("LICENSING_MEMBER_URL", url)
        .env("LICENSING_APP_TOKEN", licensing_sim::DEFAULT_APP_TOKEN)
        .env(
            "LICENSING_CLIENT_TOKEN",
            licensing_sim::DEFAULT_CLIENT_TOKEN,
        )
        .env("LICENSING_USER_TOKEN", licensing_sim::DEFAULT_USER_TOKEN)
        .env("LICENSING_CONFIG_DIR", config_dir);
    cmd
}

/// Asserts that a run of the binary succeeded, showing `context` and its stderr if not:
/// the stderr is all a failed run leaves to tell why.
#[track_caller]
pub fn assert_success(output: &std::process::Output, context: impl std::fmt::Display) {
    assert!(
        output.status.success(),
        "{context}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
