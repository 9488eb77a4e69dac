//! `licensing-spec-diff` as a process: what `--base` accepts, what a hostile head spec can
//! do to the markdown report (nothing: a pull request's own spec must not edit the comment
//! its gate writes), and that it runs on a copy of the specs outside this repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn spec_diff(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_licensing-spec-diff"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("xtask runs")
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            out.extend(files_under(&path));
        }
        out.push(path);
    }
    out
}

/// Handed to git as it was, `--output=…` made `git show` write `DIR/o:spec/order.yaml`.
#[test]
fn a_base_that_is_an_option_writes_nothing_and_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    for base in [
        format!("--base=--output={}/o", dir.path().display()),
        format!("--base=-o{}/p", dir.path().display()),
    ] {
        let out = spec_diff(&[&base], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--base"), "{stderr}");
        assert!(stderr.contains("not an option"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(files_under(dir.path()), Vec::<PathBuf>::new());
}

#[test]
fn the_report_says_which_commit_or_directory_it_read() {
    let root = root();
    let head = git(&root, &["rev-parse", "HEAD"]);
    let spec = root.join("spec");
    let out = spec_diff(
        &[
            "--base",
            "HEAD",
            "--head",
            spec.to_str().unwrap(),
            "--format",
            "json",
        ],
        &root,
    );
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["base"]["kind"], "revision");
    assert_eq!(report["base"]["revision"], "HEAD");
    assert_eq!(report["base"]["commit"], head.as_str());
    assert_eq!(report["head"]["kind"], "directory");
    assert_eq!(report["head"]["path"], spec.display().to_string());
    // A name that is neither: refused with exit 2, nothing compared.
    let out = spec_diff(&["--base", "no-such-revision-or-directory"], &root);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither a directory nor a commit"));
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Every kind of markup a value could smuggle into a pull-request comment.
const HOSTILE: &str = "x\n# Forged heading\n\n| forged | row |\n|---|---|\n<!-- the rest hidden\n\
     <script>alert(1)</script><img src=x onerror=alert(2)>\n[click](javascript:alert(3))\n\
     ](javascript:alert(4)) `code` \u{1b}]52;c;aGk=\u{7}\u{202e}";

/// The current specs with a hostile property name, enum value and path in `order.yaml`.
fn hostile_head(dir: &Path) {
    let root = root();
    let text = std::fs::read_to_string(root.join("spec/order.yaml")).unwrap();
    let mut doc = licensing_spec::raw(&text).unwrap();
    let schemas = &mut doc["components"]["schemas"];
    schemas["EnterpriseCustomer"]["properties"][HOSTILE] = serde_json::json!({"type": "string"});
    schemas["SyncMode"]["enum"]
        .as_array_mut()
        .unwrap()
        .push(HOSTILE.into());
    let paths = doc["paths"].as_object_mut().unwrap();
    let (_, item) = paths
        .iter()
        .find(|(path, item)| item.get("get").is_some() && !path.contains('{'))
        .map(|(p, i)| (p.clone(), i.clone()))
        .unwrap();
    let mut item = item;
    item["get"]["operationId"] = "listEverything".into();
    item["get"]["summary"] = HOSTILE.into();
    paths.insert(format!("/x/{}", HOSTILE.replace('\n', " ")), item);
    let yaml = licensing_spec::to_yaml(&doc).unwrap();
    std::fs::write(dir.join("order.yaml"), yaml).unwrap();
    std::fs::copy(root.join("spec/member.yaml"), dir.join("member.yaml")).unwrap();
}

/// The markdown parsed as GitHub reads it (CommonMark with GFM tables): its headings, the
/// rows of each table, and any HTML or link in it.
struct Read {
    headings: Vec<String>,
    rows: Vec<usize>,
    html: Vec<String>,
    links: Vec<String>,
}

fn read(markdown: &str) -> Read {
    let mut r = Read {
        headings: vec![],
        rows: vec![],
        html: vec![],
        links: vec![],
    };
    let (mut heading, mut in_heading, mut cells) = (String::new(), false, 0);
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. }) => in_heading = true,
            Event::End(TagEnd::Heading(_)) => {
                r.headings.push(std::mem::take(&mut heading));
                in_heading = false;
            }
            Event::Text(t) | Event::Code(t) if in_heading => heading.push_str(&t),
            Event::Start(Tag::TableRow | Tag::TableHead) => cells = 0,
            Event::Start(Tag::TableCell) => cells += 1,
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => r.rows.push(cells),
            Event::Html(h) | Event::InlineHtml(h) => r.html.push(h.to_string()),
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                r.links.push(dest_url.to_string())
            }
            _ => {}
        }
    }
    r
}

