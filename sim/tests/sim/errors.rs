//! One test per documented error code (order service: 13004, 500; member center: all
//! 33), each provoking the code from the simulator. Requests the SDK refuses to send
//! (it validates client-side) go out as raw HTTP.

use crate::support::{
    Enterprise, Env, code_of, new_buy, new_member, path, product, start, start_with,
    with_enterprise,
};
use licensing_sdk::{Error, ErrorCode, member::types as mt, order::types as ot};
use licensing_sim::{FaultSettings, Simulator};
use serde_json::json;

/// Adds one employee given as raw JSON; returns the reply.
async fn add_raw(env: &Env, ent: &Enterprise, item: serde_json::Value) -> crate::support::Raw {
    env.raw(
        "POST",
        &path("addMembers", &[&ent.global_id]),
        Some(json!({ "userList": [item] })),
    )
    .await
}

#[track_caller]
fn assert_business(raw: &crate::support::Raw, code: &str) {
    assert_eq!(raw.status, 299, "{raw:?}");
    assert_eq!(raw.code(), code, "{raw:?}");
    assert!(
        raw.body["message"].is_string() && raw.body["cause"].is_string(),
        "{raw:?}"
    );
}

async fn add(
    env: &Env,
    ent: &str,
    members: Vec<mt::NewMember>,
) -> Result<mt::AddMembersResult, Error> {
    env.member
        .add_members()
        .enterprise_global_id(ent)
        .body(mt::AddMembersRequest::builder().user_list(members))
        .await
}

async fn configure(env: &Env, member: &str, delete: &[&str], add: &[&str]) -> Result<(), Error> {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    env.member
        .configure_member_assets()
        .member_global_id(member)
        .body(
            mt::ConfigureAssetsRequest::builder()
                .delete_assets(strings(delete))
                .add_assets(strings(add)),
        )
        .await
}

