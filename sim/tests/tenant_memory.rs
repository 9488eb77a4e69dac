//! What a tenant holds goes when it does: deleted, or left idle past its time to live.
//! Measured by the heap counter, in a test binary of its own so that no other test's
//! allocations are counted.

use std::time::Duration;

use licensing_sim::{Simulator, TenantOptions, admin};
use licensing_test_support::{heap, partner::allocate_one};

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

const TENANTS: usize = 20;

/// Tenants seeded with the demo seed, each called once over a socket.
async fn fill(sim: &Simulator, ttl: Duration) -> Vec<licensing_sim::Tenant> {
    let mut made = Vec::new();
    for _ in 0..TENANTS {
        let demo = admin::builtin_seed("demo").unwrap();
        let tenant = sim
            .tenant_with(TenantOptions::new().seed(demo).ttl(ttl))
            .unwrap();
        let order = licensing_sdk::order::Client::builder(tenant.url())
            .application_token(tenant.app_token())
            .build()
            .unwrap();
        allocate_one(&order).await.unwrap();
        made.push(tenant);
    }
    made
}

#[tokio::test(start_paused = true)]
async fn deleted_and_expired_tenants_free_their_memory() {
    let sim = Simulator::start().await.unwrap();
    // Once through first, so that what is made once per process is there at the start.
    for tenant in fill(&sim, Duration::from_secs(60)).await {
        assert!(sim.delete_tenant(tenant.id()).unwrap());
    }
    let base = heap::held();
    let made = fill(&sim, Duration::from_secs(60)).await;
    let full = heap::held().saturating_sub(base);
    assert!(
        full > TENANTS * 20_000,
        "{TENANTS} seeded tenants hold {full} bytes"
    );
    for tenant in &made[..TENANTS / 2] {
        assert!(sim.delete_tenant(tenant.id()).unwrap());
    }
    let half = heap::held().saturating_sub(base);
    assert!(half < full * 3 / 5, "half deleted: {half} of {full} bytes");
    // The others are left idle past their time to live; the simulator's task removes them.
    tokio::time::advance(Duration::from_secs(61)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(sim.tenant_count(), 0);
    let left = heap::held().saturating_sub(base);
    assert!(
        left < full / 10,
        "all gone: {left} of {full} bytes still held"
    );
}
