//! What a partner's first program leans on: lists of asset numbers that take the SDK's own
//! `ShellNumber`s as well as strings, and an SDK guide whose error table names each variant
//! as the compiled `match` below it does.

use licensing_sdk::{
    LicenseType,
    member::types as mt,
    order::types::{self as ot, LicenseOrder, ShellNumber},
};
use serde_json::{Value, json};

fn numbers() -> Vec<ShellNumber> {
    ["8000000001", "8000000002"]
        .map(|n| ShellNumber::from(n.to_string()))
        .to_vec()
}

fn asset_nos(asset: ot::builder::RevokedAsset) -> Value {
    let asset = ot::RevokedAsset::try_from(asset).expect("a valid asset entry");
    serde_json::to_value(asset).unwrap()["assetNos"].clone()
}

#[test]
fn asset_number_lists_take_shell_numbers_and_strings() {
    let numbers = numbers();
    let both = json!(["8000000001", "8000000002"]);
    let first = json!(["8000000001"]);
    let entry = ot::RevokedAsset::builder;
    assert_eq!(asset_nos(entry().asset_nos(numbers.clone())), both);
    assert_eq!(asset_nos(entry().asset_nos(&numbers)), both);
    assert_eq!(asset_nos(entry().asset_nos(&numbers[..1])), first);
    assert_eq!(asset_nos(entry().asset_nos(&[numbers[0].clone()])), first);
    assert_eq!(
        asset_nos(entry().asset_nos(["8000000001".to_string()])),
        first
    );
    assert_eq!(
        asset_nos(entry().asset_nos(vec!["8000000001".to_string()])),
        first
    );
    assert_eq!(asset_nos(entry().asset_nos(&["8000000001"])), first);
    assert_eq!(asset_nos(entry().asset_nos(vec!["8000000001"])), first);

    // Every list of asset numbers: locks, assignment.
    let locks = ot::LockRequest::try_from(
        ot::LockRequest::builder()
            .asset_nums(&numbers)
            .operator_identity("ops@example.com"),
    )
    .unwrap();
    assert_eq!(locks.asset_nums, ["8000000001", "8000000002"]);
    let assign = mt::ConfigureAssetsRequest::try_from(
        mt::ConfigureAssetsRequest::builder()
            .add_assets(&numbers[1..])
            .delete_assets([]),
    )
    .unwrap();
    assert_eq!(
        (assign.add_assets, assign.delete_assets),
        (vec!["8000000002".to_string()], vec![])
    );
}

#[test]
fn a_delete_asset_order_takes_shell_numbers_and_strings() {
    let numbers = numbers();
    let order = |nos: Vec<String>| {
        LicenseOrder::delete_asset(1, "C1", "EG-1", LicenseType::NormalRecoverUsbkey, nos)
    };
    let expected = order(vec!["8000000002".into()]);
    let with = |o: LicenseOrder| serde_json::to_value(o).unwrap();
    for built in [
        LicenseOrder::delete_asset(
            1,
            "C1",
            "EG-1",
            LicenseType::NormalRecoverUsbkey,
            &numbers[1..],
        ),
        LicenseOrder::delete_asset(
            1,
            "C1",
            "EG-1",
            LicenseType::NormalRecoverUsbkey,
            [&numbers[1]],
        ),
        LicenseOrder::delete_asset(
            1,
            "C1",
            "EG-1",
            LicenseType::NormalRecoverUsbkey,
            vec![numbers[1].clone()],
        ),
        LicenseOrder::delete_asset(
            1,
            "C1",
            "EG-1",
            LicenseType::NormalRecoverUsbkey,
            ["8000000002"],
        ),
    ] {
        assert_eq!(with(built), with(expected.clone()));
    }
}

