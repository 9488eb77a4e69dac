//! The SDK's own sources (`src/`, the thin layer over the generated clients): no file too
//! long to read at once, and no files that import each other (in a circle, however long).

use std::path::{Path, PathBuf};

use licensing_test_support::{architecture::assert_none, layers, source_tests};

/// The longest a source file may be.
const MAX_LINES: usize = 600;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

source_tests!(src: src(), more_than: 10, max_lines: MAX_LINES);

/// Every package of the workspace, by folder (`.` the SDK), as the root manifest's
/// `members` lists them: a package added there is under the rules below without an edit.
fn members() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("members = ["))
        .expect("the root manifest lists its members on one line");
    let list = line.trim_start_matches("members = [").trim_end_matches(']');
    let mut found: Vec<String> = list
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect();
    found.insert(0, ".".to_string());
    assert!(found.len() > 10, "the members were not found: {found:?}");
    found
}

#[test]
fn no_package_has_files_that_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for package in members() {
        let files = layers::sources(&root.join(&package).join("src"));
        assert!(!files.is_empty(), "{package}: the sources were not found");
        found.extend(
            layers::module_cycles(&files)
                .into_iter()
                .map(|c| format!("{package}: {c}")),
        );
    }
    assert_none(
        "files that import each other (move what they share, or lean on a third)",
        &found,
    );
}

#[test]
fn no_package_has_a_file_too_long() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let long: Vec<String> = members()
        .iter()
        .flat_map(|package| {
            layers::too_long(&root.join(package).join("src"), MAX_LINES)
                .into_iter()
                .map(move |l| format!("{package}/src/{l}"))
        })
        .collect();
    assert_none(&format!("over {MAX_LINES} lines"), &long);
}

/// The longest a production function may be, outside the few below.
const MAX_FUNCTION_LINES: usize = 150;

/// The production functions allowed to be longer, each with why it reads better whole:
/// `(package folder, file below src, function)`.
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[];

