//! `--retry-unknown`: before a line whose outcome is unknown is sent again, the platform is
//! asked whether its batch was applied, through the member center's read-only lists (the
//! order service documents no look-up of an order):
//!
//! | order | applied when | not applied when |
//! |---|---|---|
//! | `new_buy` | each of its assets carries a product (or package) of the batch's `channelOrderId` | none does |
//! | `delete_asset` | none of its asset numbers is listed any more | all are |
//! | `delete_product` | none of its products (`crmProductId`) is left on its assets | all are |
//!
//! Anything between (some assets one way, some the other), an asset a `delete_product`
//! names that is gone, a list the platform refuses, or an `async` run (whose batches may
//! still be in processing) leaves the line `unknown`, with the reason: only a line the
//! check shows was not applied is sent again, in a batch with a new `channelOrderId`.
//!
//! A line whose batch the results file no longer names (see [`super::recover`]) is
//! looked for under every `channelOrderId` the run could have given a batch holding it
//! ([`could_hold`]): not applied only when none of them is on its assets.

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashMap, HashSet},
};

use licensing_sdk::{
    SyncMode,
    member::types::{AssetProducts, MerchandiseNode, ProductInstance},
    order::types::LicenseOrder,
};

use super::{
    ids::could_hold,
    read::{Line, Source},
    results::{Outcome, Record, Results},
    say,
};
use crate::{config::Context, error::CliError};

/// What the check says of a line.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Applied: the batch's `channelOrderId` and the license order id, when the platform
    /// shows one.
    Applied(Option<(String, String)>),
    NotApplied,
    /// Cannot tell: why.
    Undecided(String),
}

/// Checks each unknown line (its number and its batch's `channelOrderId`, none when it is
/// lost) of a run of `sync_mode` and `prefix`, records those found applied as `ok` and
/// those it cannot tell as `unknown` with the reason, and returns the lines to send again.
pub async fn reconcile(
    ctx: &Context,
    source: &Source,
    unknown: &BTreeMap<u64, Option<String>>,
    (sync_mode, prefix): (&SyncMode, &str),
    results: &mut Results,
) -> Result<Vec<Line>, CliError> {
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    if *sync_mode != SyncMode::Sync {
        let reason = "an async batch may still be in processing: not checked, not sent again";
        record_undecided(results, unknown, reason)?;
        say(&format!(
            "{} unknown line(s) left unknown: {reason}",
            unknown.len()
        ));
        return Ok(Vec::new());
    }
    let members = ctx.member_client().map_err(|e| {
        CliError::usage(format!(
            "--retry-unknown checks each unknown line on the member center before sending it \
             again, and it is not configured ({}): set LICENSING_MEMBER_URL, \
             LICENSING_CLIENT_TOKEN and LICENSING_USER_TOKEN (or the profile's)",
            e.message
        ))
    })?;
    let nos: HashSet<u64> = unknown.keys().copied().collect();
    let lines = source.lines_numbered(&nos);
    let mut platform = Platform {
        members,
        prefix: prefix.to_string(),
        assets: HashMap::new(),
        products: HashMap::new(),
    };
    let mut records = Vec::new();
    let mut again = Vec::new();
    let (mut applied, mut undecided) = (0, 0);
    for line in lines {
        let batch = unknown[&line.no].as_deref();
        match platform.verdict(&line.order, line.no, batch).await {
            Verdict::Applied(found) => {
                applied += 1;
                let (id, order) = found.unzip();
                records.push(Record {
                    channel_order_id: id.or(batch.map(str::to_string)).map(Cow::Owned),
                    license_order_id: order.map(Cow::Owned),
                    message: Some(Cow::Borrowed(
                        "applied: found on the platform by --retry-unknown's check",
                    )),
                    ..Record::new(line.no, Outcome::Ok)
                });
            }
            Verdict::NotApplied => again.push(line),
            Verdict::Undecided(reason) => {
                undecided += 1;
                records.push(undecided_record(line.no, batch, reason));
            }
        }
    }
    results.append(&records)?;
    say(&format!(
        "checked {} unknown line(s): {applied} applied, {} not applied (sent again), \
         {undecided} left unknown",
        unknown.len(),
        again.len()
    ));
    Ok(again)
}

fn undecided_record(no: u64, batch: Option<&str>, reason: String) -> Record<'static> {
    Record {
        channel_order_id: batch.map(|b| Cow::Owned(b.to_string())),
        code: Some(Cow::Borrowed("unchecked")),
        message: Some(Cow::Owned(format!(
            "--retry-unknown could not tell whether it was applied: {reason}"
        ))),
        ..Record::new(no, Outcome::Unknown)
    }
}

fn record_undecided(
    results: &mut Results,
    unknown: &BTreeMap<u64, Option<String>>,
    reason: &str,
) -> Result<(), CliError> {
    let records: Vec<Record<'_>> = unknown
        .iter()
        .map(|(&no, batch)| undecided_record(no, batch.as_deref(), reason.to_string()))
        .collect();
    results.append(&records)
}