#[test]
fn a_hostile_head_spec_adds_no_heading_row_html_or_link_to_the_markdown() {
    let dir = tempfile::tempdir().expect("tempdir");
    hostile_head(dir.path());
    let root = root();
    let head = dir.path().to_str().unwrap();
    // With the workspace, as `cargo xtask spec-diff` runs it: the versions table too.
    let workspace = root.to_str().unwrap();
    let md = spec_diff(
        &["--base", "spec", "--head", head, "--workspace", workspace],
        &root,
    );
    let json = spec_diff(
        &[
            "--base",
            "spec",
            "--head",
            head,
            "--format",
            "json",
            "--workspace",
            workspace,
        ],
        &root,
    );
    assert_eq!(
        md.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&md.stderr)
    );
    let report: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let changes = report["changes"].as_array().unwrap();
    // The property, the enum value and the operation, at least.
    assert!(changes.len() >= 3, "{changes:?}");
    let text = String::from_utf8(md.stdout).unwrap();
    let r = read(&text);
    // The only HTML is the report's own line break in each change's cell.
    assert!(
        r.html.iter().all(|h| h == "<br>") && r.html.len() == changes.len(),
        "HTML from the spec: {:?}\n{text}",
        r.html
    );
    assert!(
        r.links.is_empty(),
        "links from the spec: {:?}\n{text}",
        r.links
    );
    // Its own headings only: the title, one per (spec, operations) group, the versions.
    let groups: std::collections::BTreeSet<(String, String)> = changes
        .iter()
        .map(|c| {
            let op = c["operation"].as_str().unwrap_or("(no operation)");
            (c["spec"].as_str().unwrap().to_string(), op.to_string())
        })
        .collect();
    assert_eq!(
        r.headings.len(),
        groups.len() + 2,
        "{:?}\n{text}",
        r.headings
    );
    assert!(r.headings[0].starts_with("Spec changes: "));
    assert_eq!(r.headings.last().map(String::as_str), Some("Versions"));
    assert!(!r.headings.iter().any(|h| h.contains("Forged")), "{text}");
    // Its own rows only: each group's header and one row a change of nine cells, then
    // the versions table's header and one row a package, of two.
    let bumps = report["bump"].as_object().unwrap().len();
    assert!(bumps > 0, "the workspace's packages: {report}");
    let change_rows: Vec<usize> = r.rows[..r.rows.len() - bumps - 1].to_vec();
    assert_eq!(change_rows.len(), changes.len() + groups.len(), "{text}");
    assert!(
        change_rows.iter().all(|&c| c == 9),
        "{change_rows:?}\n{text}"
    );
    assert!(r.rows[r.rows.len() - bumps - 1..].iter().all(|&c| c == 2));
    // No control character reaches the document (the terminal it may be printed on).
    assert!(!text.contains(['\u{1b}', '\u{7}', '\u{202e}']), "{text:?}");
    // The value is still there to read, escaped.
    assert!(text.contains("Forged heading"), "{text}");
}

fn run_git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=partner",
            "-c",
            "user.email=partner@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A partner's repository outside this one, its copy of the specs in a folder of its own:
