//! The sandbox admin API through its generated client: seeds, the journal, scripted faults
//! of every kind as the SDK sees them, and the admin token.

use std::{num::NonZeroU64, time::Duration};

use crate::support::*;
use licensing_sdk::{
    CallOptions, Error, ErrorCode, RetryPolicy, TransportKind, member, order, order::types as ot,
};
use licensing_sim::{
    DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN, Simulator,
    admin::{
        self,
        types::{BuiltinSeed, Fault, FaultKind, FaultRuleSpec},
    },
};
use serde_json::json;

type AdminResult<T> = Result<admin::ResponseValue<T>, admin::Error<admin::types::AdminError>>;

/// The `AdminError` of a refused admin call, with its HTTP status.
#[track_caller]
fn refused<T: std::fmt::Debug>(result: AdminResult<T>) -> (u16, admin::types::AdminError) {
    match result {
        Err(admin::Error::ErrorResponse(e)) => (e.status().as_u16(), e.into_inner()),
        other => panic!("expected an AdminError, got {other:?}"),
    }
}

/// Adds a fault rule, which must be accepted.
/// A fault that answers with the business code `code`.
fn code_fault(code: &str) -> admin::types::builder::Fault {
    Fault::builder()
        .kind(FaultKind::Code)
        .code(Some(code.to_string()))
}

async fn script(admin: &admin::Client, rule: admin::types::builder::FaultRuleSpec) {
    admin
        .create_fault()
        .body(rule)
        .send()
        .await
        .expect("the rule is accepted");
}

fn rule(operation: &str, kind: FaultKind) -> admin::types::builder::FaultRuleSpec {
    FaultRuleSpec::builder()
        .operation(operation)
        .fault(Fault::builder().kind(kind))
}

fn retrying(url: &str) -> order::Client {
    order::Client::builder(url)
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::Backoff(licensing_sdk::Backoff {
            max_attempts: 3,
            initial_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_elapsed: Duration::from_secs(5),
        }))
        .build()
        .unwrap()
}

async fn query(client: &order::Client) -> Result<Vec<ot::EnterpriseCustomer>, Error> {
    client
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("CC-ACME")
        .default_customer(licensing_sdk::DefaultCustomer::All)
        .await
}

async fn allocate(client: &order::Client) -> Result<Vec<ot::ShellNumber>, Error> {
    client
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
        .await
}

#[tokio::test]
async fn the_demo_seed_is_what_the_services_list() {
    let env = start().await;
    let admin = env.sim.admin();
    let shown = admin
        .get_builtin_seed()
        .name(BuiltinSeed::Demo)
        .send()
        .await
        .unwrap()
        .into_inner();
    let seeded = crate::support::load_demo(&admin).await;
    let acme = &seeded.enterprises[0];
    assert_eq!(acme.name, shown.enterprises[0].name.as_str());

    let members = env
        .member
        .list_members()
        .enterprise_global_id(&acme.enterprise_global_id)
        .page_num(std::num::NonZeroU32::MIN)
        .page_size(std::num::NonZeroU32::new(50).unwrap())
        .await
        .unwrap();
    let names: Vec<_> = members.list.iter().map(|m| m.name.as_str()).collect();
    for seeded in ["Alice", "Bob", "Carol"] {
        assert!(names.contains(&seeded), "{names:?}");
    }
    let assets = env.assets_of(&acme.enterprise_global_id).await;
    assert_eq!(assets.len(), 3);
    let cad = &acme.assets["cad-lock-1"];
    let held = assets
        .iter()
        .find(|a| a.asset_num == cad.asset_num)
        .unwrap();
    assert_eq!(
        held.cloud_account_global_id.as_deref(),
        Some(acme.members["alice"].as_str()),
        "alice holds cad-lock-1"
    );
    assert_eq!(held.asset_id, cad.asset_id);
    let lent = env.lent_locks_of(&acme.enterprise_global_id).await;
    assert_eq!(lent.len(), 1);
    assert_eq!(lent[0].asset_num, acme.assets["lent-lock"].asset_num);
    // The channel customer is bound: a batch order can name it.
    let customers = query(&env.order).await.unwrap();
    let bound = customers
        .iter()
        .find(|c| c.channel_customer_id == "CC-ACME")
        .unwrap();
    assert_eq!(bound.customer_id, acme.customers["CC-ACME"]);
}