#[test]
fn no_production_function_is_too_long() {
    use licensing_test_support::functions::long_functions;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for package in members() {
        for f in long_functions(&root.join(&package).join("src"), MAX_FUNCTION_LINES) {
            let allowed = LONG_FUNCTIONS
                .iter()
                .any(|(p, file, name)| *p == package && *file == f.file && *name == f.name);
            if !allowed {
                found.push(format!(
                    "{package}/src/{}:{} fn {} is {} lines",
                    f.file, f.line, f.name, f.lines
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "over {MAX_FUNCTION_LINES} lines (split it, or say in LONG_FUNCTIONS why it reads \
         better whole):\n{}",
        found.join("\n")
    );
    assert!(LONG_FUNCTIONS.len() <= 5, "at most five long functions");
}

/// The workspace's packages by folder, each with the packages its code (normal and build
/// dependencies; tests may use more) may depend on: a package below never depends on one
/// above it, so the spec model reaches every reader, and the simulator and the proxy never
/// each other (the server layer they share is `licensing-host`, below both).
const PACKAGE_LAYERS: [(&str, &str, &[&str]); 18] = [
    (
        "quickstart",
        "licensing-quickstart",
        &["licensing-sdk", "licensing-sim"],
    ),
    (
        "xtask",
        "xtask",
        &[
            "licensing-codegen",
            "licensing-spec",
            "licensing-json-schema",
            "licensing-clients",
            "licensing-spec-diff",
            "licensing-test-support",
        ],
    ),
    (
        "bench",
        "licensing-bench",
        &[
            "licensing-codegen",
            "licensing-spec",
            "licensing-test-support",
        ],
    ),
    (
        "test-support",
        "licensing-test-support",
        &["licensing-sdk", "licensing-sim"],
    ),
    (
        "cli",
        "licensing-cli",
        &[
            "licensing-sdk",
            "licensing-sandbox-client",
            "licensing-codegen",
            "licensing-escape",
            "licensing-spec",
            "licensing-json-schema",
        ],
    ),
    (
        "proxy",
        "licensing-proxy",
        &[
            "licensing-host",
            "licensing-sandbox-client",
            "licensing-sdk",
            "licensing-spec",
            "licensing-coverage",
            "licensing-escape",
        ],
    ),
    (
        "sim",
        "licensing-sim",
        &[
            "licensing-host",
            "licensing-sdk",
            "licensing-sandbox-client",
            "licensing-spec",
            "licensing-coverage",
        ],
    ),
    ("host", "licensing-host", &[]),
    (
        "sandbox-client",
        "licensing-sandbox-client",
        &["licensing-codegen"],
    ),
    (".", "licensing-sdk", &["licensing-codegen"]),
    (
        "coverage",
        "licensing-coverage",
        &["licensing-sdk", "licensing-spec", "licensing-escape"],
    ),
    (
        "spec-diff",
        "licensing-spec-diff",
        &["licensing-spec", "licensing-escape"],
    ),
    ("json-schema", "licensing-json-schema", &["licensing-spec"]),
    ("clients/driver", "licensing-clients", &["licensing-spec"]),
    ("codegen", "licensing-codegen", &["licensing-spec"]),
    ("spec-model", "licensing-spec", &[]),
    ("escape", "licensing-escape", &[]),
    ("bench-load", "bench-load", &[]),
];

/// The workspace packages a manifest's normal and build dependencies name.
fn package_dependencies(manifest: &str) -> Vec<String> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        let runtime = section == "[dependencies]"
            || section == "[build-dependencies]"
            || (section.starts_with("[target.") && !section.ends_with("dev-dependencies]"));
        if let Some((name, _)) = line.split_once('=')
            && runtime
            && name.trim().starts_with("licensing-")
        {
            found.push(name.trim().to_string());
        }
    }
    found
}

#[test]
fn packages_depend_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let placed: Vec<&str> = PACKAGE_LAYERS.iter().map(|(f, _, _)| *f).collect();
    let unplaced: Vec<String> = members()
        .into_iter()
        .filter(|m| !placed.contains(&m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "packages with no place in PACKAGE_LAYERS: {unplaced:?}"
    );
    let mut found = Vec::new();
    for (folder, name, allowed) in PACKAGE_LAYERS {
        let manifest = std::fs::read_to_string(root.join(folder).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "{folder}: not {name}"
        );
        for dependency in package_dependencies(&manifest) {
            if !allowed.contains(&dependency.as_str()) {
                found.push(format!("{name} depends on {dependency}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "against the layers:\n{}",
        found.join("\n")
    );
    let planted = "[dependencies]\nlicensing-sim = { workspace = true }\n\
                   [dev-dependencies]\nlicensing-test-support = { workspace = true }\n\
                   [target.'cfg(unix)'.dependencies]\nlicensing-proxy = \"0.1\"\n";
    assert_eq!(
        package_dependencies(planted),
        ["licensing-sim", "licensing-proxy"],
        "the check reads normal and target dependencies, not dev-dependencies"
    );
}

/// The packages the lockfile resolves, as `(name, version)`.
fn locked_packages() -> Vec<(String, String)> {
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"))
        .expect("Cargo.lock is read");
    let mut found = Vec::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            found.push((n, v.trim_matches('"').to_string()));
        }
    }
    found
}

/// URL hosts are mapped by unicode-rs (`idna_adapter` 1.1), not ICU4X (1.2 onward): the
/// adapter's documented choice, which keeps 17 crates out of every build of the SDK here,
/// the quickstart's first build among them. `cargo update` would take the newest again.
#[test]
fn the_lockfile_maps_url_hosts_without_icu4x() {
    let packages = locked_packages();
    let adapter: Vec<_> = packages
        .iter()
        .filter(|(n, _)| n == "idna_adapter")
        .collect();
    assert!(!adapter.is_empty(), "idna_adapter is not in Cargo.lock");
    for (_, version) in &adapter {
        assert!(
            version.starts_with("1.1."),
            "idna_adapter {version} in Cargo.lock builds ICU4X; take unicode-rs again with \
             `cargo update -p idna_adapter --precise 1.1.0`"
        );
    }
    let icu: Vec<_> = packages
        .iter()
        .filter(|(n, _)| n.starts_with("icu_"))
        .collect();
    assert!(icu.is_empty(), "ICU4X crates in Cargo.lock: {icu:?}");
}
