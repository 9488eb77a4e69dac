//! The simulator's own state through the in-process API: the clock every time comes from.

#[allow(dead_code)]
#[path = "sim/support.rs"]
mod support;

use licensing_sdk::member::types as mt;
use support::Env;

const T0: i64 = 1_767_225_600_000; // 2026-01-01
const DAY: i64 = 24 * 60 * 60 * 1000;

/// The employee as `listMembers` shows it.
async fn listed(env: &Env, enterprise: &str, global_id: &str) -> mt::MemberListItem {
    env.member
        .list_members()
        .enterprise_global_id(enterprise)
        .page_num(1u32)
        .page_size(1000u32)
        .await
        .expect("listMembers")
        .list
        .into_iter()
        .find(|m| m.global_id == global_id)
        .unwrap_or_else(|| panic!("{global_id} listed"))
}

/// The creation time of every product on an asset.
async fn product_times(env: &Env, ent: &support::Enterprise, num: &str) -> Vec<i64> {
    let id = env.asset_id(ent, num).await;
    env.member
        .list_asset_products()
        .asset_id(&id)
        .await
        .expect("listAssetProducts")
        .product_instance_list
        .iter()
        .map(|p| p.create_time)
        .collect()
}

#[tokio::test]
async fn written_times_follow_a_set_and_advanced_clock() {
    let env = support::start().await;
    let clock = env.sim.clock();
    clock.freeze();
    clock.set(T0);
    assert_eq!(clock.now_ms(), T0);
    let ent = env.enterprise("Clockwork").await;
    let alice = env.add_member(&ent, "alice").await;
    let item = listed(&env, &ent.global_id, &alice).await;
    assert_eq!((item.create_time, item.update_time), (T0, T0));
    let admin = listed(&env, &ent.global_id, &ent.members[0]).await;
    assert_eq!(admin.create_time, T0, "createEnterprise's employees too");

    clock.advance(DAY);
    env.member
        .edit_member()
        .enterprise_global_id(&ent.global_id)
        .member_global_id(&alice)
        .body(
            mt::EditMemberRequest::builder()
                .user_name("alice")
                .name("Alice Liddell"),
        )
        .await
        .expect("editMember");
    let item = listed(&env, &ent.global_id, &alice).await;
    assert_eq!((item.create_time, item.update_time), (T0, T0 + DAY));

    let nums = env.allocate(1).await;
    env.buy(&ent, "normal_recover_usbkey", &nums, "cad", 5)
        .await;
    assert_eq!(product_times(&env, &ent, &nums[0]).await, [T0 + DAY]);
    clock.advance(DAY);
    env.buy(&ent, "normal_recover_usbkey", &nums, "cam", 5)
        .await;
    assert_eq!(
        product_times(&env, &ent, &nums[0]).await,
        [T0 + DAY, T0 + 2 * DAY]
    );

    // Running again, from a set instant: times go on from there.
    clock.unfreeze();
    clock.set(T0 + 10 * DAY);
    let bob = env.add_member(&ent, "bob").await;
    let created = listed(&env, &ent.global_id, &bob).await.create_time;
    assert!(
        (T0 + 10 * DAY..T0 + 10 * DAY + 60_000).contains(&created),
        "{created}"
    );
}
