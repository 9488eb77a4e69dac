//! Rules of the documents that more than one operation (and the import check) applies.

use licensing_sdk::LicenseType;

/// optional `+` and 6 to 15 digits.
pub(crate) fn is_mobile_number(s: &str) -> bool {
    let digits = s.strip_prefix('+').unwrap_or(s);
    (6..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a license type is a physical lock (the `*usbkey` types).
pub(crate) fn is_physical_lock(license_type: &LicenseType) -> bool {
    license_type.as_str().ends_with("usbkey")
}

/// Whether a license type is a refillable lock (`normal_recover_*`).
pub(crate) fn is_refillable_lock(license_type: &LicenseType) -> bool {
    matches!(
        license_type,
        LicenseType::NormalRecoverUsbkey | LicenseType::NormalRecoverLanUsbkey
    )
}
