//! The documents' shapes and defaults, end to end: delete orders with only what identifies
//! them, `strictMatchWhenDelete` defaulting to `false`, `null` for an optional field, and
//! empty lists as `data: []`.

use crate::support::*;
use licensing_sdk::{LicenseType, order::types as ot};
use serde_json::{Value, json};

/// A delete order with the identifying fields only (no admin, branch or address).
fn delete_order(ent: &Enterprise, order_type: &str, src: &str, assets: Value) -> Value {
    json!({
        "sequence": 1,
        "customerId": ent.customer_id,
        "enterpriseGlobalId": ent.global_id,
        "srcLicenseOrderId": src,
        "licenseType": "normal_recover_usbkey",
        "orderType": order_type,
        "assets": assets
    })
}

async fn batch_raw(env: &Env, orders: Vec<Value>) -> Raw {
    let path = format!("{}?appKey=app", path("batchOrder", &[]));
    let body = json!({
        "channelCode": "CH01",
        "channelOrderId": "CO-1",
        "syncMode": "sync",
        "orderList": orders
    });
    env.raw("POST", &path, Some(body)).await
}

#[track_caller]
fn assert_ok(raw: &Raw) {
    assert_eq!(
        (raw.status, raw.code()),
        (200, "0".to_string()),
        "{:?}",
        raw.body
    );
}

#[track_caller]
fn assert_invalid(raw: &Raw, field: &str) {
    assert_eq!(raw.status, 299, "{:?}", raw.body);
    assert_eq!(raw.code(), "13004", "{:?}", raw.body);
    let cause = raw.body["cause"].as_str().unwrap_or_default();
    assert!(cause.contains(field), "cause {cause:?} names {field}");
}

async fn product_uris(env: &Env, ent: &Enterprise, num: &str) -> Vec<String> {
    let id = env.asset_id(ent, num).await;
    let products = env.products(&id).await.product_instance_list;
    products.into_iter().map(|p| p.product_uri).collect()
}

#[tokio::test]
async fn delete_asset_orders_need_only_identifying_fields() {
    let (env, ent, nums) = with_numbers("Acme", 2).await;
    let bought = env.buy_base(&ent, &nums).await;

    let raw = batch_raw(
        &env,
        vec![delete_order(
            &ent,
            "delete_asset",
            &bought,
            json!([{ "assetNos": [nums[0]] }]),
        )],
    )
    .await;
    assert_ok(&raw);

    // The same, built in Rust: nothing invented.
    let order: ot::DeleteAssetOrder = ot::DeleteAssetOrder::builder()
        .sequence(1)
        .customer_id(ent.customer_id.clone())
        .enterprise_global_id(ent.global_id.clone())
        .src_license_order_id(Some(bought.clone()))
        .license_type(LicenseType::NormalRecoverUsbkey)
        .assets(vec![ot::RevokedAsset {
            asset_nos: vec![nums[1].clone()],
        }])
        .try_into()
        .expect("a delete_asset order from its identifying fields");
    let ot::BatchOrderRequest { order_list, .. } = batch(vec![]);
    assert!(order_list.is_empty());
    env.order
        .batch_order()
        .app_key("app")
        .body(
            ot::BatchOrderRequest::builder()
                .channel_code("CH01")
                .channel_order_id("CO-2")
                .sync_mode(licensing_sdk::SyncMode::Sync)
                .order_list(vec![order]),
        )
        .await
        .expect("the delete_asset order is accepted");
    let left = env.assets(&ent).await;
    assert!(left.is_empty(), "both assets revoked: {left:?}");
}

#[tokio::test]
async fn delete_product_entries_carry_the_six_documented_fields() {
    let (env, ent, nums) = with_numbers("Acme", 1).await;
    let bought = env
        .order(new_buy(
            &ent,
            "normal_recover_usbkey",
            json!([{ "assetNos": nums, "products": [product("keep", 1), product("drop", 5)] }]),
        ))
        .await;

    let six = json!({
        "crmProductId": "P-drop",
        "productUri": "drop",
        "limitStartDate": 1_767_225_600_000_i64,
        "limitEndDate": 1_798_761_600_000_i64,
        "limitConcurrent": 5,
        "strictMatchWhenDelete": true
    });
    let raw = batch_raw(
        &env,
        vec![delete_order(
            &ent,
            "delete_product",
            &bought,
            json!([{ "assetNos": nums, "products": [six] }]),
        )],
    )
    .await;
    assert_ok(&raw);
    assert_eq!(product_uris(&env, &ent, &nums[0]).await, ["keep"]);
}

