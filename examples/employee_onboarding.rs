//! Employee onboarding: add employees in one call, handle the employees the platform
//! refused while keeping the ones it added (`Error::PartialFailure`), react to a
//! documented error code with `AddMembersErrorCode`, and list every employee.
//!
//! Runs against the in-process simulator with its `demo` seed (Acme Robotics, whose
//! employees are alice, bob and carol):
//!
//! ```sh
//! cargo run --example employee_onboarding
//! ```

use std::{collections::HashSet, error::Error as StdError};

use futures_util::TryStreamExt as _;
use licensing_sdk::{
    Error, member, member::errors::AddMembersErrorCode as Code, member::types as mt,
};

mod demo;

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    // The simulator with its `demo` seed and a client of each service: `demo/mod.rs`.
    let (simulator, orders, members) = demo::start().await?;

    // The enterprise main account the employees join.
    let eg = demo::acme(&orders).await?.enterprise_global_id;

    // 1. Three new employees and alice, who already has an account: the platform adds
    //    the three and refuses alice (60027, both lists in `Error::PartialFailure`).
    //    Optional fields take plain values.
    let dave = mt::NewMember::builder()
        .user_name("dave")
        .name("Dave")
        .password("Initial-Pass-4")
        .remark("night shift")
        .password_mobile("13900000000")
        .department_id(7);
    let batch = vec![
        dave,
        new_member("erin", "Erin", "Initial-Pass-5"),
        new_member("frank", "Frank", "Initial-Pass-6"),
        new_member("alice", "Alice", "Initial-Pass-1"),
    ];
    let added = match add(&members, &eg, batch).await {
        Err(Error::PartialFailure { error, result }) => {
            println!("partly added ({}): {}", error.code, error.message);
            for failed in &result.failed {
                println!("  not added: {}: {}", failed.user_name, failed.message);
            }
            *result
        }
        other => return Err(format!("expected a partial failure, got {other:?}").into()),
    };
    for m in &added.succeeded {
        println!("  added {} as {}", m.user_name, m.global_id);
    }
    assert_eq!(added.succeeded.len(), 3, "dave, erin and frank were added");
    assert_eq!(added.failed.len(), 1, "alice was refused");
    assert!(added.failed[0].user_name.starts_with("alice"));

    // 2. A documented error, matched on the operation's own code enum: gina's password
    //    is shorter than the platform accepts (a rule only the server knows).
    let gina = vec![new_member("gina", "Gina", "abc")];
    match add(&members, &eg, gina).await {
        Err(e) => match Code::of(&e) {
            Some(Code::PasswordLength) => println!("gina not added, fix her password: {e}"),
            Some(Code::TrialMemberLimit) => return Err("no trial seats left".into()),
            Some(Code::NetworkException | Code::UserCenterException) => {
                return Err(format!("try again later: {e}").into());
            }
            _ => return Err(format!("unexpected: {e}").into()),
        },
        Ok(result) => return Err(format!("gina was added: {result:?}").into()),
    }
    let gina = vec![new_member("gina", "Gina", "Initial-Pass-7")];
    let retried = add(&members, &eg, gina).await?; // all added: a plain `Ok`
    assert_eq!(retried.succeeded.len(), 1, "gina added on the second try");

    // 3. Every employee, all pages, fetched as the stream is consumed (three a page).
    let everyone: Vec<mt::MemberListItem> = members
        .list_members()
        .enterprise_global_id(&eg)
        .page_size(3u32)
        .stream()
        .try_collect()
        .await?;
    // Employees without a department have `department_id` 0, without a remark "".
    for m in &everyone {
        let (id, dept, remark) = (&m.global_id, m.department_id, &m.remark);
        println!(
            "  {:<20} {id}  department {dept}  remark {remark:?}",
            m.user_name
        );
    }
    let accounts: HashSet<&str> = everyone.iter().map(|m| m.user_name.as_str()).collect();
    assert_eq!(accounts.len(), everyone.len(), "no one listed twice");
    for user in ["alice", "bob", "carol", "dave", "erin", "frank", "gina"] {
        let account = format!("{user}@acmerobotics"); // the enterprise code is appended
        assert!(accounts.contains(account.as_str()), "{account} is listed");
    }
    let dave = everyone
        .iter()
        .find(|m| m.name == "Dave")
        .ok_or("Dave is listed")?;
    assert_eq!(
        (dave.department_id, dave.remark.as_str()),
        (7, "night shift")
    );
    assert_eq!(dave.password_mobile, "13900000000");

    simulator.shutdown().await?;
    println!("{} employees; onboarding ok", everyone.len());
    Ok(())
}

/// An employee with only the required fields.
fn new_member(user: &str, name: &str, password: &str) -> mt::builder::NewMember {
    mt::NewMember::builder()
        .user_name(user)
        .name(name)
        .password(password)
}

/// Adds up to 100 employees to the enterprise in one call. The list takes the builders:
/// a field breaking a rule the SDK knows fails the call before sending, as
/// `Error::Validation` naming it (`userList[1].userName`).
async fn add(
    members: &member::Client,
    eg: &str,
    user_list: Vec<mt::builder::NewMember>,
) -> Result<mt::AddMembersResult, Error> {
    members
        .add_members()
        .enterprise_global_id(eg)
        .body(mt::AddMembersRequest::builder().user_list(user_list))
        .await
}
