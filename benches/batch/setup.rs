//! The simulator each measurement meets: emptied, with one bound customer and fresh asset
//! numbers, and the SDK's round trip against it.

use std::time::Instant;

use licensing_sdk::order::types as o;

use super::common::{Heap, Perf, Sim};

pub struct Setup {
    pub sim: Sim,
    pub http: reqwest::Client,
    pub client: licensing_sdk::order::Client,
}

impl Setup {
    /// An empty simulator with one bound customer and `n` fresh asset numbers. After a
    /// reset the simulator hands out the same ids and numbers again, so one batch serves
    /// every run of a size.
    pub async fn prepare(&self, n: usize) -> (o::EnterpriseCustomer, Vec<String>) {
        self.sim.reset(&self.http).await;
        let customer = self
            .client
            .bind_enterprise()
            .body(
                o::BindEnterpriseRequest::builder()
                    .channel_code("CH01")
                    .channel_customer_id("CC-bench")
                    .customer_name("Acme Robotics")
                    .branch_name("North")
                    .enterprise_name("Bench")
                    .password_mobile("13800000000"),
            )
            .await
            .unwrap();
        let mut numbers = Vec::with_capacity(n);
        while numbers.len() < n {
            let size = (n - numbers.len()).min(1000) as u32;
            let got = self
                .client
                .allocate_shell_nums()
                .body(o::AllocateShellNumsRequest::builder().size(size))
                .await
                .unwrap();
            numbers.extend(got.into_iter().map(|s| s.0));
        }
        (customer, numbers)
    }

    /// One SDK round trip of `req` (built from `first`) against an emptied simulator:
    /// its time in µs and the client's peak heap growth. `perf` sees it when given.
    pub async fn round_trip(
        &self,
        first: &(o::EnterpriseCustomer, Vec<String>),
        req: &o::BatchOrderRequest,
        mut perf: Option<&mut Perf>,
    ) -> (f64, usize) {
        let n = req.order_list.len();
        self.prepare_again(first).await;
        let ours = req.clone();
        let heap = Heap::start();
        let t = Instant::now();
        if let Some(p) = perf.as_mut() {
            p.enable();
        }
        let result = self.client.batch_order().app_key("bench").body(ours).await;
        if let Some(p) = perf.as_mut() {
            p.disable();
        }
        let elapsed = t.elapsed().as_secs_f64() * 1e6;
        let peak = heap.peak();
        let items = result.unwrap_or_else(|e| panic!("{n} orders: {e}"));
        assert_eq!(items.len(), n);
        drop(items);
        (elapsed, peak)
    }

    /// `runs` round trips of `batch` (set-up and request), their times in µs; a profile
    /// does not see them.
    pub async fn round_trips(
        &self,
        batch: &((o::EnterpriseCustomer, Vec<String>), o::BatchOrderRequest),
        runs: usize,
    ) -> Vec<f64> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            times.push(self.round_trip(&batch.0, &batch.1, None).await.0);
        }
        times
    }

    /// [`Setup::prepare`] for a batch already built from `first`'s customer and numbers.
    pub async fn prepare_again(&self, first: &(o::EnterpriseCustomer, Vec<String>)) {
        let again = self.prepare(first.1.len()).await;
        assert_eq!(
            again.0.customer_id, first.0.customer_id,
            "same customer after a reset"
        );
        assert!(again.1 == first.1, "same asset numbers after a reset");
    }
}