#[tokio::test]
async fn bad_seeds_name_the_field_and_change_nothing() {
    let env = start().await;
    let http = reqwest::Client::new();
    let url = format!("{}/__sandbox/v1/seed", env.url());
    for (seed, field) in [
        (
            json!({"enterprises": [{"name": 5, "crmCustomerId": "C"}]}),
            "enterprises[0].name",
        ),
        (
            json!({"enterprises": [{"name": "A", "crmCustomerId": "C", "colour": "red"}]}),
            "enterprises[0].colour",
        ),
        (
            json!({"enterprises": [{"name": "A", "crmCustomerId": "C",
                "customers": [{"channelCode": "CH", "channelCustomerId": "CC"}],
                "assets": [{"key": "k", "licenseType": "usbkey", "products": [{"productUri": "p"}]}]}]}),
            "enterprises[0].assets[0].licenseType",
        ),
        (
            json!({"enterprises": [{"name": "A", "crmCustomerId": "C",
                "members": [{"userName": "u", "password": "Secret-123", "name": "U", "assets": ["nope"]}]}]}),
            "enterprises[0].members[0].assets[0]",
        ),
    ] {
        let reply = http.post(&url).json(&seed).send().await.unwrap();
        assert_eq!(reply.status(), 400, "{seed}");
        let error: serde_json::Value = reply.json().await.unwrap();
        assert_eq!(error["field"], field, "{error}");
    }
    // A seed the state refuses part-way (its enterprise exists) is 409 and undone: a
    // second seed whose second enterprise is the demo's leaves no trace of its first.
    let admin = env.sim.admin();
    crate::support::load_demo(&admin).await;
    let before = admin.export_state().send().await.unwrap().into_inner();
    let mut twice = licensing_sim::admin::builtin_seed("demo").unwrap();
    let mut fresh = twice.enterprises[0].clone();
    fresh.name = "Fresh Ltd".parse().unwrap();
    fresh.crm_customer_id = "CRM-FRESH".parse().unwrap();
    fresh.customers.clear();
    fresh.assets.clear();
    for m in &mut fresh.members {
        m.assets.clear();
    }
    twice.enterprises.insert(0, fresh);
    let (status, error) = refused(admin.load_seed().body(twice).send().await);
    assert_eq!(status, 409, "the same enterprise twice: {error:?}");
    assert!(
        error
            .field
            .as_deref()
            .unwrap_or_default()
            .starts_with("enterprises[1]"),
        "{error:?}"
    );
    let after = admin.export_state().send().await.unwrap().into_inner();
    assert_eq!(before.0, after.0, "the refused seed changed nothing");
}

