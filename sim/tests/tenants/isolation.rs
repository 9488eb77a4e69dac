//! Sixteen workers, each in a tenant of its own on one simulator, tell the partner story
//! twenty times with resets, clock jumps, a scripted fault and its seed; after every
//! telling, and at the end for all of them, a checker reads each tenant's state, journal,
//! fault rules and clock and finds nothing of another tenant there.

use licensing_sdk::ErrorCode;
use licensing_sim::{Simulator, Tenant, TenantOptions, admin::types as at};
use licensing_test_support::sim as support;
use serde_json::Value;

use super::story::{Clients, partner_story};

const WORKERS: usize = 16;
const TELLINGS: usize = 20;
const T0: i64 = 1_767_225_600_000; // 2026-01-01
const DAY: i64 = 24 * 60 * 60 * 1000;
const HOUR: i64 = 60 * 60 * 1000;

/// What each worker writes into what it creates: `-tenant-07-`.
fn marker(worker: usize) -> String {
    format!("-tenant-{worker:02}-")
}

/// Every marker in `text`.
fn markers(text: &str) -> Vec<String> {
    text.match_indices("-tenant-")
        .filter_map(|(at, _)| text.get(at..at + 11))
        .map(str::to_string)
        .collect()
}

/// The clock of worker `w`'s telling `i`: a day of its own, a year apart from the others'.
fn clock_of(w: usize, i: usize) -> i64 {
    T0 + (w as i64) * 365 * DAY + (i as i64) * DAY
}

/// A tenant's whole picture, as its admin API shows it.
async fn picture(c: &Clients) -> (Value, at::JournalPage, Vec<at::FaultRule>, at::Clock) {
    let state = c.admin.export_state().send().await.unwrap().into_inner();
    let journal = support::journal(&c.admin).await;
    let faults = c.admin.list_faults().send().await.unwrap().into_inner();
    let clock = c.admin.get_clock().send().await.unwrap().into_inner();
    (serde_json::to_value(state).unwrap(), journal, faults, clock)
}

/// Nothing of another worker's in worker `w`'s picture after its telling `i`.
async fn check(c: &Clients, w: usize, i: usize, calls: usize) {
    let (state, journal, faults, clock) = picture(c).await;
    let mine = marker(w);
    let text = format!("{state}{}", serde_json::to_string(&journal).unwrap());
    let found = markers(&text);
    assert!(!found.is_empty(), "worker {w}: its own records are there");
    assert!(
        found.iter().all(|m| *m == mine),
        "worker {w} telling {i} sees {:?}",
        found.iter().find(|m| **m != mine)
    );
    assert_eq!(state["state"]["enterprises"].as_object().unwrap().len(), 1);
    assert_eq!(
        journal.entries.len(),
        calls,
        "worker {w}: its own calls only"
    );
    assert!(
        journal.entries.iter().all(|e| e.time == clock_of(w, i)),
        "worker {w}: every entry at its own clock"
    );
    assert_eq!(faults.len(), 1, "worker {w}: its own rule only");
    assert_eq!(faults[0].seed, Some(fault_seed(w, i)));
    assert_eq!(faults[0].hits, 1);
    assert_eq!((clock.now, clock.frozen), (clock_of(w, i) + HOUR, true));
}

fn fault_seed(w: usize, i: usize) -> i64 {
    (w * 1000 + i) as i64
}

/// One worker: twenty tellings, each after a reset, at a clock of its own, with a fault
/// rule of its own that fails its first allocation.
async fn worker(w: usize, tenant: Tenant) {
    let c = Clients::of(&tenant);
    for i in 0..TELLINGS {
        c.admin.reset().send().await.unwrap();
        c.admin.clear_journal().send().await.unwrap();
        c.admin.clear_faults().send().await.unwrap();
        let setting = at::ClockSetting::builder()
            .now(clock_of(w, i))
            .frozen(Some(true));
        c.admin.set_clock().body(setting).send().await.unwrap();
        support::load_demo(&c.admin).await;
        let rule = at::FaultRuleSpec::builder()
            .operation("allocateShellNums")
            .times(std::num::NonZeroU64::new(1))
            .seed(Some(fault_seed(w, i)))
            .fault(
                at::Fault::builder()
                    .kind(at::FaultKind::Code)
                    .code(Some("500".to_string())),
            );
        c.admin.create_fault().body(rule).send().await.unwrap();
        let faulted = licensing_test_support::partner::allocate_one(&c.order).await;
        assert_eq!(support::code_of(faulted), ErrorCode::NetworkException);
        let story = partner_story(&c, &marker(w)).await;
        // Each tenant's numbers start after its own demo seed's three.
        assert_eq!(story.numbers, ["8000000004", "8000000005"], "worker {w}");
        let advance = at::ClockAdvance::builder().ms(HOUR);
        c.admin.advance_clock().body(advance).send().await.unwrap();
        check(&c, w, i, story.calls + 1).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_workers_see_only_their_own_tenant() {
    let sim = Simulator::builder().start().await.unwrap();
    let tenants: Vec<Tenant> = (0..WORKERS)
        .map(|w| {
            sim.tenant_with(TenantOptions::new().name(format!("worker {w}")))
                .unwrap()
        })
        .collect();
    let running: Vec<_> = tenants
        .iter()
        .enumerate()
        .map(|(w, t)| tokio::spawn(worker(w, t.clone())))
        .collect();
    for run in running {
        run.await.expect("a worker finished");
    }
    // At the end, every tenant at once: each still holds its last telling only.
    for (w, tenant) in tenants.iter().enumerate() {
        check(&Clients::of(tenant), w, TELLINGS - 1, 12).await;
    }
    // The default tenant saw none of it.
    let default = sim.admin();
    let journal = support::journal(&default).await;
    assert!(journal.entries.is_empty(), "{:?}", journal.entries.first());
    let state = default.export_state().send().await.unwrap().into_inner();
    assert!(markers(&serde_json::to_string(&state).unwrap()).is_empty());
    assert_eq!(sim.tenant_ids().len(), WORKERS);
}
