//! The simulator's own state through the in-process API: the clock every time comes from,
//! export and import, resets.

use licensing_test_support::sim as support;

use licensing_sdk::{ErrorCode, member::types as mt};
use licensing_sim::{ImportError, Simulator};
use serde_json::{Value, json};
use support::{Enterprise, Env, code_of, new_buy, product};

const T0: i64 = 1_767_225_600_000; // 2026-01-01
const DAY: i64 = 24 * 60 * 60 * 1000;

/// The employee as `listMembers` shows it.
async fn listed(env: &Env, enterprise: &str, global_id: &str) -> mt::MemberListItem {
    env.member
        .list_members()
        .enterprise_global_id(enterprise)
        .page_num(1u32)
        .page_size(1000u32)
        .await
        .expect("listMembers")
        .list
        .into_iter()
        .find(|m| m.global_id == global_id)
        .unwrap_or_else(|| panic!("{global_id} listed"))
}

/// The creation time of every product on an asset.
async fn product_times(env: &Env, ent: &support::Enterprise, num: &str) -> Vec<i64> {
    let id = env.asset_id(ent, num).await;
    let products = env.products(&id).await.product_instance_list;
    products.iter().map(|p| p.create_time).collect()
}

#[tokio::test]
async fn written_times_follow_a_set_and_advanced_clock() {
    let env = support::start().await;
    let clock = env.sim.clock();
    clock.freeze();
    clock.set(T0);
    assert_eq!(clock.now_ms(), T0);
    let ent = env.enterprise("Clockwork").await;
    let alice = env.add_member(&ent, "alice").await;
    let item = listed(&env, &ent.global_id, &alice).await;
    assert_eq!((item.create_time, item.update_time), (T0, T0));
    let admin = listed(&env, &ent.global_id, &ent.members[0]).await;
    assert_eq!(admin.create_time, T0, "createEnterprise's employees too");

    clock.advance(DAY);
    let edit = mt::EditMemberRequest::builder().user_name("alice");
    env.edit_member(&ent, &alice, edit.name("Alice Liddell"))
        .await;
    let item = listed(&env, &ent.global_id, &alice).await;
    assert_eq!((item.create_time, item.update_time), (T0, T0 + DAY));

    let nums = env.allocate(1).await;
    env.buy(&ent, "normal_recover_usbkey", &nums, "cad", 5)
        .await;
    assert_eq!(product_times(&env, &ent, &nums[0]).await, [T0 + DAY]);
    clock.advance(DAY);
    env.buy(&ent, "normal_recover_usbkey", &nums, "cam", 5)
        .await;
    assert_eq!(
        product_times(&env, &ent, &nums[0]).await,
        [T0 + DAY, T0 + 2 * DAY]
    );

    // Running again, from a set instant: times go on from there.
    clock.unfreeze();
    clock.set(T0 + 10 * DAY);
    let bob = env.add_member(&ent, "bob").await;
    let created = listed(&env, &ent.global_id, &bob).await.create_time;
    assert!(
        (T0 + 10 * DAY..T0 + 10 * DAY + 60_000).contains(&created),
        "{created}"
    );
}

