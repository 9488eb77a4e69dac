//! Replies the SDK must accept although they differ from the documents' examples: enum
//! values added later, extra fields, and values that break request-side rules.

use crate::common::*;
use licensing_sdk::{
    CustomerType, Error, ErrorCode, KeyChipType, LicenseType, LimitType, LockStatus, Trial, member,
    operations, order,
};
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, ResponseTemplate, matchers::any};

/// A server answering everything with `body` (HTTP 200).
async fn answering(body: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn unknown_license_type_and_key_chip_type() {
    let mut reply = reply_example("listVirtualAssets");
    reply["data"][0]["licenseType"] = json!("cloud_quantum");
    reply["data"][0]["keyChipType"] = json!(3);
    let server = answering(reply).await;

    let assets = order_client(&server.uri())
        .list_virtual_assets()
        .enterprise_global_id("EG-7f3a")
        .await
        .expect("unknown enum values decode");

    let asset = &assets[0];
    assert_eq!(
        asset.license_type,
        LicenseType::Unknown("cloud_quantum".into())
    );
    assert!(!asset.license_type.is_known());
    assert_eq!(asset.license_type.as_str(), "cloud_quantum");
    assert_eq!(asset.key_chip_type, KeyChipType::Unknown(3));
    assert_eq!(asset.key_chip_type.value(), 3);
    assert_eq!(asset.key_chip_type.description(), None);
}

#[tokio::test]
async fn unknown_lock_status() {
    let mut reply = reply_example("disableLocks");
    reply["data"][1]["status"] = json!(7);
    let server = answering(reply).await;

    let results = order_client(&server.uri())
        .disable_locks()
        .body(body_example::<order::types::LockRequest>())
        .await
        .expect("an unknown lock status decodes");

    assert_eq!(results[0].status, LockStatus::Success);
    assert_eq!(results[1].status, LockStatus::Unknown(7));
    assert!(!results[1].status.is_known());
}

#[tokio::test]
async fn unknown_limit_type_trial_and_license_type_in_products() {
    let mut instance = schema_example("member", "ProductInstance");
    instance["limitType"] = json!("premium");
    instance["trial"] = json!(2);
    instance["licenseType"] = json!("lk_future_usbkey");
    let mut node = schema_example("member", "MerchandiseNode");
    node["licenseType"] = json!("another_new_type");
    node["productInstanceList"] = json!([instance.clone()]);
    let server = answering(json!({
        "code": 0,
        "message": "success",
        "data": {"productInstanceList": [instance], "children": [node]}
    }))
    .await;

    let products = member_client(&server.uri())
        .list_asset_products()
        .asset_id("A-1")
        .await
        .expect("unknown enum values decode");

    let p = &products.product_instance_list[0];
    assert_eq!(p.limit_type, LimitType::Unknown("premium".into()));
    assert_eq!(p.trial, Trial::Unknown(2));
    assert_eq!(
        p.license_type,
        LicenseType::Unknown("lk_future_usbkey".into())
    );
    let n = &products.children[0];
    assert_eq!(
        n.license_type,
        LicenseType::Unknown("another_new_type".into())
    );
    let nested = &n.product_instance_list.as_ref().expect("list")[0];
    assert_eq!(nested.limit_type, LimitType::Unknown("premium".into()));
}

/// Known values still decode to their variants (the fallback is not a catch-all).
#[tokio::test]
async fn known_enum_values_are_not_unknown() {
    let mut instance = schema_example("member", "ProductInstance");
    instance["limitType"] = json!("feature");
    instance["trial"] = json!(1);
    instance["licenseType"] = json!("cloud_personal");
    let server = answering(json!({
        "code": 0,
        "message": "success",
        "data": {"productInstanceList": [instance], "children": []}
    }))
    .await;

    let products = member_client(&server.uri())
        .list_asset_products()
        .asset_id("A-1")
        .await
        .expect("decodes");

    let p = &products.product_instance_list[0];
    assert_eq!(p.limit_type, LimitType::Feature);
    assert_eq!(p.trial, Trial::Trial);
    assert_eq!(p.license_type, LicenseType::CloudPersonal);
}

/// Adds `extra` members to every object in `value`.
fn with_extra_fields(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut map: serde_json::Map<String, Value> = map
                .into_iter()
                .map(|(k, v)| (k, with_extra_fields(v)))
                .collect();
            map.insert("addedLater".into(), json!({"nested": [1, "two", null]}));
            map.insert("anotherFlag".into(), json!(true));
            Value::Object(map)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(with_extra_fields).collect()),
        other => other,
    }
}

