//! The length of every function in a package's sources, for the architecture tests' rule
//! that a production function stays short enough to read at once.
//!
//! A reader of Rust's text, not of its syntax tree: it skips comments, string, byte and
//! raw-string literals and character literals (told apart from lifetimes), and pairs the
//! braces that are left. That is all a function's extent needs, and it keeps the layer
//! check on the standard library alone (`syn` would be a second parser of the same files
//! to keep in step with the edition).

use std::path::Path;

use crate::layers::sources;

/// A function longer than the bound: where it is and how long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Long {
    /// The file, below the package's `src`.
    pub file: String,
    pub name: String,
    /// The line its `fn` is on (from 1).
    pub line: usize,
    /// Lines from its `fn` to its closing brace, both included.
    pub lines: usize,
}

/// Every function under `root` (a package's `src`) over `max` lines, outside `#[cfg(test)]`
/// modules, longest first.
pub fn long_functions(root: &Path, max: usize) -> Vec<Long> {
    let mut found: Vec<Long> = sources(root)
        .iter()
        .flat_map(|(path, text)| {
            let file = path.display().to_string();
            functions(text)
                .into_iter()
                .filter(move |f| f.lines > max)
                .map(move |f| Long {
                    file: file.clone(),
                    ..f
                })
        })
        .collect();
    found.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.file.cmp(&b.file)));
    found
}

/// Every function with a body in `text`, outside `#[cfg(test)]` modules (`file` left empty).
pub fn functions(text: &str) -> Vec<Long> {
    let code = blank_literals(text);
    let bytes = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    // Open braces: for each, the function it opens (name, line of `fn`), or none.
    let mut open: Vec<Option<(String, usize)>> = Vec::new();
    // A `fn NAME` seen whose body has not opened yet.
    let mut pending: Option<(String, usize)> = None;
    // Parentheses and brackets open: a `;` inside them (`[u8; 4]` in a signature) does not
    // end a declaration.
    let mut nest = 0usize;
    let mut pending_nest = 0usize;
    // Depth at which a `#[cfg(test)]` module opened: everything inside is skipped.
    let mut test_module: Option<usize> = None;
    let mut cfg_test = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &code[start..i];
            let boundary = start == 0 || !is_ident(bytes[start - 1]);
            if boundary && word == "fn" {
                let rest = code[i..].trim_start();
                let name: String = rest.chars().take_while(|c| is_ident_char(*c)).collect();
                if !name.is_empty() {
                    pending = Some((name, line_of(start)));
                    pending_nest = nest;
                }
            }
            continue;
        }
        match c {
            b'#' if code[i..].starts_with("#[cfg(test)]") => cfg_test = true,
            b'(' | b'[' => nest += 1,
            b')' | b']' => nest = nest.saturating_sub(1),
            b';' => {
                if nest == pending_nest {
                    pending = None;
                }
                if nest == 0 {
                    cfg_test = false;
                }
            }
            b'{' => {
                if cfg_test && test_module.is_none() {
                    test_module = Some(open.len());
                }
                cfg_test = false;
                open.push(pending.take());
            }
            b'}' => {
                if let Some(Some((name, line))) = open.pop()
                    && test_module.is_none()
                {
                    found.push(Long {
                        file: String::new(),
                        name,
                        line,
                        lines: line_of(i) - line + 1,
                    });
                }
                if test_module == Some(open.len()) {
                    test_module = None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `text` with every comment and literal's content replaced by spaces (newlines kept, so
/// that positions still give lines).
fn blank_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for x in &mut out[from..to.min(b.len())] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && is_ident(b[i - 1]);
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if !prev_ident && raw_string_at(b, i + 1).is_some() => {
                let hashes = raw_string_at(b, i + 1).unwrap_or(0);
                let open = i + 1 + hashes + 1;
                let mut close = vec![b'"'];
                close.extend(std::iter::repeat_n(b'#', hashes));
                let end = find(b, open, &close).map_or(b.len(), |e| e + close.len());
                blank(&mut out, open, end - close.len().min(end));
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j);
                i = j + 1;
            }
            b'\'' => {
                // A character literal closes within a few bytes ('x', '\n', '\u{1F600}',
                // a multi-byte char); a lifetime or label does not.
                let close = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .take(12)
                        .position(|&x| x == b'\'')
                        .map(|p| i + 2 + p)
                } else {
                    b[i + 1..]
                        .iter()
                        .take(5)
                        .position(|&x| x == b'\'')
                        .map(|p| i + 1 + p)
                };
                match close {
                    Some(end) if end > i + 1 => {
                        blank(&mut out, i + 1, end);
                        i = end + 1;
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// At `at` (after an `r`, or `br`'s `r`): the number of `#`s of a raw string's opening.
fn raw_string_at(b: &[u8], at: usize) -> Option<usize> {
    let hashes = b[at.min(b.len())..]
        .iter()
        .take_while(|&&x| x == b'#')
        .count();
    (b.get(at + hashes) == Some(&b'"')).then_some(hashes)
}

fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(text: &str) -> Vec<(String, usize)> {
        functions(text)
            .into_iter()
            .map(|f| (f.name, f.lines))
            .collect()
    }

    #[test]
    fn a_function_spans_from_fn_to_its_brace() {
        let text = "fn a() {\n    let x = 1;\n}\n\nfn b() -> u8 { 2 }\n";
        assert_eq!(lengths(text), [("a".into(), 3), ("b".into(), 1)]);
    }

    #[test]
    fn braces_in_literals_and_comments_do_not_count() {
        let text = "fn a() {\n    let s = \"}}}\";\n    let r = r#\"{\"}\"#;\n    \
                    // }\n    /* } /* } */ } */\n    let c = '}';\n    let l: &'static str = \"\";\n}\n\
                    fn b() {}\n";
        assert_eq!(lengths(text), [("a".into(), 8), ("b".into(), 1)]);
    }

    #[test]
    fn nested_functions_and_methods_are_each_measured() {
        let text = "impl X {\n    fn outer(&self) {\n        fn inner() {\n        }\n    }\n}\n";
        assert_eq!(lengths(text), [("inner".into(), 2), ("outer".into(), 4)]);
    }

    #[test]
    fn declarations_without_a_body_and_test_modules_are_left_out() {
        let text = "trait T {\n    fn f(&self);\n    fn g(&self) {}\n}\n\
                    #[cfg(test)]\nmod tests {\n    fn helper() {\n    }\n}\nfn after() {}\n";
        assert_eq!(lengths(text), [("g".into(), 1), ("after".into(), 1)]);
    }

    #[test]
    fn a_semicolon_in_a_signature_does_not_end_it() {
        let text = "fn a(x: [u8; 4]) -> [u8; 2] {\n    [x[0], x[1]]\n}\n";
        assert_eq!(lengths(text), [("a".into(), 3)]);
    }

    #[test]
    fn lifetimes_are_not_character_literals() {
        let text =
            "fn a<'a>(x: &'a str) -> &'a str {\n    'outer: loop { break 'outer; }\n    x\n}\n";
        assert_eq!(lengths(text), [("a".into(), 4)]);
    }
}