/// What the member center shows, each list asked for once.
struct Platform {
    members: licensing_sdk::member::Client,
    /// The run's `--order-id-prefix`: what a lost batch's id starts with.
    prefix: String,
    /// Per enterprise: asset number → asset id.
    assets: HashMap<String, Result<HashMap<String, String>, String>>,
    /// Per asset id: its products' `channelOrderId`s → a `licenseOrderId`, and their
    /// `crmProductId`s.
    products: HashMap<String, Result<Products, String>>,
}

#[derive(Default)]
struct Products {
    orders: HashMap<String, String>,
    crm_ids: HashSet<String>,
}

impl Products {
    fn take(&mut self, p: &ProductInstance) {
        self.orders
            .insert(p.channel_order_id.clone(), p.license_order_id.clone());
        self.crm_ids.insert(p.crm_product_id.clone());
    }

    fn take_node(&mut self, node: &MerchandiseNode) {
        self.orders
            .insert(node.channel_order_id.clone(), node.license_order_id.clone());
        for p in node.product_instance_list.iter().flatten() {
            self.take(p);
        }
        for child in node.children.iter().flatten() {
            self.take_node(child);
        }
    }

    fn of(listed: &AssetProducts) -> Self {
        let mut products = Products::default();
        for p in &listed.product_instance_list {
            products.take(p);
        }
        for node in &listed.children {
            products.take_node(node);
        }
        products
    }
}

impl Platform {
    async fn assets(&mut self, enterprise: &str) -> Result<&HashMap<String, String>, String> {
        if !self.assets.contains_key(enterprise) {
            let listed = self
                .members
                .list_asset_nums()
                .enterprise_global_id(enterprise)
                .await
                .map(|assets| {
                    assets
                        .into_iter()
                        .map(|a| (a.asset_num, a.asset_id))
                        .collect()
                })
                .map_err(|e| format!("listing the assets of {enterprise} failed: {e}"));
            self.assets.insert(enterprise.to_string(), listed);
        }
        self.assets[enterprise].as_ref().map_err(Clone::clone)
    }

    async fn products(&mut self, asset_id: &str) -> Result<&Products, String> {
        if !self.products.contains_key(asset_id) {
            let listed = self
                .members
                .list_asset_products()
                .asset_id(asset_id)
                .await
                .map(|listed| Products::of(&listed))
                .map_err(|e| format!("listing the products of asset {asset_id} failed: {e}"));
            self.products.insert(asset_id.to_string(), listed);
        }
        self.products[asset_id].as_ref().map_err(Clone::clone)
    }

    async fn verdict(&mut self, order: &LicenseOrder, line: u64, batch: Option<&str>) -> Verdict {
        match self.verdict_or_failure(order, line, batch).await {
            Ok(verdict) => verdict,
            Err(reason) => Verdict::Undecided(reason),
        }
    }

    async fn verdict_or_failure(
        &mut self,
        order: &LicenseOrder,
        line: u64,
        batch: Option<&str>,
    ) -> Result<Verdict, String> {
        let enterprise = order.enterprise_global_id().to_string();
        let assets = self.assets(&enterprise).await?.clone();
        // Per asset (or product): was the order's effect seen?
        let mut seen = Vec::new();
        let mut license_order = None;
        match order {
            LicenseOrder::NewBuy(_) => {
                for no in order
                    .asset_entries()
                    .iter()
                    .flat_map(|e| e.asset_nos.iter())
                {
                    let Some(id) = assets.get(no) else {
                        seen.push(false);
                        continue;
                    };
                    let prefix = self.prefix.clone();
                    let products = self.products(id).await?;
                    let found = match batch {
                        Some(batch) => products.orders.get_key_value(batch),
                        None => products
                            .orders
                            .iter()
                            .filter(|(id, _)| could_hold(&prefix, id, line))
                            .min(),
                    };
                    if let Some((id, order)) = found {
                        license_order.get_or_insert_with(|| (id.clone(), order.clone()));
                    }
                    seen.push(found.is_some());
                }
            }
            LicenseOrder::DeleteAsset(_) => {
                for no in order
                    .asset_entries()
                    .iter()
                    .flat_map(|e| e.asset_nos.iter())
                {
                    seen.push(!assets.contains_key(no));
                }
            }
            LicenseOrder::DeleteProduct(o) => {
                for asset in &o.assets {
                    for no in &asset.asset_nos {
                        let Some(id) = assets.get(no) else {
                            return Ok(Verdict::Undecided(format!(
                                "asset {no} is gone, so its products cannot be looked at"
                            )));
                        };
                        let products = self.products(id).await?;
                        for product in &asset.products {
                            seen.push(!products.crm_ids.contains(&product.crm_product_id));
                        }
                    }
                }
            }
        }
        Ok(if !seen.is_empty() && seen.iter().all(|s| *s) {
            Verdict::Applied(license_order)
        } else if seen.iter().all(|s| !*s) {
            Verdict::NotApplied
        } else {
            Verdict::Undecided(format!(
                "the platform shows its effect on {} of its {} asset(s) or product(s)",
                seen.iter().filter(|s| **s).count(),
                seen.len()
            ))
        })
    }
}
