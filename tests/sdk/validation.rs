//! Documented request rules are checked before anything is sent.
//!
//! Where the error surfaces depends on the rule:
//! - pattern / length rules of a string (`userName`, `name`, `remark`) are checked by the
//!   generated types while a typed value is built: `NewMember::builder()...try_into()`
//!   fails with the types' `ConversionError`, before any SDK call can be made. Passed as
//!   a *builder* to an operation's `.body(..)` (e.g. `editMember`), the same rule surfaces
//!   when the operation is awaited, as `Error::Validation`.
//! - `minimum: 1` of `size`, `pageNum`, `pageSize` (`NonZeroU32`): `Error::Validation`
//!   when the operation is awaited.
//! - item counts and cross-field rules (`userList` 1–100, cloud orders need
//!   `srcLicenseOrderId`, products only empty in `delete_asset` orders): checked by the
//!   SDK in `send()`, `Error::Validation` naming the wire path.
//!
//! Every test mounts a catch-all mock that expects no request (checked on `verify`).

use crate::common::*;
use futures_util::StreamExt as _;
use licensing_sdk::{
    Error, LicenseType, OrderType, ValidationError,
    member::{self, types as mt},
    order::{self, types as ot},
};
use wiremock::{Mock, MockServer, ResponseTemplate, matchers::any};

/// A server that must receive nothing.
async fn silent_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .named("nothing may be sent")
        .mount(&server)
        .await;
    server
}

fn validation<T: std::fmt::Debug>(result: Result<T, Error>) -> ValidationError {
    match result {
        Err(Error::Validation(e)) => e,
        other => panic!("expected Error::Validation, got {other:?}"),
    }
}

/// The error names `field` (the last segment of a dotted path, spelled as on the wire)
/// and a rule containing one of `rules`.
fn assert_names(e: &ValidationError, fields: &[&str], rules: &[&str]) {
    let last = e.field.rsplit('.').next().unwrap_or_default();
    assert!(
        fields.contains(&last),
        "field {:?} should name one of {fields:?} (rule: {:?})",
        e.field,
        e.rule
    );
    assert!(
        rules.iter().any(|r| e.rule.contains(r)),
        "rule {:?} should mention one of {rules:?}",
        e.rule
    );
    let shown = Error::Validation(e.clone()).to_string();
    assert!(
        shown.contains(&e.field) && shown.contains(&e.rule),
        "{shown}"
    );
}

fn new_member(user_name: &str) -> mt::builder::NewMember {
    mt::NewMember::builder()
        .user_name(user_name)
        .password("Initial-Pass-1")
        .name("Alice")
}

fn edit_body(user_name: &str, name: &str) -> mt::builder::EditMemberRequest {
    mt::EditMemberRequest::builder()
        .user_name(user_name)
        .name(name)
}

async fn edit(client: &member::Client, body: mt::builder::EditMemberRequest) -> Result<(), Error> {
    client
        .edit_member()
        .enterprise_global_id("EG-7f3a")
        .member_global_id("MG-2")
        .body(body)
        .await
}

// ------------------------------------------------------------------------------ userName

#[test]
fn user_name_must_be_letters_and_digits_when_building_a_new_member() {
    // Surfaces while building the typed value: no `addMembers` call can carry it.
    for bad in ["bob_1", "bob smith", "bob@acme", "bób", ""] {
        let built: Result<mt::NewMember, _> = new_member(bad).try_into();
        let message = built.expect_err(bad).to_string();
        assert!(message.contains("user_name"), "{bad:?}: {message}");
        assert!(mt::NewMemberUserName::try_from(bad).is_err(), "{bad:?}");
    }
    let built: Result<mt::NewMember, _> = new_member("Bob42").try_into();
    assert!(built.is_ok());
}

#[tokio::test]
async fn user_name_must_be_letters_and_digits_in_edit_member() {
    let server = silent_server().await;
    let client = member_client(&server.uri());

    // Surfaces when the operation is awaited (the body was passed as a builder).
    let e = validation(edit(&client, edit_body("bob_1", "Bob")).await);
    assert_names(&e, &["userName"], &["pattern"]);
    server.verify().await;
}

