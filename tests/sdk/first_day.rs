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