/// An enterprise with a bit of everything: employees (one deleted), a package tree, an
/// assigned asset, a lent lock with a loan, a revoked asset and a cloud asset.
async fn populated(env: &Env, name: &str) -> Enterprise {
    let ent = env.enterprise(name).await;
    let nums = env.allocate(5).await;
    let package = json!({
        "crmProductId": "M-1", "parentCrmProductId": "A-100", "merchandiseNum": "PKG-1",
        "merchandiseName": "Design bundle", "parentMerchandiseNum": "",
        "timeDurationExpression": "1-0-0", "children": [],
        "licenseOrderProductList": [product("render", 2)]
    });
    env.order(new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{ "assetNos": [nums[0]], "products": [product("cad", 5)], "merchandises": [package] }]),
    ))
    .await;
    env.buy_lent_lock(&ent, &nums[1]).await;
    let bought = env.buy_base(&ent, &nums[2..3]).await;
    env.revoke(&ent, &nums[2], &bought).await;
    let mut cloud = new_buy(
        &ent,
        "cloud_customer",
        json!([{ "assetNos": [nums[3]], "products": [product("cloud", 3)],
                 "assetExtendList": [{"extendCode": "region", "extendValue": "eu"}] }]),
    );
    cloud["srcLicenseOrderId"] = json!(bought);
    env.order(cloud).await;

    let alice = env.add_member(&ent, "alice").await;
    let bob = env.add_member(&ent, "bob").await;
    env.add_member(&ent, "carol").await;
    env.delete_member(&ent, &bob).await.expect("deleteMember");
    env.assign(&alice, &nums[..1]).await;
    let asset_id = env.asset_id(&ent, &nums[0]).await;
    env.lend(&alice, &nums[1], vec![asset_id]).await;
    ent
}

/// Everything the SDK can list about an enterprise, as JSON.
async fn seen(env: &Env, ent: &Enterprise) -> Value {
    let members = env
        .member
        .list_members()
        .enterprise_global_id(&ent.global_id)
        .page_num(1u32)
        .page_size(1000u32)
        .await
        .map(|page| page.list);
    let assets = env
        .member
        .list_asset_nums()
        .enterprise_global_id(&ent.global_id)
        .await;
    let mut products = Vec::new();
    for asset in assets.iter().flatten() {
        let listed = env.products(&asset.asset_id).await;
        products.push(serde_json::to_value(listed).unwrap());
    }
    let lent = env
        .member
        .list_lent_locks()
        .enterprise_global_id(&ent.global_id)
        .await;
    let virtual_assets = env
        .order
        .list_virtual_assets()
        .enterprise_global_id(&ent.global_id)
        .await;
    let customers = env
        .order
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id(&ent.channel_customer_id)
        .default_customer(licensing_sdk::DefaultCustomer::All)
        .await
        .expect("queryEnterprise");
    let json_or_code = |r: Result<Value, licensing_sdk::Error>| match r {
        Ok(v) => v,
        Err(e) => json!({ "code": e.code().map(|c| c.to_string()) }),
    };
    json!({
        "members": json_or_code(members.map(|v| serde_json::to_value(v).unwrap())),
        "assets": json_or_code(assets.map(|v| serde_json::to_value(v).unwrap())),
        "products": products,
        "lent": json_or_code(lent.map(|v| serde_json::to_value(v).unwrap())),
        "virtual": json_or_code(virtual_assets.map(|v| serde_json::to_value(v).unwrap())),
        "customers": serde_json::to_value(customers).unwrap(),
    })
}

#[tokio::test]
async fn an_exported_state_imports_into_a_fresh_simulator() {
    let env = support::start().await;
    env.sim.clock().freeze();
    env.sim.clock().set(T0);
    let acme = populated(&env, "Acme").await;
    let globex = populated(&env, "Globex").await;
    let doc = env.export_state();
    assert_eq!(doc["version"], 1);
    assert_eq!(
        env.export_state(),
        doc,
        "the same state exports the same document"
    );

    let fresh = support::start().await;
    fresh
        .sim
        .import_state(doc.clone())
        .expect("the export imports");
    assert_eq!(fresh.export_state(), doc);
    for ent in [&acme, &globex] {
        let before = seen(&env, ent).await;
        assert_eq!(before["members"].as_array().unwrap().len(), 4);
        assert_eq!(before["assets"].as_array().unwrap().len(), 3);
        assert_eq!(seen(&fresh, ent).await, before);
    }
    assert!(fresh.sim.clock().is_frozen(), "the clock comes along");
    assert_eq!(fresh.sim.clock().now_ms(), T0);

    // Both go on the same way: the same ids, the same numbers.
    for sim in [&env, &fresh] {
        assert_eq!(sim.allocate(1).await, ["8000000011"]);
        sim.add_member(&acme, "dave").await;
    }
    assert_eq!(fresh.export_state()["state"], env.export_state()["state"]);
    // A revoked number stays revoked; a lent lock stays lent.
    let lent = &seen(&fresh, &acme).await["lent"];
    assert_eq!(lent[0]["borrowedFlag"], true, "{lent}");
}