/// compared by revision (`--spec-dir`) and by directory, with no cargo workspace.
#[test]
fn a_partners_copy_of_the_specs_is_compared_outside_this_repository() {
    let partner = tempfile::tempdir().expect("tempdir");
    let copy = partner.path().join("vendor/licensing");
    std::fs::create_dir_all(&copy).unwrap();
    let root = root();
    for file in ["order.yaml", "member.yaml"] {
        std::fs::copy(root.join("spec").join(file), copy.join(file)).unwrap();
    }
    run_git(partner.path(), &["init", "--quiet"]);
    run_git(partner.path(), &["add", "vendor"]);
    run_git(partner.path(), &["commit", "--quiet", "-m", "the specs"]);
    let commit = git(partner.path(), &["rev-parse", "HEAD"]);
    // The next version: one operation less.
    let text = std::fs::read_to_string(copy.join("order.yaml")).unwrap();
    let mut doc = licensing_spec::raw(&text).unwrap();
    let paths = doc["paths"].as_object_mut().unwrap();
    let removed = paths.keys().next().unwrap().clone();
    paths.remove(&removed);
    std::fs::write(
        copy.join("order.yaml"),
        licensing_spec::to_yaml(&doc).unwrap(),
    )
    .unwrap();

    let args = ["--base", "HEAD", "--spec-dir", "vendor/licensing"];
    let json = spec_diff(&[&args[..], &["--format", "json"]].concat(), partner.path());
    assert_eq!(json.status.code(), Some(1), "{json:?}");
    let report: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(report["base"]["kind"], "revision");
    assert_eq!(report["base"]["commit"], commit.as_str());
    assert_eq!(report["head"]["kind"], "directory");
    let removed_pointer = format!("/paths/{}", removed.replace('~', "~0").replace('/', "~1"));
    let changes = report["changes"].as_array().unwrap();
    assert!(
        changes
            .iter()
            .any(|c| c["pointer"].as_str().unwrap().starts_with(&removed_pointer)),
        "{changes:?}"
    );
    // No workspace given: no version judged, and the markdown says so.
    assert_eq!(report["bump"], serde_json::json!({}));
    let md = spec_diff(&args, partner.path());
    assert_eq!(md.status.code(), Some(1));
    let text = String::from_utf8(md.stdout).unwrap();
    assert!(text.contains("Not judged: no cargo workspace"), "{text}");

    // The same two versions as directories, and a version against itself.
    let old = partner.path().join("old");
    std::fs::create_dir(&old).unwrap();
    for file in ["order.yaml", "member.yaml"] {
        let blob = format!("HEAD:vendor/licensing/{file}");
        let out = Command::new("git")
            .args(["show", &blob])
            .current_dir(partner.path())
            .output()
            .unwrap();
        std::fs::write(old.join(file), out.stdout).unwrap();
    }
    let by_dir = spec_diff(
        &[
            "--base",
            "old",
            "--head",
            "vendor/licensing",
            "--format",
            "json",
        ],
        partner.path(),
    );
    assert_eq!(by_dir.status.code(), Some(1), "{by_dir:?}");
    let by_dir: Value = serde_json::from_slice(&by_dir.stdout).unwrap();
    assert_eq!(by_dir["changes"], report["changes"]);
    let same = spec_diff(&["--base", "old", "--head", "old"], partner.path());
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    assert!(String::from_utf8_lossy(&same.stdout).contains("No change."));
}

/// A side the generator would refuse is no version anyone could be handed: exit 2, the
/// message naming the file, nothing on stdout.
#[test]
fn a_spec_that_is_not_openapi_exits_2_naming_its_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = root();
    std::fs::copy(
        root.join("spec/member.yaml"),
        dir.path().join("member.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("order.yaml"),
        "openapi: 3.0.3\npaths: [1, 2]\n",
    )
    .unwrap();
    let head = dir.path().to_str().unwrap();
    let out = spec_diff(&["--base", "spec", "--head", head], &root);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("order.yaml"), "{stderr}");
    assert!(out.stdout.is_empty());
}
