//! `licensing sandbox tenant …` over a real simulator: a tenant made into a profile, used,
//! isolated from the default tenant, listed without its tokens and deleted; the refusals.

use serde_json::Value;

use crate::{Sim, assert_exit, stderr, stdout};

/// A simulator seeded with the demo seed that holds at most `max_tenants` tenants.
fn sim_with(max_tenants: usize) -> Sim {
    Sim::start_with(|builder| builder.max_tenants(max_tenants))
}

/// The binary with no `LICENSING_*` setting but the config directory: it reaches what the
/// profile `--profile NAME` says, and nothing else.
fn through_profile(sim: &Sim, profile: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = sim.cmd();
    for var in [
        "LICENSING_ORDER_URL",
        "LICENSING_MEMBER_URL",
        "LICENSING_APP_TOKEN",
        "LICENSING_CLIENT_TOKEN",
        "LICENSING_USER_TOKEN",
    ] {
        cmd.env_remove(var);
    }
    cmd.args(["--profile", profile, "--retry", "never"])
        .args(args)
        .output()
        .unwrap()
}

/// A tenant's four tokens, as the simulator's admin API hands them out.
fn tokens(sim: &Sim, id: &str) -> Vec<String> {
    let tenant = sim
        .rt
        .block_on(sim.sim.admin().get_tenant().id(id).send())
        .unwrap()
        .into_inner();
    let t = tenant.tokens;
    vec![t.app, t.client, t.user, t.admin]
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_tenant_made_into_a_profile_is_a_sandbox_of_its_own_until_deleted() {
    let sim = sim_with(4);
    let created = json(&sim.ok(&[
        "sandbox",
        "tenant",
        "create",
        "--name",
        "worker-1",
        "--seed",
        "demo",
        "--ttl",
        "600",
        "--profile",
        "w1",
        "-o",
        "json",
    ]));
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["name"], "worker-1");
    assert_eq!(created["ttl"], 600);
    assert_eq!(created["profile"], "w1");
    assert_eq!(created["url"], format!("{}/t/{id}", sim.sim.url()));
    assert!(created.get("tokens").is_none(), "{created}");
    let secrets = tokens(&sim, &id);

    // The tokens are in the owner-only credentials file, and only there.
    let config = std::fs::read_to_string(sim.path("config.toml")).unwrap();
    let credentials = std::fs::read_to_string(sim.path("credentials.toml")).unwrap();
    for token in &secrets {
        assert!(credentials.contains(token.as_str()));
        assert!(!config.contains(token.as_str()), "{config}");
        assert!(!created.to_string().contains(token.as_str()));
    }
    assert!(config.contains(&format!(
        "order_url = \"{}\"",
        created["url"].as_str().unwrap()
    )));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(sim.path("credentials.toml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
    // `profile show` knows them as hidden.
    let shown = stdout(&sim.run(&["profile", "show", "w1"]));
    assert!(shown.contains("app_token = (set, hidden)"), "{shown}");

    // An operation through the profile reaches the tenant, and the default tenant does
    // not see it.
    let output = through_profile(
        &sim,
        "w1",
        &[
            "order",
            "create-enterprise",
            "--crm-customer-id",
            "CRM-TENANT",
            "--customer-name",
            "Tenant Works",
            "--branch-name",
            "HQ",
            "--address",
            "1 Tenant Road",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let tenant_state = through_profile(&sim, "w1", &["sandbox", "state", "export"]);
    assert!(tenant_state.status.success(), "{}", stderr(&tenant_state));
    assert!(stdout(&tenant_state).contains("Tenant Works"));
    assert!(!sim.sim.export_state().to_string().contains("Tenant Works"));
    assert!(!sim.journal().contains(&"createEnterprise".to_string()));
    let journal = json(&stdout(&through_profile(
        &sim,
        "w1",
        &["sandbox", "journal", "--operation", "createEnterprise"],
    )));
    assert_eq!(journal["entries"].as_array().unwrap().len(), 1, "{journal}");

    // The list shows it, counted, without a token, as JSON and as a table.
    let list = sim.ok(&["sandbox", "tenant", "list", "-o", "json"]);
    let listed = json(&list);
    assert_eq!(listed["max"], 4);
    assert_eq!(listed["tenants"][0]["id"], id.as_str());
    assert_eq!(
        listed["tenants"][0]["enterprises"], 2,
        "the demo's and the new one"
    );
    let table = sim.ok(&["sandbox", "tenant", "list", "-o", "table"]);
    assert!(table.contains(&id) && table.contains("worker-1"), "{table}");
    for token in &secrets {
        assert!(!list.contains(token.as_str()) && !table.contains(token.as_str()));
    }
    // `get` is the one that hands the tokens out; in a table whole, for copying.
    let got = sim.ok(&["sandbox", "tenant", "get", &id, "-o", "table"]);
    for token in &secrets {
        assert!(got.contains(token.as_str()), "{got}");
    }

    let deleted = json(&sim.ok(&["sandbox", "tenant", "delete", &id, "-o", "json"]));
    assert_eq!(deleted["id"], id.as_str());
    assert!(deleted.get("tokens").is_none(), "{deleted}");
    assert_eq!(sim.sim.tenant_count(), 0);
    // The profile's next call fails, saying the tenant is gone; no token in the message.
    let output = through_profile(&sim, "w1", &["order", "allocate-shell-nums", "--size", "1"]);
    assert_exit(&output, 1, "404");
    assert_exit(
        &output,
        1,
        &format!("no tenant at {}", created["url"].as_str().unwrap()),
    );
    let output = through_profile(&sim, "w1", &["sandbox", "journal"]);
    assert_exit(&output, 1, "HTTP 404 Not Found: no tenant at");
    for token in &secrets {
        assert!(!stderr(&output).contains(token.as_str()));
    }
    let output = sim.run(&["sandbox", "tenant", "get", &id]);
    assert_exit(&output, 1, &format!("HTTP 404 Not Found: no tenant {id}"));
}

#[test]
fn past_max_tenants_creation_is_refused_naming_the_flag() {
    let sim = sim_with(1);
    let first = json(&sim.ok(&["sandbox", "tenant", "create", "-o", "json"]));
    let secrets = tokens(&sim, first["id"].as_str().unwrap());
    // Without --profile the tokens are printed: there is nowhere else they go.
    assert_eq!(first["tokens"]["app"], secrets[0].as_str());
    let output = sim.run(&["sandbox", "tenant", "create", "--profile", "second"]);
    assert_exit(&output, 1, "HTTP 409 Conflict");
    assert_exit(&output, 1, "--max-tenants");
    assert_eq!(sim.sim.tenant_count(), 1);
    assert!(
        !sim.path("config.toml").exists(),
        "no profile for a refused tenant"
    );
    for token in &secrets {
        assert!(!stderr(&output).contains(token.as_str()));
    }
}

#[test]
fn bad_input_is_refused_naming_the_field_or_rule() {
    let sim = sim_with(4);
    // The simulator's own rule, its field named.
    let output = sim.run(&["sandbox", "tenant", "create", "--name", "a\u{7}b"]);
    assert_exit(
        &output,
        1,
        "HTTP 400 Bad Request: `name` must not hold control characters",
    );
    // The command line's: nothing is sent.
    let long = "n".repeat(101);
    let refusals: [(&[&str], &str); 6] = [
        (
            &["create", "--name", &long],
            "`--name` longer than 100 characters",
        ),
        (
            &["create", "--seed", "nope"],
            "`--seed` `nope` is not a built-in seed",
        ),
        (&["create", "--ttl", "0"], "--ttl"),
        (&["create", "--region", "mars"], "--region"),
        (&["get", "../x"], "`ID` must be a tenant's id"),
        (
            &["delete", "ABCDEF0123456789ABCDEF0123456789"],
            "`ID` must be",
        ),
    ];
    for (args, text) in refusals {
        let output = sim
            .cmd()
            .args(["sandbox", "tenant"])
            .args(args)
            .output()
            .unwrap();
        assert_exit(&output, 2, text);
    }
    assert_eq!(sim.sim.tenant_count(), 0);
    // A profile that exists is never overwritten, and no tenant is made for it.
    sim.ok(&[
        "profile",
        "add",
        "mine",
        "--set",
        "order_url=http://example.invalid",
    ]);
    let output = sim.run(&["sandbox", "tenant", "create", "--profile", "mine"]);
    assert_exit(&output, 2, "profile `mine` exists");
    assert_eq!(sim.sim.tenant_count(), 0);
    // A tenant's own address does not manage tenants.
    sim.ok(&["sandbox", "tenant", "create", "--profile", "t1"]);
    let output = through_profile(&sim, "t1", &["sandbox", "tenant", "list"]);
    assert_exit(&output, 2, "is a tenant's address");
    // A name the simulator accepts is still escaped for the terminal: a bidi override
    // would make the line read otherwise.
    let created = sim.ok(&[
        "sandbox",
        "tenant",
        "create",
        "--name",
        "w\u{202e}x",
        "-o",
        "table",
    ]);
    let listed = sim.ok(&["sandbox", "tenant", "list", "-o", "table"]);
    for text in [created, listed] {
        assert!(
            text.contains("w\\u{202e}x") && !text.contains('\u{202e}'),
            "{text}"
        );
    }
}

/// The sandbox's admin token has one variable across the command line, the Python and
/// Node helpers and the guides: `LICENSING_SANDBOX_TOKEN`.
const TOKEN_VARIABLE: &str = "LICENSING_SANDBOX_TOKEN";

#[test]
fn the_sandboxs_admin_token_is_read_from_its_one_variable() {
    let sim = Sim::start_with(|builder| builder.admin_token("adm-cli-1"));
    let without = sim.run(&["sandbox", "tenant", "list"]);
    assert_exit(&without, 1, "HTTP 401");
    // Another spelling is not read: the call goes without a token.
    let misnamed = sim
        .cmd()
        .env("LICENSING_SANDBOX_ADMIN_TOKEN", "adm-cli-1")
        .args(["sandbox", "tenant", "list"])
        .output()
        .unwrap();
    assert_exit(&misnamed, 1, "HTTP 401");
    let with = sim
        .cmd()
        .env(TOKEN_VARIABLE, "adm-cli-1")
        .args(["sandbox", "tenant", "list"])
        .output()
        .unwrap();
    assert!(with.status.success(), "{}", stderr(&with));
    assert_eq!(json(&stdout(&with))["tenants"], serde_json::json!([]));
}

/// Every guide, helper and example that names a variable for the sandbox's admin token
/// names the one the command line reads.
#[test]
fn every_client_and_guide_names_the_same_variable() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut named = 0;
    let mut wrong = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = [
        "docs",
        "clients/sandbox",
        "cli/src",
        "sim/README.md",
        "README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if path.ends_with("node_modules") {
                continue;
            }
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (at, _) in text.match_indices("LICENSING_SANDBOX_") {
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect();
            if name.ends_with("TOKEN") {
                named += 1;
                if name != TOKEN_VARIABLE {
                    wrong.push(format!("{}: {name}", path.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        named >= 10,
        "only {named} mentions found: is the scan reading the files?"
    );
}