trait Export {
    fn export_state(&self) -> Value;
}

impl Export for Env {
    fn export_state(&self) -> Value {
        self.sim.export_state()
    }
}

/// Imports a changed copy of `doc`; returns the error's path and message, and checks
/// that nothing changed.
#[track_caller]
fn refused(sim: &Simulator, doc: &Value, change: impl FnOnce(&mut Value)) -> (String, String) {
    let before = sim.export_state();
    let mut changed = doc.clone();
    change(&mut changed);
    let error = sim
        .import_state(changed)
        .expect_err("the import is refused");
    assert_eq!(
        sim.export_state(),
        before,
        "a refused import changes nothing"
    );
    match error {
        ImportError::Invalid { path, message } => (path, message),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_bad_import_changes_nothing_and_names_the_field() {
    let env = support::start().await;
    let acme = populated(&env, "Acme").await;
    let doc = env.export_state();
    let num = "8000000001";
    let target = support::start().await;
    target.enterprise("Target").await;

    let (path, message) = refused(&target.sim, &doc, |d| {
        d["state"]["assets"][num]["products"][0]["id"] = json!("seven");
    });
    assert_eq!(path, format!("state.assets.{num}.products[0].id"));
    assert!(
        message.starts_with("invalid type: string \"seven\""),
        "{message}"
    );
    let error = target
        .sim
        .import_state({
            let mut d = doc.clone();
            d["state"]["assets"][num]["products"][0]["id"] = json!("seven");
            d
        })
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("state.assets.{num}.products[0].id: invalid type")),
        "{error}"
    );

    // (JSON pointer of the change, new value, the path the error names)
    let admin = &acme.members[0];
    let cases = [
        (
            format!("/state/members/{admin}/enterprise"),
            json!("EG-404"),
            format!("state.members.{admin}.enterprise"),
        ),
        (
            format!("/state/assets/{num}/customer"),
            json!("C404"),
            format!("state.assets.{num}.customer"),
        ),
        (
            format!("/state/assets/{num}/holder"),
            json!("MG-404"),
            format!("state.assets.{num}.holder"),
        ),
        (
            "/state/loans/8000000002/member".to_string(),
            json!("MG-404"),
            "state.loans.8000000002.member".to_string(),
        ),
        (
            "/state/loans/8000000002/assets".to_string(),
            json!(["A-404"]),
            "state.loans.8000000002.assets[0]".to_string(),
        ),
        (
            "/allocator/last/domestic".to_string(),
            json!(0),
            format!("state.assets.{num}.num"),
        ),
        (
            "/state/sequence".to_string(),
            json!(3),
            format!("state.customers.{}", acme.customer_id),
        ),
        ("/version".to_string(), json!(2), "version".to_string()),
    ];
    for (pointer, value, expected) in cases {
        let (path, message) = refused(&target.sim, &doc, |d| {
            *d.pointer_mut(&pointer).expect("the field exists") = value;
        });
        assert_eq!(path, expected, "{message}");
    }
    let (path, _) = refused(&target.sim, &doc, |d| {
        d["state"]["enterpriseByName"] = json!({});
    });
    assert_eq!(path, "state.enterpriseByName", "an index is not imported");
    let (path, message) = refused(&target.sim, &json!([]), |_| {});
    assert_eq!(
        (path.as_str(), message.as_str()),
        ("", "the state must be a JSON object")
    );
}

