//! The two examples of the other languages guide (`docs/other-languages.md`, section
//! "TypeScript and Python clients"), as `--test` runs them ([`crate::examples`]): read from
//! the guide at run time, verbatim, and checked against the outputs their comments claim.
//!
//! * The section (from its `## TypeScript and Python clients` heading to the next `## `
//!   heading) must hold exactly one ```` ```ts ```` and exactly one ```` ```python ````
//!   block.
//! * Each block must use [`BASE_URL`], the address `cargo run -p licensing-sim --features
//!   bin -- --seed demo` listens on. That string is the one thing the test changes: it
//!   becomes the URL of the simulator started for the block on a free port.
//! * Every line that prints (`console.log(…)`, `print(…)`) must end with a comment that says
//!   what it prints. The claimed output is the comment's double-quoted part when it has one
//!   (`// HTTP 299: "80001: …"`), else the whole comment; `…` stands for any text. The
//!   block's standard output must be exactly the claimed lines, in order.
//! * A claimed line of the form `<digits>: …` is a business error: the simulator's journal
//!   must show that code answered with HTTP 299.

use anyhow::{Result, bail};
use serde_json::Value;

/// The guide the examples come from, relative to the repository's root.
pub const FILE: &str = "docs/other-languages.md";

/// The section of [`FILE`] the examples come from.
pub const SECTION: &str = "## TypeScript and Python clients";

/// The base URL the examples use, replaced by the test's simulator URL.
pub const BASE_URL: &str = "http://127.0.0.1:8080";

/// How the examples of one language are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flavor {
    pub language: &'static str,
    /// The fence's info string.
    pub fence: &'static str,
    comment: &'static str,
    print: &'static str,
}

pub const TYPESCRIPT: Flavor = Flavor {
    language: "TypeScript",
    fence: "ts",
    comment: "//",
    print: "console.log(",
};

pub const PYTHON: Flavor = Flavor {
    language: "Python",
    fence: "python",
    comment: "#",
    print: "print(",
};

pub const GO: Flavor = Flavor {
    language: "Go",
    fence: "go",
    comment: "//",
    print: "fmt.Println(",
};

/// One output line an example claims, with the guide's line that claims it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub line: usize,
    pub text: String,
}

impl Claim {
    /// The business code of a claimed error line (`80001: user center exception …`).
    pub fn business_code(&self) -> Option<&str> {
        let (code, _) = self.text.split_once(": ")?;
        (!code.is_empty() && code.bytes().all(|b| b.is_ascii_digit())).then_some(code)
    }
}

/// One fenced block of the section.
#[derive(Debug)]
pub struct Example {
    pub flavor: Flavor,
    /// The guide's line of the block's first line of code.
    pub line: usize,
    /// The code, verbatim, ending with a newline.
    pub code: String,
    pub claims: Vec<Claim>,
}

impl Example {
    /// The code pointed at `url` instead of [`BASE_URL`].
    pub fn pointed_at(&self, url: &str) -> String {
        self.code.replace(BASE_URL, url)
    }

