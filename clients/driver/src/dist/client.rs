//! The generated clients as packages, with the specs and JSON Schemas they come from and
//! the SDK's version: the `licensing-client` wheel and sdist (`clients/python/package/`,
//! hatchling; its dependencies downloaded, hash-pinned, into `<target>/dist/wheelhouse/`)
//! and the `licensing-client` npm package (`clients/typescript/package/`, compiled by the
//! clients' own `tsc`, openapi-fetch bundled). Generated first, as `cargo xtask clients`
//! generates them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

use super::{
    Release, clean_command, copy_tree, file_size, mib, path_without_rust, pip_install, timed,
};
use crate::toolchain::{self, done, run, step};
use crate::{PYTHON, SPECS, TYPESCRIPT};

/// The specs' JSON Schemas, per service, relative to the repository root.
const SCHEMAS: [(&str, &str); 2] = [("order", "schemas/order"), ("member", "schemas/member")];
/// The bundled dependencies of the npm package, from the clients' lock file.
const BUNDLED: [&str; 2] = ["openapi-fetch", "openapi-typescript-helpers"];

/// The client packages built into `<target>/dist/`.
pub struct Clients {
    /// The wheel, then the sdist.
    pub python: Vec<PathBuf>,
    pub wheelhouse: PathBuf,
    pub npm: PathBuf,
}

/// Generates both clients into `<target>/dist/build/clients/` (not `cargo xtask clients`'s
/// `<target>/clients/`, which a run of that beside this one writes) and packs them.
pub fn build(root: &Path, release: &Release) -> Result<Clients> {
    let out = release.dist.join("build").join("clients");
    let ts = crate::typescript::generate(root, &out, None)?;
    let py = crate::python::generate(root, &out, None)?;
    let t = step("the generated clients as packages (licensing-client)");
    let python = python_packages(root, release, &py.dir)?;
    let wheelhouse = release.dist.join("wheelhouse");
    toolchain::remove(&wheelhouse)?;
    let tools = release.dist.join("build").join("python-tools");
    run(Command::new(tools.join("bin").join("python"))
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--require-hashes", "--no-deps", "--only-binary=:all:", "-d"])
        .arg(&wheelhouse)
        .arg("-r")
        .arg(root.join(PYTHON).join("package").join("requirements.txt")))?;
    let npm = npm_package(root, release, &ts.dir)?;
    for package in python.iter().chain([&npm]) {
        eprintln!("{}: {}", package.display(), mib(file_size(package)?));
    }
    done(t);
    Ok(Clients {
        python,
        wheelhouse,
        npm,
    })
}

fn python_packages(root: &Path, release: &Release, generated: &Path) -> Result<Vec<PathBuf>> {
    let staged = release.dist.join("build").join("python-client");
    toolchain::remove(&staged)?;
    copy_tree(&root.join(PYTHON).join("package"), &staged)?;
    toolchain::copy(generated, &staged, &["licensing.py"])?;
    toolchain::copy(root, &staged, &["LICENSE-MIT", "LICENSE-APACHE"])?;
    for spec in &SPECS {
        let package = staged.join(spec.python);
        copy_tree(&generated.join(spec.python), &package)?;
        fs::copy(root.join(spec.path), package.join("openapi.yaml"))?;
        // PEP 561: the generated packages are annotated throughout.
        fs::write(package.join("py.typed"), "")?;
        if let Some((_, schemas)) = SCHEMAS.iter().find(|(name, _)| *name == spec.name) {
            copy_tree(&root.join(schemas), &package.join("schemas"))?;
        }
    }
    let tools = release.dist.join("build").join("python-tools").join("bin");
    let mut built = Vec::new();
    for (kind, suffix) in [("wheel", "-py3-none-any.whl"), ("sdist", ".tar.gz")] {
        let name = format!("licensing_client-{}{suffix}", release.version);
        toolchain::remove(&release.dist.join(&name))?;
        run(Command::new(tools.join("python"))
            .args(["-m", "hatchling", "build", "-t", kind, "-d"])
            .arg(&release.dist)
            .env("LICENSING_DIST_VERSION", &release.version)
            .current_dir(&staged))?;
        let path = release.dist.join(&name);
        if !path.exists() {
            bail!("hatchling wrote no {}", path.display());
        }
        built.push(path);
    }
    Ok(built)
}