/// Omitted, `strictMatchWhenDelete` is `false`: the product is found by its mnemonic
/// although its node count differs; with `true` the same entry matches nothing.
#[tokio::test]
async fn omitted_strict_match_is_false() {
    let (env, ent, nums) = with_numbers("Acme", 1).await;
    let mut full = product("base", 1);
    full.as_object_mut()
        .unwrap()
        .remove("strictMatchWhenDelete");
    let bought = env
        .order(new_buy(
            &ent,
            "normal_recover_usbkey",
            json!([{ "assetNos": nums, "products": [full] }]),
        ))
        .await;

    let entry = |strict: Option<bool>| {
        let mut p = json!({ "crmProductId": "P-base", "productUri": "base", "limitConcurrent": 9 });
        if let Some(strict) = strict {
            p["strictMatchWhenDelete"] = json!(strict);
        }
        delete_order(
            &ent,
            "delete_product",
            &bought,
            json!([{ "assetNos": nums, "products": [p] }]),
        )
    };
    let strict = batch_raw(&env, vec![entry(Some(true))]).await;
    assert_invalid(&strict, "assets");
    assert!(
        strict.body["cause"]
            .as_str()
            .unwrap()
            .contains("same start date")
    );
    assert_ok(&batch_raw(&env, vec![entry(None)]).await);
    assert!(product_uris(&env, &ent, &nums[0]).await.is_empty());
}

#[tokio::test]
async fn order_shapes_are_enforced_with_the_field_named() {
    let (env, ent, nums) = with_numbers("Acme", 1).await;
    let bought = env.buy_base(&ent, &nums).await;

    // A new_buy still needs every documented field.
    let mut no_admin = new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{ "assetNos": nums, "products": [product("more", 1)] }]),
    );
    no_admin.as_object_mut().unwrap().remove("adminEmail");
    assert_invalid(
        &batch_raw(&env, vec![no_admin]).await,
        "orderList[0]: missing field `adminEmail`",
    );

    // A delete_asset entry carries only assetNos.
    let extra = delete_order(
        &ent,
        "delete_asset",
        &bought,
        json!([{ "assetNos": nums, "products": [product("base", 1)] }]),
    );
    assert_invalid(
        &batch_raw(&env, vec![extra]).await,
        "orderList[0].assets[0].products: unknown field `products`",
    );

    // A delete_product entry carries only the six fields.
    let mut seven = json!({ "crmProductId": "P-base", "productUri": "base", "limitConcurrent": 1 });
    seven["productName"] = json!("Base");
    let seventh = delete_order(
        &ent,
        "delete_product",
        &bought,
        json!([{ "assetNos": nums, "products": [seven] }]),
    );
    assert_invalid(
        &batch_raw(&env, vec![seventh]).await,
        "orderList[0].assets[0].products[0].productName: unknown field `productName`",
    );

    // A delete order without its customer.
    let mut anonymous = delete_order(&ent, "delete_asset", &bought, json!([{ "assetNos": nums }]));
    anonymous.as_object_mut().unwrap().remove("customerId");
    assert_invalid(
        &batch_raw(&env, vec![anonymous]).await,
        "orderList[0]: missing field `customerId`",
    );

    // An order type the documents do not list.
    let mut upgrade = delete_order(&ent, "delete_asset", &bought, json!([{ "assetNos": nums }]));
    upgrade["orderType"] = json!("upgrade");
    assert_invalid(
        &batch_raw(&env, vec![upgrade]).await,
        "orderList[0].orderType: unknown variant `upgrade`",
    );

    // A wrong type deep inside the second order.
    let mut wrong = product("more", 1);
    wrong["limitConcurrent"] = json!("five");
    let typed = new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{ "assetNos": nums, "products": [product("more", 1), wrong] }]),
    );
    let fine = delete_order(&ent, "delete_asset", &bought, json!([{ "assetNos": nums }]));
    assert_invalid(
        &batch_raw(&env, vec![fine, typed]).await,
        "orderList[1].assets[0].products[1].limitConcurrent: invalid type: string \"five\"",
    );

    // Nothing was applied.
    assert_eq!(product_uris(&env, &ent, &nums[0]).await, ["base"]);
}

