//! The Go consumer: code written against oapi-codegen's output for the current specs, built
//! with `go build` against its output for the mutated ones.
//!
//! It reads the generated code of the current specs (gofmt's layout, one declaration a
//! line) and, in the generated package itself, names everything a program on it may name:
//! every exported field of every struct, read into a variable of its old type and set in a
//! keyed literal; every type; every enum constant, as a value of its old type; every method
//! of `ClientWithResponsesInterface`, as a function value of its old signature. So a field,
//! type, constant or call that goes or changes type fails the build; one that is added does
//! not (a keyed literal need not name it).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use licensing_spec_diff::load::FILES;

use super::bench::{Outcome, outcome};

/// What the consumer names, read from one generated file.
#[derive(Default)]
struct Surface {
    imports: Vec<(String, String)>,
    structs: Vec<(String, Vec<(String, String)>)>,
    types: Vec<String>,
    constants: Vec<(String, String)>,
    methods: Vec<(String, String)>,
}

fn surface(code: &str) -> Surface {
    let mut s = Surface::default();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        if line == "import (" {
            for l in lines.by_ref() {
                if l == ")" {
                    break;
                }
                let l = l.trim();
                if l.is_empty() {
                    continue;
                }
                let (alias, path) = match l.split_once(' ') {
                    Some((a, p)) => (a.to_string(), p.trim_matches('"').to_string()),
                    None => {
                        let p = l.trim_matches('"');
                        (p.rsplit('/').next().unwrap_or(p).to_string(), p.to_string())
                    }
                };
                s.imports.push((alias, path));
            }
        } else if line == "const (" {
            for l in lines.by_ref() {
                if l == ")" {
                    break;
                }
                let words: Vec<&str> = l.split_whitespace().collect();
                if let [name, ty, "=", ..] = words.as_slice()
                    && exported(name)
                {
                    s.constants.push((name.to_string(), ty.to_string()));
                }
            }
        } else if let Some(rest) = line.strip_prefix("type ") {
            let Some((name, def)) = rest.split_once(' ') else {
                continue;
            };
            if !exported(name) {
                continue;
            }
            s.types.push(name.to_string());
            if def == "struct {" {
                let mut fields = Vec::new();
                let mut depth = 1;
                for l in lines.by_ref() {
                    let t = l.trim();
                    if depth == 1 && t == "}" {
                        break;
                    }
                    if depth == 1
                        && let Some((field, ty)) = field(t)
                    {
                        fields.push((field, ty));
                    }
                    depth += t.matches('{').count();
                    depth -= t.matches('}').count();
                }
                s.structs.push((name.to_string(), fields));
            } else if def == "interface {" {
                for l in lines.by_ref() {
                    let t = l.trim();
                    if t == "}" {
                        break;
                    }
                    if name == "ClientWithResponsesInterface"
                        && let Some((method, signature)) = t.split_once('(')
                        && exported(method)
                    {
                        s.methods
                            .push((method.to_string(), format!("func({signature}")));
                    }
                }
            }
        }
    }
    s
}

