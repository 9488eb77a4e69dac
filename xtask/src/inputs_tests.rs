use super::*;

pub(crate) fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn package(name: &str, deps: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
         license = \"MIT\"\ndescription = \"d\"\ninclude = [\"/src/**/*.rs\"]\n\n{deps}\n"
    )
}

/// A git repository holding a workspace of the two API crates, a command line on them
/// with a dev-dependency, and an unpublished helper, as a digest reads a real one.
pub(crate) fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[workspace]\nmembers = [\"sdk\", \"sim\", \"cli\", \"helper\"]\nresolver = \"3\"\n",
    );
    write(root, "sdk/Cargo.toml", &package("licensing-sdk", ""));
    let sim = "[dependencies]\nlicensing-sdk = { path = \"../sdk\", version = \"0.1.0\" }";
    write(root, "sim/Cargo.toml", &package("licensing-sim", sim));
    let cli = "[dependencies]\nlicensing-sim = { path = \"../sim\", version = \"0.1.0\" }\n\
               [dev-dependencies]\nhelper = { path = \"../helper\" }";
    write(root, "cli/Cargo.toml", &package("licensing-cli", cli));
    let helper = package("helper", "").replace("[package]\n", "[package]\npublish = false\n");
    write(root, "helper/Cargo.toml", &helper);
    for file in [
        "sdk/src/lib.rs",
        "sim/src/lib.rs",
        "cli/src/lib.rs",
        "helper/src/lib.rs",
    ] {
        write(root, file, "pub fn f() {}\n");
    }
    write(root, "sdk/notes.txt", "not shipped\n");
    write(root, ".ci/semver.sh", "how\n");
    write(root, ".gitignore", "/target/\n/tool-version\n");
    write(root, "tool-version", "1.0\n");
    for args in [
        &["init", "-q"][..],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            ".",
        ],
    ] {
        assert!(
            Command::new("git")
                .args(args)
                .current_dir(root)
                .status()
                .unwrap()
                .success()
        );
    }
    let status = Command::new(env!("CARGO"))
        .args(["generate-lockfile", "--offline"])
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

/// Writes each file in turn and says whether the digest moved each time.
fn moves(inputs: &Inputs, root: &Path, changes: &[(&str, &str, bool)]) {
    let mut last = inputs.digest(root).unwrap();
    for (file, text, expected) in changes {
        write(root, file, text);
        let now = inputs.digest(root).unwrap();
        assert_eq!(
            now != last,
            *expected,
            "{file}: moved {}, expected {expected}",
            now != last
        );
        last = now;
    }
}

/// Every kind of package input moves the digest, and what the roots are not made of does
/// not.
#[test]
fn each_input_moves_the_digest_and_nothing_else_does() {
    let dir = workspace();
    let root = dir.path();
    let api = Inputs {
        roots: Roots::Named(&["licensing-sdk", "licensing-sim"]),
        dev: false,
        paths: &[".ci/semver.sh"],
        commands: &[&["rustc", "-vV"]],
        env: &[],
    };
    // Another member's manifest: its features unify into the roots'.
    let cli = package(
        "licensing-cli",
        "[dependencies]\nlicensing-sim = { path = \"../sim\", version = \"0.1.0\", \
         default-features = false }\n[dev-dependencies]\nhelper = { path = \"../helper\" }",
    );
    moves(
        &api,
        root,
        &[
            ("sdk/src/lib.rs", "pub fn g() {}\n", true),
            ("sim/src/lib.rs", "pub fn g() {}\n", true),
            ("sdk/src/new.rs", "pub fn h() {}\n", true),
            (".ci/semver.sh", "how, changed\n", true),
            ("cli/Cargo.toml", cli.as_str(), true),
            ("cli/src/lib.rs", "pub fn g() {}\n", false),
            ("sdk/notes.txt", "still not shipped\n", false),
            ("README.md", "a workspace\n", false),
        ],
    );
}

/// A path input is every file git knows there, shipped or not, but never the records
/// nor what git ignores; a command's output is an input, and a missing one too.
#[test]
fn paths_and_commands_are_inputs() {
    let dir = workspace();
    let root = dir.path();
    let inputs = Inputs {
        roots: Roots::Named(&["licensing-cli"]),
        dev: false,
        paths: &["."],
        commands: &[&["cat", "tool-version"], &["licensing-no-such-tool", "-V"]],
        // Set by cargo for every test it runs.
        env: &["CARGO_PKG_NAME", "LICENSING_NO_SUCH_VARIABLE"],
    };
    moves(
        &inputs,
        root,
        &[
            ("sdk/notes.txt", "not shipped, but a path input\n", true),
            ("docs/new.md", "an untracked file\n", true),
            ("tool-version", "1.1\n", true),
            (".ci/checked/lints", "digest = 0\n", false),
            ("target/debug/out", "built\n", false),
        ],
    );
    let collected = inputs.collect(root).unwrap();
    assert_eq!(
        collected["$ licensing-no-such-tool -V"],
        b"not found: entity not found"
    );
    assert!(String::from_utf8_lossy(&collected["$ cat tool-version"]).contains("1.1"));
    assert_eq!(collected["env CARGO_PKG_NAME"], b"set: xtask");
    assert_eq!(collected["env LICENSING_NO_SUCH_VARIABLE"], b"unset");
}

/// Dev-dependencies count only when asked for; `Published` leaves out what is not
/// published.
#[test]
fn dev_dependencies_and_published_roots() {
    let dir = workspace();
    let root = dir.path();
    let named = |dev| Inputs {
        roots: Roots::Named(&["licensing-cli"]),
        dev,
        paths: &[],
        commands: &[],
        env: &[],
    };
    moves(
        &named(false),
        root,
        &[("helper/src/lib.rs", "pub fn g() {}\n", false)],
    );
    moves(
        &named(true),
        root,
        &[("helper/src/lib.rs", "pub fn h() {}\n", true)],
    );
    let published = Inputs {
        roots: Roots::Published,
        ..named(false)
    };
    moves(
        &published,
        root,
        &[
            ("helper/src/lib.rs", "pub fn i() {}\n", false),
            ("cli/src/lib.rs", "pub fn g() {}\n", true),
        ],
    );
    let all = Inputs {
        roots: Roots::All,
        ..published
    };
    moves(
        &all,
        root,
        &[("helper/src/lib.rs", "pub fn j() {}\n", true)],
    );
}

/// A path with nothing under it, or a root that is not a member, is named.
#[test]
fn a_missing_input_is_named() {
    let dir = workspace();
    let root = dir.path();
    let missing = Inputs {
        roots: Roots::Named(&["licensing-sdk"]),
        dev: false,
        paths: &["spec/order.yaml"],
        commands: &[],
        env: &[],
    };
    let error = missing.digest(root).unwrap_err().to_string();
    assert!(error.contains("spec/order.yaml"), "{error}");
    let stranger = Inputs {
        roots: Roots::Named(&["licensing-sdk", "licensing-nope"]),
        paths: &[],
        ..missing
    };
    let error = stranger.digest(root).unwrap_err().to_string();
    assert!(error.contains("licensing-nope"), "{error}");
}