// ------------------------------------------------------------------------------ name, remark

#[test]
fn name_and_remark_lengths_when_building_a_new_member() {
    let built: Result<mt::NewMember, _> = new_member("bob").name("x".repeat(31)).try_into();
    let message = built.expect_err("31 characters").to_string();
    assert!(
        message.contains("name") && message.contains("30"),
        "{message}"
    );
    assert!(mt::NewMemberName::try_from("x".repeat(31)).is_err());
    // Characters, not bytes: 30 CJK characters are allowed.
    assert!(mt::NewMemberName::try_from("名".repeat(30)).is_ok());

    let built: Result<mt::NewMember, _> = new_member("bob")
        .remark(Some(
            mt::NewMemberRemark::try_from("r".repeat(200)).expect("200 is allowed"),
        ))
        .try_into();
    assert!(built.is_ok());
    let remark = mt::NewMemberRemark::try_from("r".repeat(201));
    assert!(
        remark
            .expect_err("201 characters")
            .to_string()
            .contains("200")
    );
}

#[tokio::test]
async fn name_longer_than_30_in_edit_member() {
    let server = silent_server().await;
    let client = member_client(&server.uri());

    let e = validation(edit(&client, edit_body("bob", &"x".repeat(31))).await);
    assert_names(&e, &["name"], &["30"]);
    server.verify().await;
}

/// The builders' `remark` setters take an already typed `Option<…Remark>` (not a string),
/// so a remark over 200 characters surfaces when that typed value is built, before any
/// SDK call; the SDK can never be handed one.
#[test]
fn remark_longer_than_200_in_edit_member() {
    let remark = mt::EditMemberRequestRemark::try_from("r".repeat(201));
    let message = remark.expect_err("201 characters").to_string();
    assert!(message.contains("200"), "{message}");
    assert!(mt::EditMemberRequestRemark::try_from("r".repeat(200)).is_ok());
}

/// The boundaries themselves are allowed and sent.
#[tokio::test]
async fn name_of_30_and_remark_of_200_are_sent() {
    let server = MockServer::start().await;
    reply_ok(&server, "editMember", &["EG-7f3a", "MG-2"]).await;
    let client = member_client(&server.uri());
    let body = edit_body("bob", &"x".repeat(30))
        .remark(mt::EditMemberRequestRemark::try_from("r".repeat(200)).ok());
    edit(&client, body).await.expect("sent");
    assert_eq!(received(&server).await.len(), 1);
}

// ------------------------------------------------------------------------------ userList

fn members(n: usize) -> Vec<mt::NewMember> {
    (0..n)
        .map(|i| new_member(&format!("user{i}")).try_into().expect("valid"))
        .collect()
}

async fn add(client: &member::Client, n: usize) -> Result<mt::AddMembersResult, Error> {
    client
        .add_members()
        .enterprise_global_id("EG-7f3a")
        .body(mt::AddMembersRequest::builder().user_list(members(n)))
        .await
}

#[tokio::test]
async fn zero_or_more_than_100_employees_per_call() {
    let server = silent_server().await;
    let client = member_client(&server.uri());

    for n in [0, 101] {
        let e = validation(add(&client, n).await);
        assert_eq!(e.field, "userList", "{n} employees");
        assert!(e.rule.contains("1 to 100"), "{n}: {}", e.rule);
        assert!(e.rule.contains(&format!("has {n}")), "{n}: {}", e.rule);
    }
    server.verify().await;
}

#[tokio::test]
async fn one_and_100_employees_are_sent() {
    let server = MockServer::start().await;
    reply_ok(&server, "addMembers", &["EG-7f3a"]).await;
    let client = member_client(&server.uri());
    add(&client, 1).await.expect("1 employee is sent");
    add(&client, 100).await.expect("100 employees are sent");
    let requests = received_n(&server, 2).await;
    let sent: serde_json::Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert_eq!(sent["userList"].as_array().unwrap().len(), 100);
}

