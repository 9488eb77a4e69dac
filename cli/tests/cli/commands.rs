//! The service commands, the raw call, the sandbox commands and completion.

use std::collections::BTreeMap;

use licensing_sdk::operations;
use licensing_test_support::raw::RawServer;
use serde_json::Value;

use crate::{ALLOCATE_ONE, Sim, assert_exit, dead_url, filters, stderr, stdout};

/// `member list-members` of the demo seed's first enterprise.
const LIST_MEMBERS: [&str; 4] = [
    "member",
    "list-members",
    "--enterprise-global-id",
    "EG-000001",
];

/// The spec's example of a component schema.
fn example(schema: &str) -> Value {
    for file in ["../spec/order.yaml", "../spec/member.yaml"] {
        let spec: Value = serde_norway::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        if let Some(example) = spec["components"]["schemas"][schema].get("example") {
            return example.clone();
        }
    }
    panic!("no example for {schema} in the specs")
}

/// A value for a parameter, by name, that the demo seed knows.
fn parameter(name: &str) -> &'static str {
    match name {
        "enterpriseGlobalId" => "EG-000001",
        "memberGlobalId" => "MG-000017",
        "assetId" => "A-000001",
        "channelCode" => "CH01",
        "channelCustomerId" => "CC-ACME",
        "defaultCustomer" => "N",
        "appKey" => "APP_KEY",
        "pageNum" => "1",
        "pageSize" => "10",
        other => panic!("no test value for parameter `{other}`: add one"),
    }
}

/// A flag's name, as the build script derives it.
fn kebab(name: &str) -> String {
    heck::ToKebabCase::to_kebab_case(name)
}

#[test]
fn every_operation_is_reached_through_its_command() {
    let sim = Sim::start();
    for op in operations::ALL {
        let service = match op.service {
            operations::Service::Order => "order",
            operations::Service::Member => "member",
        };
        let mut cmd = sim.cmd();
        // The appKey comes from the environment (or the profile); --app-key is optional.
        cmd.env("LICENSING_APP_KEY", parameter("appKey"));
        cmd.args([service, &kebab(op.id)]);
        for name in op.path_params() {
            cmd.arg(format!("--{}", kebab(name))).arg(parameter(name));
        }
        // The page flags are required unless --paginate, so the usage line does not show
        // them: one page is asked for, as any other call.
        if let Some(paging) = op.pagination {
            for name in [paging.page_param, paging.size_param] {
                cmd.arg(format!("--{}", kebab(name))).arg(parameter(name));
            }
        }
        // Required query parameters, as `--help` lists them in its usage line.
        let help = sim.run(&[service, &kebab(op.id), "--help"]);
        let usage = stdout(&help);
        let usage = usage
            .lines()
            .find(|l| l.starts_with("Usage:"))
            .unwrap()
            .to_string();
        for word in usage.split_whitespace() {
            if let Some(flag) = word.strip_prefix("--").filter(|f| *f != "json-body") {
                let wire: String = flag
                    .split('-')
                    .enumerate()
                    .map(|(i, part)| {
                        if i == 0 {
                            part.to_string()
                        } else {
                            part[..1].to_uppercase() + &part[1..]
                        }
                    })
                    .collect();
                if !op.path_params().any(|p| p == wire) {
                    cmd.arg(word).arg(parameter(&wire));
                }
            }
        }
        if let Some(request) = op.request_type {
            let schema = request.rsplit("::").next().unwrap();
            let body = sim.path(&format!("{}.json", op.id));
            std::fs::write(&body, example(schema).to_string()).unwrap();
            cmd.arg("--json-body").arg(&body);
        }
        let before = sim.journal().len();
        let output = cmd.output().unwrap();
        // Sent and answered: success, or the platform's business error (exit 1); never a
        // usage error (2) or a transport failure (3).
        let code = output.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{}: exit {code:?}\n{}",
            op.id,
            stderr(&output)
        );
        let journal = sim.journal();
        assert_eq!(
            &journal[before..],
            [op.id.to_string()],
            "{} was not the one request sent",
            op.id
        );
    }
}