/// `null` for an optional field is the field left out, in both services.
#[tokio::test]
async fn null_optionals_are_absent() {
    let (env, ent, nums) = with_numbers("Acme", 1).await;
    let mut p = product("base", 1);
    for field in [
        "gmsPid",
        "appKey",
        "limitStartDate",
        "passwords",
        "srcLicenseOrderId",
    ] {
        p[field] = Value::Null;
    }
    let mut order = new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{
            "assetNos": nums,
            "assetExtendList": null,
            "limitStartDate": null,
            "borrowedUsbKey": null,
            "merchandises": null,
            "products": [p]
        }]),
    );
    order["srcLicenseOrderId"] = Value::Null;
    assert_ok(&batch_raw(&env, vec![order]).await);

    let add = env
        .raw(
            "POST",
            &path("addMembers", &[&ent.global_id]),
            Some(json!({ "userList": [{
                "userName": "alice",
                "password": "Secret-123",
                "name": "Alice",
                "departmentId": null,
                "remark": null,
                "passwordMobile": null
            }]})),
        )
        .await;
    assert_ok(&add);
}

/// An empty list is `data: []` on a success; an error reply has no `data`.
#[tokio::test]
async fn empty_lists_are_empty_arrays() {
    let (env, ent) = with_enterprise("Acme").await;
    for (id, params) in [
        ("listVirtualAssets", vec![ent.global_id.as_str()]),
        ("listAssetNums", vec![ent.global_id.as_str()]),
        ("listLentLocks", vec![ent.global_id.as_str()]),
    ] {
        let raw = env.raw("GET", &path(id, &params), None).await;
        assert_ok(&raw);
        assert_eq!(raw.body["data"], json!([]), "{id}: {:?}", raw.body);
    }
    let query = format!(
        "{}?channelCode=CH01&channelCustomerId=nobody&defaultCustomer=N",
        path("queryEnterprise", &[])
    );
    let raw = env.raw("GET", &query, None).await;
    assert_ok(&raw);
    assert_eq!(raw.body["data"], json!([]), "{:?}", raw.body);

    let failed = env
        .raw("GET", &path("listAssetNums", &["EG-none"]), None)
        .await;
    assert_eq!(failed.status, 299, "{:?}", failed.body);
    assert!(failed.body.get("data").is_none(), "{:?}", failed.body);

    // The SDK reads both `data: []` and a success without `data` as an empty list.
    let none = env.lent_locks(&ent).await;
    assert!(none.is_empty());
}