async fn lend(env: &Env, member: &str, lock: &str, asset_ids: &[&str]) -> Result<(), Error> {
    env.member
        .lend_assets()
        .member_global_id(member)
        .body(
            mt::LendAssetsRequest::builder()
                .borrowed_usb_key(lock)
                .asset_ids(asset_ids.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        )
        .await
}

/// An enterprise with a lent lock, an asset with nodes held by an employee, and the
/// asset's id.
struct Lending {
    ent: Enterprise,
    lock: String,
    asset: String,
    asset_id: String,
    member: String,
}

async fn lending(env: &Env, name: &str) -> Lending {
    let ent = env.enterprise(name).await;
    let nums = env.allocate(2).await;
    env.buy_lent_lock(&ent, &nums[0]).await;
    env.buy(&ent, "normal_recover_usbkey", &nums[1..], "cad", 5)
        .await;
    let member = env.add_member(&ent, "lender").await;
    env.assign(&member, &nums[1..]).await;
    let asset_id = env.asset_id(&ent, &nums[1]).await;
    Lending {
        ent,
        lock: nums[0].clone(),
        asset: nums[1].clone(),
        asset_id,
        member,
    }
}

// ---------------------------------------------------------------- order service

#[tokio::test]
async fn code_13004_parameter_validation_failed() {
    let (env, ent) = with_enterprise("Acme").await;
    // The same channel customer bound twice.
    let rebind = env
        .order
        .bind_enterprise()
        .body(
            ot::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id(ent.channel_customer_id.clone())
                .customer_name("Again")
                .branch_name("North")
                .enterprise_name("Acme")
                .password_mobile("13800000000"),
        )
        .await;
    assert_eq!(code_of(rebind), ErrorCode::ParameterValidationFailed);
    // A cloud license without srcLicenseOrderId (the SDK refuses to send it).
    let nums = env.allocate(1).await;
    let order = new_buy(
        &ent,
        "cloud_customer",
        json!([{ "assetNos": nums, "products": [product("cloud", 1)] }]),
    );
    let raw = env
        .raw(
            "POST",
            &format!("{}?appKey=app", path("batchOrder", &[])),
            Some(json!({ "channelCode": "CH01", "channelOrderId": "CO-1", "syncMode": "sync", "orderList": [order] })),
        )
        .await;
    assert_business(&raw, "13004");
    assert!(
        raw.body["message"]
            .as_str()
            .unwrap()
            .contains("srcLicenseOrderId"),
        "{raw:?}"
    );
}

#[tokio::test]
async fn code_500_network_exception_by_fault_injection() {
    let env = start_with(Simulator::builder().faults(FaultSettings {
        rate_500: 1.0,
        ..Default::default()
    }))
    .await;
    let order = env
        .order
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
        .await;
    assert_eq!(code_of(order), ErrorCode::NetworkException);
    let member = env
        .member
        .list_asset_nums()
        .enterprise_global_id("EG")
        .await;
    assert_eq!(code_of(member), ErrorCode::NetworkException);
}

// ---------------------------------------------------------------- member center: protocol

#[tokio::test]
async fn code_60000_application_token_invalid() {
    let env = start().await;
    let wrong = licensing_sdk::member::Client::builder(&env.url())
        .client_token("stolen")
        .user_token(licensing_sim::DEFAULT_USER_TOKEN)
        .build()
        .unwrap();
    let result = wrong.list_asset_nums().enterprise_global_id("EG").await;
    assert_eq!(code_of(result), ErrorCode::ApplicationTokenInvalid);
}

#[tokio::test]
async fn code_60005_user_token_invalid() {
    let env = start().await;
    let wrong = licensing_sdk::member::Client::builder(&env.url())
        .client_token(licensing_sim::DEFAULT_CLIENT_TOKEN)
        .user_token("expired")
        .build()
        .unwrap();
    let result = wrong.list_asset_nums().enterprise_global_id("EG").await;
    assert_eq!(code_of(result), ErrorCode::UserTokenInvalid);
}

#[tokio::test]
async fn code_70001_security_check_failed() {
    let env = start().await;
    // The bearer token and the clientToken header disagree.
    let raw = env
        .bare(
            "GET",
            &format!("{}?g_nonce=n1", path("listAssetNums", &["EG"])),
            &[
                ("Authorization", "Bearer another-client-token"),
                ("clientToken", "sim-client-token"),
                ("userToken", "sim-user-token"),
            ],
            None,
        )
        .await;
    assert_business(&raw, "70001");
}

/// An account names one employee of an enterprise: the same name in another enterprise is
/// another employee, the same name again in one enterprise (in any case) is refused, and a
/// deleted employee's account can be taken again.
#[tokio::test]
async fn an_account_is_unique_within_its_enterprise_only() {
    let (env, acme) = with_enterprise("Acme").await;
    let globex = env.enterprise("Globex").await;
    let acme_alice = env.add_member(&acme, "alice").await;
    let globex_alice = env.add_member(&globex, "Alice").await;
    assert_ne!(acme_alice, globex_alice);
    for ent in [&acme, &globex] {
        let again = add(
            &env,
            &ent.global_id,
            vec![new_member("ALICE", "Secret-123", "Alice")],
        )
        .await;
        assert_eq!(code_of(again), ErrorCode::UserCenterException);
    }
    env.delete_member(&acme, &acme_alice).await.unwrap();
    let taken_again = env.add_member(&acme, "alice").await;
    assert_ne!(taken_again, acme_alice);
    let still = add(
        &env,
        &globex.global_id,
        vec![new_member("alice", "Secret-123", "Alice")],
    )
    .await;
    assert_eq!(
        code_of(still),
        ErrorCode::UserCenterException,
        "the other enterprise's employee keeps the account"
    );

    // A state document with the account twice in one enterprise is refused by its path.
    let good = env.sim.export_state();
    let mut doc = good.clone();
    doc["state"]["members"][&globex_alice]["enterprise"] = json!(acme.global_id);
    fn listed<'d>(doc: &'d mut serde_json::Value, ent: &str) -> &'d mut Vec<serde_json::Value> {
        doc["state"]["enterprises"][ent]["members"]
            .as_array_mut()
            .unwrap()
    }
    listed(&mut doc, &globex.global_id).retain(|m| m != globex_alice.as_str());
    listed(&mut doc, &acme.global_id).push(json!(globex_alice));
    let Err(licensing_sim::ImportError::Invalid { path, message }) = env.sim.import_state(doc)
    else {
        panic!("an account twice in one enterprise is refused");
    };
    assert!(path.ends_with(".account"), "{path}: {message}");
    assert!(message.contains("same enterprise"), "{message}");
    assert_eq!(env.sim.export_state(), good, "nothing changed");
}