// ------------------------------------------------------------------------------ size, pageNum, pageSize

#[tokio::test]
async fn size_must_be_at_least_1() {
    let server = silent_server().await;
    let client = order_client(&server.uri());

    let e = validation(
        client
            .allocate_shell_nums()
            .body(ot::AllocateShellNumsRequest::builder().size(0u32))
            .await,
    );
    assert_names(&e, &["size"], &["at least 1", "out of range"]);
    server.verify().await;
}

#[tokio::test]
async fn page_num_and_page_size_must_be_at_least_1() {
    let server = silent_server().await;
    let client = member_client(&server.uri());

    let e = validation(
        client
            .list_members()
            .enterprise_global_id("EG-7f3a")
            .page_num(0u32)
            .page_size(10u32)
            .await,
    );
    assert_names(&e, &["pageNum"], &["at least 1"]);

    let e = validation(
        client
            .list_members()
            .enterprise_global_id("EG-7f3a")
            .page_num(1u32)
            .page_size(0u32)
            .await,
    );
    assert_names(&e, &["pageSize"], &["at least 1"]);

    // Through the stream: the bad page size is reported as the stream's only item.
    let items: Vec<_> = client
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_size(0u32)
        .stream()
        .collect()
        .await;
    assert_eq!(items.len(), 1);
    let e = validation(items.into_iter().next().unwrap());
    assert_names(&e, &["pageSize"], &["at least 1"]);
    server.verify().await;
}

/// `pageNum` 0 set on a builder that is then streamed must not be replaced silently by
/// page 1 and sent.
#[tokio::test]
async fn page_num_0_is_rejected_by_the_stream_too() {
    let server = silent_server().await;
    let client = member_client(&server.uri());

    let items: Vec<_> = client
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_num(0u32)
        .page_size(10u32)
        .stream()
        .take(1)
        .collect()
        .await;

    let e = validation(items.into_iter().next().expect("one item"));
    assert_names(&e, &["pageNum"], &["at least 1"]);
    server.verify().await;
}

#[tokio::test]
async fn missing_path_parameter_is_named() {
    let server = silent_server().await;
    let client = member_client(&server.uri());
    let e = validation(client.delete_member().enterprise_global_id("EG-7f3a").await);
    assert_eq!(e, ValidationError::new("memberGlobalId", "is required"));
    server.verify().await;
}

#[tokio::test]
async fn missing_required_body_field_is_named() {
    let server = silent_server().await;
    let client = order_client(&server.uri());
    let e = validation(
        client
            .bind_enterprise()
            .body(
                ot::BindEnterpriseRequest::builder()
                    .channel_customer_id("CC-42")
                    .customer_name("Acme")
                    .branch_name("North")
                    .enterprise_name("Acme Robotics")
                    .password_mobile("13800000000"),
            )
            .await,
    );
    assert_names(&e, &["channelCode"], &["required"]);
    server.verify().await;
}

// ------------------------------------------------------------------------------ batch orders

fn batch(orders: Vec<ot::LicenseOrder>) -> ot::builder::BatchOrderRequest {
    let mut base: ot::BatchOrderRequest = body_example();
    base.order_list = orders;
    base.into()
}

/// The spec's example order (`new_buy`, a standalone lock, one asset with products).
fn example_order() -> ot::NewBuyOrder {
    let base: ot::BatchOrderRequest = body_example();
    match base.order_list.into_iter().next().expect("an order") {
        ot::LicenseOrder::NewBuy(order) => order,
        other => panic!("the example is a new_buy order, not {}", other.order_type()),
    }
}

async fn send_batch(client: &order::Client, orders: Vec<ot::LicenseOrder>) -> Result<(), Error> {
    client
        .batch_order()
        .app_key("app-key-1")
        .body(batch(orders))
        .await
        .map(drop)
}