#[test]
fn outputs_are_json_when_piped_and_tables_when_asked() {
    let sim = Sim::start();
    let list = |format: Option<&str>| {
        let mut cmd = sim.cmd();
        cmd.args(LIST_MEMBERS)
            .args(["--page-num", "1", "--page-size", "3"]);
        if let Some(format) = format {
            cmd.args(["--output", format]);
        }
        let output = cmd.output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let piped = list(None);
    assert_eq!(
        piped,
        list(Some("json")),
        "JSON is the default off a terminal"
    );
    let page: Value = serde_json::from_str(&piped).unwrap();
    assert_eq!(page["list"].as_array().unwrap().len(), 3);
    filters().bind(|| {
        insta::assert_snapshot!("list_members_json", piped);
        insta::assert_snapshot!("list_members_table", list(Some("table")));
    });
    let output = sim
        .cmd()
        .args(["order", "query-enterprise", "--channel-code", "CH01"])
        .args([
            "--channel-customer-id",
            "CC-ACME",
            "--default-customer",
            "N",
            "-o",
            "table",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    filters().bind(|| insta::assert_snapshot!("query_enterprise_table", stdout(&output)));
}

#[test]
fn paginate_streams_every_item_as_a_json_line() {
    let sim = Sim::start();
    let output = sim
        .cmd()
        .args(LIST_MEMBERS)
        .args(["--page-num", "1", "--page-size", "2", "--paginate"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let items: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let total = serde_json::from_str::<Value>(&stdout(
        &sim.cmd()
            .args(LIST_MEMBERS)
            .args(["--page-num", "1", "--page-size", "100"])
            .output()
            .unwrap(),
    ))
    .unwrap()["total"]
        .as_u64()
        .unwrap();
    assert!(total > 2, "the seed has several pages of employees");
    assert_eq!(items.len() as u64, total);
    let ids: std::collections::BTreeSet<_> =
        items.iter().map(|i| i["globalId"].to_string()).collect();
    assert_eq!(ids.len() as u64, total, "no item twice");
    let pages = sim.journal().iter().filter(|o| *o == "listMembers").count() as u64;
    assert_eq!(pages, total.div_ceil(2) + 1);
}

#[test]
fn a_bad_flag_is_a_usage_error_and_nothing_is_sent() {
    let sim = Sim::start();
    let output = sim.run(&["order", "allocate-shell-nums", "--size", "zero"]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("invalid value 'zero' for '--size <INTEGER>'"),
        "{err}"
    );
    let output = sim.run(&["order", "allocate-shell-nums", "--size", "0"]);
    assert_exit(&output, 2, "0 is not in 1..");
    let output = sim.run(&["member", "list-members", "--page-num", "1"]);
    assert_exit(&output, 2, "--enterprise-global-id");
    assert!(sim.journal().is_empty());
}

#[test]
fn a_bad_body_names_the_field_and_the_rule_and_nothing_is_sent() {
    let sim = Sim::start();
    let add = |body: &str| {
        sim.cmd()
            .args([
                "member",
                "add-members",
                "--enterprise-global-id",
                "EG-000001",
            ])
            .args(["--json-body", "-"])
            .write_stdin(body.to_string())
            .output()
            .unwrap()
    };
    for (body, expected) in [
        (
            r#"{"userList":[{"userName":"a-b","name":"A","password":"Initial-1"}]}"#,
            "error: invalid input: `userList[0].userName` doesn't match pattern \"^[A-Za-z0-9]+$\"; nothing was sent\n",
        ),
        (
            r#"{"userList":[]}"#,
            "error: invalid input: `userList` must have 1 to 100 items (has 0); nothing was sent\n",
        ),
        (
            r#"{"userList":[{"name":"A","password":"Initial-1"}]}"#,
            "error: invalid input: `userList[0].userName` is required; nothing was sent\n",
        ),
        (
            "{\"userList\": [",
            "error: --json-body -: not valid JSON: EOF while parsing a list at line 1 column 14\n",
        ),
    ] {
        let output = add(body);
        assert_eq!(output.status.code(), Some(2), "{body}");
        assert_eq!(stderr(&output), expected, "{body}");
    }
    // Scalar fields are flags too, checked the same way.
    let output = sim.run_with_stdin(&["order", "disable-locks", "--json-body", "-"], "{}");
    assert_exit(&output, 2, "is required");
    assert!(sim.journal().is_empty());
}

#[test]
fn api_errors_exit_1_and_transport_failures_exit_3_in_one_line() {
    let sim = Sim::start();
    let output = sim
        .cmd()
        .args([
            "member",
            "delete-member",
            "--enterprise-global-id",
            "EG-000001",
        ])
        .args(["--member-global-id", "MG-NOPE"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: deleteMember: error "), "{err}");

    let url = dead_url();
    let output = sim
        .cmd()
        .env("LICENSING_ORDER_URL", &url)
        .args(ALLOCATE_ONE)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    let verbose = sim
        .cmd()
        .env("LICENSING_ORDER_URL", &url)
        .args(ALLOCATE_ONE)
        .arg("--verbose")
        .output()
        .unwrap();
    assert_exit(&verbose, 3, "\n  caused by: ");
}

#[test]
fn api_prints_the_reply_as_received_with_auth_and_nonce_added() {
    let sim = Sim::start();
    let output = sim.run(&[
        "api",
        "POST",
        "/order/api/order/v1/shellnums",
        "-f",
        "size:=2",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let reply: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(reply["code"], 0);
    assert_eq!(reply["data"].as_array().unwrap().len(), 2);
    assert_eq!(sim.journal(), ["allocateShellNums"]);

    let output = sim.run(&[
        "api",
        "GET",
        "/me/api/v1/enterprise/EG-NOPE/asset/assetNums",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let reply: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_ne!(reply["code"], 0, "the envelope is printed as received");
    assert!(reply.get("message").is_some());
    // Without the tokens, nothing is sent.
    let output = sim
        .cmd()
        .env_remove("LICENSING_CLIENT_TOKEN")
        .args(["api", "GET", "/me/api/v1/enterprise/EG-000001/lentLocks"])
        .output()
        .unwrap();
    assert_exit(&output, 2, "LICENSING_CLIENT_TOKEN: is not set");
}

#[test]
fn sandbox_commands_drive_the_simulator() {
    let sim = Sim::start();
    let run = |args: &[&str]| sim.ok(args);
    let rule: Value = serde_json::from_str(&run(&[
        "sandbox",
        "faults",
        "add",
        "allocateShellNums",
        "--kind",
        "code",
        "--code",
        "500",
        "--times",
        "1",
    ]))
    .unwrap();
    filters().bind(|| {
        insta::assert_snapshot!(
            "faults_list_table",
            run(&["sandbox", "faults", "list", "-o", "table"])
        )
    });
    let output = sim.run(&ALLOCATE_ONE);
    assert_eq!(output.status.code(), Some(1), "the fault answered 500");
    run(&["sandbox", "faults", "remove", &rule["id"].to_string()]);
    assert_eq!(run(&["sandbox", "faults", "list"]).trim(), "[]");

    let journal: Value = serde_json::from_str(&run(&[
        "sandbox",
        "journal",
        "--operation",
        "allocateShellNums",
    ]))
    .unwrap();
    assert_eq!(journal["entries"][0]["code"], "500");

    let before: Value = serde_json::from_str(&run(&["sandbox", "clock", "show"])).unwrap();
    let after: Value = serde_json::from_str(&run(&["sandbox", "clock", "advance", "2h"])).unwrap();
    let moved = after["now"].as_i64().unwrap() - before["now"].as_i64().unwrap();
    assert!((7_200_000..7_260_000).contains(&moved), "{moved}");

    let state = sim.path("state.json");
    std::fs::write(&state, run(&["sandbox", "state", "export"])).unwrap();
    let members = sim.sim.export_state()["state"]["members"]
        .as_object()
        .unwrap()
        .len();
    assert!(members > 0);
    run(&["sandbox", "reset"]);
    assert_eq!(
        sim.sim.export_state()["state"]["members"]
            .as_object()
            .unwrap()
            .len(),
        0
    );
    run(&["sandbox", "state", "import", state.to_str().unwrap()]);
    assert_eq!(
        sim.sim.export_state()["state"]["members"]
            .as_object()
            .unwrap()
            .len(),
        members
    );
    run(&["sandbox", "reset"]);
    run(&["sandbox", "seed", "demo"]);
    assert_eq!(
        sim.sim.export_state()["state"]["members"]
            .as_object()
            .unwrap()
            .len(),
        members
    );

    let output = sim.run_with_stdin(
        &["sandbox", "seed", "--file", "-"],
        r#"{"enterprises":[{"bogus":1}]}"#,
    );
    assert_exit(&output, 2, "enterprises[0]");
}

#[test]
fn journal_follow_prints_new_entries_until_interrupted() {
    let sim = Sim::start();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("licensing"))
        .args(["sandbox", "journal", "--follow"])
        .env("LICENSING_SANDBOX_URL", sim.sim.url())
        .env("LICENSING_CONFIG_DIR", sim.dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let output = sim.run(&["order", "allocate-shell-nums", "--size", "1"]);
    assert!(output.status.success());
    std::thread::sleep(std::time::Duration::from_millis(600));
    crate::signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut text = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut text).unwrap();
    let ops: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["operation"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ops, ["allocateShellNums"]);
}

#[test]
fn completion_scripts_cover_the_generated_commands() {
    let sim = Sim::start();
    let mut sizes = BTreeMap::new();
    for shell in ["bash", "zsh", "fish"] {
        let output = sim.run(&["completion", shell]);
        assert!(output.status.success());
        let script = stdout(&output);
        assert!(script.contains("list-members"), "{shell}");
        assert!(script.contains("enterprise-global-id"), "{shell}");
        sizes.insert(shell, script.len());
    }
    let output = sim.run(&["completion", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));
}

/// A `batchOrder` body: one `new_buy` order of the demo seed's customer for `number`.
fn batch(sim: &Sim, number: &str) -> std::path::PathBuf {
    let order = licensing_test_support::orders::new_buy(number);
    let body = serde_json::json!({
        "channelCode": "CH01", "channelOrderId": format!("CO-{number}"), "syncMode": "sync",
        "orderList": [order]
    });
    let path = sim.path(&format!("batch-{number}.json"));
    std::fs::write(&path, body.to_string()).unwrap();
    path
}

/// Newly allocated asset numbers, through the command line.
fn shell_numbers(sim: &Sim, n: usize) -> Vec<String> {
    let output = sim.run(&["order", "allocate-shell-nums", "--size", &n.to_string()]);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str::<Vec<Value>>(&stdout(&output))
        .unwrap()
        .iter()
        .map(|n| n.as_str().map_or_else(|| n.to_string(), str::to_string))
        .collect()
}

#[test]
fn batch_order_takes_the_app_key_from_the_environment_or_the_profile_and_never_prints_it() {
    let sim = Sim::start();
    let numbers = shell_numbers(&sim, 3);
    let secrets = [
        "env-app-key-0451",
        "profile-app-key-0452",
        "stdin-app-key-0453",
    ];
    let quiet = |output: &std::process::Output| {
        for secret in secrets {
            assert!(
                !stdout(output).contains(secret) && !stderr(output).contains(secret),
                "{secret} was printed"
            );
        }
    };
    let orders_before = sim.orders().len();
    // From the environment.
    let output = sim
        .cmd()
        .env("LICENSING_APP_KEY", secrets[0])
        .args(["order", "batch-order", "--json-body"])
        .arg(batch(&sim, &numbers[0]))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    quiet(&output);
    // From the profile (`default`, used when none is named), given on stdin.
    let add = sim.run_with_stdin(
        &["profile", "add", "default", "--app-key", "-"],
        format!("{}\n", secrets[1]),
    );
    assert!(add.status.success(), "{}", stderr(&add));
    quiet(&add);
    let output = sim
        .cmd()
        .args(["order", "batch-order", "--json-body"])
        .arg(batch(&sim, &numbers[1]))
        .arg("--verbose")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    quiet(&output);
    // From the flag's `-`: stdin.
    let output = sim
        .cmd()
        .args(["order", "batch-order", "--app-key", "-", "--json-body"])
        .arg(batch(&sim, &numbers[2]))
        .write_stdin(format!("{}\n", secrets[2]))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    quiet(&output);
    assert_eq!(sim.orders().len(), orders_before + 3);
    assert_eq!(
        sim.journal().iter().filter(|o| *o == "batchOrder").count(),
        3
    );
    // --app-key - and --json-body - cannot share stdin.
    let output = sim.run_with_stdin(
        &["order", "batch-order", "--app-key", "-", "--json-body", "-"],
        "{}",
    );
    assert_exit(&output, 2, "cannot both read stdin");
    // A transport failure with --verbose prints its causes, never the appKey.
    let dead = dead_url();
    let output = sim
        .cmd()
        .env("LICENSING_ORDER_URL", &dead)
        .env("LICENSING_APP_KEY", secrets[0])
        .args([
            "order",
            "batch-order",
            "--retry",
            "never",
            "--verbose",
            "--json-body",
        ])
        .arg(batch(&sim, &numbers[0]))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("caused by"), "{}", stderr(&output));
    quiet(&output);
}

#[test]
fn batch_order_without_an_app_key_is_a_usage_error_and_nothing_is_sent() {
    let sim = Sim::start();
    let number = shell_numbers(&sim, 1).remove(0);
    let before = sim.journal().len();
    for blank in [None, Some("  ")] {
        let mut cmd = sim.cmd();
        if let Some(blank) = blank {
            cmd.env("LICENSING_APP_KEY", blank);
        }
        let output = cmd
            .args(["order", "batch-order", "--json-body"])
            .arg(batch(&sim, &number))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(
            stderr(&output),
            "error: appKey is required: --app-key - (reads stdin), LICENSING_APP_KEY, or the \
             profile's app_key\n"
        );
    }
    assert_eq!(sim.journal().len(), before, "nothing was sent");
    let help = sim.run(&["order", "batch-order", "--help"]);
    assert!(
        stdout(&help).contains(
            "Default: LICENSING_APP_KEY, else the profile's app_key; `-` reads it from stdin."
        ),
        "{}",
        stdout(&help)
    );
}

/// A server that answers every request with `reply`, and hands over each request line.
fn stub(reply: &'static str) -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::Write as _;
    let (tx, rx) = std::sync::mpsc::channel();
    let server = RawServer::start(move |mut stream, request| {
        let _ = tx.send(request.line().to_string());
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{reply}",
            reply.len()
        );
    });
    (server.url, rx)
}

#[test]
fn the_app_key_sent_is_the_flag_over_the_environment_over_the_profile() {
    let sim = Sim::start();
    let (url, requests) = stub(r#"{"code":0,"message":"success","data":[]}"#);
    let add = sim.run_with_stdin(
        &["profile", "add", "default", "--app-key", "-"],
        "key-of-profile\n",
    );
    assert!(add.status.success(), "{}", stderr(&add));
    let body = batch(&sim, "8000000001");
    let sent = |env: Option<&str>, flag: Option<&str>, stdin: &str| {
        let mut cmd = sim.cmd();
        if let Some(key) = env {
            cmd.env("LICENSING_APP_KEY", key);
        }
        cmd.env("LICENSING_ORDER_URL", &url)
            .args(["order", "batch-order", "--retry", "never", "--json-body"])
            .arg(&body);
        if let Some(key) = flag {
            cmd.args(["--app-key", key]);
        }
        let output = cmd.write_stdin(stdin).output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(!stdout(&output).contains("key-of") && !stderr(&output).contains("key-of"));
        let line = requests
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        let query = line
            .split(['?', ' '])
            .nth(2)
            .unwrap_or_default()
            .to_string();
        query
            .split('&')
            .find_map(|p| p.strip_prefix("appKey="))
            .unwrap_or_else(|| panic!("no appKey in {line}"))
            .to_string()
    };
    assert_eq!(sent(None, None, ""), "key-of-profile");
    assert_eq!(sent(Some("key-of-env"), None, ""), "key-of-env");
    assert_eq!(
        sent(Some("key-of-env"), Some("key-of-flag"), ""),
        "key-of-flag"
    );
    assert_eq!(
        sent(Some("key-of-env"), Some("-"), "key-of-stdin\r\n"),
        "key-of-stdin"
    );
}

#[test]
fn paginate_starts_at_page_1_with_a_default_page_size() {
    let sim = Sim::start();
    let list = |extra: &[&str]| {
        let output = sim
            .cmd()
            .args([
                "member",
                "list-members",
                "--enterprise-global-id",
                "EG-000001",
                "--paginate",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["globalId"].to_string())
            .collect::<Vec<_>>()
    };
    let all = list(&[]);
    assert_eq!(all.len(), 5, "the demo seed's employees of EG-000001");
    let journal = sim
        .rt
        .block_on(sim.sim.admin().list_journal().send())
        .unwrap()
        .into_inner();
    let query: Vec<(String, String)> = journal.entries[0]
        .query
        .iter()
        .map(|q| (q.name.clone(), q.value.clone()))
        .collect();
    assert!(
        query.contains(&("pageNum".into(), "1".into()))
            && query.contains(&("pageSize".into(), "100".into())),
        "{query:?}"
    );
    assert_eq!(sim.journal().len(), 1, "one page of 100 holds them all");
    // A page size, still from page 1: the same items, three pages.
    assert_eq!(list(&["--page-size", "2"]), all);
    assert_eq!(sim.journal().len(), 4);
    // Without --paginate, the spec's required page flags are required.
    let output = sim.run(&LIST_MEMBERS);
    assert_exit(&output, 2, "--page-num");
    let help = sim.run(&["member", "list-members", "--help"]);
    assert!(
        stdout(&help).contains("With --paginate: 100 unless given; the spec documents no maximum."),
        "{}",
        stdout(&help)
    );
}

#[test]
fn tables_escape_control_characters_and_json_keeps_them() {
    let sim = Sim::start();
    // Short enough for its escaped form to fit a cell uncut.
    let name = "E\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}gpj.exe";
    let output = sim
        .cmd()
        .args(["order", "bind-enterprise", "--channel-code", "CH09"])
        .args([
            "--channel-customer-id",
            "CC-EVIL",
            "--customer-name",
            "Evil",
        ])
        .args(["--branch-name", "North", "--password-mobile", "13800000000"])
        .args(["--enterprise-name", name])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let query = |format: &str| {
        let output = sim
            .cmd()
            .args(["order", "query-enterprise", "--channel-code", "CH09"])
            .args([
                "--channel-customer-id",
                "CC-EVIL",
                "--default-customer",
                "N",
            ])
            .args(["--output", format])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        output.stdout
    };
    let table = String::from_utf8(query("table")).unwrap();
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!table.contains(raw), "{raw:?} in {table:?}");
    }
    assert!(
        table.contains("E\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}gpj.exe"),
        "{table}"
    );
    let json: Value = serde_json::from_slice(&query("json")).unwrap();
    assert_eq!(json[0]["enterpriseName"], name);
}

#[test]
fn a_partial_failure_prints_each_list_as_a_table_of_its_own() {
    let sim = Sim::start();
    let user = r#"{"userName":"grace","name":"Grace","password":"Initial-1"}"#;
    let output = sim.run_with_stdin(
        &[
            "member",
            "add-members",
            "--enterprise-global-id",
            "EG-000001",
            "-o",
            "table",
            "--json-body",
            "-",
        ],
        format!(r#"{{"userList":[{user},{user}]}}"#),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("60027"), "{}", stderr(&output));
    let table = stdout(&output);
    // One table per list, under its name, in the data's order.
    let sections: BTreeMap<&str, Vec<&str>> = table
        .split("\n\n")
        .map(|section| {
            let mut lines = section.lines();
            (lines.next().unwrap(), lines.collect())
        })
        .collect();
    assert_eq!(
        sections.keys().copied().collect::<Vec<_>>(),
        ["failed:", "succeeded:"],
        "{table}"
    );
    let failed = &sections["failed:"];
    assert_eq!(failed.len(), 2, "a header and one row: {table}");
    let header: Vec<&str> = failed[0].split_whitespace().collect();
    assert_eq!(header, ["message", "userName"], "{table}");
    assert!(
        failed[1].contains("the user center already") && failed[1].ends_with(" grace"),
        "{table}"
    );
    let succeeded = &sections["succeeded:"];
    assert_eq!(succeeded.len(), 2, "a header and one row: {table}");
    assert!(succeeded[0].contains("globalId"), "{table}");
    assert!(succeeded[1].contains("grace@"), "{table}");
    assert!(!table.contains("{message:"), "no JSON in a cell: {table}");
}

#[test]
fn faults_remove_prints_the_rules_it_removed() {
    let sim = Sim::start();
    let run = |args: &[&str]| serde_json::from_str::<Value>(&sim.ok(args)).unwrap();
    let add = |operation: &str| {
        run(&[
            "sandbox", "faults", "add", operation, "--kind", "code", "--code", "500",
        ])
    };
    let first = add("allocateShellNums");
    let second = add("queryEnterprise");
    let third = add("listMembers");
    let removed = run(&["sandbox", "faults", "remove", &first["id"].to_string()]);
    assert_eq!(removed, first);
    let remaining = run(&["sandbox", "faults", "list"]);
    assert_eq!(remaining, serde_json::json!([second, third]));
    assert_eq!(run(&["sandbox", "faults", "remove", "--all"]), remaining);
    assert_eq!(run(&["sandbox", "faults", "list"]), serde_json::json!([]));
    let output = sim.run(&["sandbox", "faults", "remove", &first["id"].to_string()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("404"), "{}", stderr(&output));
}

#[test]
fn the_journal_table_shows_rfc_3339_times_and_json_keeps_milliseconds() {
    let sim = Sim::start();
    shell_numbers(&sim, 1);
    let journal = |format: &str| {
        let output = sim.run(&["sandbox", "journal", "-o", format]);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let json: Value = serde_json::from_str(&journal("json")).unwrap();
    let ms = json["entries"][0]["time"]
        .as_i64()
        .expect("milliseconds in JSON");
    let table = journal("table");
    let row = table.lines().nth(1).expect(&table);
    let time = row
        .split_whitespace()
        .find(|cell| cell.ends_with('Z') && cell.contains('T'))
        .unwrap_or_else(|| panic!("no RFC 3339 time in {table}"));
    // `YYYY-MM-DDTHH:MM:SS.mmmZ`: the milliseconds are the JSON's.
    assert_eq!(time.len(), 24, "{time}");
    assert_eq!(&time[4..5], "-");
    assert_eq!(&time[10..11], "T");
    assert_eq!(time[20..23].parse::<i64>().unwrap(), ms % 1000, "{time}");
    let seconds = time[17..19].parse::<i64>().unwrap();
    assert_eq!(seconds, ms / 1000 % 60, "{time}");
    assert!(!table.contains(&ms.to_string()), "{table}");
}

#[test]
fn a_raw_call_that_fails_never_shows_its_query() {
    let sim = Sim::start();
    // Takes each request and closes its connection unanswered: the request fails after it
    // is sent.
    let url = RawServer::start(|stream, _| drop(stream)).url;
    let output = sim
        .cmd()
        .env("LICENSING_ORDER_URL", &url)
        .args(["api", "POST", "/order/api/order/v1/licenseOrder/batchOrder"])
        .args(["-q", "appKey=raw-app-key-0999", "--verbose"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let err = stderr(&output);
    // The URL is shown, its query is not.
    assert!(err.contains("/licenseOrder/batchOrder)"), "{err}");
    assert!(!err.contains("raw-app-key-0999"), "{err}");
    assert!(!err.contains("g_nonce"), "{err}");
}
