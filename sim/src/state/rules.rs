//! Rules of the documents that more than one operation (and the import check) applies.

use std::ops::RangeInclusive;

use licensing_sdk::{ErrorCode as E, LicenseType};
use serde_json::{Map, Value};

/// `userName` plus `@` and the enterprise code: fewer than 63 characters.
pub(crate) const MAX_ACCOUNT_WITH_CODE: usize = 62;
/// An employee's name.
pub(crate) const MAX_NAME: usize = 30;
/// An employee's remark.
pub(crate) const MAX_REMARK: usize = 200;

/// A broken rule: the documented code it answers, the field (by its name in the
/// request), and what is wrong.
#[derive(Debug)]
pub(crate) struct Broken {
    pub code: E,
    pub field: &'static str,
    /// The message, when the code's standard one does not say enough.
    pub message: Option<String>,
    pub cause: String,
}

impl Broken {
    fn with_message(code: E, message: String, cause: String) -> Self {
        Self {
            code,
            field: "",
            message: Some(message),
            cause,
        }
    }

    fn at(mut self, field: &'static str) -> Self {
        self.field = field;
        self
    }
}

fn fail(code: E, cause: impl Into<String>) -> Broken {
    Broken {
        code,
        field: "",
        message: None,
        cause: cause.into(),
    }
}

/// Runs the checks of one field, naming it in what they find.
fn field(name: &'static str, check: impl FnOnce() -> Result<(), Broken>) -> Result<(), Broken> {
    check().map_err(|b| b.at(name))
}

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

/// The employee fields of an `addMembers` item or an `editMember` body, with the codes
/// the add operation documents (the edit document says "same rules as endpoint 1").
/// A value of the wrong JSON type breaks the rule of its field; `null` for an optional
/// field is the field left out.
pub(crate) fn member_fields(
    fields: &Map<String, Value>,
    enterprise_code: &str,
) -> Result<(), Broken> {
    field("userName", || {
        match fields.get("userName") {
            None | Some(Value::Null) => return Err(fail(E::AccountEmpty, "userName is required")),
            Some(Value::String(s)) if s.is_empty() => {
                return Err(fail(E::AccountEmpty, "userName must not be empty"));
            }
            Some(Value::String(s)) if !s.bytes().all(|b| b.is_ascii_alphanumeric()) => {
                return Err(fail(
                    E::AccountNotAlphanumeric,
                    format!("userName {s:?} may contain only letters and digits"),
                ));
            }
            Some(Value::String(s)) => {
                let length = s.chars().count() + 1 + enterprise_code.chars().count();
                if length > MAX_ACCOUNT_WITH_CODE {
                    return Err(fail(
                        E::NameTooLong,
                        format!(
                            "userName {s}@{enterprise_code} has {length} characters; it must have fewer than 63"
                        ),
                    ));
                }
            }
            Some(_) => {
                return Err(fail(
                    E::AccountNotAlphanumeric,
                    "userName must be a string of letters and digits",
                ));
            }
        }
        Ok(())
    })?;
    field("name", || {
        match fields.get("name") {
            Some(Value::String(s)) if s.chars().count() > MAX_NAME => {
                return Err(fail(
                    E::NameTooLong,
                    format!(
                        "name has {} characters; at most {MAX_NAME} are allowed",
                        s.chars().count()
                    ),
                ));
            }
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            _ => return Err(fail(E::NameEmpty, "name is required")),
        }
        Ok(())
    })?;
    field("remark", || {
        match fields.get("remark") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.chars().count() <= MAX_REMARK => {}
            Some(Value::String(s)) => {
                return Err(fail(
                    E::RemarkTooLong,
                    format!(
                        "remark has {} characters; at most {MAX_REMARK} are allowed",
                        s.chars().count()
                    ),
                ));
            }
            Some(_) => return Err(fail(E::RemarkTooLong, "remark must be a string")),
        }
        Ok(())
    })?;
    field("passwordMobile", || {
        match fields.get("passwordMobile") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() || is_mobile_number(s) => {}
            Some(_) => {
                return Err(fail(
                    E::InvalidMobileNumber,
                    "passwordMobile must be an optional + and 6 to 15 digits",
                ));
            }
        }
        Ok(())
    })?;
    field("departmentId", || {
        match fields.get("departmentId") {
            None | Some(Value::Null) => {}
            Some(v) if v.as_i64().is_some_and(|d| d > 0) => {}
            Some(_) => {
                return Err(fail(
                    E::GroupIdEmpty,
                    "departmentId (the group id) must be a positive integer",
                ));
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// A `password` field: present (`40001`) and of an accepted length (`50003`).
pub(crate) fn password(
    fields: &Map<String, Value>,
    accepted: &RangeInclusive<usize>,
) -> Result<(), Broken> {
    let at = |b: Broken| b.at("password");
    let Some(Value::String(password)) = fields.get("password").filter(|p| p.as_str() != Some(""))
    else {
        return Err(at(fail(E::PasswordEmpty, "password is required")));
    };
    let length = password.chars().count();
    if !accepted.contains(&length) {
        return Err(at(Broken::with_message(
            E::PasswordLength,
            format!(
                "password length must lie between {} and {}",
                accepted.start(),
                accepted.end()
            ),
            format!("the password has {length} characters"),
        )));
    }
    Ok(())
}
