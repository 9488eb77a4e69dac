//! What a partner's program does with the SDK configured from the environment: one call
//! to each service.

use licensing_sdk::{Error, member, order};

/// `allocateShellNums` for one number.
pub async fn allocate_one(order: &order::Client) -> Result<Vec<order::types::ShellNumber>, Error> {
    order
        .allocate_shell_nums()
        .body(order::types::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
        .await
}

/// One number from the order service, then a page of employees from a member client made
/// by `member::Client::from_env()`.
pub async fn both_services(order: &order::Client) -> Result<(), String> {
    let numbers = allocate_one(order)
        .await
        .map_err(|e| format!("order service: {e}"))?;
    if numbers.len() != 1 || numbers[0].len() != 10 {
        return Err(format!("unexpected numbers {numbers:?}"));
    }
    let member = member::Client::from_env().map_err(|e| e.to_string())?;
    member
        .list_members()
        .enterprise_global_id("EG-none")
        .page_num(1u32)
        .page_size(5u32)
        .await
        .map(|_| ())
        .map_err(|e| format!("member center: {e}"))
}
