//! End-to-end: every operation of both services through the SDK against the simulator,
//! and the state rules they apply.

use std::collections::HashSet;

use crate::support::{
    Enterprise, Env, batch, code_of, license_order, new_buy, new_member, product, start,
    with_enterprise, with_numbers,
};
use futures_util::TryStreamExt as _;
use licensing_sdk::{
    DefaultCustomer, ErrorCode, LicenseType, LimitType, LockStatus, member::types as mt,
    order::types as ot,
};
use licensing_sim::Region;
use serde_json::json;

async fn set_lock(env: &Env, nums: &[&str], disable: bool) -> Vec<(String, LockStatus)> {
    let body = ot::LockRequest::builder()
        .asset_nums(nums.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        .operator_identity("ops@example.com");
    let result = if disable {
        env.order.disable_locks().body(body).await
    } else {
        env.order.enable_locks().body(body).await
    };
    result
        .expect("lock call")
        .into_iter()
        .map(|r| (r.asset_num, r.status))
        .collect()
}

#[tokio::test]
async fn enterprise_accounts_create_bind_query_update() {
    let env = start().await;
    let created = env
        .order
        .create_enterprise()
        .body(
            ot::CreateEnterpriseRequest::builder()
                .crm_customer_id("CRM-9")
                .customer_name("Acme Robotics")
                .branch_name("North"),
        )
        .await
        .unwrap();
    assert!(created.default_type);
    let identities: Vec<_> = created
        .members
        .iter()
        .map(|m| m.member_identity.as_str())
        .collect();
    assert_eq!(identities, ["industry_admin", "cloud_employee"]);

    let bound = env
        .order
        .bind_enterprise()
        .body(
            ot::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id("CC-42")
                .customer_name("Acme via channel")
                .branch_name("North")
                .enterprise_name("Acme Robotics")
                .password_mobile("13800000000"),
        )
        .await
        .unwrap();
    assert_eq!(bound.enterprise_global_id, created.enterprise_global_id);
    assert_eq!(bound.enterprise_name, "Acme Robotics");
    assert_eq!(
        (
            bound.channel_code.as_str(),
            bound.channel_customer_id.as_str()
        ),
        ("CH01", "CC-42")
    );
    assert!(
        !bound.is_default,
        "the enterprise already has its default customer"
    );

    // Binding to a name no enterprise has creates one, with this customer as default.
    let fresh = env
        .order
        .bind_enterprise()
        .body(
            ot::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id("CC-43")
                .customer_name("Globex")
                .branch_name("South")
                .enterprise_name("Globex")
                .password_mobile("+6591234567"),
        )
        .await
        .unwrap();
    assert!(fresh.is_default);
    assert_ne!(fresh.enterprise_global_id, created.enterprise_global_id);

    let query = |default| {
        env.order
            .query_enterprise()
            .channel_code("CH01")
            .channel_customer_id("CC-42")
            .default_customer(default)
    };
    let only_default = query(DefaultCustomer::OnlyDefault).await.unwrap();
    assert_eq!(only_default.len(), 1);
    assert!(only_default[0].is_default);
    assert_eq!(
        only_default[0].enterprise_global_id,
        created.enterprise_global_id
    );
    let all = query(DefaultCustomer::All).await.unwrap();
    assert_eq!(
        all.len(),
        3,
        "default, industry and channel customer: {all:?}"
    );
    assert!(all.iter().any(|c| c.customer_id == bound.customer_id));

    let unbound = env
        .order
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("nobody")
        .default_customer(DefaultCustomer::All)
        .await
        .unwrap();
    assert!(unbound.is_empty());

    env.order
        .update_enterprise()
        .body(
            ot::UpdateEnterpriseRequest::builder()
                .crm_customer_id("CRM-9")
                .customer_name("Acme Robotics Ltd")
                .branch_name("North")
                .address(Some("2 Harbour Road".to_string())),
        )
        .await
        .unwrap();
    let missing = env
        .order
        .update_enterprise()
        .body(
            ot::UpdateEnterpriseRequest::builder()
                .crm_customer_id("CRM-404")
                .customer_name("Nobody")
                .branch_name("North"),
        )
        .await;
    assert_eq!(code_of(missing), ErrorCode::ParameterValidationFailed);
}

#[tokio::test]
async fn asset_numbers_are_ten_digits_with_the_region_marker() {
    let env = start().await;
    let first = env.allocate(3).await;
    assert_eq!(first, ["8000000001", "8000000002", "8000000003"]);
    env.sim.set_region(Region::Singapore);
    assert_eq!(env.sim.region(), Region::Singapore);
    assert_eq!(env.allocate(2).await, ["6000000001", "6000000002"]);
    env.sim.set_region(Region::Domestic);
    assert_eq!(
        env.allocate(1).await,
        ["8000000004"],
        "never reused after a switch"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_asset_numbers_are_unique_and_increasing() {
    let env = start().await;
    let order = env.order.clone();
    // 100 tasks × 10 calls × 10 numbers.
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let order = order.clone();
            tokio::spawn(async move {
                let mut replies = Vec::new();
                for _ in 0..10 {
                    let reply = order
                        .allocate_shell_nums()
                        .body(
                            ot::AllocateShellNumsRequest::builder()
                                .size(std::num::NonZeroU32::new(10).unwrap()),
                        )
                        .await
                        .unwrap();
                    replies.push(reply.into_iter().map(String::from).collect::<Vec<_>>());
                }
                replies
            })
        })
        .collect();
    let mut all = HashSet::new();
    for task in tasks {
        for reply in task.await.unwrap() {
            assert_eq!(reply.len(), 10);
            for pair in reply.windows(2) {
                assert!(pair[0] < pair[1], "increasing within a reply: {reply:?}");
            }
            for num in reply {
                assert_eq!(num.len(), 10);
                assert!(num.bytes().all(|b| b.is_ascii_digit()));
                assert!(num.starts_with('8'));
                assert!(all.insert(num), "unique");
            }
        }
    }
    assert_eq!(all.len(), 10_000);
    // Handed out without gaps: exactly 8000000001..=8000010000.
    let max = all.iter().max().unwrap();
    assert_eq!(max, "8000010000");

    env.sim.set_region(Region::Singapore);
    let singapore = env.allocate(5).await;
    assert!(singapore.iter().all(|n| n.starts_with('6')));
    assert_eq!(
        singapore[0], "6000000001",
        "each region has its own sequence"
    );
}

#[tokio::test]
async fn new_buy_creates_assets_products_and_nested_packages() {
    let (env, ent, nums) = with_numbers("Acme", 2).await;
    let package =
        |num: &str, name: &str, children: serde_json::Value, products: serde_json::Value| {
            json!({
                "crmProductId": format!("M-{num}"), "parentCrmProductId": "A-100",
                "merchandiseNum": num, "merchandiseName": name, "parentMerchandiseNum": "",
                "timeDurationExpression": "1-0-0", "children": children,
                "licenseOrderProductList": products
            })
        };
    let nested = package(
        "PKG-2",
        "Rendering add-on",
        json!(null),
        json!([product("render", 2)]),
    );
    let top = package(
        "PKG-1",
        "Design bundle",
        json!([nested]),
        json!([product("cad", 5)]),
    );
    let order_id = env
        .order(new_buy(
            &ent,
            "normal_recover_usbkey",
            json!([{ "assetNos": nums, "products": [product("base", 1)], "merchandises": [top] }]),
        ))
        .await;
    assert!(order_id.starts_with("LO-"));

    let assets = env.assets(&ent).await;
    let listed: Vec<_> = assets.iter().map(|a| a.asset_num.clone()).collect();
    assert_eq!(listed, nums, "one asset per asset number");
    assert!(
        assets
            .iter()
            .all(|a| a.cloud_account_global_id.is_none() && !a.borrowed_flag)
    );

    let products = env.products(&assets[0].asset_id).await;
    assert_eq!(products.product_instance_list.len(), 1);
    let base = &products.product_instance_list[0];
    assert_eq!(base.product_uri, "base");
    assert_eq!(base.license_order_id, order_id);
    assert_eq!(base.license_type, LicenseType::NormalRecoverUsbkey);
    assert_eq!(base.asset_num.as_deref(), Some(nums[0].as_str()));
    assert_eq!(base.limit_type, LimitType::Basic);
    assert_eq!(base.merchandise_ins_id, None);

    assert_eq!(products.children.len(), 1);
    let bundle = &products.children[0];
    assert_eq!(bundle.merchandise_num, "PKG-1");
    let bundle_products = bundle.product_instance_list.as_ref().unwrap();
    assert_eq!(bundle_products[0].product_uri, "cad");
    assert_eq!(
        bundle_products[0].merchandise_ins_id.as_deref(),
        Some("M-PKG-1")
    );
    let children = bundle.children.as_ref().unwrap();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].merchandise_num, "PKG-2");
    assert_eq!(
        children[0].product_instance_list.as_ref().unwrap()[0].product_uri,
        "render"
    );
}