fn exported(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// `Name Type `json:"…"`` (a field of a struct), when its type is on the line.
fn field(line: &str) -> Option<(String, String)> {
    if line.starts_with("//") {
        return None;
    }
    let (name, rest) = line.split_once(' ')?;
    let ty = rest.split(" `").next()?.trim();
    if !exported(name) || ty.is_empty() || ty.ends_with('{') {
        return None;
    }
    Some((name.to_string(), ty.to_string()))
}

/// The consumer of one generated file, in its package.
pub fn consumer(package: &str, code: &str) -> String {
    let s = surface(code);
    let mut body = String::new();
    for name in &s.types {
        let _ = writeln!(body, "var _ *{name}");
    }
    for (i, (name, ty)) in s.constants.iter().enumerate() {
        let _ = writeln!(body, "var c{i} {ty} = {name}");
    }
    for (name, fields) in &s.structs {
        let _ = writeln!(body, "func r{name}(v {name}) {{");
        for (i, (f, ty)) in fields.iter().enumerate() {
            let _ = writeln!(body, "\tvar f{i} {ty} = v.{f}\n\t_ = f{i}");
        }
        let set: Vec<String> = fields
            .iter()
            .map(|(f, ty)| format!("{f}: *new({ty})"))
            .collect();
        let _ = writeln!(body, "\t_ = {name}{{{}}}\n}}", set.join(", "));
    }
    if !s.methods.is_empty() {
        body.push_str("func calls(c ClientWithResponsesInterface) {\n");
        for (name, signature) in &s.methods {
            let _ = writeln!(body, "\tvar m{name} {signature} = c.{name}\n\t_ = m{name}");
        }
        body.push_str("}\n");
    }
    // Go refuses an import nothing uses.
    let imports: Vec<String> = s
        .imports
        .iter()
        .filter(|(alias, _)| body.contains(&format!("{alias}.")))
        .map(|(alias, path)| format!("\t{alias} {path:?}"))
        .collect();
    format!(
        "// Written by the spec-diff corpus from oapi-codegen's code of the current {package} spec.\n\
         package {package}\n\nimport (\n{}\n)\n\n{body}",
        imports.join("\n")
    )
}

/// The Go module the consumers are built in, and the pinned generator.
pub struct Go {
    pub dir: PathBuf,
    pub oapi_codegen: PathBuf,
    pub root: PathBuf,
}

impl Go {
    /// Builds the pinned oapi-codegen (`clients/go/tools/go.mod`) and writes the module:
    /// the clients' `go.mod` and `go.sum` (the runtime's pinned version), and one package a
    /// service.
    pub fn prepare(root: &Path, dir: &Path, tools: &Path) -> Result<Go> {
        fs::create_dir_all(tools)?;
        let oapi_codegen = tools.join("oapi-codegen");
        let out = Command::new("go")
            .arg("-C")
            .arg(root.join("clients/go/tools"))
            .args(["build", "-o"])
            .arg(&oapi_codegen)
            .arg("github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen")
            .env("GOFLAGS", "-mod=mod")
            .output()
            .context("cannot run go (Go is needed for the Go consumer)")?;
        if !out.status.success() {
            bail!(
                "cannot build oapi-codegen: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        fs::create_dir_all(dir)?;
        for file in ["go.mod", "go.sum"] {
            fs::copy(root.join("clients/go").join(file), dir.join(file))?;
        }
        Ok(Go {
            dir: dir.to_path_buf(),
            oapi_codegen,
            root: root.to_path_buf(),
        })
    }

    /// oapi-codegen on each spec text, with the clients' configuration, into the module's
    /// packages; `Err` with what it said when it refuses one.
    pub fn generate(&self, texts: &[(&'static str, String, String)]) -> Result<Result<(), String>> {
        for ((service, file), (_, _, text)) in FILES.iter().zip(texts) {
            let package = self.dir.join(service);
            fs::create_dir_all(&package)?;
            let spec = self.dir.join(file);
            fs::write(&spec, text)?;
            let shipped = self
                .root
                .join("clients/go")
                .join(service)
                .join("oapi-codegen.yaml");
            let config: String = fs::read_to_string(&shipped)
                .with_context(|| format!("cannot read {}", shipped.display()))?
                .lines()
                .filter(|l| !l.starts_with("output:"))
                .map(|l| format!("{l}\n"))
                .collect();
            let config_file = self.dir.join(format!("{service}.oapi-codegen.yaml"));
            fs::write(&config_file, config)?;
            let out = Command::new(&self.oapi_codegen)
                .arg("-config")
                .arg(&config_file)
                .arg("-o")
                .arg(package.join(format!("{service}.gen.go")))
                .arg(&spec)
                .output()
                .context("cannot run oapi-codegen")?;
            if !out.status.success() {
                return Ok(Err(format!(
                    "oapi-codegen: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
        }
        Ok(Ok(()))
    }

    /// The consumers written from the code generated from `texts` (the current specs).
    pub fn write_consumers(&self, texts: &[(&'static str, String, String)]) -> Result<()> {
        if let Err(why) = self.generate(texts)? {
            bail!("oapi-codegen refuses the current specs: {why}");
        }
        for (service, _) in FILES {
            let package = self.dir.join(service);
            let code = fs::read_to_string(package.join(format!("{service}.gen.go")))?;
            fs::write(package.join("consumer.go"), consumer(service, &code))?;
        }
        Ok(())
    }

    /// The consumers built against the code generated from `texts`.
    pub fn check(&self, texts: &[(&'static str, String, String)]) -> Result<Outcome> {
        if let Err(why) = self.generate(texts)? {
            return Ok(Outcome { broke: true, why });
        }
        outcome(
            Command::new("go")
                .args(["build", "./..."])
                .current_dir(&self.dir)
                .env("GOFLAGS", "-mod=mod")
                .output(),
            "go build",
        )
    }
}
