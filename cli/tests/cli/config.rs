//! Profiles, precedence (flags over environment over profile) and the secrets file.

use crate::{ALLOCATE_ONE, Sim, assert_exit, dead_url, stderr, stdout};

const TOKEN: &str = licensing_sim::DEFAULT_APP_TOKEN;

/// `profile add default` with the order URL `url` and the token [`TOKEN`].
fn add_default(sim: &Sim, url: &str) -> std::process::Output {
    sim.run(&[
        "profile",
        "add",
        "default",
        "--order-url",
        url,
        "--app-token",
        TOKEN,
    ])
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
    let list = sim.run(&["profile", "list"]);
    assert_eq!(stdout(&list), "staging\n");
    let show = sim.run(&["profile", "show", "staging"]);
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
    let output = sim.run(&["profile", "add", "x", "--set", "colour=blue"]);
    assert_exit(&output, 2, "unknown key `colour`");
}

#[test]
fn flags_win_over_the_environment_which_wins_over_the_profile() {
    let sim = Sim::start();
    let url = sim.sim.url();
    let add = add_default(&sim, &url);
    assert!(add.status.success());
    let call = |cmd: &mut assert_cmd::Command| cmd.args(ALLOCATE_ONE).output().unwrap();
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
    assert_exit(&output, 2, "no profile named `nope`");
}

#[cfg(unix)]
#[test]
fn a_secrets_file_others_can_read_is_refused_by_name() {
    use std::os::unix::fs::PermissionsExt as _;
    let sim = Sim::start();
    let add = add_default(&sim, &sim.sim.url());
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

/// A file or symlink planted at the name the secrets file was once written through
/// (`credentials.toml.tmp`) is left as it is: the new file has a random name, is created
/// exclusively and private, and is renamed over `credentials.toml`.
#[cfg(unix)]
#[test]
fn a_planted_temporary_file_or_symlink_is_not_written_through() {
    use std::os::unix::fs::{PermissionsExt as _, symlink};
    let sim = Sim::start();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "the victim's own text\n").unwrap();
    let planted = sim.path("credentials.toml.tmp");
    let planted_config = sim.path("config.toml.tmp");
    symlink(&victim, &planted).unwrap();
    std::fs::write(&planted_config, "planted = true\n").unwrap();
    std::fs::set_permissions(&planted_config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let add = |token: &str| {
        let output = sim.run_with_stdin(
            &["profile", "add", "shared", "--app-token", "-"],
            format!("{token}\n"),
        );
        assert!(output.status.success(), "{}", stderr(&output));
    };
    let secrets = sim.path("credentials.toml");
    let check = |token: &str| {
        let meta = std::fs::symlink_metadata(&secrets).unwrap();
        assert!(meta.file_type().is_file(), "{:?}", meta.file_type());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert!(std::fs::read_to_string(&secrets).unwrap().contains(token));
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "the victim's own text\n"
        );
        assert_eq!(
            std::fs::read_to_string(&planted_config).unwrap(),
            "planted = true\n"
        );
        let names: Vec<String> = std::fs::read_dir(sim.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "temporary files left behind: {names:?}");
    };
    add("first-secret-token");
    check("first-secret-token");
    assert_eq!(std::fs::read_link(&planted).unwrap(), victim);
    // The same name as a regular file anyone can read, holding text of its own.
    std::fs::remove_file(&planted).unwrap();
    std::fs::write(&planted, "someone else's\n").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
    add("second-secret-token");
    check("second-secret-token");
    assert_eq!(
        std::fs::read_to_string(&planted).unwrap(),
        "someone else's\n"
    );
    assert_eq!(
        std::fs::metadata(&planted).unwrap().permissions().mode() & 0o777,
        0o644
    );
    let config = std::fs::symlink_metadata(sim.path("config.toml")).unwrap();
    assert!(config.file_type().is_file());
}

#[test]
fn the_app_key_is_a_secret_of_the_profile_read_from_stdin() {
    let sim = Sim::start();
    let key = "profile-app-key-4711";
    let output = sim.run_with_stdin(
        &["profile", "add", "keyed", "--app-key", "-"],
        format!("{key}\n"),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let show = sim.run(&["profile", "show", "keyed"]);
    assert_eq!(stdout(&show), "[keyed]\napp_key = (set, hidden)\n");
    let secrets = std::fs::read_to_string(sim.path("credentials.toml")).unwrap();
    assert!(
        secrets.contains(&format!("app_key = \"{key}\"")),
        "{secrets}"
    );
    let config = std::fs::read_to_string(sim.path("config.toml")).unwrap();
    assert!(!config.contains(key), "{config}");
    // In config.toml it is refused, as a token is.
    std::fs::write(
        sim.path("config.toml"),
        "[profiles.keyed]\napp_key = \"x\"\n",
    )
    .unwrap();
    let output = sim.run(&["profile", "show", "keyed"]);
    assert_exit(&output, 2, "`app_key` belongs in credentials.toml");
}

#[test]
fn a_profile_is_removed_from_both_files_and_a_missing_one_is_named() {
    let sim = Sim::start();
    for name in ["keep", "drop"] {
        let output = sim
            .cmd()
            .args(["profile", "add", name, "--order-url", &sim.sim.url()])
            .args(["--app-token", &format!("token-of-{name}")])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let output = sim.run(&["profile", "remove", "drop"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("profile `drop` removed"),
        "{}",
        stderr(&output)
    );
    let list = sim.run(&["profile", "list"]);
    assert_eq!(stdout(&list), "keep\n");
    let secrets = std::fs::read_to_string(sim.path("credentials.toml")).unwrap();
    assert!(!secrets.contains("token-of-drop") && secrets.contains("token-of-keep"));
    let config = std::fs::read_to_string(sim.path("config.toml")).unwrap();
    assert!(
        !config.contains("drop") && config.contains("keep"),
        "{config}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(sim.path("credentials.toml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let output = sim.run(&["profile", "remove", "drop"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: no profile named `drop` (see `licensing profile list`)\n"
    );
}

#[test]
fn error_messages_show_control_characters_escaped() {
    let sim = Sim::start();
    let output = sim.run(&[
        "--profile",
        "x\u{1b}]0;pwned\u{7}\u{202e}",
        "order",
        "allocate-shell-nums",
        "--size",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(!err.contains(['\u{1b}', '\u{7}', '\u{202e}']), "{err:?}");
    assert!(
        err.contains("no profile named `x\\u{1b}]0;pwned\\u{7}\\u{202e}`"),
        "{err}"
    );
}
