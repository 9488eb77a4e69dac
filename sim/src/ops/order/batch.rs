//! `batchOrder`: every order of a batch checked against the state, then all applied, or none.

use super::*;

/// Product instances a `delete_product` entry revokes.
pub(super) struct Match<'r> {
    pub(super) uri: &'r str,
    pub(super) strict: bool,
    pub(super) start: Option<i64>,
    pub(super) end: Option<i64>,
    pub(super) concurrent: i32,
    /// The order whose products are deleted; all the customer's orders when `None`.
    pub(super) src: Option<&'r str>,
}

impl<'r> Match<'r> {
    /// An omitted `strictMatchWhenDelete` is its documented default, `false`.
    pub(super) fn new(p: &'r o::RevokedProduct, src: Option<&'r str>) -> Self {
        Self {
            uri: &p.product_uri,
            strict: p.strict_match_when_delete.unwrap_or(false),
            start: p.limit_start_date,
            end: p.limit_end_date,
            concurrent: p.limit_concurrent,
            src,
        }
    }

    /// Non-strict matching is by product mnemonic (`productUri`); strict matching also
    /// needs equal start date, end date and concurrent node count.
    pub(super) fn hits(&self, p: &ProductRecord) -> bool {
        self.src.is_none_or(|src| p.origin.order == src)
            && p.product.product_uri == self.uri
            && (!self.strict
                || (p.product.limit_start_date == self.start
                    && p.product.limit_end_date == self.end
                    && p.product.limit_concurrent == self.concurrent))
    }
}

/// What every order of a batch records of the batch.
pub(super) struct Batch {
    pub(super) channel_code: String,
    pub(super) channel_order_id: String,
}

/// One validated order of a batch, ready to apply.
pub(super) enum Plan<'r> {
    /// A sale: every number of every asset entry, all of them checked.
    NewBuy,
    DeleteAsset(Vec<&'r str>),
    DeleteProduct(Vec<(&'r str, Vec<Match<'r>>)>),
}

impl Plan<'_> {
    /// What applying the checked order takes beyond the order itself, owned, so that the
    /// request can be consumed: a sale's products and packages then move into the state
    /// rather than being copied.
    fn into_step(self) -> Step {
        match self {
            // A sale applies every number of every asset entry, in order: the order holds it.
            Plan::NewBuy => Step::NewBuy,
            Plan::DeleteAsset(nums) => {
                Step::DeleteAsset(nums.into_iter().map(str::to_owned).collect())
            }
            Plan::DeleteProduct(targets) => Step::DeleteProduct(
                targets
                    .into_iter()
                    .map(|(num, matches)| {
                        let matches = matches
                            .into_iter()
                            .map(|m| OwnedMatch {
                                uri: m.uri.to_owned(),
                                strict: m.strict,
                                start: m.start,
                                end: m.end,
                                concurrent: m.concurrent,
                                src: m.src.map(str::to_owned),
                            })
                            .collect();
                        (num.to_owned(), matches)
                    })
                    .collect(),
            ),
        }
    }
}

/// A [`Match`] that owns its strings.
pub(super) struct OwnedMatch {
    uri: String,
    strict: bool,
    start: Option<i64>,
    end: Option<i64>,
    concurrent: i32,
    src: Option<String>,
}

impl OwnedMatch {
    pub(super) fn hits(&self, p: &ProductRecord) -> bool {
        Match {
            uri: &self.uri,
            strict: self.strict,
            start: self.start,
            end: self.end,
            concurrent: self.concurrent,
            src: self.src.as_deref(),
        }
        .hits(p)
    }
}

/// One checked order of a batch, as it is applied (see [`Plan::into_step`]).
pub(super) enum Step {
    NewBuy,
    DeleteAsset(Vec<String>),
    DeleteProduct(Vec<(String, Vec<OwnedMatch>)>),
}

/// Applies a batch of orders, all or nothing: every order is checked against the state
/// before any is applied, and an asset number may appear in only one order of a batch,
/// so the checks stay true while the batch is applied. `sync` and `async` batches are
/// both applied before the reply.
pub(crate) fn batch_order(sim: &Db, call: &Call) -> Result<Vec<o::BatchOrderResultItem>, Failure> {
    match call.query("appKey") {
        None => return Err(invalid("appKey is required")),
        Some(key) if key.trim().is_empty() => return Err(invalid("appKey must not be empty")),
        Some(_) => {}
    }
    let req: o::BatchOrderRequest = body(call)?;
    non_empty("channelCode", &req.channel_code)?;
    non_empty("channelOrderId", &req.channel_order_id)?;
    if !req.sync_mode.is_known() {
        return Err(invalid(format!(
            "syncMode must be sync or async (is {})",
            req.sync_mode
        )));
    }
    if req.order_list.is_empty() || req.order_list.len() > MAX_ORDERS {
        return Err(invalid(format!(
            "orderList must have 1 to {MAX_ORDERS} orders (has {})",
            req.order_list.len()
        )));
    }
    let mut state = sim.state_mut();
    let c = &sim.config;
    Settings::room(
        state.orders.len(),
        req.order_list.len(),
        c.max_orders,
        "license orders",
        "--max-orders",
    )
    .map_err(invalid)?;
    let now = sim.clock.now_ms();
    let steps = {
        let allocator = sim.allocator();
        let mut seen = HashSet::new();
        let mut copies = 0;
        req.order_list
            .iter()
            .enumerate()
            .map(|(i, order)| {
                check_order(&state, &allocator, i, order, &mut seen, &mut copies)
                    .map(Plan::into_step)
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    let batch = Batch {
        channel_code: req.channel_code,
        channel_order_id: req.channel_order_id,
    };
    let batch_len = req.order_list.len();
    // Room for the whole batch at once: grown one doubling at a time, the maps rehashed
    // and the kernel zeroed their new tables for 10% of a 1,000-order batch's time.
    let sold = req
        .order_list
        .iter()
        .filter_map(|order| match order {
            o::LicenseOrder::NewBuy(buy) => {
                Some(buy.assets.iter().map(|a| a.asset_nos.len()).sum::<usize>())
            }
            _ => None,
        })
        .sum();
    state.reserve(batch_len, sold, 0);
    Ok(req
        .order_list
        .into_iter()
        .zip(steps)
        .map(|(order, step)| apply(&mut state, &batch, order, step, now))
        .collect())
}

/// Checks one order of a batch against the state and returns what applying it does. The
/// rules run in a fixed order, the first broken one answering, so that a batch always
/// gets the same cause.
pub(super) fn check_order<'r>(
    state: &State,
    allocator: &Allocator,
    i: usize,
    order: &'r o::LicenseOrder,
    seen: &mut HashSet<&'r str>,
    copies: &mut usize,
) -> Result<Plan<'r>, Failure> {
    let check = OrderCheck { state, i, order };
    check.known_values()?;
    check.customer()?;
    let src = check.source_order()?;
    check.asset_entries(seen)?;
    match order {
        o::LicenseOrder::NewBuy(buy) => check.new_buy(buy, allocator, copies),
        o::LicenseOrder::DeleteAsset(del) => check.delete_asset(del, src),
        o::LicenseOrder::DeleteProduct(del) => check.delete_product(del, src),
    }
}