#[tokio::test]
async fn code_80001_user_center_exception() {
    let (env, ent) = with_enterprise("Acme").await;
    // Deterministically: the user center refuses an account it already has.
    env.add_member(&ent, "alice").await;
    let duplicate = add(
        &env,
        &ent.global_id,
        vec![new_member("alice", "Secret-123", "Alice")],
    )
    .await;
    assert_eq!(code_of(duplicate), ErrorCode::UserCenterException);
    // And by fault injection, on the operations the document lists it for.
    env.sim.faults().set_rate_80001(1.0);
    let listed = env.members(&ent, 1).await;
    assert_eq!(code_of(listed), ErrorCode::UserCenterException);
    let not_listed = env
        .member
        .list_asset_nums()
        .enterprise_global_id(&ent.global_id)
        .await;
    assert!(
        not_listed.is_ok(),
        "80001 is not documented for listAssetNums"
    );
}

// ---------------------------------------------------------------- member center: employees

#[tokio::test]
async fn code_60002_user_not_found() {
    let (env, ent) = with_enterprise("Acme").await;
    let result = env
        .member
        .edit_member()
        .enterprise_global_id(&ent.global_id)
        .member_global_id("MG-404")
        .body(
            mt::EditMemberRequest::builder()
                .user_name("ghost")
                .name("Ghost"),
        )
        .await;
    assert_eq!(code_of(result), ErrorCode::UserNotFound);
}

#[tokio::test]
async fn code_40000_parameter_empty() {
    let env = start().await;
    let raw = env
        .raw(
            "GET",
            &format!("{}?pageSize=10", path("listMembers", &["EG"])),
            None,
        )
        .await;
    assert_business(&raw, "40000");
    let result = lend(&env, "MG-1", "", &["A-1"]).await;
    assert_eq!(code_of(result), ErrorCode::ParameterEmpty);
}

#[tokio::test]
async fn code_40021_employee_list_empty() {
    let (env, ent) = with_enterprise("Acme").await;
    let raw = env
        .raw(
            "POST",
            &path("addMembers", &[&ent.global_id]),
            Some(json!({ "userList": [] })),
        )
        .await;
    assert_business(&raw, "40021");
}

#[tokio::test]
async fn code_60013_too_many_employees() {
    let (env, ent) = with_enterprise("Acme").await;
    let users: Vec<_> = (0..101)
        .map(|i| json!({ "userName": format!("u{i}"), "password": "Secret-123", "name": "U" }))
        .collect();
    let raw = env
        .raw(
            "POST",
            &path("addMembers", &[&ent.global_id]),
            Some(json!({ "userList": users })),
        )
        .await;
    assert_business(&raw, "60013");
}

#[tokio::test]
async fn code_40008_account_empty() {
    let (env, ent) = with_enterprise("Acme").await;
    let raw = add_raw(
        &env,
        &ent,
        json!({ "userName": "", "password": "Secret-123", "name": "A" }),
    )
    .await;
    assert_business(&raw, "40008");
}

#[tokio::test]
async fn code_40001_password_empty() {
    let (env, ent) = with_enterprise("Acme").await;
    let raw = add_raw(
        &env,
        &ent,
        json!({ "userName": "alice", "password": "", "name": "Alice" }),
    )
    .await;
    assert_business(&raw, "40001");
}

