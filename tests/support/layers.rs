//! The layer check of a package's sources (`sim/tests/architecture.rs`,
//! `proxy/tests/architecture.rs`): every `use` (and every `crate::…` path) of its `src`,
//! read as text, against a table of what each top-level folder may import; and how long
//! its files are.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
};

/// What each layer (a top-level folder of `src`) may import besides itself. The crate
/// root (the files beside `lib.rs`) wires them together and may import any.
pub type Table = &'static [(&'static str, &'static [&'static str])];

pub fn layers(table: Table) -> BTreeMap<&'static str, &'static [&'static str]> {
    table.iter().copied().collect()
}

/// The module path of a file under `src` (`protocol/gate.rs` → `[protocol, gate]`,
/// `protocol/mod.rs` → `[protocol]`, `lib.rs` → `[]`).
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The `use` statements and `crate::` paths of a source text, before its unit tests, as
/// the first module each names, resolved against the file's module path.
fn imports(source: &str, module: &[String]) -> Vec<(String, String)> {
    let code: String = source
        .lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    // `use` trees, which may span lines; what is left is the code.
    let mut rest = code.as_str();
    let mut outside = String::new();
    while let Some(at) = find_use(rest) {
        let tail = &rest[at..];
        let end = tail.find(';').unwrap_or(tail.len());
        outside.push_str(&rest[..at]);
        let statement: String = tail[..end].split_whitespace().collect();
        rest = &tail[end..];
        let path = statement.trim_start_matches("use");
        for target in targets(path, module) {
            found.push((target, format!("use {}", &path)));
        }
    }
    outside.push_str(rest);
    let code = outside;
    // Paths in code: `crate::ops::Db::new()`.
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[i + 7..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        found.push((name.clone(), format!("crate::{name}")));
    }
    found
}

/// Where the next `use` statement starts (at a line start, possibly `pub`).
fn find_use(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let body = trimmed
            .strip_prefix("pub(crate) ")
            .or_else(|| trimmed.strip_prefix("pub(super) "))
            .or_else(|| trimmed.strip_prefix("pub "))
            .unwrap_or(trimmed);
        if body.starts_with("use ") {
            return Some(offset + (line.len() - body.len()));
        }
        offset += line.len();
    }
    None
}

/// The crate modules a `use` path (whitespace removed) reaches: its first segment below
/// the crate root, for each branch of a `{…}` tree.
fn targets(path: &str, module: &[String]) -> Vec<String> {
    let (mut base, mut rest): (Vec<String>, &str) = if let Some(r) = path.strip_prefix("crate::") {
        (Vec::new(), r)
    } else if path.starts_with("super::") || path.starts_with("self::") {
        let mut base = module.to_vec();
        let mut r = path;
        loop {
            if let Some(next) = r.strip_prefix("super::") {
                base.pop();
                r = next;
            } else if let Some(next) = r.strip_prefix("self::") {
                r = next;
            } else {
                break;
            }
        }
        (base, r)
    } else {
        // A dependency, `std`, or a name in scope: not an arrow between layers.
        return Vec::new();
    };
    if !base.is_empty() {
        return vec![base.remove(0)];
    }
    if let Some(tree) = rest.strip_prefix('{') {
        rest = tree.strip_suffix('}').unwrap_or(tree);
        return split_top(rest).into_iter().map(first_segment).collect();
    }
    vec![first_segment(rest)]
}

fn first_segment(path: &str) -> String {
    path.split("::")
        .next()
        .unwrap_or("")
        .trim_matches(|c| c == '{' || c == '}')
        .split(" as ")
        .next()
        .unwrap_or("")
        .to_string()
}

/// The branches of a `{…}` list, split at its top-level commas.
fn split_top(list: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in list.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < list.len() {
        out.push(&list[start..]);
    }
    out.into_iter().filter(|b| !b.is_empty()).collect()
}

/// Every arrow against the table, as `file: import (layer → layer)`.
pub fn violations(table: Table, files: &[(PathBuf, String)]) -> Vec<String> {
    let layers = layers(table);
    let mut out = Vec::new();
    for (relative, source) in files {
        let module = module_of(relative);
        // The files beside `lib.rs` are the crate root, which wires the layers together.
        if relative.parent().is_none_or(|p| p.as_os_str().is_empty()) {
            continue;
        }
        let Some(layer) = module.first().map(String::as_str) else {
            continue;
        };
        let Some(allowed) = layers.get(layer) else {
            out.push(format!(
                "{}: not in a layer (a top-level folder of src listed in ALLOWED)",
                relative.display()
            ));
            continue;
        };
        for (target, import) in imports(source, &module) {
            if target == layer || target.is_empty() || target == "self" {
                continue;
            }
            if !allowed.contains(&target.as_str()) {
                let target = if layers.contains_key(target.as_str()) {
                    target
                } else {
                    format!("the crate root ({target})")
                };
                out.push(format!(
                    "{}: `{import}` makes {layer} depend on {target}, which it may not \
                     (allowed: {allowed:?})",
                    relative.display()
                ));
            }
        }
    }
    out
}

/// Every `.rs` file under the package's `src`, by its path below it.
pub fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).unwrap();
                files.push((path.strip_prefix(&root).unwrap().to_path_buf(), text));
            }
        }
    }
    files.sort();
    files
}

/// The layers that reach themselves through the table.
pub fn circles(table: Table) -> Vec<&'static str> {
    let layers = layers(table);
    // Depth-first from each layer: reaching it again is a circle.
    fn reaches(
        layers: &BTreeMap<&str, &[&str]>,
        from: &str,
        to: &str,
        seen: &mut Vec<String>,
    ) -> bool {
        layers.get(from).is_some_and(|next| {
            next.iter().any(|n| {
                *n == to
                    || (!seen.contains(&n.to_string()) && {
                        seen.push(n.to_string());
                        reaches(layers, n, to, seen)
                    })
            })
        })
    }
    layers
        .keys()
        .copied()
        .filter(|layer| reaches(&layers, layer, layer, &mut Vec::new()))
        .collect()
}

/// The files over `max` lines, as `path: N lines`.
pub fn too_long(max: usize) -> Vec<String> {
    sources()
        .iter()
        .filter(|(_, text)| text.lines().count() > max)
        .map(|(path, text)| format!("{}: {} lines", path.display(), text.lines().count()))
        .collect()
}
