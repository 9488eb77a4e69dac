//! The batch: orders with an asset, a product with a feature, and a package holding a
//! nested package.

use licensing_sdk::{CustomerType, LicenseType, SyncMode, Trial, order::types as o};

fn product(crm: &str, parent: &str) -> o::Product {
    o::Product::builder()
        .crm_product_id(crm)
        .parent_crm_product_id(parent)
        .product_uri("gms-3001")
        .product_name("CAD Suite")
        .gms_pid(Some("gms-3001".to_string()))
        .product_type("software")
        .limit_start_date(Some(1_767_225_600_000))
        .limit_end_date(Some(1_798_761_600_000))
        .limit_concurrent(5)
        .limit_time_duration(0)
        .strict_match_when_delete(false)
        .trial(Trial::NotTrial)
        .trial_end_date(0)
        .time_unit("year")
        .time_unit_quantity(1)
        .time_duration_expression("1-0-0")
        .product_features(vec![
            o::ProductFeature::builder()
                .feature_code("F01")
                .feature_name("Seats")
                .feature_value("10")
                .feature_value_type("int")
                .trial(Trial::NotTrial)
                .trial_end_date(chrono::NaiveDate::from_ymd_opt(2027, 12, 31).unwrap()),
        ])
        .try_into()
        .unwrap()
}

fn package(
    crm: &str,
    parent: &str,
    num: &str,
    children: Option<Vec<o::Merchandise>>,
) -> o::Merchandise {
    o::Merchandise::builder()
        .crm_product_id(crm)
        .parent_crm_product_id(parent)
        .merchandise_num(num)
        .merchandise_name("Design bundle")
        .parent_merchandise_num("")
        .time_duration_expression("1-0-0")
        .children(children)
        .license_order_product_list(vec![product(&format!("{crm}-P"), crm)])
        .try_into()
        .unwrap()
}

pub fn request(
    customer: &o::EnterpriseCustomer,
    numbers: &[String],
    batch: usize,
) -> o::BatchOrderRequest {
    let orders = numbers
        .iter()
        .enumerate()
        .map(|(i, num)| {
            let a = format!("A-{batch}-{i}");
            let inner = package(&format!("{a}-M2"), &format!("{a}-M1"), "PKG-2", None);
            let outer = package(&format!("{a}-M1"), &a, "PKG-1", Some(vec![inner]));
            let order: o::NewBuyOrder = o::NewBuyOrder::builder()
                .sequence(i as i32 + 1)
                .customer_id(customer.customer_id.clone())
                .crm_customer_id("CRM-9")
                .customer_name("Acme Robotics")
                .channel_customer_id("CC-42")
                .admin_name("Ada Admin")
                .admin_account("ada")
                .admin_email("ada@example.com")
                .admin_cell_number("13800000000")
                .password_mobile("13800000000")
                .address("1 Main Street")
                .customer_type(CustomerType::Company)
                .branch_code("BR01")
                .branch_name("North")
                .enterprise_global_id(customer.enterprise_global_id.clone())
                .license_type(LicenseType::NormalRecoverUsbkey)
                .assets(vec![
                    o::Asset::builder()
                        .asset_nos(vec![num.clone()])
                        .products(vec![product(&format!("{a}-P"), &a)])
                        .merchandises(vec![outer]),
                ])
                .try_into()
                .unwrap();
            o::LicenseOrder::NewBuy(order)
        })
        .collect::<Vec<o::LicenseOrder>>();
    o::BatchOrderRequest::builder()
        .channel_code("CH01")
        .channel_order_id(format!("CO-{batch}"))
        .sync_mode(SyncMode::Sync)
        .order_list(orders)
        .try_into()
        .unwrap()
}