#[tokio::test]
async fn reset_forgets_everything() {
    let env = support::start().await;
    let acme = populated(&env, "Acme").await;
    env.sim.clock().freeze();
    env.sim.reset().unwrap();
    assert!(!env.sim.clock().is_frozen());
    let fresh = support::start().await;
    assert_eq!(env.export_state()["state"], fresh.export_state()["state"]);
    assert_eq!(
        env.export_state()["allocator"],
        fresh.export_state()["allocator"]
    );
    assert_eq!(env.allocate(1).await, ["8000000001"]);
    assert_eq!(
        code_of(
            env.member
                .list_asset_nums()
                .enterprise_global_id(&acme.global_id)
                .await
        ),
        ErrorCode::NotBoundToLicensingCustomer
    );
    // The same names can be created again.
    populated(&env, "Acme").await;
}

#[tokio::test]
async fn reset_enterprise_removes_one_enterprise_and_nothing_else() {
    let env = support::start().await;
    let acme = populated(&env, "Acme").await;
    let globex = populated(&env, "Globex").await;
    let globex_before = seen(&env, &globex).await;
    let acme_assets: Vec<String> = env
        .assets(&acme)
        .await
        .into_iter()
        .map(|a| a.asset_num)
        .collect();

    assert!(env.sim.reset_enterprise(&acme.global_id).unwrap());
    assert!(!env.sim.reset_enterprise(&acme.global_id).unwrap());
    assert_eq!(seen(&env, &globex).await, globex_before);
    let gone = seen(&env, &acme).await;
    assert_eq!(gone["members"], json!([]), "{gone}");
    assert_eq!(gone["customers"], json!([]));
    assert_eq!(gone["assets"]["code"], "60017");

    // No record names the enterprise, its customers or employees any more.
    let doc = env.export_state();
    let text = doc.to_string();
    for id in [&acme.global_id, &acme.customer_id, &acme.members[0]] {
        assert!(
            !text.contains(&format!("\"{id}\"")),
            "{id} is still referenced"
        );
    }
    let fresh = support::start().await;
    fresh.sim.import_state(doc).expect("a consistent state");

    // Its numbers are never sold again; its names can be used again.
    let again = env.enterprise("Acme").await;
    let refused = env
        .order
        .batch_order()
        .app_key("app")
        .body(support::batch(vec![new_buy(
            &again,
            "normal_recover_usbkey",
            json!([{ "assetNos": [acme_assets[0]], "products": [product("cad", 1)] }]),
        )]))
        .await;
    assert_eq!(code_of(refused), ErrorCode::ParameterValidationFailed);
}

/// A fresh directory for state files.
/// A directory of its own (named for `name`), and the path of a state file in it.
fn state_file(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = temp_dir(name);
    let path = dir.path().join("state.json");
    (dir, path)
}

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("licensing-sim-{name}-"))
        .tempdir()
        .unwrap()
}

/// A simulator on a state file, with clients.
async fn on_file(path: &std::path::Path) -> Env {
    support::start_with(Simulator::builder().state_file(path)).await
}

#[tokio::test]
async fn a_state_file_keeps_every_change_across_restarts() {
    let (dir, path) = state_file("restart");
    let env = on_file(&path).await;
    env.sim.clock().freeze();
    env.sim.clock().set(T0);
    let acme = populated(&env, "Acme").await;
    let globex = populated(&env, "Globex").await;
    env.sim.set_region(licensing_sim::Region::Singapore);
    assert_eq!(env.allocate(1).await, ["6000000001"]);
    assert!(env.sim.reset_enterprise(&globex.global_id).unwrap());
    env.sim.clock().advance(DAY);
    let before = env.export_state();
    let acme_seen = seen(&env, &acme).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        for file in [path.clone(), dir.path().join("state.json.log")] {
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        }
    }

    // A second simulator on the same file is refused while the first runs.
    let second = Simulator::builder().state_file(&path).start().await;
    let error = second.expect_err("the state file is in use");
    assert!(error.to_string().contains("state.json.lock"), "{error}");
    env.stop().await;

    let env = on_file(&path).await;
    assert_eq!(env.export_state(), before);
    assert_eq!(env.sim.region(), licensing_sim::Region::Singapore);
    assert_eq!(env.sim.clock().now_ms(), T0 + DAY);
    assert_eq!(seen(&env, &acme).await, acme_seen);
    assert_eq!(env.allocate(1).await, ["6000000002"]);

    // Imports and resets are durable too.
    let other = support::start().await;
    other.enterprise("Initech").await;
    env.sim.import_state(other.export_state()).unwrap();
    let imported = env.export_state();
    env.stop().await;
    let env = on_file(&path).await;
    assert_eq!(env.export_state(), imported);
    env.sim.reset().unwrap();
    env.stop().await;
    let env = on_file(&path).await;
    assert_eq!(
        env.export_state()["state"],
        support::start().await.export_state()["state"]
    );
    // A region given at start wins over the file's.
    env.stop().await;
    let env = support::start_with(
        Simulator::builder()
            .state_file(&path)
            .region(licensing_sim::Region::Domestic),
    )
    .await;
    assert_eq!(env.allocate(1).await, ["8000000001"]);
    env.stop().await;
    dir.close().unwrap();
}

