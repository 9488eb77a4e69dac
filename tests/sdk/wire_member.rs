//! The member center on the wire, for each of its 10 operations: the method and path the
//! table gives (the spec's, path parameters filled in); the exact query, the three auth
//! headers and the JSON body the document spells; the decoding of the documented reply
//! (the spec's `example`) into the typed `data`.

use crate::common::*;
use licensing_sdk::{LicenseType, LimitType, Trial, member::types};
use serde_json::json;
use wiremock::MockServer;

#[tokio::test]
async fn add_members() {
    let server = MockServer::start().await;
    let example = reply_example("addMembers");
    reply(&server, "addMembers", &["EG-7f3a"], 200, example.clone()).await;

    let alice: types::NewMember = typed(
        types::NewMember::builder()
            .user_name("alice")
            .password("Initial-Pass-1")
            .department_id(Some(10i64))
            .name("Alice")
            .remark(Some(typed::<types::NewMemberRemark, _>("design team")))
            .password_mobile(Some("13800000001".to_string())),
    );
    let bob: types::NewMember = typed(
        types::NewMember::builder()
            .user_name("bob")
            .password("Initial-Pass-2")
            .name("Bob"),
    );
    let result = member_client(&server.uri())
        .add_members()
        .enterprise_global_id("EG-7f3a")
        .body(types::AddMembersRequest::builder().user_list(vec![alice, bob]))
        .await
        .expect("addMembers succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "addMembers", &["EG-7f3a"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_json_body(
        &request,
        json!({
            "userList": [
                {
                    "userName": "alice",
                    "password": "Initial-Pass-1",
                    "departmentId": 10,
                    "name": "Alice",
                    "remark": "design team",
                    "passwordMobile": "13800000001"
                },
                {"userName": "bob", "password": "Initial-Pass-2", "name": "Bob"}
            ]
        }),
    );

    let data = &example["data"];
    assert_decodes_example(&result, data);
    assert_eq!(result.succeeded.len(), 1);
    assert!(result.failed.is_empty());
    let alice = &result.succeeded[0];
    assert_eq!(alice.global_id, data["succeeded"][0]["globalId"]);
    assert_eq!(alice.id, data["succeeded"][0]["id"]);
    assert_eq!(
        alice.department_name.as_deref(),
        data["succeeded"][0]["departmentName"].as_str()
    );
}

#[tokio::test]
async fn edit_member() {
    let server = MockServer::start().await;
    let example = reply_example("editMember");
    assert!(example["data"].is_null(), "the documented data is null");
    reply(&server, "editMember", &["EG-7f3a", "MG-2"], 200, example).await;

    let () = member_client(&server.uri())
        .edit_member()
        .enterprise_global_id("EG-7f3a")
        .member_global_id("MG-2")
        .body(
            types::EditMemberRequest::builder()
                .user_name("alice")
                .department_id(Some(11i64))
                .name("Alice Liddell")
                .remark(Some(typed::<types::EditMemberRequestRemark, _>(
                    "moved to research",
                )))
                .password_mobile(Some("13800000001".to_string())),
        )
        .await
        .expect("editMember succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "editMember", &["EG-7f3a", "MG-2"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_json_body(
        &request,
        json!({
            "userName": "alice",
            "departmentId": 11,
            "name": "Alice Liddell",
            "remark": "moved to research",
            "passwordMobile": "13800000001"
        }),
    );
}