#[tokio::test]
async fn cloud_license_orders_need_src_license_order_id() {
    let server = silent_server().await;
    let client = order_client(&server.uri());

    for license_type in [
        LicenseType::CloudAccount,
        LicenseType::CloudCustomer,
        LicenseType::CloudPersonal,
    ] {
        for missing in [None, Some(String::new())] {
            let mut cloud = example_order();
            cloud.license_type = license_type.clone();
            cloud.src_license_order_id = missing.clone();
            let e =
                validation(send_batch(&client, vec![example_order().into(), cloud.into()]).await);
            assert_eq!(
                e.field, "orderList[1].srcLicenseOrderId",
                "{license_type} {missing:?}"
            );
            assert!(e.rule.contains("cloud"), "{}", e.rule);
        }
    }
    server.verify().await;
}

#[tokio::test]
async fn new_buy_orders_need_products() {
    let server = silent_server().await;
    let client = order_client(&server.uri());

    let mut order = example_order();
    let mut empty = order.assets[0].clone();
    empty.products.clear();
    order.assets.push(empty);
    let order = ot::LicenseOrder::from(order);
    assert_eq!(order.order_type(), OrderType::NewBuy);
    let e = validation(send_batch(&client, vec![example_order().into(), order]).await);
    assert_eq!(e.field, "orderList[1].assets[1].products");
    assert!(e.rule.contains("empty"), "{}", e.rule);
    server.verify().await;
}

#[tokio::test]
async fn delete_asset_orders_may_have_no_products() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(reply_example("batchOrder")))
        .expect(1)
        .mount(&server)
        .await;
    let client = order_client(&server.uri());

    let buy = example_order();
    let order: ot::DeleteAssetOrder = ot::DeleteAssetOrder::builder()
        .sequence(1)
        .customer_id(buy.customer_id)
        .enterprise_global_id(buy.enterprise_global_id)
        .license_type(buy.license_type)
        .assets(vec![ot::RevokedAsset {
            asset_nos: buy.assets[0].asset_nos.clone(),
        }])
        .try_into()
        .expect("only the identifying fields are needed");
    send_batch(&client, vec![order.into()])
        .await
        .expect("a delete_asset order without products is sent");

    let request = only_request(&server).await;
    let sent: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(sent["orderList"][0]["orderType"], "delete_asset");
    assert!(sent["orderList"][0]["assets"][0].get("products").is_none());
    server.verify().await;
}

/// A cloud order with its source order id passes.
#[tokio::test]
async fn cloud_order_with_src_license_order_id_is_sent() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(reply_example("batchOrder")))
        .expect(1)
        .mount(&server)
        .await;
    let mut cloud = example_order();
    cloud.license_type = LicenseType::CloudCustomer;
    cloud.src_license_order_id = Some("LO-000001".into());
    send_batch(&order_client(&server.uri()), vec![cloud.into()])
        .await
        .expect("sent");
    server.verify().await;
}

/// Optional fields take the plain value, `Some` or `None`, as required ones do; a value
/// that breaks its rule is a `Validation` error naming the field and the rule.
#[tokio::test]
async fn optional_setters_take_plain_values() {
    let plain: mt::NewMember = new_member("carol")
        .remark("design team")
        .password_mobile("13900000000")
        .department_id(7)
        .try_into()
        .expect("plain values");
    assert_eq!(
        plain.remark.as_deref().map(|r| r.as_str()),
        Some("design team")
    );
    assert_eq!(plain.password_mobile.as_deref(), Some("13900000000"));
    assert_eq!(plain.department_id, Some(7));
    let owned: mt::NewMember = new_member("dan")
        .remark(String::from("owned"))
        .password_mobile(None::<String>)
        .remark(None)
        .try_into()
        .expect("None clears");
    assert!(owned.remark.is_none() && owned.password_mobile.is_none());

    let server = silent_server().await;
    let client = member_client(&server.uri());
    let e = validation(edit(&client, edit_body("erin", "Erin").remark("r".repeat(201))).await);
    assert_names(&e, &["remark"], &["200"]);
    assert!(!e.rule.contains("error converting"), "{}", e.rule);
    server.verify().await;
}

