//! Profiles, precedence (flags over environment over profile) and the secrets file.

use crate::{Sim, stderr, stdout};

const TOKEN: &str = licensing_sim::DEFAULT_APP_TOKEN;

fn dead_url() -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", closed.local_addr().unwrap())
}

#[test]
fn profiles_are_added_listed_and_shown_without_their_tokens() {
    let sim = Sim::start();
    let output = sim
        .cmd()
        .args([
            "profile",
            "add",
            "staging",
            "--order-url",
            &sim.sim.url(),
            "--app-token",
            "-",
        ])
        .args(["--set", "retry=never"])
        .write_stdin(format!("{TOKEN}\n"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let list = sim.cmd().args(["profile", "list"]).output().unwrap();
    assert_eq!(stdout(&list), "staging\n");
    let show = sim
        .cmd()
        .args(["profile", "show", "staging"])
        .output()
        .unwrap();
    let shown = stdout(&show);
    assert_eq!(
        shown,
        format!(
            "[staging]\norder_url = {}\nretry = never\napp_token = (set, hidden)\n",
            sim.sim.url()
        )
    );
    let secrets = sim.dir.path().join("credentials.toml");
    let config = std::fs::read_to_string(sim.dir.path().join("config.toml")).unwrap();
    assert!(!config.contains(TOKEN), "tokens stay out of config.toml");
    assert!(std::fs::read_to_string(&secrets).unwrap().contains(TOKEN));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&secrets).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let output = sim
        .cmd()
        .args(["profile", "add", "x", "--set", "colour=blue"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("unknown key `colour`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn flags_win_over_the_environment_which_wins_over_the_profile() {
    let sim = Sim::start();
    let url = sim.sim.url();
    let add = sim
        .cmd()
        .args([
            "profile",
            "add",
            "default",
            "--order-url",
            &url,
            "--app-token",
            TOKEN,
        ])
        .output()
        .unwrap();
    assert!(add.status.success());
    let call = |cmd: &mut assert_cmd::Command| {
        cmd.args([
            "order",
            "allocate-shell-nums",
            "--size",
            "1",
            "--retry",
            "never",
        ])
        .output()
        .unwrap()
    };
    // The profile alone (`default` is used when none is named).
    let output = call(
        sim.cmd()
            .env_remove("LICENSING_ORDER_URL")
            .env_remove("LICENSING_APP_TOKEN"),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    // The environment over the profile.
    let output = call(
        sim.cmd()
            .env("LICENSING_ORDER_URL", dead_url())
            .env_remove("LICENSING_APP_TOKEN"),
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    // A flag over the environment.
    let output = call(
        sim.cmd()
            .env("LICENSING_ORDER_URL", dead_url())
            .env_remove("LICENSING_APP_TOKEN")
            .args(["--order-url", &url]),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    // A wrong token from the environment is the one sent, and is never printed.
    let output = call(
        sim.cmd()
            .env("LICENSING_APP_TOKEN", "wrong-token-123")
            .arg("--verbose"),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(!stderr(&output).contains("wrong-token-123"));
    // A named profile that does not exist.
    let output = call(sim.cmd().args(["--profile", "nope"]));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no profile named `nope`"),
        "{}",
        stderr(&output)
    );
}

#[cfg(unix)]
#[test]
fn a_secrets_file_others_can_read_is_refused_by_name() {
    use std::os::unix::fs::PermissionsExt as _;
    let sim = Sim::start();
    let add = sim
        .cmd()
        .args([
            "profile",
            "add",
            "default",
            "--order-url",
            &sim.sim.url(),
            "--app-token",
            TOKEN,
        ])
        .output()
        .unwrap();
    assert!(add.status.success());
    let secrets = sim.dir.path().join("credentials.toml");
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = sim
        .cmd()
        .env_remove("LICENSING_APP_TOKEN")
        .args(["order", "allocate-shell-nums", "--size", "1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains(&format!("refusing to read {}", secrets.display()))
            && err.contains("mode 644"),
        "{err}"
    );
    assert!(!err.contains(TOKEN));
    assert!(sim.journal().is_empty());
}
