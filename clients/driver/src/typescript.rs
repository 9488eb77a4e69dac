//! The TypeScript client: `openapi-typescript` types of the three specs and the
//! `openapi-fetch` helper, type-checked with `tsc --noEmit`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use crate::guide::Examples;
use crate::toolchain::{self, done, remove, run, step};
use crate::{SPECS, TYPESCRIPT};

/// Where the guide's example is saved in the generated folder (not the guide's own
/// `example.ts`, which may be a reader's).
pub const README_EXAMPLE: &str = "readme-example.ts";

/// What goes from `clients/typescript/` into the generated folder, and the name it gets
/// there: the folder is flat, the way a partner copies it.
const SOURCES: [(&str, &str); 2] = [
    ("src/licensing.ts", "licensing.ts"),
    ("tsconfig.json", "tsconfig.json"),
];
const SCENARIO: (&str, &str) = ("test/scenario.ts", "scenario.ts");

/// The generated TypeScript client.
pub struct TypeScript {
    pub dir: PathBuf,
}

impl TypeScript {
    /// `tsx <file>`, run from the generated folder as the guide says.
    pub fn tsx(&self, file: &str) -> Command {
        let mut command = Command::new(self.dir.join("node_modules").join(".bin").join("tsx"));
        command.arg(file).current_dir(&self.dir);
        command
    }
}

/// Generates and type-checks the client in `out/typescript` (with the scenario and the
/// guide's example when testing).
pub fn generate(root: &Path, out: &Path, test: Option<&Examples>) -> Result<TypeScript> {
    let t = step("TypeScript: openapi-typescript + openapi-fetch");
    let sources = root.join(TYPESCRIPT);
    let dir = out.join("typescript");
    toolchain::npm_ci(&sources, &dir)?;
    let bin = dir.join("node_modules").join(".bin");
    let generated = dir.join("generated");
    remove(&generated)?;
    for spec in &SPECS {
        // Defaults do not make a property required: a request may leave it out.
        run(Command::new(bin.join("openapi-typescript"))
            .arg(root.join(spec.path))
            .arg("--output")
            .arg(generated.join(format!("{}.ts", spec.name)))
            .args(["--default-non-nullable", "false"])
            .current_dir(&dir))?;
    }
    let mut files = SOURCES.to_vec();
    remove(&dir.join(SCENARIO.1))?;
    remove(&dir.join(README_EXAMPLE))?;
    if let Some(examples) = test {
        files.push(SCENARIO);
        // Verbatim (the run points it at its simulator), so that tsc checks the guide's code.
        fs::write(dir.join(README_EXAMPLE), &examples.typescript.code)?;
    }
    toolchain::copy_as(&sources, &dir, &files)?;
    run(Command::new(bin.join("tsc"))
        .args(["--project", "."])
        .current_dir(&dir))?;
    eprintln!(
        "tsc --noEmit: {} type-checks",
        files_in(&dir, &generated).join(", ")
    );
    done(t);
    Ok(TypeScript { dir })
}

/// The `.ts` files of `dir` and `generated`, for the log.
fn files_in(dir: &Path, generated: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for (base, prefix) in [(dir, ""), (generated, "generated/")] {
        if let Ok(entries) = fs::read_dir(base) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if name.ends_with(".ts") {
                    names.push(format!("{prefix}{name}"));
                }
            }
        }
    }
    names.sort();
    names
}
