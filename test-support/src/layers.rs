//! The layer check of a package's sources (`sim/tests/architecture.rs`,
//! `proxy/tests/architecture.rs`): every `use` (and every `crate::…`, `super::…` path) of
//! its `src`, read as text, against a table of what each top-level folder may import; the
//! circles between its files; and how long its files are.

use std::{
    collections::{BTreeMap, BTreeSet},
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
    let (uses, code) = split_uses(&code_of(source));
    let mut found = Vec::new();
    for tree in uses {
        let path: String = tree.split_whitespace().collect();
        for target in targets(&path, module) {
            found.push((target, format!("use {path}")));
        }
    }
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

/// The trees of a text's `use` statements (which may span lines), each on one line, and
/// what is left of the text: its code.
fn split_uses(text: &str) -> (Vec<String>, String) {
    let mut uses = Vec::new();
    let mut rest = text;
    let mut code = String::new();
    while let Some(at) = find_use(rest) {
        let tail = &rest[at..];
        let end = tail.find(';').unwrap_or(tail.len());
        code.push_str(&rest[..at]);
        let statement = tail[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        uses.push(statement.trim_start_matches("use").trim().to_string());
        rest = &tail[end..];
    }
    code.push_str(rest);
    (uses, code)
}

/// A source text before its unit tests, without its comment lines.
fn code_of(source: &str) -> String {
    source
        .lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
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

/// Every `.rs` file under `root` (a package's `src`), by its path below it.
pub fn sources(root: &Path) -> Vec<(PathBuf, String)> {
    let root = root.to_path_buf();
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

/// The files under `root` over `max` lines, as `path: N lines`.
pub fn too_long(root: &Path, max: usize) -> Vec<String> {
    sources(root)
        .iter()
        .filter(|(_, text)| text.lines().count() > max)
        .map(|(path, text)| format!("{}: {} lines", path.display(), text.lines().count()))
        .collect()
}

/// Every path a `use` tree names, as its segments: `a::{b, c::{d, e as f}}` → `a::b`,
/// `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let Some(open) = tree.find('{') else {
        return vec![segments(tree)];
    };
    let prefix = segments(&tree[..open]);
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    split_top(inner)
        .into_iter()
        .filter(|branch| !branch.trim().is_empty())
        .flat_map(expand)
        .map(|rest| prefix.iter().cloned().chain(rest).collect())
        .collect()
}

/// `a :: b::c as d` → `[a, b, c]`.
fn segments(path: &str) -> Vec<String> {
    path.split(" as ")
        .next()
        .unwrap_or("")
        .split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The package's module a path names, as deep as the package's files go: `crate::ops::
/// order::Batch` → `[ops, order]` when `ops/order/mod.rs` or `ops/order.rs` is a file.
/// `None` for a path outside the package (a dependency, `std`, a name in scope).
fn module_named(
    path: &[String],
    from: &[String],
    files: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let (mut full, rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super" | "self") => (from.to_vec(), path),
        _ => return None,
    };
    let mut rest = rest.iter().peekable();
    while let Some(step) = rest.peek() {
        match step.as_str() {
            "super" => full.pop(),
            "self" => None,
            _ => break,
        };
        rest.next();
    }
    full.extend(rest.filter(|s| *s != "self" && *s != "*").cloned());
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| files.contains(m))
}

/// The files of the package each file imports from: every `use` path, and every
/// `crate::…`, `super::…` and `self::…` path in its code. What a file takes from its own
/// parent modules does not count: a parent (`mod.rs`) and the children it declares are
/// one unit, the children using what it defines and it re-exporting theirs.
fn file_arrows(files: &[(PathBuf, String)]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(p, _)| module_of(p)).collect();
    let mut arrows = BTreeMap::new();
    for (relative, source) in files {
        let module = module_of(relative);
        let (uses, outside) = split_uses(&code_of(source));
        let mut paths: Vec<Vec<String>> = uses.iter().flat_map(|tree| expand(tree)).collect();
        for start in ["crate::", "super::", "self::"] {
            for (i, _) in outside.match_indices(start) {
                let before = outside[..i].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let path: String = outside[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                paths.push(segments(&path));
            }
        }
        let targets: BTreeSet<Vec<String>> = paths
            .iter()
            .filter_map(|path| module_named(path, &module, &modules))
            .filter(|target| !module.starts_with(target))
            .collect();
        arrows.insert(module, targets);
    }
    arrows
}

/// A file's name for a module: `protocol/admin` → `protocol/admin.rs`.
fn file_name(module: &[String], files: &[(PathBuf, String)]) -> String {
    files
        .iter()
        .map(|(p, _)| p)
        .find(|p| module_of(p) == module)
        .map_or_else(|| module.join("/"), |p| p.display().to_string())
}

/// The circles between a package's files (its modules): each as `a.rs → b.rs → a.rs`,
/// one per group of files that reach each other, found by following each file's imports
/// (what a file takes from its own parent modules left out). Two files that import each other are one piece of code cut in two, or
/// one that should lean on a third.
pub fn module_cycles(files: &[(PathBuf, String)]) -> Vec<String> {
    let arrows = file_arrows(files);
    // From each file, the shortest way back to itself; a circle is named once, from its
    // first file in order.
    let mut named: BTreeSet<BTreeSet<Vec<String>>> = BTreeSet::new();
    let mut out = Vec::new();
    for start in arrows.keys() {
        let mut back: BTreeMap<&Vec<String>, &Vec<String>> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closed = None;
        while let Some(at) = queue.pop_front() {
            for next in arrows.get(at).into_iter().flatten() {
                if next == start {
                    closed = Some(at);
                    break;
                }
                if !back.contains_key(next) {
                    back.insert(next, at);
                    queue.push_back(next);
                }
            }
            if closed.is_some() {
                break;
            }
        }
        let Some(mut at) = closed else {
            continue;
        };
        let mut circle = vec![start.clone()];
        while at != start {
            circle.push(at.clone());
            at = back[at];
        }
        circle[1..].reverse();
        if named.insert(circle.iter().cloned().collect()) {
            circle.push(start.clone());
            let names: Vec<String> = circle.iter().map(|m| file_name(m, files)).collect();
            out.push(names.join(" → "));
        }
    }
    out
}