    /// Compares what the block printed with what its comments claim.
    pub fn check_output(&self, stdout: &str) -> Result<(), Vec<String>> {
        let printed: Vec<&str> = stdout.lines().collect();
        let mut problems = Vec::new();
        for (i, claim) in self.claims.iter().enumerate() {
            match printed.get(i) {
                Some(line) if matches(&claim.text, line) => {}
                Some(line) => problems.push(format!(
                    "{FILE}:{} claims  {}\n    but it printed  {line}",
                    claim.line, claim.text
                )),
                None => problems.push(format!(
                    "{FILE}:{} claims  {}\n    but nothing more was printed",
                    claim.line, claim.text
                )),
            }
        }
        for line in printed.iter().skip(self.claims.len()) {
            problems.push(format!("printed a line no comment claims: {line}"));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// Checks that every claimed business error was answered with HTTP 299 and its code,
    /// per the simulator's journal.
    pub fn check_journal(&self, journal: &Value) -> Result<(), Vec<String>> {
        let answered = answers(journal);
        let problems: Vec<String> = self
            .claims
            .iter()
            .filter_map(|claim| {
                let code = claim.business_code()?;
                let seen = answered
                    .iter()
                    .any(|(_, status, c)| *status == 299 && c == code);
                (!seen).then(|| {
                    format!(
                        "{FILE}:{} claims business error {code}, but the simulator never \
                         answered {code} with HTTP 299 (journal: {})",
                        claim.line,
                        summary(journal)
                    )
                })
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// The operation, HTTP status and code of each journal entry.
fn answers(journal: &Value) -> Vec<(String, u64, String)> {
    journal["entries"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|e| {
            (
                e["operation"].as_str().unwrap_or("?").to_owned(),
                e["status"].as_u64().unwrap_or(0),
                e["code"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect()
}

/// `allocateShellNums HTTP 200 code 0, addMembers HTTP 299 code 80001`.
pub fn summary(journal: &Value) -> String {
    let answered = answers(journal);
    if answered.is_empty() {
        return "no requests".to_owned();
    }
    answered
        .iter()
        .map(|(operation, status, code)| format!("{operation} HTTP {status} code {code}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The TypeScript and the Python example of [`FILE`]'s [`SECTION`].
#[derive(Debug)]
pub struct Examples {
    pub typescript: Example,
    pub python: Example,
}

impl Examples {
    pub fn parse(guide: &str) -> Result<Examples> {
        let blocks = blocks(guide, SECTION)?;
        Ok(Examples {
            typescript: example(&blocks, SECTION, TYPESCRIPT)?,
            python: example(&blocks, SECTION, PYTHON)?,
        })
    }
}

/// The one ```` ```{flavor.fence} ```` block of `section` (a `## ` heading) of the guide,
/// held to the same rules as the two above.
pub fn section_example(guide: &str, section: &str, flavor: Flavor) -> Result<Example> {
    example(&blocks(guide, section)?, section, flavor)
}

/// The text of the one ```` ```{fence} ```` block of `section`, ending with a newline.
pub fn section_block(guide: &str, section: &str, fence: &str) -> Result<String> {
    let blocks = blocks(guide, section)?;
    match blocks
        .iter()
        .filter(|(info, ..)| *info == fence)
        .collect::<Vec<_>>()[..]
    {
        [(_, _, lines)] => Ok(lines.join("\n") + "\n"),
        _ => bail!("{FILE}: the \"{section}\" section must have exactly one ```{fence} block"),
    }
}

/// A fenced block: its info string, the guide's line of its first line of code, its lines.
type Block<'a> = (&'a str, usize, Vec<&'a str>);

/// The fenced blocks of `section`.
fn blocks<'a>(guide: &'a str, section: &str) -> Result<Vec<Block<'a>>> {
    let mut lines = guide.lines().enumerate().map(|(i, l)| (i + 1, l));
    if !lines.any(|(_, l)| l.trim_end() == section) {
        bail!("{FILE} has no \"{section}\" section");
    }
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (number, line) in lines {
        match open.as_mut() {
            None if line.starts_with("## ") => break,
            None => {
                if let Some(info) = line.trim_start().strip_prefix("```") {
                    open = Some((info.trim(), number + 1, Vec::new()));
                }
            }
            Some(_) if line.trim() == "```" => blocks.extend(open.take()),
            Some((_, _, code)) => code.push(line),
        }
    }
    if let Some((info, first, _)) = open {
        bail!(
            "{FILE}:{}: the ```{info} block of \"{section}\" is never closed",
            first - 1
        );
    }
    Ok(blocks)
}

fn example(blocks: &[Block], section: &str, flavor: Flavor) -> Result<Example> {
    let fence = flavor.fence;
    let found: Vec<&Block> = blocks.iter().filter(|(info, ..)| *info == fence).collect();
    let (line, lines) = match found.as_slice() {
        [(_, line, lines)] => (*line, lines),
        [] => bail!("{FILE}: the \"{section}\" section has no ```{fence} block"),
        several => bail!(
            "{FILE}: the \"{section}\" section has {} ```{fence} blocks (lines {}); \
             the test runs exactly one",
            several.len(),
            several
                .iter()
                .map(|(_, l, _)| (l - 1).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut code = lines.join("\n");
    code.push('\n');
    if !code.contains(BASE_URL) {
        bail!(
            "{FILE}:{}: the ```{fence} block does not use {BASE_URL} (where `cargo run -p \
             licensing-sim --features bin -- --seed demo` listens), so the test cannot point \
             it at its simulator:\n{code}",
            line - 1
        );
    }
    let mut claims = Vec::new();
    for (i, text) in lines.iter().enumerate() {
        let (statement, comment) = split_comment(text, flavor.comment);
        if !prints(statement, flavor.print) {
            continue;
        }
        let Some(comment) = comment else {
            bail!(
                "{FILE}:{}: the ```{fence} block prints without a comment saying what:\n{text}",
                line + i
            );
        };
        claims.push(Claim {
            line: line + i,
            text: claimed(comment).to_owned(),
        });
    }
    if claims.is_empty() {
        bail!(
            "{FILE}:{}: the ```{fence} block claims no output (no `{}…)` with a comment)",
            line - 1,
            flavor.print
        );
    }
    Ok(Example {
        flavor,
        line,
        code,
        claims,
    })
}

/// A line's code and its trailing comment (after `marker`, trimmed), ignoring markers
/// inside string literals (`"http://…"`).
fn split_comment<'a>(line: &'a str, marker: &str) -> (&'a str, Option<&'a str>) {
    let mut quote = None;
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') => quote = Some(c),
            None if line[at..].starts_with(marker) => {
                return (&line[..at], Some(line[at + marker.len()..].trim()));
            }
            None => {}
        }
    }
    (line, None)
}

/// Whether `statement` calls `print` (`print(` not preceded by a name character).
fn prints(statement: &str, print: &str) -> bool {
    statement.match_indices(print).any(|(at, _)| {
        !statement[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

/// The output a comment claims: its double-quoted part, else all of it.
fn claimed(comment: &str) -> &str {
    match (comment.find('"'), comment.rfind('"')) {
        (Some(open), Some(close)) if close > open => &comment[open + 1..close],
        _ => comment,
    }
}

/// Whether `line` is `claim`, with each `…` of the claim standing for any text.
pub fn matches(claim: &str, line: &str) -> bool {
    let parts: Vec<&str> = claim.split('…').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return claim == line;
    };
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const GUIDE: &str = r#"# Title

## TypeScript and Python clients

```sh
cargo xtask clients
```

```ts
const order = orderClient("http://127.0.0.1:8080", "token"); // "//" in a string
console.log(numbers); // [ '1', '2' ]
if (!added.ok) console.log(added.error.message); // HTTP 299: "80001: user center exception (…)"
```

```python
order = order_client("http://127.0.0.1:8080", "token")  # not printed
print(reply.data)  # ['1', '2']
except BusinessError as error:  # HTTP 299
    print(error)  # 80001: user center exception (the account …)
```

## Next

```ts
console.log(1);
```
"#;

    #[test]
    fn the_blocks_and_their_claims_are_read() {
        let examples = Examples::parse(GUIDE).unwrap();
        let ts = &examples.typescript;
        assert_eq!(ts.line, 10);
        assert!(ts.code.starts_with("const order") && ts.code.ends_with("(…)\"\n"));
        let claims: Vec<(usize, &str)> = ts
            .claims
            .iter()
            .map(|c| (c.line, c.text.as_str()))
            .collect();
        assert_eq!(
            claims,
            [
                (11, "[ '1', '2' ]"),
                (12, "80001: user center exception (…)")
            ]
        );
        let py = &examples.python;
        let claims: Vec<&str> = py.claims.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            claims,
            ["['1', '2']", "80001: user center exception (the account …)"]
        );
        assert_eq!(py.claims[0].business_code(), None);
        assert_eq!(py.claims[1].business_code(), Some("80001"));
        assert_eq!(
            py.pointed_at("http://127.0.0.1:4242").lines().next(),
            Some(r#"order = order_client("http://127.0.0.1:4242", "token")  # not printed"#)
        );
    }

    #[test]
    fn missing_doubled_or_unpointable_blocks_fail() {
        let no_python = GUIDE.replace("```python", "```py");
        let error = Examples::parse(&no_python).unwrap_err().to_string();
        assert!(error.contains("has no ```python block"), "{error}");

        let two = GUIDE.replace("## Next", "```ts\nconsole.log(1); // 1\n```\n## Next");
        let error = Examples::parse(&two).unwrap_err().to_string();
        assert!(
            error.contains("has 2 ```ts blocks (lines 9, 22)"),
            "{error}"
        );

        let elsewhere = GUIDE.replace("http://127.0.0.1:8080", "http://localhost:8080");
        let error = Examples::parse(&elsewhere).unwrap_err().to_string();
        assert!(
            error.contains("does not use http://127.0.0.1:8080"),
            "{error}"
        );

        let silent = GUIDE.replace("console.log(numbers); // [ '1', '2' ]", "console.log(n);");
        let error = Examples::parse(&silent).unwrap_err().to_string();
        assert!(
            error.contains("docs/other-languages.md:11: the ```ts block prints without"),
            "{error}"
        );

        let error = Examples::parse("# Title\n").unwrap_err().to_string();
        assert!(
            error.contains("no \"## TypeScript and Python clients\" section"),
            "{error}"
        );
    }

    #[test]
    fn outputs_are_compared_line_by_line() {
        let examples = Examples::parse(GUIDE).unwrap();
        let py = &examples.python;
        let good = "['1', '2']\n80001: user center exception (the account alice@acme)\n";
        assert_eq!(py.check_output(good), Ok(()));
        let problems = py
            .check_output("['1', '3']\n80002: user center exception (the account a)\nmore\n")
            .unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("docs/other-languages.md:17 claims  ['1', '2']\n"));
        assert!(problems[0].ends_with("but it printed  ['1', '3']"));
        assert_eq!(problems[2], "printed a line no comment claims: more");
        let problems = py.check_output("['1', '2']\n").unwrap_err();
        assert!(problems[0].ends_with("but nothing more was printed"));
    }

    #[test]
    fn claimed_errors_must_be_answered_with_299() {
        let examples = Examples::parse(GUIDE).unwrap();
        let entry = |operation: &str, status: u64, code: &str| json!({"operation": operation, "status": status, "code": code});
        let journal = json!({"entries": [entry("a", 200, "0"), entry("b", 299, "80001")]});
        assert_eq!(examples.typescript.check_journal(&journal), Ok(()));
        assert_eq!(
            summary(&journal),
            "a HTTP 200 code 0, b HTTP 299 code 80001"
        );
        let journal = json!({"entries": [entry("b", 200, "80001")]});
        let problems = examples.typescript.check_journal(&journal).unwrap_err();
        assert!(problems[0].contains("never answered 80001 with HTTP 299"));
    }

    #[test]
    fn ellipses_match_any_text() {
        assert!(matches("abc", "abc"));
        assert!(!matches("abc", "abcd"));
        assert!(matches("a (…)", "a (b c)"));
        assert!(matches("a (…)", "a ()"));
        assert!(!matches("a (…)", "b (c)"));
        assert!(matches("…x…z", "wxyz"));
        assert!(!matches("x…x", "x"));
    }

    #[test]
    fn comments_inside_strings_are_not_comments() {
        assert_eq!(
            split_comment(r#"f("http://a", 'it\'s // no') // yes"#, "//"),
            (r#"f("http://a", 'it\'s // no') "#, Some("yes"))
        );
        assert_eq!(split_comment("x = '#'", "#"), ("x = '#'", None));
        assert!(prints("  print(error)", "print("));
        assert!(!prints("sprint(x); obj.print(y)", "print("));
    }

    /// The repository's guide itself.
    #[test]
    fn the_guide_has_both_examples() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/other-languages.md");
        let guide = std::fs::read_to_string(path).unwrap();
        let examples = Examples::parse(&guide).unwrap();
        for example in [&examples.typescript, &examples.python] {
            assert!(example.claims.len() >= 2, "{example:?}");
            assert!(
                example.claims.iter().any(|c| c.business_code().is_some()),
                "{example:?}"
            );
        }
    }
}