fn npm_package(root: &Path, release: &Release, generated: &Path) -> Result<PathBuf> {
    let sources = root.join(TYPESCRIPT).join("package");
    super::node::check_versions(&sources.join("package.json"), &release.version)?;
    let staged = release.dist.join("build").join("npm-client");
    toolchain::remove(&staged)?;
    for file in ["package.json", "tsconfig.json", "README.md"] {
        toolchain::copy(&sources, &staged, &[file])?;
    }
    toolchain::copy(root, &staged, &["LICENSE-MIT", "LICENSE-APACHE"])?;
    toolchain::copy(generated, &staged.join("src"), &["licensing.ts"])?;
    copy_tree(
        &generated.join("generated"),
        &staged.join("src").join("generated"),
    )?;
    for spec in &SPECS {
        fs::create_dir_all(staged.join("openapi"))?;
        fs::copy(
            root.join(spec.path),
            staged.join("openapi").join(format!("{}.yaml", spec.name)),
        )?;
    }
    for (name, schemas) in SCHEMAS {
        copy_tree(&root.join(schemas), &staged.join("schemas").join(name))?;
    }
    // Real copies, not links: npm bundles what it finds in the package's node_modules.
    let modules = generated.join("node_modules");
    for package in BUNDLED {
        copy_tree(
            &modules.join(package),
            &staged.join("node_modules").join(package),
        )?;
    }
    run(Command::new(modules.join(".bin").join("tsc"))
        .args(["--project", "."])
        .current_dir(&staged))?;
    super::npm_pack(release, &staged, "licensing-client")
}

/// The Python client in a fresh venv (`--no-index`, from target/dist and its wheelhouse
/// alone, beside the licensing-sandbox wheel), its scenario against a sandbox it starts;
/// the npm client in a fresh npm project (`--offline`, beside the sandbox's tarballs),
/// its `node:test` example. Returns the lines of the summary.
pub fn check(
    root: &Path,
    release: &Release,
    clients: &Clients,
    sandbox_wheel: &Path,
    sandbox_tarballs: &[PathBuf],
) -> Result<Vec<String>> {
    let t = step("the client packages in a fresh venv and npm project, no Rust toolchain on PATH");
    let (dir, bin, path) = super::fresh_venv(release, "client")?;
    let pip_seconds = timed(
        pip_install(&bin.join("python"), &path)
            .args(["--no-index", "--find-links"])
            .arg(&clients.wheelhouse)
            .arg(&clients.python[0])
            .arg(sandbox_wheel),
    )?;
    let example = dir.join("python");
    copy_tree(&root.join(PYTHON).join("package").join("example"), &example)?;
    fs::copy(
        root.join(PYTHON).join("tests").join("scenario.py"),
        example.join("scenario.py"),
    )?;
    run(clean_command(bin.join("python"), &path)
        .arg("check_client.py")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(&example))?;

    let project = dir.join("node");
    copy_tree(
        &root.join(TYPESCRIPT).join("package").join("example"),
        &project,
    )?;
    fs::write(
        project.join("package.json"),
        "{\"name\": \"partner-client-example\", \"private\": true, \"type\": \"module\"}\n",
    )?;
    let npm_path = path_without_rust(&project.join("node_modules").join(".bin"))?;
    let npm_install = timed(
        clean_command("npm", &npm_path)
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .arg(&clients.npm)
            .args(sandbox_tarballs)
            .current_dir(&project),
    )?;
    run(clean_command("node", &npm_path)
        .args(["--test", "client.test.mjs"])
        .current_dir(&project))?;
    done(t);
    Ok(vec![format!(
        "licensing-client: the wheel installed in {pip_seconds:.1} s (with its dependencies \
             from the wheelhouse and licensing-sandbox), the npm package in {npm_install:.1} s \
             (with licensing-sandbox); the Python scenario and the node:test example passed"
    )])
}