#[tokio::test]
async fn async_batches_are_applied_before_the_reply() {
    let (env, ent, nums) = with_numbers("Acme", 1).await;
    let mut request = batch(vec![new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{ "assetNos": nums, "products": [product("base", 1)] }]),
    )]);
    request.sync_mode = licensing_sdk::SyncMode::Async;
    let result = env.batch_order(request).await;
    assert_eq!(result[0].sequence, 1);
    assert_eq!(result[0].customer_id, ent.customer_id);
    let assets = env.assets(&ent).await;
    assert_eq!(assets.len(), 1);
}

/// A body this large is run off the worker that read it (`OFFLOAD_BYTES` in the
/// simulator's gate): the batch is applied, or refused, all the same.
#[tokio::test]
async fn a_batch_too_large_for_the_worker_is_applied_or_refused_whole() {
    const OFFLOADED: usize = 256 * 1024;
    let (env, ent, nums) = with_numbers("Acme", 600).await;
    let orders = |nums: &[String]| -> Vec<serde_json::Value> {
        nums.iter()
            .enumerate()
            .map(|(i, num)| {
                let mut order = new_buy(
                    &ent,
                    "normal_recover_usbkey",
                    json!([{ "assetNos": [num], "products": [product("base", 1)] }]),
                );
                order["sequence"] = json!(i + 1);
                order
            })
            .collect()
    };
    // One order in the middle names an asset number never handed out: nothing applies.
    let mut refused = orders(&nums[..300]);
    refused[150]["assets"][0]["assetNos"] = json!(["8999999999"]);
    let refused = batch(refused);
    assert!(serde_json::to_vec(&refused).unwrap().len() >= OFFLOADED);
    assert_eq!(
        code_of(env.order.batch_order().app_key("app").body(refused).await),
        ErrorCode::ParameterValidationFailed
    );
    let listed = || async { env.assets(&ent).await.len() };
    assert_eq!(listed().await, 0, "a refused batch leaves nothing behind");

    let whole = batch(orders(&nums));
    assert!(serde_json::to_vec(&whole).unwrap().len() >= OFFLOADED);
    let result = env.batch_order(whole).await;
    assert_eq!(result.len(), 600);
    assert!(
        result
            .iter()
            .enumerate()
            .all(|(i, r)| r.sequence as usize == i + 1)
    );
    assert_eq!(listed().await, 600);
}

