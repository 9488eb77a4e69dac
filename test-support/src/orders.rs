//! The bulk orders of the command line's tests, the SDK's bulk benchmark and `cargo xtask
//! bench`: `new_buy` orders of the demo seed's customer (the command line guide's session),
//! one asset with one product each, written as JSON Lines.

use std::{io, path::Path};

use serde_json::{Value, json};

/// A `new_buy` order of the demo seed's customer for one asset number.
pub fn new_buy(number: &str) -> Value {
    json!({
        "orderType": "new_buy", "sequence": 1, "customerId": "C100002",
        "enterpriseGlobalId": "EG-000001", "licenseType": "normal_recover_usbkey",
        "crmCustomerId": "CRM-ACME", "customerName": "Acme Robotics",
        "channelCustomerId": "CC-ACME", "customerType": "company", "adminName": "Ada",
        "adminAccount": "ada", "adminEmail": "ada@example.com",
        "adminCellNumber": "13800000000", "passwordMobile": "13800000000",
        "address": "1 Main Street", "branchCode": "BR01", "branchName": "North",
        "assets": [{"assetNos": [number], "products": [{
            "crmProductId": "P-CAD", "parentCrmProductId": "A-1", "productUri": "cad",
            "productName": "CAD Suite", "productType": "software", "limitConcurrent": 5,
            "limitTimeDuration": 0, "trial": 0, "trialEndDate": 0, "timeUnit": "year",
            "timeUnitQuantity": 1, "timeDurationExpression": "1-0-0", "productFeatures": []
        }]}]
    })
}

/// The JSON Lines text of one [`new_buy`] order per asset number.
pub fn lines<S: AsRef<str>>(numbers: &[S]) -> String {
    // About 700 bytes an order: one allocation for a file of 100,000.
    let mut text = String::with_capacity(numbers.len() * 700);
    for number in numbers {
        text.push_str(&new_buy(number.as_ref()).to_string());
        text.push('\n');
    }
    text
}

/// Writes [`lines`] to `path`.
pub fn write(path: &Path, numbers: &[impl AsRef<str>]) -> io::Result<()> {
    std::fs::write(path, lines(numbers))
}
