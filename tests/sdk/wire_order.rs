//! The order service on the wire, for each of its 9 operations: the method and path the
//! table gives (the spec's, path parameters filled in); the exact query, auth header and
//! JSON body the document spells; the decoding of the documented reply (the spec's
//! `example`) into the typed `data`.

use crate::common::*;
use licensing_sdk::{
    CustomerType, DefaultCustomer, KeyChipType, LicenseType, LockStatus, SyncMode, Trial,
    order::types,
};
use serde_json::{Value, json};
use wiremock::MockServer;

#[tokio::test]
async fn bind_enterprise() {
    let server = MockServer::start().await;
    let example = reply_example("bindEnterprise");
    reply(&server, "bindEnterprise", &[], 200, example.clone()).await;

    let customer = order_client(&server.uri())
        .bind_enterprise()
        .body(
            types::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id("CC-42")
                .customer_name("Acme Customer")
                .branch_name("North")
                .enterprise_name("Acme Robotics")
                .password_mobile("13800000000"),
        )
        .await
        .expect("bindEnterprise succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "bindEnterprise", &[]);
    assert_query(&request, &[]);
    assert_order_auth(&request);
    assert_json_body(
        &request,
        json!({
            "channelCode": "CH01",
            "channelCustomerId": "CC-42",
            "customerName": "Acme Customer",
            "branchName": "North",
            "enterpriseName": "Acme Robotics",
            "passwordMobile": "13800000000"
        }),
    );

    let data = &example["data"];
    assert_decodes_example(&customer, data);
    assert_eq!(customer.customer_id, data["customerId"]);
    assert_eq!(customer.enterprise_global_id, data["enterpriseGlobalId"]);
    assert_eq!(customer.is_default, data["isDefault"]);
}

#[tokio::test]
async fn create_enterprise() {
    let server = MockServer::start().await;
    let example = reply_example("createEnterprise");
    reply(&server, "createEnterprise", &[], 200, example.clone()).await;

    let created = order_client(&server.uri())
        .create_enterprise()
        .body(
            types::CreateEnterpriseRequest::builder()
                .crm_customer_id("CRM-9")
                .customer_name("Acme Robotics")
                .branch_name("North")
                .address(Some("1 Main Street".to_string())),
        )
        .await
        .expect("createEnterprise succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "createEnterprise", &[]);
    assert_query(&request, &[]);
    assert_order_auth(&request);
    assert_json_body(
        &request,
        json!({
            "crmCustomerId": "CRM-9",
            "customerName": "Acme Robotics",
            "branchName": "North",
            "address": "1 Main Street"
        }),
    );

    let data = &example["data"];
    assert_decodes_example(&created, data);
    assert_eq!(created.enterprise_global_id, data["enterpriseGlobalId"]);
    assert_eq!(created.default_type, data["defaultType"]);
    assert_eq!(created.members.len(), 1);
    assert_eq!(
        created.members[0].member_identity,
        data["members"][0]["memberIdentity"]
    );
}

#[tokio::test]
async fn query_enterprise() {
    let server = MockServer::start().await;
    let example = reply_example("queryEnterprise");
    reply(&server, "queryEnterprise", &[], 200, example.clone()).await;
    let client = order_client(&server.uri());

    let only_default = client
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("CC-42")
        .default_customer(DefaultCustomer::OnlyDefault)
        .await
        .expect("queryEnterprise succeeds");
    client
        .query_enterprise()
        .channel_code("CH 01&x")
        .channel_customer_id("CC-42")
        .default_customer(DefaultCustomer::All)
        .await
        .expect("queryEnterprise succeeds");

    let requests = received_n(&server, 2).await;
    for request in &requests {
        assert_target(request, "queryEnterprise", &[]);
        assert_order_auth(request);
        assert_no_body(request);
    }
    assert_query(
        &requests[0],
        &[
            ("channelCode", "CH01"),
            ("channelCustomerId", "CC-42"),
            ("defaultCustomer", "Y"),
        ],
    );
    // Values are form-encoded, so a space or `&` cannot break the query apart.
    assert_query(
        &requests[1],
        &[
            ("channelCode", "CH 01&x"),
            ("channelCustomerId", "CC-42"),
            ("defaultCustomer", "N"),
        ],
    );
    assert_unique_nonces(&requests);

    assert_decodes_example(&only_default, &example["data"]);
    assert_eq!(only_default.len(), 1);
    assert_eq!(
        only_default[0].channel_code,
        example["data"][0]["channelCode"]
    );
}

#[tokio::test]
async fn update_enterprise() {
    let server = MockServer::start().await;
    let example = reply_example("updateEnterprise");
    assert!(
        example.get("data").is_none(),
        "the update reply has no data"
    );
    reply(&server, "updateEnterprise", &[], 200, example).await;

    // `address` is optional: left out, it is not sent at all.
    let () = order_client(&server.uri())
        .update_enterprise()
        .body(
            types::UpdateEnterpriseRequest::builder()
                .crm_customer_id("CRM-9")
                .customer_name("Acme Robotics Ltd")
                .branch_name("North"),
        )
        .await
        .expect("updateEnterprise succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "updateEnterprise", &[]);
    assert_query(&request, &[]);
    assert_order_auth(&request);
    assert_json_body(
        &request,
        json!({
            "crmCustomerId": "CRM-9",
            "customerName": "Acme Robotics Ltd",
            "branchName": "North"
        }),
    );
}

fn feature() -> types::ProductFeature {
    typed(
        types::ProductFeature::builder()
            .feature_code("F01")
            .feature_name("Seats")
            .feature_value("10")
            .feature_value_type("int")
            .trial(Trial::NotTrial)
            .trial_end_date(chrono::NaiveDate::from_ymd_opt(2027, 12, 31).unwrap()),
    )
}

fn product(crm_product_id: &str) -> types::Product {
    typed(
        types::Product::builder()
            .crm_product_id(crm_product_id)
            .parent_crm_product_id("A-100")
            .product_uri("gms-3001")
            .product_name("CAD Suite")
            .gms_pid(Some("gms-3001".to_string()))
            .product_type("software")
            .limit_start_date(1767225600000i64)
            .limit_end_date(1798761600000i64)
            .limit_concurrent(5)
            .limit_time_duration(0i64)
            .strict_match_when_delete(false)
            .trial(Trial::Trial)
            .trial_end_date(1798761600000i64)
            .passwords(vec!["pw-1".to_string()])
            .time_unit("year")
            .time_unit_quantity(1)
            .time_duration_expression("1-0-0")
            .product_features(vec![feature()]),
    )
}

fn product_json(crm_product_id: &str) -> Value {
    json!({
        "crmProductId": crm_product_id,
        "parentCrmProductId": "A-100",
        "productUri": "gms-3001",
        "productName": "CAD Suite",
        "gmsPid": "gms-3001",
        "productType": "software",
        "limitStartDate": 1767225600000i64,
        "limitEndDate": 1798761600000i64,
        "limitConcurrent": 5,
        "limitTimeDuration": 0,
        "strictMatchWhenDelete": false,
        "trial": 1,
        "trialEndDate": 1798761600000i64,
        "passwords": ["pw-1"],
        "timeUnit": "year",
        "timeUnitQuantity": 1,
        "timeDurationExpression": "1-0-0",
        "productFeatures": [{
            "featureCode": "F01",
            "featureName": "Seats",
            "featureValue": "10",
            "featureValueType": "int",
            "trial": 0,
            "trialEndDate": "2027-12-31"
        }]
    })
}

fn new_buy_order(
    sequence: i32,
    license_type: LicenseType,
    assets: Vec<types::Asset>,
) -> types::builder::NewBuyOrder {
    types::NewBuyOrder::builder()
        .sequence(sequence)
        .customer_id("C100001")
        .crm_customer_id("CRM-9")
        .customer_name("Acme Robotics")
        .channel_customer_id("CC-42")
        .admin_name("Ada Admin")
        .admin_account("ada")
        .admin_email("ada@example.com")
        .admin_cell_number("13800000000")
        .password_mobile("13800000001")
        .address("1 Main Street")
        .customer_type(CustomerType::Company)
        .branch_code("BR01")
        .branch_name("North")
        .enterprise_global_id("EG-7f3a")
        .license_type(license_type)
        .assets(assets)
}

fn new_buy_json(sequence: i32, license_type: &str, assets: Value) -> Value {
    json!({
        "sequence": sequence,
        "customerId": "C100001",
        "crmCustomerId": "CRM-9",
        "customerName": "Acme Robotics",
        "channelCustomerId": "CC-42",
        "adminName": "Ada Admin",
        "adminAccount": "ada",
        "adminEmail": "ada@example.com",
        "adminCellNumber": "13800000000",
        "passwordMobile": "13800000001",
        "address": "1 Main Street",
        "customerType": "company",
        "branchCode": "BR01",
        "branchName": "North",
        "enterpriseGlobalId": "EG-7f3a",
        "licenseType": license_type,
        "orderType": "new_buy",
        "assets": assets
    })
}

/// A delete order as sent: the identifying fields only.
fn delete_order_json(sequence: i32, order_type: &str, assets: Value) -> Value {
    json!({
        "sequence": sequence,
        "customerId": "C100001",
        "enterpriseGlobalId": "EG-7f3a",
        "licenseType": "normal_recover_usbkey",
        "orderType": order_type,
        "assets": assets
    })
}

#[tokio::test]
async fn batch_order() {
    let server = MockServer::start().await;
    let example = reply_example("batchOrder");
    reply(&server, "batchOrder", &[], 200, example.clone()).await;

    let child: types::Merchandise = typed(
        types::Merchandise::builder()
            .crm_product_id("M-2")
            .parent_crm_product_id("M-1")
            .merchandise_num("PKG-2")
            .merchandise_name("Rendering add-on")
            .parent_merchandise_num("PKG-1")
            .time_duration_expression("1-0-0")
            .license_order_product_list(vec![product("P-200")]),
    );
    let package: types::Merchandise = typed(
        types::Merchandise::builder()
            .crm_product_id("M-1")
            .parent_crm_product_id("A-100")
            .merchandise_num("PKG-1")
            .merchandise_name("Design bundle")
            .parent_merchandise_num("")
            .time_duration_expression("1-0-0")
            .children(Some(vec![child]))
            .license_order_product_list(Vec::<types::Product>::new()),
    );
    let new_buy_asset: types::Asset = typed(
        types::Asset::builder()
            .asset_nos(vec!["8000000001".to_string()])
            .asset_extend_list(vec![typed::<types::AssetExtension, _>(
                types::AssetExtension::builder()
                    .extend_code(Some("gxxp".to_string()))
                    .extend_value(Some("true".to_string())),
            )])
            .limit_start_date(1767225600000i64)
            .limit_end_date(1798761600000i64)
            .borrowed_usb_key(false)
            .transfered_asset_num(true)
            .products(vec![product("P-100")])
            .merchandises(vec![package]),
    );
    let revoked: types::RevokedProduct = typed(
        types::RevokedProduct::builder()
            .crm_product_id("P-100")
            .product_uri("gms-3001")
            .limit_start_date(1767225600000i64)
            .limit_end_date(1798761600000i64)
            .limit_concurrent(5)
            .strict_match_when_delete(true),
    );
    let delete_product_asset: types::RevokedProductAsset = typed(
        types::RevokedProductAsset::builder()
            .asset_nos(vec!["8000000002".to_string()])
            .products(vec![revoked]),
    );
    let delete_asset_asset: types::RevokedAsset =
        typed(types::RevokedAsset::builder().asset_nos(vec!["8000000003".to_string()]));
    // Delete orders need only what identifies them: no admin, branch or address.
    let delete_product: types::DeleteProductOrder = typed(
        types::DeleteProductOrder::builder()
            .sequence(2)
            .customer_id("C100001")
            .enterprise_global_id("EG-7f3a")
            .license_type(LicenseType::NormalRecoverUsbkey)
            .assets(vec![delete_product_asset]),
    );
    let delete_asset: types::DeleteAssetOrder = typed(
        types::DeleteAssetOrder::builder()
            .sequence(3)
            .customer_id("C100001")
            .enterprise_global_id("EG-7f3a")
            .license_type(LicenseType::NormalRecoverUsbkey)
            .assets(vec![delete_asset_asset]),
    );

    let results = order_client(&server.uri())
        .batch_order()
        .app_key("app-key-1")
        .body(
            types::BatchOrderRequest::builder()
                .channel_code("CH01")
                .channel_order_id("CO-2026-0001")
                .sync_mode(SyncMode::Async)
                .order_list(vec![
                    types::LicenseOrder::NewBuy(typed(
                        new_buy_order(1, LicenseType::CloudCustomer, vec![new_buy_asset])
                            .src_license_order_id(Some("LO-000000".to_string())),
                    )),
                    delete_product.into(),
                    delete_asset.into(),
                ]),
        )
        .await
        .expect("batchOrder succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "batchOrder", &[]);
    assert_query(&request, &[("appKey", "app-key-1")]);
    assert_order_auth(&request);

    let mut new_buy = new_buy_json(
        1,
        "cloud_customer",
        json!([{
            "assetNos": ["8000000001"],
            "assetExtendList": [{"extendCode": "gxxp", "extendValue": "true"}],
            "limitStartDate": 1767225600000i64,
            "limitEndDate": 1798761600000i64,
            "borrowedUsbKey": false,
            "transferedAssetNum": true,
            "products": [product_json("P-100")],
            "merchandises": [{
                "crmProductId": "M-1",
                "parentCrmProductId": "A-100",
                "merchandiseNum": "PKG-1",
                "merchandiseName": "Design bundle",
                "parentMerchandiseNum": "",
                "timeDurationExpression": "1-0-0",
                "children": [{
                    "crmProductId": "M-2",
                    "parentCrmProductId": "M-1",
                    "merchandiseNum": "PKG-2",
                    "merchandiseName": "Rendering add-on",
                    "parentMerchandiseNum": "PKG-1",
                    "timeDurationExpression": "1-0-0",
                    "licenseOrderProductList": [product_json("P-200")]
                }],
                "licenseOrderProductList": []
            }]
        }]),
    );
    new_buy["srcLicenseOrderId"] = json!("LO-000000");
    assert_json_body(
        &request,
        json!({
            "channelCode": "CH01",
            "channelOrderId": "CO-2026-0001",
            "syncMode": "async",
            "orderList": [
                new_buy,
                // A `delete_product` entry carries only the six documented fields.
                delete_order_json(2, "delete_product", json!([{
                    "assetNos": ["8000000002"],
                    "products": [{
                        "crmProductId": "P-100",
                        "productUri": "gms-3001",
                        "limitStartDate": 1767225600000i64,
                        "limitEndDate": 1798761600000i64,
                        "limitConcurrent": 5,
                        "strictMatchWhenDelete": true
                    }]
                }])),
                // A `delete_asset` entry carries only `assetNos`.
                delete_order_json(3, "delete_asset", json!([{
                    "assetNos": ["8000000003"]
                }])),
            ]
        }),
    );

    assert_decodes_example(&results, &example["data"]);
    assert_eq!(results[0].sequence, example["data"][0]["sequence"]);
    assert_eq!(
        results[0].license_order_id,
        example["data"][0]["licenseOrderId"]
    );
}

async fn lock_operation(id: &str, expected: &[LockStatus]) {
    let server = MockServer::start().await;
    let example = reply_example(id);
    reply(&server, id, &[], 200, example.clone()).await;
    let client = order_client(&server.uri());
    let body = types::LockRequest::builder()
        .asset_nums(vec!["8000000001".to_string(), "8000000002".to_string()])
        .operator_identity("ops@example.com");

    let results = match id {
        "disableLocks" => client.disable_locks().body(body).await,
        _ => client.enable_locks().body(body).await,
    }
    .expect("lock operation succeeds");

    let request = only_request(&server).await;
    assert_target(&request, id, &[]);
    assert_query(&request, &[]);
    assert_order_auth(&request);
    assert_json_body(
        &request,
        json!({
            "assetNums": ["8000000001", "8000000002"],
            "operatorIdentity": "ops@example.com"
        }),
    );

    assert_decodes_example(&results, &example["data"]);
    let statuses: Vec<LockStatus> = results.iter().map(|r| r.status).collect();
    assert_eq!(statuses, expected);
    assert_eq!(results[1].asset_num, example["data"][1]["assetNum"]);
}

#[tokio::test]
async fn disable_locks() {
    lock_operation(
        "disableLocks",
        &[LockStatus::Success, LockStatus::WrongLockType],
    )
    .await;
}

#[tokio::test]
async fn enable_locks() {
    lock_operation(
        "enableLocks",
        &[LockStatus::Success, LockStatus::LockNotFound],
    )
    .await;
}

#[tokio::test]
async fn list_virtual_assets() {
    let server = MockServer::start().await;
    let example = reply_example("listVirtualAssets");
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(example.clone()))
        .mount(&server)
        .await;
    let client = order_client(&server.uri());

    let assets = client
        .list_virtual_assets()
        .enterprise_global_id("EG-7f3a")
        .extend_code("gxxp")
        .await
        .expect("listVirtualAssets succeeds");
    // `extendCode` is optional; a path segment with reserved characters is escaped.
    client
        .list_virtual_assets()
        .enterprise_global_id("EG 7f/3a")
        .await
        .expect("listVirtualAssets succeeds");

    let requests = received_n(&server, 2).await;
    assert_target(&requests[0], "listVirtualAssets", &["EG-7f3a"]);
    assert_query(&requests[0], &[("extendCode", "gxxp")]);
    assert_target(&requests[1], "listVirtualAssets", &["EG%207f%2F3a"]);
    assert_query(&requests[1], &[]);
    for request in &requests {
        assert_order_auth(request);
        assert_no_body(request);
    }
    assert_unique_nonces(&requests);

    let data = &example["data"];
    assert_decodes_example(&assets, data);
    let asset = &assets[0];
    assert_eq!(asset.id, data[0]["id"]);
    assert_eq!(asset.license_type, LicenseType::CloudCustomer);
    assert_eq!(asset.key_chip_type, KeyChipType::FifthGeneration);
    assert_eq!(asset.limit_start_time, None);
    assert_eq!(asset.asset_limits, None);
    assert_eq!(
        asset.assign_status.assign_member_id,
        data[0]["assignStatus"]["assignMemberId"]
    );
    assert_eq!(
        asset.asset_extends[0].extend_code,
        data[0]["assetExtends"][0]["extendCode"]
    );
}

#[tokio::test]
async fn allocate_shell_nums() {
    let server = MockServer::start().await;
    let example = reply_example("allocateShellNums");
    reply(&server, "allocateShellNums", &[], 200, example.clone()).await;

    let numbers = order_client(&server.uri())
        .allocate_shell_nums()
        .body(types::AllocateShellNumsRequest::builder().size(3u32))
        .await
        .expect("allocateShellNums succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "allocateShellNums", &[]);
    assert_query(&request, &[]);
    assert_order_auth(&request);
    assert_json_body(&request, json!({"size": 3}));

    assert_decodes_example(&numbers, &example["data"]);
    let numbers: Vec<&str> = numbers.iter().map(|n| n.as_str()).collect();
    assert_eq!(numbers.len(), 3);
    assert_eq!(numbers[0], example["data"][0]);
}

/// Every call and every operation gets its own nonce.
#[tokio::test]
async fn nonces_are_unique_across_calls() {
    let server = MockServer::start().await;
    reply_documented(&server, "queryEnterprise").await;
    let client = order_client(&server.uri());
    for _ in 0..25 {
        query(&client).await.expect("queryEnterprise succeeds");
    }
    let requests = received_n(&server, 25).await;
    assert_unique_nonces(&requests);
}

/// An order reads the same wherever its `orderType` is in the object; a missing or
/// unknown one is serde's usual error, with the place in the text.
#[test]
fn order_type_may_come_anywhere_in_the_order() {
    let assets = json!([{"assetNos": ["8000000001"]}]);
    let order = delete_order_json(2, "delete_asset", assets);
    let fields = order.as_object().unwrap();
    let entry = |k: &String, v: &Value| format!("{}:{}", json!(k), v);
    let others: Vec<String> = fields
        .iter()
        .filter(|(k, _)| *k != "orderType")
        .map(|(k, v)| entry(k, v))
        .collect();
    let tag = r#""orderType":"delete_asset""#.to_string();
    let expected = types::LicenseOrder::delete_asset(
        2,
        "C100001",
        "EG-7f3a",
        licensing_sdk::LicenseType::NormalRecoverUsbkey,
        vec!["8000000001".to_string()],
    );
    for at in [0, 3, others.len()] {
        let mut entries = others.clone();
        entries.insert(at, tag.clone());
        let text = format!("{{{}}}", entries.join(","));
        let read: types::LicenseOrder = serde_json::from_str(&text).expect(&text);
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::to_value(&expected).unwrap(),
            "{text}"
        );
        // Written back, the tag comes first.
        assert!(
            serde_json::to_string(&read)
                .unwrap()
                .starts_with(&format!("{{{tag}"))
        );
    }

    let untagged = format!("{{{}}}", others.join(","));
    let e = serde_json::from_str::<types::LicenseOrder>(&untagged).unwrap_err();
    assert!(
        e.to_string().starts_with("missing field `orderType`"),
        "{e}"
    );
    let unknown = format!(r#"{{"orderType":"upgrade",{}}}"#, others.join(","));
    let e = serde_json::from_str::<types::LicenseOrder>(&unknown).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "unknown variant `upgrade`, expected one of `new_buy`, `delete_asset`, `delete_product`"
        ),
        "{e}"
    );
    // A field of the wrong type after the tag is named with its place in the text.
    let wrong = format!(r#"{{{tag},"sequence":"two"}}"#);
    let e = serde_json::from_str::<types::LicenseOrder>(&wrong).unwrap_err();
    assert!(e.to_string().contains("expected i32"), "{e}");
    assert_eq!((e.line(), e.column() > 0), (1, true), "{e}");
}