/// A builder of `p` with every field but `productUri` set.
fn product_without_uri(p: ot::Product) -> ot::builder::Product {
    ot::Product::builder()
        .crm_product_id(p.crm_product_id)
        .parent_crm_product_id(p.parent_crm_product_id)
        .product_name(p.product_name)
        .product_type(p.product_type)
        .limit_concurrent(p.limit_concurrent)
        .limit_time_duration(p.limit_time_duration)
        .trial(p.trial)
        .trial_end_date(p.trial_end_date)
        .time_unit(p.time_unit)
        .time_unit_quantity(p.time_unit_quantity)
        .time_duration_expression(p.time_duration_expression)
        .product_features(p.product_features)
}

/// Builders are accepted where a list takes a generated type; one conversion at the top
/// reports the first invalid nested field with its path.
#[tokio::test]
async fn nested_builders_report_the_path_of_the_first_invalid_field() {
    let server = silent_server().await;
    let client = member_client(&server.uri());
    let e = validation(
        client
            .add_members()
            .enterprise_global_id("EG-7f3a")
            .body(mt::AddMembersRequest::builder().user_list(vec![
                new_member("alice"),
                new_member("bob smith"),
                new_member("carol"),
            ]))
            .await,
    );
    assert!(e.field.starts_with("userList[1].userName"), "{e:?}");
    assert!(
        e.rule.contains("pattern") || e.rule.contains("match"),
        "{e:?}"
    );
    server.verify().await;

    let base = example_order();
    let product = |uri: Option<&str>| {
        let b = product_without_uri(base.assets[0].products[0].clone());
        match uri {
            Some(uri) => b.product_uri(uri),
            None => b,
        }
    };
    let order: Result<ot::NewBuyOrder, _> = ot::builder::NewBuyOrder::from(base.clone())
        .assets(vec![
            ot::Asset::builder()
                .asset_nos(vec!["8000000001".to_string()])
                .products(vec![product(Some("cad")), product(None)]),
        ])
        .try_into();
    let e = Error::from(order.expect_err("the second product has no productUri"));
    let Error::Validation(e) = e else {
        panic!("{e:?}")
    };
    assert_eq!(e.field, "assets[0].products[1].productUri", "{e:?}");
    assert_eq!(e.rule, "is required");
}