/// The SDK guide's section "Errors": each row's pattern (the table's first column) is
/// written the same way in the `match` of the block after it, which compiles as a doctest
/// of the crate; so a row that names a variant or a field that does not exist fails the
/// build.
#[test]
fn the_error_table_is_the_compiled_match() {
    let guide = include_str!("../../docs/sdk.md");
    let section = &guide[guide.find("## Errors").expect("an Errors section")..];
    let table: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with("| variant |"))
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| l.split('`').nth(1).expect("a pattern in backticks"))
        .collect();
    assert!(table.len() >= 12, "{table:?}");
    let block_start = section
        .find("```rust\n")
        .expect("a rust block after the table");
    let block = &section[block_start..];
    let block = &block[..block[3..].find("```").unwrap()];
    for pattern in &table {
        assert!(
            block.contains(&format!("Error::{pattern} =>")),
            "the table's `{pattern}` is not matched as written in the block:\n{block}"
        );
    }
    let arms = block.matches("        Error::").count();
    assert_eq!(
        arms,
        table.len(),
        "every arm of the match is a row of the table"
    );
}

/// A batch mixes order types in one array, each `.into()` the union's builder; a `Vec`
/// of one type, built orders borrowed, and the named builder are taken as before; a
/// broken order among them is named by its index and field.
#[test]
fn orders_of_different_types_mix_in_one_list() {
    let revoke = || {
        LicenseOrder::delete_asset(
            2,
            "C100001",
            "EG-1",
            LicenseType::NormalRecoverUsbkey,
            ["8000000001"],
        )
    };
    let buy = || {
        let product = ot::Product::builder()
            .crm_product_id("P-1")
            .parent_crm_product_id("A-1")
            .product_uri("cad")
            .product_name("CAD")
            .product_type("software")
            .limit_concurrent(1)
            .limit_time_duration(0)
            .trial(licensing_sdk::Trial::NotTrial)
            .trial_end_date(0)
            .time_unit("year")
            .time_unit_quantity(1)
            .time_duration_expression("1-0-0")
            .product_features([]);
        LicenseOrder::new_buy()
            .sequence(1)
            .customer_id("C100001")
            .enterprise_global_id("EG-1")
            .license_type(LicenseType::NormalRecoverUsbkey)
            .crm_customer_id("CRM-1")
            .customer_name("Initech")
            .channel_customer_id("CC-1")
            .customer_type(licensing_sdk::CustomerType::Company)
            .admin_name("Ada")
            .admin_account("ada")
            .admin_email("ada@example.com")
            .admin_cell_number("13800000000")
            .password_mobile("13800000000")
            .address("1 Main St")
            .branch_code("BR1")
            .branch_name("North")
            .assets(vec![
                ot::Asset::builder()
                    .asset_nos(["8000000002".to_string()])
                    .products(vec![product]),
            ])
    };
    let types = |list: ot::builder::BatchOrderRequest| -> Result<Vec<String>, String> {
        let request = ot::BatchOrderRequest::try_from(
            list.channel_code("CH01")
                .channel_order_id("CO-1")
                .sync_mode(licensing_sdk::SyncMode::Sync),
        )
        .map_err(|e| e.to_string())?;
        let json = serde_json::to_value(request).unwrap();
        Ok(json["orderList"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["orderType"].as_str().unwrap().to_string())
            .collect())
    };
    let list = ot::BatchOrderRequest::builder;
    let built = vec![revoke(), revoke()];
    assert_eq!(
        types(list().order_list([buy().into(), revoke().into()])).unwrap(),
        ["new_buy", "delete_asset"]
    );
    assert_eq!(
        types(list().order_list(vec![
            ot::builder::LicenseOrder::from(revoke()),
            ot::builder::LicenseOrder::from(buy()),
        ]))
        .unwrap(),
        ["delete_asset", "new_buy"]
    );
    assert_eq!(types(list().order_list(vec![buy()])).unwrap(), ["new_buy"]);
    assert_eq!(
        types(list().order_list(vec![revoke()])).unwrap(),
        ["delete_asset"]
    );
    assert_eq!(
        types(list().order_list(&built)).unwrap(),
        ["delete_asset", "delete_asset"]
    );
    assert_eq!(
        types(list().order_list(&built[..1])).unwrap(),
        ["delete_asset"]
    );
    let unbuilt = LicenseOrder::new_buy().sequence(3);
    let error = types(list().order_list([revoke().into(), unbuilt.into()])).unwrap_err();
    assert!(error.contains("[1]"), "{error}");
    assert!(error.contains("order_list"), "{error}");
}