#[tokio::test]
async fn code_40009_group_id_empty() {
    let (env, ent) = with_enterprise("Acme").await;
    let mut alice = new_member("alice", "Secret-123", "Alice");
    alice.department_id = Some(0);
    let result = add(&env, &ent.global_id, vec![alice]).await;
    assert_eq!(code_of(result), ErrorCode::GroupIdEmpty);
}

#[tokio::test]
async fn code_40022_name_empty() {
    let (env, ent) = with_enterprise("Acme").await;
    let raw = add_raw(
        &env,
        &ent,
        json!({ "userName": "alice", "password": "Secret-123", "name": "" }),
    )
    .await;
    assert_business(&raw, "40022");
}

#[tokio::test]
async fn code_50003_password_length() {
    let env = start_with(Simulator::builder().password_length(8..=16)).await;
    let ent = env.enterprise("Acme").await;
    let result = add(
        &env,
        &ent.global_id,
        vec![new_member("alice", "short", "Alice")],
    )
    .await;
    let Err(Error::Api(e)) = result else {
        panic!("expected 50003, got {result:?}");
    };
    assert_eq!(e.code, ErrorCode::PasswordLength);
    assert_eq!(e.message, "password length must lie between 8 and 16");
    let member = env.add_member(&ent, "bob").await;
    let reset = env
        .member
        .reset_member_password()
        .enterprise_global_id(&ent.global_id)
        .member_global_id(&member)
        .body(mt::ResetPasswordRequest::builder().password("a-password-far-too-long"))
        .await;
    assert_eq!(code_of(reset), ErrorCode::PasswordLength);
}

#[tokio::test]
async fn code_30002_name_too_long() {
    let (env, ent) = with_enterprise("Acme").await;
    let raw = add_raw(
        &env,
        &ent,
        json!({ "userName": "alice", "password": "Secret-123", "name": "N".repeat(31) }),
    )
    .await;
    assert_business(&raw, "30002");
    // The account plus the enterprise code must stay under 63 characters.
    let long = "a".repeat(60);
    let result = add(
        &env,
        &ent.global_id,
        vec![new_member(&long, "Secret-123", "Long")],
    )
    .await;
    assert_eq!(code_of(result), ErrorCode::NameTooLong);
}

#[tokio::test]
async fn code_30003_remark_too_long() {
    let (env, ent) = with_enterprise("Acme").await;
    let raw = add_raw(
        &env,
        &ent,
        json!({ "userName": "alice", "password": "Secret-123", "name": "Alice", "remark": "r".repeat(201) }),
    )
    .await;
    assert_business(&raw, "30003");
}

#[tokio::test]
async fn code_10003_account_not_alphanumeric() {
    let (env, ent) = with_enterprise("Acme").await;
    let raw = add_raw(
        &env,
        &ent,
        json!({ "userName": "bob_1", "password": "Secret-123", "name": "Bob" }),
    )
    .await;
    assert_business(&raw, "10003");
}

#[tokio::test]
async fn code_10004_invalid_mobile_number() {
    let (env, ent) = with_enterprise("Acme").await;
    let mut alice = new_member("alice", "Secret-123", "Alice");
    alice.password_mobile = Some("12ab".into());
    let result = add(&env, &ent.global_id, vec![alice]).await;
    assert_eq!(code_of(result), ErrorCode::InvalidMobileNumber);
}

#[tokio::test]
async fn code_40006_enterprise_suffix_empty() {
    let env = start().await;
    let result = add(
        &env,
        "EG-404",
        vec![new_member("alice", "Secret-123", "Alice")],
    )
    .await;
    assert_eq!(code_of(result), ErrorCode::EnterpriseSuffixEmpty);
}

#[tokio::test]
async fn code_60009_trial_member_limit() {
    let env = start_with(Simulator::builder().trial_member_limit(1)).await;
    let ent = env.enterprise("Acme").await;
    env.add_member(&ent, "alice").await;
    let result = add(
        &env,
        &ent.global_id,
        vec![new_member("bob", "Secret-123", "Bob")],
    )
    .await;
    let Err(Error::Api(e)) = result else {
        panic!("expected 60009, got {result:?}");
    };
    assert_eq!(e.code, ErrorCode::TrialMemberLimit);
    assert_eq!(
        e.message,
        "enterprise account may create at most 1 trial member accounts"
    );
}