#[tokio::test]
async fn replay_runs_calls_with_the_limits_they_ran_with() {
    let (dir, path) = state_file("limits");
    let env =
        support::start_with(Simulator::builder().state_file(&path).trial_member_limit(2)).await;
    let ent = env.enterprise("Acme").await;
    let three = env
        .member
        .add_members()
        .enterprise_global_id(&ent.global_id)
        .body(mt::AddMembersRequest::builder().user_list(vec![
            support::new_member("a1", "Secret-123", "A"),
            support::new_member("a2", "Secret-123", "A"),
            support::new_member("a3", "Secret-123", "A"),
        ]))
        .await;
    assert_eq!(code_of(three), ErrorCode::PartialAddFailure);
    let before = env.export_state();
    env.stop().await;

    // More room now: the logged call still added two, as it did.
    let env =
        support::start_with(Simulator::builder().state_file(&path).trial_member_limit(5)).await;
    assert_eq!(env.export_state(), before);
    env.add_member(&ent, "a3").await;
    env.stop().await;
    dir.close().unwrap();
}

#[tokio::test]
async fn a_compacted_log_loses_nothing() {
    let (dir, path) = state_file("compact");
    // Compact whenever the log outgrows the snapshot.
    let builder = || Simulator::builder().state_file(&path).state_log_limit(0);
    let env = support::start_with(builder()).await;
    let ent = env.enterprise("Acme").await;
    for i in 0..40 {
        env.add_member(&ent, &format!("m{i}")).await;
    }
    let log = std::fs::metadata(dir.path().join("state.json.log"))
        .unwrap()
        .len();
    let snapshot = std::fs::metadata(&path).unwrap().len();
    assert!(
        log <= snapshot + 4096,
        "compacted: log {log}, snapshot {snapshot}"
    );
    let before = env.export_state();
    env.stop().await;
    let env = support::start_with(builder()).await;
    assert_eq!(env.export_state(), before);
    env.stop().await;
    dir.close().unwrap();
}

/// A seed and the admin API's changes are logged like requests: a restart replays them,
/// and the seed is not applied again to a state that holds it.
#[tokio::test]
async fn seeds_and_admin_changes_survive_a_restart() {
    let (dir, path) = state_file("seeded");
    let demo = || licensing_sim::admin::builtin_seed("demo").unwrap();
    let env = support::start_with(Simulator::builder().state_file(&path).seed(demo())).await;
    let admin = env.sim.admin();
    admin
        .set_clock()
        .body(licensing_sim::admin::types::ClockSetting {
            now: T0,
            frozen: Some(true),
        })
        .send()
        .await
        .unwrap();
    let before = env.export_state();
    env.stop().await;

    let env = support::start_with(Simulator::builder().state_file(&path).seed(demo())).await;
    assert_eq!(env.export_state(), before, "replayed, not seeded twice");
    assert_eq!(env.sim.clock().now_ms(), T0);
    env.stop().await;
    dir.close().unwrap();
}