#[tokio::test]
async fn unknown_fields_are_ignored_everywhere() {
    // Every object of every documented success reply gets fields the SDK does not know.
    for op in operations::ALL {
        let id = op.id;
        let server = answering(with_extra_fields(reply_example(id))).await;
        let (o, m) = (order_client(&server.uri()), member_client(&server.uri()));
        call_operation(&o, &m, id)
            .await
            .unwrap_or_else(|e| panic!("{id}: extra fields must be ignored: {e:?}"));
    }
}

#[tokio::test]
async fn unknown_fields_in_a_nested_record_keep_the_known_ones() {
    let mut page = schema_example("member", "MemberPage");
    page["list"][0]["newAttribute"] = json!({"level": 3});
    page["surplus"] = json!("x");
    let server =
        answering(json!({"code": 0, "message": "success", "data": page, "traceId": "t-1"})).await;

    let page = member_client(&server.uri())
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_num(1u32)
        .page_size(10u32)
        .await
        .expect("decodes");

    assert_eq!(page.list[0].global_id, "MG-2");
    assert_eq!(page.list[0].asset_nums, ["8000000001"]);
}

#[tokio::test]
async fn unknown_fields_in_error_replies_are_ignored() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(299).set_body_json(json!({
            "code": "60002",
            "message": "user not found",
            "cause": "no employee",
            "requestId": "r-9",
            "data": null
        })))
        .mount(&server)
        .await;
    let result = member_client(&server.uri())
        .delete_member()
        .enterprise_global_id("EG-7f3a")
        .member_global_id("MG-404")
        .await;
    assert!(
        matches!(&result, Err(Error::Api(e)) if e.code == ErrorCode::UserNotFound),
        "{result:?}"
    );
}

/// `ShellNumber` is documented as exactly 10 digits, but a reply that breaks that is
/// still the platform's answer and decodes as sent.
#[tokio::test]
async fn shell_numbers_breaking_the_documented_format_still_decode() {
    let server = answering(json!({
        "code": 0,
        "message": "success",
        "data": ["8000000001", "123", "60000000012", "ABCDEFGHIJ", ""]
    }))
    .await;

    let numbers = order_client(&server.uri())
        .allocate_shell_nums()
        .body(order::types::AllocateShellNumsRequest::builder().size(5u32))
        .await
        .expect("reply-side values are not validated");

    let numbers: Vec<&str> = numbers.iter().map(|n| n.as_str()).collect();
    assert_eq!(
        numbers,
        ["8000000001", "123", "60000000012", "ABCDEFGHIJ", ""]
    );
}

/// Employee records in replies may break the request-side rules of `userName`, `name`
/// and `remark` (the enterprise code appended to `userName` contains `@`).
#[tokio::test]
async fn member_records_breaking_request_rules_still_decode() {
    let mut reply = reply_example("addMembers");
    let long_name = "N".repeat(45);
    let long_remark = "r".repeat(250);
    reply["data"]["succeeded"][0]["userName"] = json!("bob_1@acme-corp");
    reply["data"]["succeeded"][0]["name"] = json!(long_name);
    reply["data"]["succeeded"][0]["remark"] = json!(long_remark);
    reply["data"]["failed"] = json!([{"userName": "", "message": "account empty"}]);
    let server = answering(reply).await;

    let result = call_member_add(&server).await;
    let member = &result.succeeded[0];
    assert_eq!(member.user_name, "bob_1@acme-corp");
    assert_eq!(member.name, long_name);
    assert_eq!(member.remark.as_deref(), Some(long_remark.as_str()));
    assert_eq!(result.failed[0].user_name, "");
}

async fn call_member_add(server: &MockServer) -> member::types::AddMembersResult {
    member_client(&server.uri())
        .add_members()
        .enterprise_global_id("EG-7f3a")
        .body(body_example::<member::types::AddMembersRequest>())
        .await
        .expect("decodes")
}