/// The order document requires `Content-Type` on every endpoint, GETs included: without
/// it every order-service operation answers `13004` naming the header, and changes
/// nothing. The member center requires it only with a body, so its reads still answer.
#[tokio::test]
async fn content_type_is_required_on_every_order_service_operation() {
    let (env, ent) = with_enterprise("Acme").await;
    let before = env.sim.export_state();
    let mut checked = 0;
    for op in licensing_sdk::operations::ALL {
        let values: Vec<&str> = op.path_params().map(|_| ent.global_id.as_str()).collect();
        let nonce = licensing_sdk::runtime::nonce();
        let target = format!("{}?appKey=k&g_nonce={nonce}", op.path_with(&values));
        let mut headers = vec![];
        let bearer_app = format!("Bearer {}", licensing_sim::DEFAULT_APP_TOKEN);
        let bearer_client = format!("Bearer {}", licensing_sim::DEFAULT_CLIENT_TOKEN);
        match op.service {
            licensing_sdk::operations::Service::Order => {
                headers.push(("authorization", bearer_app.as_str()));
            }
            licensing_sdk::operations::Service::Member => {
                headers.push(("authorization", bearer_client.as_str()));
                headers.push(("clienttoken", licensing_sim::DEFAULT_CLIENT_TOKEN));
                headers.push(("usertoken", licensing_sim::DEFAULT_USER_TOKEN));
            }
        }
        // A body without a media type: reqwest's `body`, unlike `json`, sets none.
        let http = reqwest::Client::new();
        let mut request = http.request(
            op.method.as_str().parse().unwrap(),
            format!("{}{target}", env.sim.url()),
        );
        for (name, value) in &headers {
            request = request.header(*name, *value);
        }
        if op.request_type.is_some() {
            request = request.body("{}");
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        let message = body["message"].as_str().unwrap_or_default();
        match op.service {
            licensing_sdk::operations::Service::Order => {
                assert_eq!(status, 299, "{}: {body}", op.id);
                assert_eq!(body["code"], "13004", "{}: {body}", op.id);
                assert!(message.contains("Content-Type"), "{}: {body}", op.id);
                checked += 1;
            }
            licensing_sdk::operations::Service::Member if op.request_type.is_none() => {
                let cause = body["cause"].as_str().unwrap_or_default();
                assert!(
                    !message.contains("Content-Type") && !cause.contains("Content-Type"),
                    "{}: {body}",
                    op.id
                );
            }
            licensing_sdk::operations::Service::Member => {}
        }
    }
    assert_eq!(
        checked,
        licensing_sdk::operations::of(licensing_sdk::operations::Service::Order).count()
    );
    assert_eq!(
        env.sim.export_state(),
        before,
        "a refused request changed the state"
    );
}

/// A refused product or package is named by its place in the batch, however deep it
/// nests, and the batch changes nothing.
#[tokio::test]
async fn a_refused_product_is_named_by_its_place_however_deep() {
    let (env, ent, nums) = with_numbers("Acme", 2).await;
    let package = |num: &str, children: Value, products: Value| {
        json!({
            "crmProductId": format!("M-{num}"), "parentCrmProductId": "A-100",
            "merchandiseNum": num, "merchandiseName": num, "parentMerchandiseNum": "",
            "timeDurationExpression": "1-0-0", "children": children,
            "licenseOrderProductList": products
        })
    };
    let order = |merchandises: Value| {
        new_buy(
            &ent,
            "normal_recover_usbkey",
            json!([
                { "assetNos": [nums[0]], "products": [product("base", 1)] },
                { "assetNos": [nums[1]], "products": [product("base", 1)], "merchandises": merchandises }
            ]),
        )
    };
    let before = env.sim.export_state();

    let mut bad = product("render", 2);
    bad["trial"] = json!(2);
    let inner = package(
        "PKG-2",
        json!(null),
        json!([product("cad", 1), bad.clone()]),
    );
    let top = package("PKG-1", json!([inner]), json!([product("cad", 1)]));
    let raw = batch_raw(&env, vec![order(json!([top]))]).await;
    assert_invalid(
        &raw,
        "orderList[0].assets[1].merchandises[0].children[0].licenseOrderProductList[1].trial \
         must be 0 or 1",
    );

    // Nine levels of packages, one more than a batch may nest.
    let mut deep = package("L9", json!(null), json!([product("cad", 1)]));
    for level in (1..9).rev() {
        deep = package(&format!("L{level}"), json!([deep]), json!([]));
    }
    let raw = batch_raw(&env, vec![order(json!([deep]))]).await;
    let path = format!(
        "orderList[0].assets[1].merchandises[0]{}: packages nest at most 8 levels deep",
        ".children[0]".repeat(8)
    );
    assert_invalid(&raw, &path);

    // A product of the top package, and one sold on its own.
    let top = package("PKG-1", json!(null), json!([bad.clone()]));
    let raw = batch_raw(&env, vec![order(json!([top]))]).await;
    assert_invalid(
        &raw,
        "orderList[0].assets[1].merchandises[0].licenseOrderProductList[0].trial",
    );
    let lone = new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{ "assetNos": [nums[0]], "products": [product("base", 1), bad] }]),
    );
    let raw = batch_raw(&env, vec![lone]).await;
    assert_invalid(
        &raw,
        "orderList[0].assets[0].products[1].trial must be 0 or 1",
    );
    assert_eq!(
        env.sim.export_state(),
        before,
        "a refused batch changed the state"
    );
}