#[tokio::test]
async fn code_60027_partial_add_failure() {
    let (env, ent) = with_enterprise("Acme").await;
    let result = add(
        &env,
        &ent.global_id,
        vec![
            new_member("alice", "Secret-123", "Alice"),
            new_member("bob", "abc", "Bob"),
        ],
    )
    .await;
    let Err(Error::PartialFailure { error, result }) = result else {
        panic!("expected a partial failure, got {result:?}");
    };
    assert_eq!(error.code, ErrorCode::PartialAddFailure);
    assert_eq!(error.http_status, 299);
    assert_eq!(result.succeeded.len(), 1);
    assert_eq!(result.succeeded[0].user_name, "alice@acme");
    assert_eq!(result.failed.len(), 1);
    assert_eq!(result.failed[0].user_name, "bob");
    assert!(
        result.failed[0].message.contains("between 6 and 32"),
        "{:?}",
        result.failed
    );
}

// ---------------------------------------------------------------- member center: assets

#[tokio::test]
async fn code_60017_not_bound_to_licensing_customer() {
    let env = start().await;
    let assets = env
        .member
        .list_asset_nums()
        .enterprise_global_id("EG-404")
        .await;
    assert_eq!(code_of(assets), ErrorCode::NotBoundToLicensingCustomer);
    let locks = env
        .member
        .list_lent_locks()
        .enterprise_global_id("EG-404")
        .await;
    assert_eq!(code_of(locks), ErrorCode::NotBoundToLicensingCustomer);
}

#[tokio::test]
async fn code_60024_asset_number_not_found() {
    let (env, ent) = with_enterprise("Acme").await;
    let products = env.member.list_asset_products().asset_id("A-404").await;
    assert_eq!(code_of(products), ErrorCode::AssetNumberNotFound);
    let result = configure(&env, &ent.members[0], &[], &["8000000404"]).await;
    assert_eq!(code_of(result), ErrorCode::AssetNumberNotFound);
}

#[tokio::test]
async fn code_60023_multiple_employees_matched() {
    let (env, acme) = with_enterprise("Acme").await;
    let globex = env.enterprise("Globex").await;
    env.add_member(&acme, "alice").await;
    let globex_alice = env.add_member(&globex, "alice").await;
    let result = configure(&env, "alice", &[], &[]).await;
    assert_eq!(code_of(result), ErrorCode::MultipleEmployeesMatched);
    // With the enterprise code the account is unambiguous.
    let num = env.allocate(1).await;
    env.buy(&globex, "normal_recover_usbkey", &num, "cad", 1)
        .await;
    configure(&env, "alice@globex", &[], &[&num[0]])
        .await
        .unwrap();
    let assets = env.assets(&globex).await;
    assert_eq!(
        assets[0].cloud_account_global_id.as_deref(),
        Some(globex_alice.as_str())
    );
}

#[tokio::test]
async fn code_60025_asset_number_wrong_customer() {
    let (env, acme) = with_enterprise("Acme").await;
    let globex = env.enterprise("Globex").await;
    let num = env.allocate(1).await;
    env.buy(&globex, "normal_recover_usbkey", &num, "cad", 1)
        .await;
    let result = configure(&env, &acme.members[0], &[], &[&num[0]]).await;
    assert_eq!(code_of(result), ErrorCode::AssetNumberWrongCustomer);
}

#[tokio::test]
async fn code_60026_no_employee_matched() {
    let env = start().await;
    let result = configure(&env, "MG-404", &[], &[]).await;
    assert_eq!(code_of(result), ErrorCode::NoEmployeeMatched);
    let lent = lend(&env, "MG-404", "8000000001", &["A-1"]).await;
    assert_eq!(code_of(lent), ErrorCode::NoEmployeeMatched);
}

