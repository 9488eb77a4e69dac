//! `cargo xtask ci-step` as `.ci/run` calls it: the binary itself, which this test also
//! makes the test build compile (with the workspace's features, so that `.ci/run` runs
//! the test build's xtask instead of building it again with xtask's own).

use std::process::Command;

fn xtask(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("running xtask")
}

#[test]
fn an_unknown_step_fails_naming_the_steps_and_runs_nothing() {
    let out = xtask(&["ci-step", "lint", "--", "sh", "-c", "echo ran"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("\"lint\"") && stderr.contains("lints"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
}

#[test]
fn explain_lists_each_input_with_its_digest() {
    let out = xtask(&["ci-step", "tls", "--explain"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for input in [".ci/tls.sh", "src/lib.rs", "Cargo.lock", "$ rustc -vV"] {
        let line = stdout
            .lines()
            .find(|l| l.ends_with(&format!("  {input}")))
            .unwrap_or_else(|| panic!("{input} is not listed:\n{stdout}"));
        let digest = line.split_whitespace().next().unwrap();
        assert_eq!(digest.len(), 64, "{line}");
        assert!(digest.bytes().all(|b| b.is_ascii_hexdigit()), "{line}");
    }
}
