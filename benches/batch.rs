//! Scale of a batch order: `batchOrder` with 10, 1,000 and 10,000 orders (each with an
//! asset, a product with a feature, and a package holding a nested package) through
//! SDK → simulator → SDK, against the bare `serde_json` serialize + parse of the same
//! payload. Time is the median of a few runs after a warm-up; peak memory is the client's heap growth
//! during the call, counted by a global allocator. The simulator runs in its own process
//! (`LICENSING_SIM_URL`, started by `cargo xtask bench`), so only the client is counted.
//! Prints one JSON object.

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicUsize, Ordering},
    time::Instant,
};

use licensing_sdk::{CustomerType, LicenseType, SyncMode, Trial, order::types as o};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SIZES: [usize; 3] = [10, 1_000, 10_000];
/// Measured runs per size, after one unmeasured warm-up run (first-touch page faults in
/// both processes otherwise dominate the first large batch).
const RUNS: usize = 5;

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

fn request(
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::var("LICENSING_SIM_URL").expect(
        "LICENSING_SIM_URL: the address of a running licensing-sim (cargo xtask bench starts one)",
    );
    let client = licensing_sdk::order::Client::builder(&url)
        .application_token("sim-app-token")
        .timeout(std::time::Duration::from_secs(300))
        .build()
        .unwrap();
    let customer = client
        .bind_enterprise()
        .body(
            o::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id(format!("CC-bench-{}", std::process::id()))
                .customer_name("Acme Robotics")
                .branch_name("North")
                .enterprise_name(format!("Bench {}", std::process::id()))
                .password_mobile("13800000000"),
        )
        .await
        .unwrap();

    let mut sizes = Vec::new();
    let mut batch = 0;
    for n in SIZES {
        let (mut bare, mut ours, mut peaks, mut payload) = (Vec::new(), Vec::new(), Vec::new(), 0);
        for run in 0..=RUNS {
            batch += 1;
            let mut numbers = Vec::with_capacity(n);
            while numbers.len() < n {
                let size = (n - numbers.len()).min(1000) as u32;
                let got = client
                    .allocate_shell_nums()
                    .body(o::AllocateShellNumsRequest::builder().size(size))
                    .await
                    .unwrap();
                numbers.extend(got.into_iter().map(|s| s.0));
            }
            let req = request(&customer, &numbers, batch);

            if run == 0 {
                let warm = client
                    .batch_order()
                    .app_key("bench")
                    .body(req)
                    .await
                    .unwrap();
                assert_eq!(warm.len(), n);
                continue;
            }
            let t = Instant::now();
            let bytes = serde_json::to_vec(&req).unwrap();
            let parsed: o::BatchOrderRequest = serde_json::from_slice(&bytes).unwrap();
            bare.push(t.elapsed().as_secs_f64() * 1e6);
            assert_eq!(parsed.order_list.len(), n);
            payload = bytes.len();
            drop((bytes, parsed));

            let before = CURRENT.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let t = Instant::now();
            let results = client
                .batch_order()
                .app_key("bench")
                .body(req)
                .await
                .unwrap();
            ours.push(t.elapsed().as_secs_f64() * 1e6);
            peaks.push((PEAK.load(Ordering::Relaxed) - before) as f64);
            assert_eq!(results.len(), n);
        }
        eprintln!(
            "{n} orders: bare {:.0} µs, sdk {:.0} µs",
            median(bare.clone()),
            median(ours.clone())
        );
        sizes.push(serde_json::json!({
            "orders": n, "payload_bytes": payload,
            "bare_serde_us": median(bare), "sdk_round_trip_us": median(ours),
            "sdk_peak_bytes": peaks.into_iter().fold(0.0, f64::max),
        }));
    }
    println!("{}", serde_json::json!({"runs": RUNS, "sizes": sizes}));
}