#[tokio::test]
async fn virtual_assets_are_the_cloud_licenses_filtered_by_extend_code() {
    let (env, ent, nums) = with_numbers("Acme", 3).await;
    let first = env.buy_base(&ent, &nums[..1]).await;
    let mut flagged = new_buy(
        &ent,
        "cloud_customer",
        json!([{
            "assetNos": [nums[1]],
            "assetExtendList": [{ "extendCode": "gxxp", "extendValue": "true" }],
            "products": [product("cloud", 3)]
        }]),
    );
    flagged["srcLicenseOrderId"] = json!(first);
    env.order(flagged).await;
    let mut plain = new_buy(
        &ent,
        "cloud_personal",
        json!([{ "assetNos": [nums[2]], "products": [product("cloud", 1)] }]),
    );
    plain["srcLicenseOrderId"] = json!(first);
    env.order(plain).await;

    let all = env
        .order
        .list_virtual_assets()
        .enterprise_global_id(&ent.global_id)
        .await
        .unwrap();
    let listed: Vec<_> = all.iter().map(|a| a.asset_num.as_str()).collect();
    assert_eq!(
        listed,
        [nums[1].as_str(), nums[2].as_str()],
        "only cloud licenses"
    );
    let cloud = &all[0];
    assert_eq!(cloud.license_type, LicenseType::CloudCustomer);
    assert_eq!(cloud.key_shell_number, &nums[1][1..]);
    assert_eq!(cloud.customer_id, ent.customer_id);
    assert_eq!(cloud.assign_status.assign_status, "unassigned");

    let gxxp = env
        .order
        .list_virtual_assets()
        .enterprise_global_id(&ent.global_id)
        .extend_code("gxxp")
        .await
        .unwrap();
    assert_eq!(gxxp.len(), 1);
    assert_eq!(gxxp[0].asset_num, nums[1]);
    assert_eq!(gxxp[0].asset_extends[0].extend_code, "gxxp");
}

