//! The generated surface: every operation's call site type-checks with the documented
//! `data` type, and the formatted generated code is locked by snapshots.

use licensing_sdk::{Error, member, order};

/// Never run: compiling it proves each of the 19 operations is callable through its
/// builder and resolves to the documented `data` type.
#[allow(dead_code, unused_variables)]
async fn every_operation(o: &order::Client, m: &member::Client) -> Result<(), Error> {
    use member::types as mt;
    use order::types as ot;

    // Order service (9).
    let _: ot::EnterpriseCustomer = o
        .bind_enterprise()
        .body(ot::BindEnterpriseRequest::builder())
        .await?;
    let _: ot::CreateEnterpriseResult = o
        .create_enterprise()
        .body(ot::CreateEnterpriseRequest::builder())
        .await?;
    let _: Vec<ot::EnterpriseCustomer> = o
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("CC-42")
        .default_customer(licensing_sdk::DefaultCustomer::All)
        .await?;
    let _: () = o
        .update_enterprise()
        .body(ot::UpdateEnterpriseRequest::builder())
        .await?;
    let _: Vec<ot::BatchOrderResultItem> = o
        .batch_order()
        .app_key("app")
        .body(ot::BatchOrderRequest::builder())
        .await?;
    let _: Vec<ot::LockResultItem> = o.disable_locks().body(ot::LockRequest::builder()).await?;
    let _: Vec<ot::LockResultItem> = o.enable_locks().body(ot::LockRequest::builder()).await?;
    let _: Vec<ot::VirtualAsset> = o
        .list_virtual_assets()
        .enterprise_global_id("EG")
        .extend_code("gxxp")
        .await?;
    let _: Vec<ot::ShellNumber> = o
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
        .await?;

    // Member center (10).
    let _: mt::AddMembersResult = m
        .add_members()
        .enterprise_global_id("EG")
        .body(mt::AddMembersRequest::builder())
        .await?;
    let _: () = m
        .edit_member()
        .enterprise_global_id("EG")
        .member_global_id("MG")
        .body(mt::EditMemberRequest::builder())
        .await?;
    let _: () = m
        .reset_member_password()
        .enterprise_global_id("EG")
        .member_global_id("MG")
        .body(mt::ResetPasswordRequest::builder())
        .await?;
    let _: () = m
        .delete_member()
        .enterprise_global_id("EG")
        .member_global_id("MG")
        .await?;
    let _: mt::MemberPage = m
        .list_members()
        .enterprise_global_id("EG")
        .page_num(1u32)
        .page_size(20u32)
        .keyword("ali")
        .department_id(10)
        .await?;
    let _: Vec<mt::EnterpriseAsset> = m.list_asset_nums().enterprise_global_id("EG").await?;
    let _: mt::AssetProducts = m.list_asset_products().asset_id("A-1").await?;
    let _: Vec<mt::LentLock> = m.list_lent_locks().enterprise_global_id("EG").await?;
    let _: () = m
        .configure_member_assets()
        .member_global_id("MG")
        .body(mt::ConfigureAssetsRequest::builder())
        .await?;
    let _: () = m
        .lend_assets()
        .member_global_id("MG")
        .body(mt::LendAssetsRequest::builder())
        .await?;
    Ok(())
}

#[test]
fn every_operation_type_checks() {
    // Referencing the function makes the compiler check it; nothing is sent.
    let _ = every_operation;
}

#[test]
fn generated_order_client() {
    insta::assert_snapshot!(
        "order_client",
        include_str!(concat!(env!("OUT_DIR"), "/order.rs"))
    );
}

#[test]
fn generated_member_client() {
    insta::assert_snapshot!(
        "member_client",
        include_str!(concat!(env!("OUT_DIR"), "/member.rs"))
    );
}

#[test]
fn generated_enums() {
    insta::assert_snapshot!("enums", include_str!(concat!(env!("OUT_DIR"), "/enums.rs")));
}

/// The rules `validate.rs` checks by hand must be the spec's, not a copy that drifts.
#[test]
fn hand_checked_bounds_match_the_spec() {
    let spec: serde_json::Value =
        serde_norway::from_str(include_str!("../spec/member.yaml")).expect("member.yaml parses");
    let user_list = &spec["components"]["schemas"]["AddMembersRequest"]["properties"]["userList"];
    let bounds = licensing_sdk::validate::MEMBERS_PER_CALL;
    assert_eq!(user_list["minItems"].as_u64(), Some(*bounds.start() as u64));
    assert_eq!(user_list["maxItems"].as_u64(), Some(*bounds.end() as u64));
}