#[tokio::test]
async fn the_journal_records_every_call_without_secrets() {
    let env = start().await;
    let admin = env.sim.admin();
    crate::support::load_demo(&admin).await;
    let ent = env.enterprise("Journal").await;
    let id = env.add_member(&ent, "dave").await;
    env.member
        .reset_member_password()
        .enterprise_global_id(&ent.global_id)
        .member_global_id(&id)
        .body(
            licensing_sdk::member::types::ResetPasswordRequest::builder()
                .password("Other-Secret-9"),
        )
        .await
        .unwrap();
    env.order
        .batch_order()
        .app_key("app-key-secret")
        .body(batch(vec![new_buy(
            &ent,
            "normal_recover_usbkey",
            json!([{ "assetNos": ["1"], "products": [product("p", 1)] }]),
        )]))
        .await
        .expect_err("an unallocated number");

    let journal = crate::support::journal(&admin).await;
    let ops: Vec<_> = journal
        .entries
        .iter()
        .filter_map(|e| e.operation.as_deref())
        .collect();
    for id in [
        "createEnterprise",
        "bindEnterprise",
        "addMembers",
        "resetMemberPassword",
        "batchOrder",
    ] {
        assert!(ops.contains(&id), "{id} in {ops:?}");
    }
    assert!(journal.entries.windows(2).all(|w| w[0].seq < w[1].seq));
    let failed = admin
        .list_journal()
        .code("13004")
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(failed.entries.len(), 1);
    let e = &failed.entries[0];
    assert_eq!(
        (e.operation.as_deref(), e.status),
        (Some("batchOrder"), 299)
    );
    assert!(
        e.reply_body.as_ref().unwrap()["cause"]
            .as_str()
            .unwrap()
            .contains("assetNos")
    );

    let text = serde_json::to_string(&journal).unwrap();
    for secret in [
        DEFAULT_APP_TOKEN,
        DEFAULT_CLIENT_TOKEN,
        DEFAULT_USER_TOKEN,
        "Secret-123",
        "Other-Secret-9",
        "Initial-Pass-1",
        "app-key-secret",
    ] {
        assert!(!text.contains(secret), "{secret} in the journal");
    }
    assert!(text.contains("[REDACTED]"));

    let resets = admin
        .list_journal()
        .operation("resetMemberPassword")
        .limit(std::num::NonZeroU32::MIN)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resets.entries.len(), 1);
    admin.clear_journal().send().await.unwrap();
    assert!(
        admin
            .list_journal()
            .send()
            .await
            .unwrap()
            .entries
            .is_empty()
    );
}

#[tokio::test]
async fn rules_are_checked_listed_and_deleted() {
    let env = start().await;
    let admin = env.sim.admin();
    let (status, e) = refused(
        admin
            .create_fault()
            .body(rule("sendFlowers", FaultKind::DropConnection))
            .send()
            .await,
    );
    assert_eq!((status, e.field.as_deref()), (400, Some("operation")));
    let (status, e) = refused(
        admin
            .create_fault()
            .body(
                FaultRuleSpec::builder()
                    .operation("allocateShellNums")
                    .fault(code_fault("60027")),
            )
            .send()
            .await,
    );
    assert_eq!(
        (status, e.field.as_deref()),
        (400, Some("fault.code")),
        "{e:?}"
    );
    let created = admin
        .create_fault()
        .body(rule("listMembers", FaultKind::MalformedBody))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let id = created.into_inner().id;
    assert_eq!(admin.list_faults().send().await.unwrap().len(), 1);
    assert_eq!(admin.get_fault().id(id).send().await.unwrap().hits, 0);
    admin.delete_fault().id(id).send().await.unwrap();
    let (status, _) = refused(admin.get_fault().id(id).send().await);
    assert_eq!(status, 404);
}

/// A server error on an idempotent operation is retried and then succeeds; on one that
/// cannot be repeated it is returned. A business `500` asks for a retry everywhere.
#[tokio::test]
async fn scripted_errors_and_retries() {
    let env = start().await;
    let admin = env.sim.admin();
    crate::support::load_demo(&admin).await;
    let client = retrying(&env.url());
    let once = |op: &str, fault: admin::types::builder::Fault| {
        FaultRuleSpec::builder()
            .operation(op)
            .times(NonZeroU64::new(1))
            .fault(fault)
    };

    script(
        &admin,
        once(
            "queryEnterprise",
            Fault::builder().kind(FaultKind::Status).status(Some(503)),
        ),
    )
    .await;
    let customers = query(&client).await.expect("retried after the 503");
    assert!(customers.iter().any(|c| c.channel_customer_id == "CC-ACME"));
    script(
        &admin,
        once(
            "allocateShellNums",
            Fault::builder().kind(FaultKind::Status).status(Some(500)),
        ),
    )
    .await;
    match allocate(&client).await {
        Err(Error::UnexpectedStatus { status: 500, .. }) => {}
        other => panic!("not retried: {other:?}"),
    }
    script(&admin, once("allocateShellNums", code_fault("500"))).await;
    assert_eq!(
        allocate(&client).await.unwrap().len(),
        1,
        "code 500 asks for a retry"
    );
    script(&admin, once("allocateShellNums", code_fault("13004"))).await;
    assert_eq!(
        code_of(allocate(&client).await),
        ErrorCode::ParameterValidationFailed
    );

    let journal = journal_of(&admin, "allocateShellNums").await;
    let faulted = journal.entries.iter().filter(|e| e.fault.is_some()).count();
    assert_eq!(
        faulted, 3,
        "each rule fired once and was journaled with its id"
    );
    let queries = journal_of(&admin, "queryEnterprise").await;
    let statuses: Vec<_> = queries.entries.iter().map(|e| e.status).collect();
    assert_eq!(statuses, [503, 200]);
}