#[tokio::test]
async fn code_60028_asset_number_configured_twice() {
    let (env, ent) = with_enterprise("Acme").await;
    let num = env.allocate(1).await;
    env.buy(&ent, "normal_recover_usbkey", &num, "cad", 1).await;
    let result = configure(&env, &ent.members[0], &[&num[0]], &[&num[0]]).await;
    assert_eq!(code_of(result), ErrorCode::AssetNumberConfiguredTwice);
}

// ---------------------------------------------------------------- member center: lending

#[tokio::test]
async fn code_33006_insufficient_nodes() {
    let env = start().await;
    let setup = lending(&env, "Acme").await;
    let empty = env.allocate(1).await;
    env.buy(&setup.ent, "normal_recover_usbkey", &empty, "viewer", 0)
        .await;
    env.assign(&setup.member, &empty).await;
    let id = env.asset_id(&setup.ent, &empty[0]).await;
    let result = lend(&env, &setup.member, &setup.lock, &[&id]).await;
    assert_eq!(code_of(result), ErrorCode::InsufficientNodes);
}

#[tokio::test]
async fn code_33003_employee_lacks_permission() {
    let env = start().await;
    let setup = lending(&env, "Acme").await;
    let other = env.add_member(&setup.ent, "other").await;
    let result = lend(&env, &other, &setup.lock, &[&setup.asset_id]).await;
    assert_eq!(code_of(result), ErrorCode::EmployeeLacksPermission);
}

#[tokio::test]
async fn code_33007_already_lent() {
    let env = start().await;
    let setup = lending(&env, "Acme").await;
    lend(&env, &setup.member, &setup.lock, &[&setup.asset_id])
        .await
        .unwrap();
    let second = env.allocate(1).await;
    env.buy_lent_lock(&setup.ent, &second[0]).await;
    let result = lend(&env, &setup.member, &second[0], &[&setup.asset_id]).await;
    assert_eq!(code_of(result), ErrorCode::AlreadyLent);
}

#[tokio::test]
async fn code_33008_lent_lock_state_abnormal() {
    let env = start().await;
    let setup = lending(&env, "Acme").await;
    // Not a lent lock at all.
    let result = lend(&env, &setup.member, &setup.asset, &[&setup.asset_id]).await;
    assert_eq!(code_of(result), ErrorCode::LentLockStateAbnormal);
    // A disabled lent lock.
    env.order
        .disable_locks()
        .body(
            ot::LockRequest::builder()
                .asset_nums(vec![setup.lock.clone()])
                .operator_identity("ops"),
        )
        .await
        .unwrap();
    let result = lend(&env, &setup.member, &setup.lock, &[&setup.asset_id]).await;
    assert_eq!(code_of(result), ErrorCode::LentLockStateAbnormal);
}

#[tokio::test]
async fn code_33018_lent_lock_lent_to_another_employee() {
    let env = start().await;
    let setup = lending(&env, "Acme").await;
    lend(&env, &setup.member, &setup.lock, &[&setup.asset_id])
        .await
        .unwrap();
    let bob = env.add_member(&setup.ent, "bob").await;
    let own = env.allocate(1).await;
    env.buy(&setup.ent, "normal_recover_usbkey", &own, "cad", 2)
        .await;
    env.assign(&bob, &own).await;
    let id = env.asset_id(&setup.ent, &own[0]).await;
    let result = lend(&env, &bob, &setup.lock, &[&id]).await;
    assert_eq!(code_of(result), ErrorCode::LentLockLentToAnotherEmployee);
}

#[tokio::test]
async fn code_33009_lend_request_failed() {
    let env = start().await;
    let acme = lending(&env, "Acme").await;
    let globex = lending(&env, "Globex").await;
    // A lent lock of another enterprise.
    let result = lend(&env, &acme.member, &globex.lock, &[&acme.asset_id]).await;
    assert_eq!(code_of(result), ErrorCode::LendRequestFailed);
}