/// A batch's `orderList` takes the orders' builders (one order type's, or the union's
/// `builder::LicenseOrder` to mix types with built orders); the first invalid field, at
/// any depth, is reported with its wire path from the request body.
#[tokio::test]
async fn order_builders_in_a_batch_report_the_whole_path() {
    let server = silent_server().await;
    let client = order_client(&server.uri());
    let base = example_order();
    let product = base.assets[0].products[0].clone();
    let without_uri = product_without_uri(product.clone());
    let order = || {
        ot::LicenseOrder::new_buy()
            .sequence(base.sequence)
            .customer_id(base.customer_id.clone())
            .enterprise_global_id(base.enterprise_global_id.clone())
    };
    let broken = ot::builder::NewBuyOrder::from(base.clone()).assets(vec![
        ot::Asset::builder()
            .asset_nos(vec!["8000000001".to_string()])
            .products(vec![product.clone()]),
        ot::Asset::builder()
            .asset_nos(vec!["8000000002".to_string()])
            .products(vec![without_uri]),
    ]);
    let batch = |orders: Vec<ot::builder::LicenseOrder>| {
        ot::BatchOrderRequest::builder()
            .channel_code("CH01")
            .channel_order_id("CO-1")
            .sync_mode(licensing_sdk::SyncMode::Sync)
            .order_list(orders)
    };

    // One order type's builders.
    let e = validation(
        client
            .batch_order()
            .app_key("APP_KEY")
            .body(
                ot::BatchOrderRequest::builder()
                    .channel_code("CH01")
                    .channel_order_id("CO-1")
                    .sync_mode(licensing_sdk::SyncMode::Sync)
                    .order_list(vec![broken.clone()]),
            )
            .await,
    );
    assert_eq!(e.field, "orderList[0].assets[1].products[0].productUri");
    assert_eq!(e.rule, "is required");

    // Mixed: a built revocation first, then a builder missing its required fields.
    let revoke = ot::LicenseOrder::delete_asset(
        1,
        base.customer_id.clone(),
        base.enterprise_global_id.clone(),
        LicenseType::NormalRecoverUsbkey,
        vec!["8000000001".to_string()],
    );
    let e = validation(
        client
            .batch_order()
            .app_key("APP_KEY")
            .body(batch(vec![revoke.clone().into(), order().into()]))
            .await,
    );
    assert_eq!(e.field, "orderList[1].address", "{e:?}");
    assert_eq!(e.rule, "is required");
    let e = validation(
        client
            .batch_order()
            .app_key("APP_KEY")
            .body(batch(vec![revoke.clone().into(), broken.into()]))
            .await,
    );
    assert_eq!(e.field, "orderList[1].assets[1].products[0].productUri");
    server.verify().await;

    // The same list, valid, converts to exactly the orders it names.
    let request: ot::BatchOrderRequest = batch(vec![
        revoke.clone().into(),
        ot::builder::NewBuyOrder::from(base.clone()).into(),
    ])
    .try_into()
    .expect("valid orders convert");
    let json = |v: &ot::LicenseOrder| serde_json::to_value(v).expect("serializes");
    assert_eq!(json(&request.order_list[0]), json(&revoke));
    assert_eq!(
        json(&request.order_list[1]),
        json(&ot::LicenseOrder::NewBuy(base))
    );
}

/// Optional lists and optional single fields of generated types take builders too; a
/// broken field inside is named with its path.
#[test]
fn optional_nested_builders_report_the_path() {
    let merchandise = |num: &str| {
        ot::Merchandise::builder()
            .crm_product_id("M-1")
            .parent_crm_product_id("")
            .merchandise_num(num)
            .merchandise_name("Design bundle")
            .parent_merchandise_num("")
            .time_duration_expression("1-0-0")
            .license_order_product_list(Vec::<ot::Product>::new())
    };
    let nested: ot::Merchandise = merchandise("PKG-1")
        .children(vec![merchandise("PKG-2"), merchandise("PKG-3")])
        .try_into()
        .expect("valid children convert");
    let children = nested.children.as_deref().expect("children set");
    assert_eq!(children[1].merchandise_num, "PKG-3");

    let broken: Result<ot::Merchandise, _> = merchandise("PKG-1")
        .children(vec![
            merchandise("PKG-2"),
            ot::Merchandise::builder().merchandise_num("PKG-3"),
        ])
        .try_into();
    let Error::Validation(e) = Error::from(broken.expect_err("PKG-3 is incomplete")) else {
        panic!()
    };
    assert_eq!(e.field, "children[1].crmProductId", "{e:?}");
    assert_eq!(e.rule, "is required");

    // A single nested field (a reply's `data`): the builder is taken, the path is dotted.
    let page = mt::MemberPage::builder();
    let reply: Result<mt::ListMembersReply, _> = mt::ListMembersReply::builder()
        .code(licensing_sdk::ReplyCode::SUCCESS)
        .message("ok")
        .data(page)
        .try_into();
    let Error::Validation(e) = Error::from(reply.expect_err("the page is empty")) else {
        panic!()
    };
    assert!(e.field.starts_with("data."), "{e:?}");
    assert_eq!(e.rule, "is required");
}

/// Unsuffixed integer literals are taken where the documents ask for a positive count.
#[test]
fn integer_literals_are_taken() {
    let request: ot::AllocateShellNumsRequest = ot::AllocateShellNumsRequest::builder()
        .size(3)
        .try_into()
        .expect("3 is a valid size");
    assert_eq!(request.size.get(), 3);
    let client = member_client("http://127.0.0.1:9");
    let _ = client.list_members().page_num(1).page_size(50);
}