/// The document types a product id as string or number; both decode.
#[tokio::test]
async fn product_ids_as_string_or_number() {
    let mut as_number = schema_example("member", "ProductInstance");
    as_number["id"] = json!(5001);
    let mut as_string = as_number.clone();
    as_string["id"] = json!("PI-5001");
    let server = answering(json!({
        "code": 0,
        "message": "success",
        "data": {"productInstanceList": [as_number, as_string], "children": []}
    }))
    .await;

    let products = member_client(&server.uri())
        .list_asset_products()
        .asset_id("A-1")
        .await
        .expect("decodes");

    let ids: Vec<Value> = products
        .product_instance_list
        .iter()
        .map(|p| serde_json::to_value(&p.id).unwrap())
        .collect();
    assert_eq!(ids, [json!(5001), json!("PI-5001")]);
}

/// A value the SDK does not know can still be sent, verbatim.
#[tokio::test]
async fn unknown_enum_values_can_be_sent() {
    let server = answering(reply_example("batchOrder")).await;
    let mut body: order::types::BatchOrderRequest = body_example();
    // `orderType` picks the order's shape (a tagged enum), so only the open enums inside
    // an order can carry a value the SDK does not know.
    let order::types::LicenseOrder::NewBuy(buy) = &mut body.order_list[0] else {
        panic!("the example is a new_buy order");
    };
    buy.license_type = LicenseType::from("future_usbkey");
    buy.customer_type = CustomerType::from("partnership");

    order_client(&server.uri())
        .batch_order()
        .app_key("app-key-1")
        .body(body)
        .await
        .expect("sent");

    let request = only_request(&server).await;
    let sent: Value = serde_json::from_slice(&request.body).expect("JSON");
    assert_eq!(sent["orderList"][0]["licenseType"], "future_usbkey");
    assert_eq!(sent["orderList"][0]["customerType"], "partnership");
    assert_eq!(sent["orderList"][0]["orderType"], "new_buy");
}

/// A list reply's `data` as `[]`, `null` or absent is an empty list.
#[tokio::test]
async fn empty_null_or_absent_list_data_is_an_empty_list() {
    for body in [
        json!({"code": 0, "message": "success", "data": []}),
        json!({"code": 0, "message": "success", "data": null}),
        json!({"code": 0, "message": "success"}),
    ] {
        let server = answering(body.clone()).await;
        let locks = member_client(&server.uri())
            .list_lent_locks()
            .enterprise_global_id("EG-1")
            .await
            .unwrap_or_else(|e| panic!("{body}: {e}"));
        assert!(locks.is_empty(), "{body}");
    }
}

/// `null` for an optional field of a request reads as absent: the simulator and any
/// server built on these types accept it.
#[test]
fn null_optional_request_fields_read_as_absent() {
    let mut body: Value = serde_json::to_value(body_example::<order::types::BatchOrderRequest>())
        .expect("serializes");
    let order = &mut body["orderList"][0];
    order["srcLicenseOrderId"] = Value::Null;
    order["assets"][0]["assetExtendList"] = Value::Null;
    order["assets"][0]["merchandises"] = Value::Null;
    order["assets"][0]["products"][0]["passwords"] = Value::Null;
    order["assets"][0]["products"][0]["strictMatchWhenDelete"] = Value::Null;
    let read: order::types::BatchOrderRequest = serde_json::from_value(body).expect("reads");
    let order::types::LicenseOrder::NewBuy(buy) = &read.order_list[0] else {
        panic!("a new_buy order");
    };
    assert_eq!(buy.src_license_order_id, None);
    assert!(buy.assets[0].asset_extend_list.is_empty());
    assert!(buy.assets[0].merchandises.is_empty());
    assert!(buy.assets[0].products[0].passwords.is_empty());
    assert_eq!(buy.assets[0].products[0].strict_match_when_delete, None);
    // Written back, the absent fields stay absent.
    let written = serde_json::to_value(&read).unwrap();
    let asset = &written["orderList"][0]["assets"][0];
    assert!(asset.get("assetExtendList").is_none() && asset.get("merchandises").is_none());
    assert!(asset["products"][0].get("strictMatchWhenDelete").is_none());
}