#[tokio::test]
async fn reset_member_password() {
    let server = MockServer::start().await;
    reply_ok(&server, "resetMemberPassword", &["EG-7f3a", "MG-2"]).await;

    let () = member_client(&server.uri())
        .reset_member_password()
        .enterprise_global_id("EG-7f3a")
        .member_global_id("MG-2")
        .body(types::ResetPasswordRequest::builder().password("New-Pass-2026"))
        .await
        .expect("resetMemberPassword succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "resetMemberPassword", &["EG-7f3a", "MG-2"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_json_body(&request, json!({"password": "New-Pass-2026"}));
}

#[tokio::test]
async fn delete_member() {
    let server = MockServer::start().await;
    reply_ok(&server, "deleteMember", &["EG-7f3a", "MG-2"]).await;

    let () = member_client(&server.uri())
        .delete_member()
        .enterprise_global_id("EG-7f3a")
        .member_global_id("MG-2")
        .await
        .expect("deleteMember succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "deleteMember", &["EG-7f3a", "MG-2"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_no_body(&request);
}

#[tokio::test]
async fn list_members() {
    let server = MockServer::start().await;
    // The reply example's page is empty; the page schema's example carries an employee.
    let page = schema_example("member", "MemberPage");
    let mut example = reply_example("listMembers");
    example["data"] = page.clone();
    reply(&server, "listMembers", &["EG-7f3a"], 200, example).await;
    let client = member_client(&server.uri());

    let first = client
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .department_id(10)
        .keyword("ali ce")
        .page_num(1u32)
        .page_size(10u32)
        .await
        .expect("listMembers succeeds");
    // The optional filters left out are not sent.
    client
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_num(2u32)
        .page_size(50u32)
        .await
        .expect("listMembers succeeds");

    let requests = received_n(&server, 2).await;
    for request in &requests {
        assert_target(request, "listMembers", &["EG-7f3a"]);
        assert_member_auth(request);
        assert_no_body(request);
    }
    assert_query(
        &requests[0],
        &[
            ("departmentId", "10"),
            ("keyword", "ali ce"),
            ("pageNum", "1"),
            ("pageSize", "10"),
        ],
    );
    assert_query(&requests[1], &[("pageNum", "2"), ("pageSize", "50")]);
    assert_unique_nonces(&requests);

    assert_decodes_example(&first, &page);
    assert_eq!(first.page_num, page["pageNum"]);
    assert_eq!(first.has_next_page, page["hasNextPage"]);
    assert_eq!(first.list.len(), 1);
    let item = &first.list[0];
    assert_eq!(item.id, page["list"][0]["id"]);
    assert_eq!(item.user_name, page["list"][0]["userName"]);
    assert_eq!(item.asset_nums, ["8000000001"]);
}

#[tokio::test]
async fn list_asset_nums() {
    let server = MockServer::start().await;
    let example = reply_example("listAssetNums");
    reply(&server, "listAssetNums", &["EG-7f3a"], 200, example.clone()).await;

    let assets = member_client(&server.uri())
        .list_asset_nums()
        .enterprise_global_id("EG-7f3a")
        .await
        .expect("listAssetNums succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "listAssetNums", &["EG-7f3a"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_no_body(&request);

    let data = &example["data"];
    assert_decodes_example(&assets, data);
    assert_eq!(assets[0].asset_num, data[0]["assetNum"]);
    assert_eq!(
        assets[0].cloud_account_global_id.as_deref(),
        data[0]["cloudAccountGlobalId"].as_str()
    );
    assert_eq!(assets[0].online_flag, data[0]["onlineFlag"]);
}

#[tokio::test]
async fn list_asset_products() {
    let server = MockServer::start().await;
    // The reply example's lists are empty; fill them from the schemas' examples.
    let mut data = schema_example("member", "AssetProducts");
    data["productInstanceList"] = json!([schema_example("member", "ProductInstance")]);
    let mut example = reply_example("listAssetProducts");
    example["data"] = data.clone();
    reply(&server, "listAssetProducts", &["A-1"], 200, example).await;

    let products = member_client(&server.uri())
        .list_asset_products()
        .asset_id("A-1")
        .await
        .expect("listAssetProducts succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "listAssetProducts", &["A-1"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_no_body(&request);

    assert_decodes_example(&products, &data);
    let product = &products.product_instance_list[0];
    let documented = &data["productInstanceList"][0];
    assert_eq!(product.product_uri, documented["productUri"]);
    assert_eq!(product.license_type, LicenseType::NormalRecoverUsbkey);
    assert_eq!(product.limit_type, LimitType::Basic);
    assert_eq!(product.trial, Trial::NotTrial);
    assert_eq!(product.trial_end_date, None);
    let node = &products.children[0];
    assert_eq!(node.merchandise_num, data["children"][0]["merchandiseNum"]);
    assert_eq!(
        serde_json::to_value(&node.id).unwrap(),
        data["children"][0]["id"]
    );
}

#[tokio::test]
async fn list_lent_locks() {
    let server = MockServer::start().await;
    let example = reply_example("listLentLocks");
    reply(&server, "listLentLocks", &["EG-7f3a"], 200, example.clone()).await;

    let locks = member_client(&server.uri())
        .list_lent_locks()
        .enterprise_global_id("EG-7f3a")
        .await
        .expect("listLentLocks succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "listLentLocks", &["EG-7f3a"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_no_body(&request);

    let data = &example["data"];
    assert_decodes_example(&locks, data);
    assert_eq!(locks[0].asset_id, data[0]["assetId"]);
    assert_eq!(locks[0].borrowed_flag, data[0]["borrowedFlag"]);
}

#[tokio::test]
async fn configure_member_assets() {
    let server = MockServer::start().await;
    reply_ok(&server, "configureMemberAssets", &["MG-2"]).await;

    let () = member_client(&server.uri())
        .configure_member_assets()
        .member_global_id("MG-2")
        .body(
            types::ConfigureAssetsRequest::builder()
                .delete_assets(Vec::<String>::new())
                .add_assets(vec!["8000000001".to_string()]),
        )
        .await
        .expect("configureMemberAssets succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "configureMemberAssets", &["MG-2"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    // Both lists are required: an empty one is still sent.
    assert_json_body(
        &request,
        json!({"deleteAssets": [], "addAssets": ["8000000001"]}),
    );
}

#[tokio::test]
async fn lend_assets() {
    let server = MockServer::start().await;
    reply_ok(&server, "lendAssets", &["MG-2"]).await;

    let () = member_client(&server.uri())
        .lend_assets()
        .member_global_id("MG-2")
        .body(
            types::LendAssetsRequest::builder()
                .borrowed_usb_key("8000000009")
                .asset_ids(vec!["A-1".to_string(), "A-2".to_string()]),
        )
        .await
        .expect("lendAssets succeeds");

    let request = only_request(&server).await;
    assert_target(&request, "lendAssets", &["MG-2"]);
    assert_query(&request, &[]);
    assert_member_auth(&request);
    assert_json_body(
        &request,
        json!({"borrowedUsbKey": "8000000009", "assetIDs": ["A-1", "A-2"]}),
    );
}

/// Every call gets its own nonce.
#[tokio::test]
async fn nonces_are_unique_across_calls() {
    let server = MockServer::start().await;
    reply_ok(&server, "listLentLocks", &["EG-7f3a"]).await;
    let client = member_client(&server.uri());
    for _ in 0..25 {
        client
            .list_lent_locks()
            .enterprise_global_id("EG-7f3a")
            .await
            .expect("listLentLocks succeeds");
    }
    let requests = received_n(&server, 25).await;
    assert_unique_nonces(&requests);
}