/// Delays, slow and cut-off bodies, dropped connections and malformed bodies, as the SDK
/// reports them.
#[tokio::test]
async fn scripted_transport_faults() {
    let env = start().await;
    let admin = env.sim.admin();
    let never = |url: &str| {
        order::Client::builder(url)
            .application_token(DEFAULT_APP_TOKEN)
            .retry(RetryPolicy::Never)
            .build()
            .unwrap()
    };
    let client = never(&env.url());
    let fault = |op: &str, kind: FaultKind, ms: Option<i64>| {
        FaultRuleSpec::builder()
            .operation(op)
            .times(NonZeroU64::new(1))
            .fault(Fault::builder().kind(kind).ms(ms))
    };
    let short = CallOptions::new().timeout(Duration::from_millis(150));

    // A delay before the reply and a body dribbled over a second both outlast a 150 ms
    // attempt timeout.
    for kind in [FaultKind::Delay, FaultKind::SlowBody] {
        script(&admin, fault("allocateShellNums", kind, Some(1000))).await;
        match client
            .allocate_shell_nums()
            .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
            .call_options(short.clone())
            .await
        {
            Err(Error::Transport {
                kind: TransportKind::ReadTimeout(_),
                ..
            }) => {}
            other => panic!("{kind}: {other:?}"),
        }
    }
    script(
        &admin,
        fault("allocateShellNums", FaultKind::SlowBody, Some(300)),
    )
    .await;
    let started = std::time::Instant::now();
    assert_eq!(
        allocate(&client).await.unwrap().len(),
        1,
        "a slow body still arrives"
    );
    assert!(started.elapsed() >= Duration::from_millis(250));

    script(
        &admin,
        fault("allocateShellNums", FaultKind::DropConnection, None),
    )
    .await;
    match allocate(&client).await {
        Err(Error::Transport {
            may_have_been_sent: true,
            ..
        }) => {}
        other => panic!("dropped: {other:?}"),
    }
    script(
        &admin,
        fault("allocateShellNums", FaultKind::TruncatedBody, None),
    )
    .await;
    match allocate(&client).await {
        Err(Error::Transport { .. } | Error::Decode { .. }) => {}
        other => panic!("truncated: {other:?}"),
    }
    script(
        &admin,
        fault("allocateShellNums", FaultKind::MalformedBody, None),
    )
    .await;
    match allocate(&client).await {
        Err(Error::Decode { status: 200, .. }) => {}
        other => panic!("malformed: {other:?}"),
    }
    // Every rule fired once and the simulator still answers.
    assert!(
        admin
            .list_faults()
            .send()
            .await
            .unwrap()
            .iter()
            .all(|r| r.hits == 1)
    );
    assert_eq!(allocate(&client).await.unwrap().len(), 1);
    let dropped = crate::support::journal(&admin).await;
    assert!(
        dropped
            .entries
            .iter()
            .any(|e| e.status == 0 && e.fault.is_some())
    );

    // A rule by enterprise applies to that enterprise only.
    let ent = env.enterprise("Other").await;
    script(
        &admin,
        FaultRuleSpec::builder()
            .operation("listAssetNums")
            .enterprise_global_id(Some(ent.global_id.clone()))
            .fault(code_fault("60017")),
    )
    .await;
    let listed = |eg: String| {
        let m: member::Client = env.member.clone();
        async move { m.list_asset_nums().enterprise_global_id(eg).await }
    };
    assert_eq!(
        code_of(listed(ent.global_id.clone()).await),
        ErrorCode::NotBoundToLicensingCustomer
    );
    let other = env.enterprise("Third").await;
    assert!(listed(other.global_id).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_admin_token_guards_the_admin_api_only() {
    let sim = simulator(Simulator::builder().admin_token("admin-secret")).await;
    assert!(sim.admin().list_faults().send().await.is_ok());
    let anonymous = admin::client(&sim.url(), None).unwrap();
    let (status, _) = refused(anonymous.list_faults().send().await);
    assert_eq!(status, 401);
    let wrong = admin::client(&sim.url(), Some("guess")).unwrap();
    assert_eq!(refused(wrong.list_journal().send().await).0, 401);
    // The services keep their own credentials.
    let order = order::Client::builder(&sim.url())
        .application_token(DEFAULT_APP_TOKEN)
        .build()
        .unwrap();
    assert_eq!(allocate(&order).await.unwrap().len(), 1);
}

#[tokio::test]
async fn state_export_reset_import_and_clock() {
    let env = start().await;
    let admin = env.sim.admin();
    let seeded = crate::support::load_demo(&admin).await;
    let acme = seeded.enterprises[0].enterprise_global_id.clone();
    let assets = |eg: String| {
        let m = env.member.clone();
        async move { m.list_asset_nums().enterprise_global_id(eg).await }
    };
    assert_eq!(assets(acme.clone()).await.unwrap().len(), 3);
    let exported = admin.export_state().send().await.unwrap().into_inner();

    let (status, _) = refused(
        admin
            .reset()
            .body(admin::types::ResetRequest {
                enterprise_global_id: Some("EG-none".into()),
            })
            .send()
            .await,
    );
    assert_eq!(status, 404);
    let all = admin.reset().send().await.unwrap().into_inner();
    assert_eq!(all.scope, admin::types::ResetResultScope::All);
    assert!(
        assets(acme.clone()).await.is_err(),
        "the enterprise is gone"
    );

    // A wrong shape changes nothing and names the field.
    let mut broken = exported.clone();
    let version = broken.get("version").cloned();
    broken.0.insert("version".into(), json!("one"));
    let (status, e) = refused(admin.import_state().body(broken).send().await);
    assert_eq!(
        (status, e.field.as_deref()),
        (400, Some("version")),
        "{e:?}"
    );
    assert!(assets(acme.clone()).await.is_err());
    assert_eq!(version, Some(json!(1)));

    let imported = admin
        .import_state()
        .body(exported)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!((imported.enterprises, imported.assets), (1, 3));
    assert_eq!(assets(acme.clone()).await.unwrap().len(), 3);

    let gone = admin
        .reset()
        .body(admin::types::ResetRequest {
            enterprise_global_id: Some(acme.clone()),
        })
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(gone.scope, admin::types::ResetResultScope::Enterprise);
    assert!(assets(acme).await.is_err());

    // The clock every written time comes from.
    let at = 1_767_225_600_000_i64;
    let set = admin
        .set_clock()
        .body(admin::types::ClockSetting {
            now: at,
            frozen: None,
        })
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!((set.now, set.frozen), (at, true));
    let day = 86_400_000;
    let moved = admin
        .advance_clock()
        .body(admin::types::ClockAdvance { ms: day })
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(moved.now, at + day);
    let ent = env.enterprise("Clocked").await;
    env.add_member(&ent, "erin").await;
    let page = env
        .member
        .list_members()
        .enterprise_global_id(&ent.global_id)
        .page_num(std::num::NonZeroU32::MIN)
        .page_size(std::num::NonZeroU32::new(10).unwrap())
        .await
        .unwrap();
    assert!(
        page.list.iter().all(|m| m.create_time == at + day),
        "{:?}",
        page.list
    );
    let (status, e) = refused(
        admin
            .advance_clock()
            .body(admin::types::ClockAdvance { ms: -1 })
            .send()
            .await,
    );
    assert_eq!((status, e.field.as_deref()), (400, Some("ms")));
}
