//! The clients of one tenant, and the partner story of the quickstart told through them:
//! the customer found, asset numbers bought as locks, a lock disabled and enabled,
//! employees added and listed, an asset assigned and lent, the typed refusal of a second
//! loan.

use licensing_sdk::{
    DefaultCustomer, Error, ErrorCode, RetryPolicy, member, member::types as mt, order,
    order::types as ot,
};
use licensing_sim::{Tenant, admin};
use licensing_test_support::sim::{self as support, Enterprise};
use serde_json::json;

/// A tenant's clients, which never retry: each call sees the reply it provoked.
pub struct Clients {
    pub order: order::Client,
    pub member: member::Client,
    pub admin: admin::Client,
}

impl Clients {
    pub fn of(tenant: &Tenant) -> Self {
        Self::with(
            tenant.url(),
            [
                tenant.app_token(),
                tenant.client_token(),
                tenant.user_token(),
                tenant.admin_token(),
            ],
        )
    }

    /// Clients of the sandbox at `url` with these tokens: app, client, user, admin.
    pub fn with(url: &str, [app, client, user, admin_token]: [&str; 4]) -> Self {
        Self {
            order: order::Client::builder(url)
                .application_token(app)
                .retry(RetryPolicy::Never)
                .build()
                .unwrap(),
            member: member::Client::builder(url)
                .client_token(client)
                .user_token(user)
                .retry(RetryPolicy::Never)
                .build()
                .unwrap(),
            admin: admin::client(url, Some(admin_token)).unwrap(),
        }
    }
}

/// What one telling of the story made.
#[derive(Debug)]
pub struct Story {
    pub numbers: Vec<String>,
    /// The service calls it made.
    pub calls: usize,
}

/// The story in a sandbox loaded with the demo seed; `marker` is written into what it
/// creates (employees' names, the lock operator), so that a checker can tell whose it is.
pub async fn partner_story(c: &Clients, marker: &str) -> Story {
    let customers = c
        .order
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("CC-ACME")
        .default_customer(DefaultCustomer::All)
        .await
        .expect("queryEnterprise");
    let customer = customers
        .into_iter()
        .find(|c| c.channel_customer_id == "CC-ACME")
        .expect("the demo seed binds CC-ACME");
    let ent = Enterprise {
        global_id: customer.enterprise_global_id.clone(),
        customer_id: customer.customer_id.clone(),
        channel_customer_id: customer.channel_customer_id.clone(),
        members: Vec::new(),
    };
    let numbers: Vec<String> = c
        .order
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::new(2).unwrap()))
        .await
        .expect("allocateShellNums")
        .into_iter()
        .map(String::from)
        .collect();
    let (lent_lock, lock) = (&numbers[0], &numbers[1]);
    let assets = json!([
        {"assetNos": [lent_lock], "borrowedUsbKey": true, "products": [support::product("LEND", 1)]},
        {"assetNos": [lock], "products": [support::product("CAD", 5)]},
    ]);
    // Every tenant submits the same channel order number: each has its own orders.
    let batch = support::batch(vec![support::new_buy(
        &ent,
        "normal_recover_usbkey",
        assets,
    )]);
    c.order
        .batch_order()
        .app_key("story")
        .body(batch)
        .await
        .expect("batchOrder");
    for disable in [true, false] {
        let request = ot::LockRequest::builder()
            .asset_nums(vec![lock.clone()])
            .operator_identity(format!("ops-{marker}@example.com"));
        let results = if disable {
            c.order.disable_locks().body(request).await
        } else {
            c.order.enable_locks().body(request).await
        }
        .expect("disableLocks, enableLocks");
        assert_eq!(
            results[0].status,
            licensing_sdk::LockStatus::Success,
            "{results:?}"
        );
    }
    let users = [("dave", "Dave"), ("erin", "Erin")].map(|(user, name)| {
        support::new_member(user, "Initial-Pass-1", &format!("{name} {marker}"))
    });
    let added = c
        .member
        .add_members()
        .enterprise_global_id(&ent.global_id)
        .body(mt::AddMembersRequest::builder().user_list(users.to_vec()))
        .await
        .expect("addMembers");
    let employees: Vec<String> = added
        .succeeded
        .iter()
        .map(|m| m.global_id.clone())
        .collect();
    assert_eq!(employees.len(), 2, "{added:?}");
    let listed = c
        .member
        .list_members()
        .enterprise_global_id(&ent.global_id)
        .page_num(1u32)
        .page_size(100u32)
        .await
        .expect("listMembers");
    assert!(listed.list.iter().any(|m| m.global_id == employees[0]));
    c.member
        .configure_member_assets()
        .member_global_id(&employees[0])
        .body(
            mt::ConfigureAssetsRequest::builder()
                .delete_assets(Vec::<String>::new())
                .add_assets(vec![lock.clone()]),
        )
        .await
        .expect("configureMemberAssets");
    let lock_id = c
        .member
        .list_asset_nums()
        .enterprise_global_id(&ent.global_id)
        .await
        .expect("listAssetNums")
        .into_iter()
        .find(|a| &a.asset_num == lock)
        .map(|a| a.asset_id)
        .expect("the lock is listed");
    let lend = |employee: &str| {
        c.member.lend_assets().member_global_id(employee).body(
            mt::LendAssetsRequest::builder()
                .borrowed_usb_key(lent_lock.clone())
                .asset_ids(vec![lock_id.clone()]),
        )
    };
    lend(&employees[0]).await.expect("lendAssets");
    match lend(&employees[1]).await {
        Err(Error::Api(e)) if e.code == ErrorCode::LentLockLentToAnotherEmployee => {}
        other => panic!("expected 33018, got {other:?}"),
    }
    Story { numbers, calls: 11 }
}