#[tokio::test]
async fn delete_asset_revokes_for_good() {
    let (env, ent, nums) = with_numbers("Acme", 2).await;
    let bought = env.buy_base(&ent, &nums).await;
    env.revoke(&ent, &nums[0], &bought).await;

    let assets = env.assets(&ent).await;
    assert_eq!(assets.len(), 1);
    assert_eq!(assets[0].asset_num, nums[1]);
    assert_eq!(
        set_lock(&env, &[&nums[0]], true).await[0].1,
        LockStatus::LockNotFound,
        "a revoked lock no longer exists"
    );
    let again = env
        .order
        .batch_order()
        .app_key("app")
        .body(batch(vec![new_buy(
            &ent,
            "normal_recover_usbkey",
            json!([{ "assetNos": [nums[0]], "products": [product("base", 1)] }]),
        )]))
        .await;
    assert_eq!(
        code_of(again),
        ErrorCode::ParameterValidationFailed,
        "never sold again"
    );
}

#[tokio::test]
async fn delete_product_matches_by_mnemonic_or_strictly_within_the_source_order() {
    let (env, ent) = with_enterprise("Acme").await;
    let num = env.allocate(1).await;
    let first = env.buy(&ent, "normal_recover_usbkey", &num, "cad", 5).await;
    let second = env.buy(&ent, "normal_recover_usbkey", &num, "cad", 5).await;
    let third = env
        .buy(&ent, "normal_recover_usbkey", &num, "render", 2)
        .await;
    let asset_id = env.asset_id(&ent, &num[0]).await;
    let uris = || async {
        let products = env.products(&asset_id).await;
        products
            .product_instance_list
            .iter()
            .map(|p| (p.product_uri.clone(), p.license_order_id.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(uris().await.len(), 3);

    let revoke = |src: Option<&str>, strict: bool, nodes: i32| {
        let mut order = license_order(
            &ent,
            "delete_product",
            "normal_recover_usbkey",
            json!([{ "assetNos": num, "products": [{
                "crmProductId": "P-cad", "productUri": "cad",
                "limitStartDate": 1_767_225_600_000_i64, "limitEndDate": 1_798_761_600_000_i64,
                "limitConcurrent": nodes, "strictMatchWhenDelete": strict
            }]}]),
        );
        if let Some(src) = src {
            order["srcLicenseOrderId"] = json!(src);
        }
        env.order
            .batch_order()
            .app_key("app")
            .body(batch(vec![order]))
    };
    // Strict matching needs the same node count.
    assert_eq!(
        code_of(revoke(Some(&first), true, 9).await),
        ErrorCode::ParameterValidationFailed
    );
    // By mnemonic, within the source order only.
    revoke(Some(&first), false, 9).await.unwrap();
    assert_eq!(
        uris().await,
        [
            ("cad".to_string(), second),
            ("render".to_string(), third.clone())
        ]
    );
    // Strictly, from all the customer's orders.
    revoke(None, true, 5).await.unwrap();
    assert_eq!(uris().await, [("render".to_string(), third)]);
}

#[tokio::test]
async fn locks_change_only_for_refillable_and_big_customer_locks() {
    let (env, ent, nums) = with_numbers("Acme", 4).await;
    env.buy_base(&ent, &nums[..1]).await;
    env.buy(&ent, "normal_unrecover_usbkey", &nums[1..2], "base", 1)
        .await;
    // A big-customer lock: a lock bought with an asset restriction period.
    env.order(new_buy(
        &ent,
        "normal_unrecover_lan_usbkey",
        json!([{
            "assetNos": [nums[2]], "limitStartDate": 1_767_225_600_000_i64,
            "limitEndDate": 1_798_761_600_000_i64, "products": [product("base", 1)]
        }]),
    ))
    .await;
    let names: Vec<&str> = vec![&nums[0], &nums[1], &nums[2], "9999999999"];
    let statuses: Vec<_> = set_lock(&env, &names, true)
        .await
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    assert_eq!(
        statuses,
        [
            LockStatus::Success,
            LockStatus::WrongLockType,
            LockStatus::Success,
            LockStatus::LockNotFound
        ]
    );
    // Idempotent: disabling again succeeds; enabling works the same way.
    assert_eq!(
        set_lock(&env, &[&nums[0]], true).await[0].1,
        LockStatus::Success
    );
    let enabled = set_lock(&env, &[&nums[0], &nums[1]], false).await;
    assert_eq!(enabled[0].1, LockStatus::Success);
    assert_eq!(enabled[1].1, LockStatus::WrongLockType);

    // A lent lock carrying lent rights cannot change: status 3.
    let (lock, _member) = lent_lock_with_loan(&env, &ent, &nums[3]).await;
    assert_eq!(
        set_lock(&env, &[&lock], true).await[0].1,
        LockStatus::OperationFailed
    );
}

/// Buys a refillable lent lock `lock` and a product asset, assigns the asset to a new
/// employee and lends it into the lock. Returns the lock number and the employee.
async fn lent_lock_with_loan(env: &Env, ent: &Enterprise, lock: &str) -> (String, String) {
    let (lock, member, _) = lend_one_asset(env, ent, lock).await;
    (lock, member)
}

/// As [`lent_lock_with_loan`], also returning the lent asset's id.
async fn lend_one_asset(env: &Env, ent: &Enterprise, lock: &str) -> (String, String, String) {
    env.buy_lent_lock(ent, lock).await;
    let asset = env.allocate(1).await;
    env.buy(ent, "normal_recover_usbkey", &asset, "cad", 5)
        .await;
    let member = env.add_member(ent, "lender").await;
    env.assign(&member, &asset).await;
    let asset_id = env.asset_id(ent, &asset[0]).await;
    env.lend(&member, lock, vec![asset_id.clone()]).await;
    (lock.to_string(), member, asset_id)
}

/// The member-center state table: after lending, the lent lock lists the lent products
/// and the source asset no longer does.
#[tokio::test]
async fn lending_moves_the_product_rights() {
    let (env, ent) = with_enterprise("Acme").await;
    let lock_num = env.allocate(1).await.remove(0);
    let uris = |products: &mt::AssetProducts| -> Vec<String> {
        let mut uris: Vec<String> = products
            .product_instance_list
            .iter()
            .map(|p| p.product_uri.clone())
            .collect();
        uris.sort();
        uris
    };
    let (lock, _member, source) = lend_one_asset(&env, &ent, &lock_num).await;
    let lock_id = env.asset_id(&ent, &lock).await;
    let on_lock = env.products(&lock_id).await;
    assert_eq!(
        uris(&on_lock),
        ["cad", "lock"],
        "the lock's own and the lent product"
    );
    let on_source = env.products(&source).await;
    assert!(uris(&on_source).is_empty(), "{on_source:?}");
    assert!(on_source.children.is_empty());
}

#[tokio::test]
async fn employees_add_edit_reset_delete() {
    let (env, ent) = with_enterprise("Acme").await;
    let mut alice = new_member("alice", "Initial-Pass-1", "Alice");
    alice.department_id = Some(10);
    alice.password_mobile = Some("13800000001".into());
    let added = env
        .member
        .add_members()
        .enterprise_global_id(&ent.global_id)
        .body(
            mt::AddMembersRequest::builder()
                .user_list(vec![alice, new_member("bob", "Initial-Pass-2", "Bob")]),
        )
        .await
        .unwrap();
    assert!(added.failed.is_empty());
    let record = &added.succeeded[0];
    assert_eq!(
        record.user_name, "alice@acme",
        "the enterprise code is appended"
    );
    assert_eq!(record.department_id, Some(10));
    assert_eq!(record.department_name.as_deref(), Some("Department 10"));
    assert!(!record.deleted);
    let alice_id = record.global_id.clone();
    let bob_id = added.succeeded[1].global_id.clone();

    let remark = "moved to research".parse::<mt::EditMemberRequestRemark>();
    let edit = mt::EditMemberRequest::builder()
        .user_name("alice")
        .name("Alice Liddell")
        .department_id(11)
        .remark(Some(remark.unwrap()));
    env.edit_member(&ent, &alice_id, edit).await;
    env.member
        .reset_member_password()
        .enterprise_global_id(&ent.global_id)
        .member_global_id(&alice_id)
        .body(mt::ResetPasswordRequest::builder().password("New-Pass-2026"))
        .await
        .unwrap();

    let page = env.members(&ent, 1).department_id(11).await.unwrap();
    assert_eq!(page.total, 1);
    let listed = &page.list[0];
    assert_eq!(
        (listed.name.as_str(), listed.remark.as_str()),
        ("Alice Liddell", "moved to research")
    );
    assert_eq!(listed.password_mobile, "13800000001");
    assert_eq!(listed.department_id, 11);

    let by_keyword = env.members(&ent, 1).keyword("BOB").await.unwrap();
    assert_eq!(by_keyword.list.len(), 1);
    assert_eq!(by_keyword.list[0].global_id, bob_id);

    env.delete_member(&ent, &bob_id).await.unwrap();
    let again = env.delete_member(&ent, &bob_id).await;
    assert_eq!(code_of(again), ErrorCode::UserNotFound);
    let everyone = env.members(&ent, 1).await.unwrap();
    assert_eq!(
        everyone.total, 3,
        "alice and the two created with the enterprise"
    );
}

#[tokio::test]
async fn member_pages_follow_page_helper_and_stream() {
    let (env, ent) = with_enterprise("Acme").await;
    let users: Vec<_> = (0..25)
        .map(|i| new_member(&format!("user{i:02}"), "Secret-123", &format!("User {i}")))
        .collect();
    env.member
        .add_members()
        .enterprise_global_id(&ent.global_id)
        .body(mt::AddMembersRequest::builder().user_list(users))
        .await
        .unwrap();
    // 27 employees: the administrator, the cloud employee and 25 users.
    let page = env.members(&ent, 2).await.unwrap();
    assert_eq!((page.page_num, page.page_size, page.size), (2, 10, 10));
    assert_eq!(
        (page.start_row, page.end_row, page.total, page.pages),
        (11, 20, 27, 3)
    );
    assert_eq!((page.pre_page, page.next_page), (1, 3));
    assert_eq!((page.first_page, page.last_page), (1, 3));
    assert!(page.has_next_page && page.has_previous_page);
    assert!(!page.is_first_page && !page.is_last_page);
    assert_eq!(page.navigate_pages, 8);
    assert_eq!(page.navigatepage_nums, [1, 2, 3]);
    assert_eq!(page.list[0].user_name, "user08@acme");

    let streamed: Vec<_> = env
        .member
        .list_members()
        .enterprise_global_id(&ent.global_id)
        .page_size(10u32)
        .stream()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed.len(), 27);
    let ids: HashSet<_> = streamed.iter().map(|m| m.global_id.clone()).collect();
    assert_eq!(ids.len(), 27);

    let past = env.members(&ent, 9).await.unwrap();
    assert!(past.list.is_empty() && !past.has_next_page);
}

#[tokio::test]
async fn assets_are_assigned_and_lent() {
    let (env, ent, nums) = with_numbers("Acme", 3).await;
    env.buy_lent_lock(&ent, &nums[0]).await;
    env.buy(&ent, "normal_recover_usbkey", &nums[1..], "cad", 5)
        .await;
    let alice = env.add_member(&ent, "alice").await;
    env.assign(&alice, &nums[1..]).await;

    // Revoke one, keep the other.
    env.member
        .configure_member_assets()
        .member_global_id(&alice)
        .body(
            mt::ConfigureAssetsRequest::builder()
                .delete_assets(vec![nums[2].clone()])
                .add_assets(Vec::<String>::new()),
        )
        .await
        .unwrap();
    let assets = env.assets(&ent).await;
    let holder = |num: &str| {
        assets
            .iter()
            .find(|a| a.asset_num == num)
            .unwrap()
            .cloud_account_global_id
            .clone()
    };
    assert_eq!(holder(&nums[1]), Some(alice.clone()));
    assert_eq!(holder(&nums[2]), None);

    let asset_id = env.asset_id(&ent, &nums[1]).await;
    env.lend(&alice, &nums[0], vec![asset_id]).await;

    let locks = env.lent_locks(&ent).await;
    assert_eq!(locks.len(), 1);
    assert_eq!(locks[0].asset_num, nums[0]);
    assert!(locks[0].borrowed_flag);
    assert_eq!(
        locks[0].cloud_account_global_id.as_deref(),
        Some(alice.as_str())
    );

    let assets = env.assets(&ent).await;
    let lent = assets.iter().find(|a| a.asset_num == nums[1]).unwrap();
    assert!(lent.borrowed_flag);

    let page = env.members(&ent, 1).keyword("alice").await.unwrap();
    assert_eq!(page.list[0].asset_nums, [nums[1].clone()]);
    assert_eq!(page.list[0].borrow_num, nums[0]);

    // Deleting the employee ends the loan and frees its assets.
    env.delete_member(&ent, &alice).await.unwrap();
    let locks = env.lent_locks(&ent).await;
    assert!(!locks[0].borrowed_flag);
    assert_eq!(locks[0].cloud_account_global_id, None);
}
