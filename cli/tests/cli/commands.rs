//! The service commands, the raw call, the sandbox commands and completion.

use std::collections::BTreeMap;

use licensing_sdk::operations;
use serde_json::Value;

use crate::{Sim, filters, stderr, stdout};

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

fn kebab(name: &str) -> String {
    name.chars()
        .flat_map(|c| {
            if c.is_ascii_uppercase() {
                vec!['-', c.to_ascii_lowercase()]
            } else {
                vec![c]
            }
        })
        .collect()
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
        cmd.args([service, &kebab(op.id)]);
        for name in op.path_params() {
            cmd.arg(format!("--{}", kebab(name))).arg(parameter(name));
        }
        // Required query parameters, as `--help` lists them in its usage line.
        let help = sim
            .cmd()
            .args([service, &kebab(op.id), "--help"])
            .output()
            .unwrap();
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
        cmd.args([
            "member",
            "list-members",
            "--enterprise-global-id",
            "EG-000001",
        ])
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
        .args([
            "member",
            "list-members",
            "--enterprise-global-id",
            "EG-000001",
        ])
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
            .args([
                "member",
                "list-members",
                "--enterprise-global-id",
                "EG-000001",
            ])
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
    let output = sim
        .cmd()
        .args(["order", "allocate-shell-nums", "--size", "zero"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("invalid value 'zero' for '--size <INTEGER>'"),
        "{err}"
    );
    let output = sim
        .cmd()
        .args(["order", "allocate-shell-nums", "--size", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("0 is not in 1.."),
        "{}",
        stderr(&output)
    );
    let output = sim
        .cmd()
        .args(["member", "list-members", "--page-num", "1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--enterprise-global-id"),
        "{}",
        stderr(&output)
    );
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
    let output = sim
        .cmd()
        .args(["order", "disable-locks", "--json-body", "-"])
        .write_stdin("{}")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("is required"),
        "{}",
        stderr(&output)
    );
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

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let output = sim
        .cmd()
        .env("LICENSING_ORDER_URL", &url)
        .args([
            "order",
            "allocate-shell-nums",
            "--size",
            "1",
            "--retry",
            "never",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    let verbose = sim
        .cmd()
        .env("LICENSING_ORDER_URL", &url)
        .args([
            "order",
            "allocate-shell-nums",
            "--size",
            "1",
            "--retry",
            "never",
            "--verbose",
        ])
        .output()
        .unwrap();
    assert_eq!(verbose.status.code(), Some(3));
    assert!(
        stderr(&verbose).contains("\n  caused by: "),
        "{}",
        stderr(&verbose)
    );
}

#[test]
fn api_prints_the_reply_as_received_with_auth_and_nonce_added() {
    let sim = Sim::start();
    let output = sim
        .cmd()
        .args([
            "api",
            "POST",
            "/order/api/order/v1/shellnums",
            "-f",
            "size:=2",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let reply: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(reply["code"], 0);
    assert_eq!(reply["data"].as_array().unwrap().len(), 2);
    assert_eq!(sim.journal(), ["allocateShellNums"]);

    let output = sim
        .cmd()
        .args([
            "api",
            "GET",
            "/me/api/v1/enterprise/EG-NOPE/asset/assetNums",
        ])
        .output()
        .unwrap();
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
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("LICENSING_CLIENT_TOKEN: is not set"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn sandbox_commands_drive_the_simulator() {
    let sim = Sim::start();
    let run = |args: &[&str]| {
        let output = sim.cmd().args(args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        stdout(&output)
    };
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
    let output = sim
        .cmd()
        .args([
            "order",
            "allocate-shell-nums",
            "--size",
            "1",
            "--retry",
            "never",
        ])
        .output()
        .unwrap();
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

    let output = sim
        .cmd()
        .args(["sandbox", "seed", "--file", "-"])
        .write_stdin(r#"{"enterprises":[{"bogus":1}]}"#)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("enterprises[0]"),
        "{}",
        stderr(&output)
    );
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
    let output = sim
        .cmd()
        .args(["order", "allocate-shell-nums", "--size", "1"])
        .output()
        .unwrap();
    assert!(output.status.success());
    std::thread::sleep(std::time::Duration::from_millis(600));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
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
        let output = sim.cmd().args(["completion", shell]).output().unwrap();
        assert!(output.status.success());
        let script = stdout(&output);
        assert!(script.contains("list-members"), "{shell}");
        assert!(script.contains("enterprise-global-id"), "{shell}");
        sizes.insert(shell, script.len());
    }
    let output = sim.cmd().args(["completion", "tcsh"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}
