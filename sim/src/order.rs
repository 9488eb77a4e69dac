//! The order service: enterprise accounts, batch license orders, locks, virtual assets
//! and asset-number allocation.
//!
//! Every validation failure answers `13004`, the one business code the order document
//! lists besides `500`; the cause names the field and the rule.

use std::collections::HashSet;

use super::{
    Shared,
    http::{Call, Failure, Service},
    state::{
        Allocator, Asset, Customer, LicenseOrder, MerchandiseRecord, NewCustomer, NewMember,
        Origin, ProductRecord, State, is_asset_number, is_mobile_number,
    },
};
use licensing_sdk::{
    DefaultCustomer, KeyChipType, LockStatus, OrderType, order::types as o,
    validate::is_cloud_license,
};

/// Asset numbers one `allocateShellNums` call may ask for (the document shows no bound).
const MAX_ALLOCATION: u32 = 1000;
/// Locks one disable or enable call may name.
const MAX_LOCKS: usize = 1000;
/// Orders in one batch (the document shows no bound; large enough for the 50,000-order
/// month-end batches the benchmarks send, about 125 MiB of JSON).
const MAX_ORDERS: usize = 50_000;
/// Product instances one batch may create (asset numbers × products): ten per order of
/// the largest batch.
const MAX_PRODUCT_COPIES: usize = 500_000;
/// How deep packages may nest.
const MAX_PACKAGE_DEPTH: usize = 8;

fn invalid(cause: impl Into<String>) -> Failure {
    Service::Order.invalid(cause)
}

fn body<T: serde::de::DeserializeOwned>(call: &Call) -> Result<T, Failure> {
    call.body().map_err(invalid)
}

fn non_empty(field: &str, value: &str) -> Result<(), Failure> {
    if value.trim().is_empty() {
        return Err(invalid(format!("{field} must not be empty")));
    }
    Ok(())
}

fn customer_record(state: &State, customer: &Customer) -> o::EnterpriseCustomer {
    // Customers created by `createEnterprise` have no channel: empty strings.
    let (channel_code, channel_customer_id) = customer.channel.clone().unwrap_or_default();
    o::EnterpriseCustomer {
        customer_id: customer.id.clone(),
        channel_code,
        channel_customer_id,
        enterprise_global_id: customer.enterprise.clone(),
        enterprise_name: state
            .enterprises
            .get(&customer.enterprise)
            .map(|e| e.name.clone())
            .unwrap_or_default(),
        is_default: customer.is_default,
    }
}

/// Binds a channel customer to the enterprise named `enterpriseName`, creating that
/// enterprise (with this customer as its default) when no enterprise has the name.
pub(crate) fn bind_enterprise(sim: &Shared, call: &Call) -> Result<o::EnterpriseCustomer, Failure> {
    let req: o::BindEnterpriseRequest = body(call)?;
    for (field, value) in [
        ("channelCode", &req.channel_code),
        ("channelCustomerId", &req.channel_customer_id),
        ("customerName", &req.customer_name),
        ("branchName", &req.branch_name),
        ("enterpriseName", &req.enterprise_name),
        ("passwordMobile", &req.password_mobile),
    ] {
        non_empty(field, value)?;
    }
    if !is_mobile_number(&req.password_mobile) {
        return Err(invalid("passwordMobile is not a valid mobile number"));
    }
    let mut state = sim.state_mut();
    if let Some(existing) = state
        .customer_by_channel
        .get(&req.channel_code, &req.channel_customer_id)
    {
        let enterprise = &state.customers[existing].enterprise;
        return Err(invalid(format!(
            "channel customer {}/{} is already bound to enterprise {enterprise}",
            req.channel_code, req.channel_customer_id
        )));
    }
    let channel = (req.channel_code.clone(), req.channel_customer_id.clone());
    let enterprise = match state.enterprise_by_name.get(&req.enterprise_name) {
        Some(eg) => eg.clone(),
        None => state.new_enterprise(&req.enterprise_name),
    };
    let id = state.new_customer(
        &enterprise,
        NewCustomer {
            name: req.customer_name,
            branch: req.branch_name,
            address: None,
            crm: None,
            channel: Some(channel),
        },
    );
    Ok(customer_record(&state, &state.customers[&id]))
}

/// Creates an enterprise main account named after the customer, with its default
/// customer, an industry customer, the industry administrator and a cloud employee.
pub(crate) fn create_enterprise(
    sim: &Shared,
    call: &Call,
) -> Result<o::CreateEnterpriseResult, Failure> {
    let req: o::CreateEnterpriseRequest = body(call)?;
    non_empty("crmCustomerId", &req.crm_customer_id)?;
    non_empty("customerName", &req.customer_name)?;
    non_empty("branchName", &req.branch_name)?;
    let mut state = sim.state_mut();
    if let Some(existing) = state.customer_by_crm.get(&req.crm_customer_id) {
        let enterprise = &state.customers[existing].enterprise;
        return Err(invalid(format!(
            "crmCustomerId {} already belongs to enterprise {enterprise}",
            req.crm_customer_id
        )));
    }
    if let Some(eg) = state.enterprise_by_name.get(&req.customer_name) {
        return Err(invalid(format!(
            "an enterprise named {:?} already exists ({eg})",
            req.customer_name
        )));
    }
    let enterprise = state.new_enterprise(&req.customer_name);
    state.new_customer(
        &enterprise,
        NewCustomer {
            name: req.customer_name.clone(),
            branch: req.branch_name.clone(),
            address: req.address.clone(),
            crm: Some(req.crm_customer_id),
            channel: None,
        },
    );
    state.new_customer(
        &enterprise,
        NewCustomer {
            name: format!("{} (industry)", req.customer_name),
            branch: req.branch_name,
            address: req.address,
            crm: None,
            channel: None,
        },
    );
    let now = sim.clock.now_ms();
    let created = |state: &mut State, account: &str, name: &str, identity: &str| {
        let member_global_id = state.new_member(
            &enterprise,
            NewMember {
                account: account.to_string(),
                password: String::new(),
                name: name.to_string(),
                department: None,
                remark: None,
                mobile: None,
                trial: false,
            },
            now,
        );
        o::CreatedMember {
            member_global_id,
            member_identity: identity.to_string(),
        }
    };
    let members = vec![
        created(
            &mut state,
            "admin",
            "Industry administrator",
            "industry_admin",
        ),
        created(&mut state, "cloud", "Cloud employee", "cloud_employee"),
    ];
    Ok(o::CreateEnterpriseResult {
        enterprise_global_id: enterprise,
        default_type: true,
        members,
    })
}

/// The customers of the enterprise the channel customer is bound to: only the default
/// one with `Y`, all with `N`; none for an unbound channel customer.
pub(crate) fn query_enterprise(
    sim: &Shared,
    call: &Call,
) -> Result<Vec<o::EnterpriseCustomer>, Failure> {
    let required = |name: &str| {
        call.query(name)
            .ok_or_else(|| invalid(format!("{name} is required")))
    };
    let channel_code = required("channelCode")?;
    let channel_customer_id = required("channelCustomerId")?;
    let only_default = match DefaultCustomer::from(required("defaultCustomer")?) {
        DefaultCustomer::OnlyDefault => true,
        DefaultCustomer::All => false,
        DefaultCustomer::Unknown(other) => {
            return Err(invalid(format!(
                "defaultCustomer must be Y or N (is {other:?})"
            )));
        }
    };
    let state = sim.state();
    let Some(bound) = state
        .customer_by_channel
        .get(channel_code, channel_customer_id)
    else {
        return Ok(Vec::new());
    };
    let enterprise = &state.enterprises[&state.customers[bound].enterprise];
    Ok(enterprise
        .customers
        .iter()
        .map(|id| &state.customers[id])
        .filter(|c| c.is_default || !only_default)
        .map(|c| customer_record(&state, c))
        .collect())
}

/// Changes the name, branch and (when given) address of the customer with the CRM id.
pub(crate) fn update_enterprise(sim: &Shared, call: &Call) -> Result<(), Failure> {
    let req: o::UpdateEnterpriseRequest = body(call)?;
    non_empty("crmCustomerId", &req.crm_customer_id)?;
    non_empty("customerName", &req.customer_name)?;
    non_empty("branchName", &req.branch_name)?;
    let mut state = sim.state_mut();
    let Some(id) = state.customer_by_crm.get(&req.crm_customer_id).cloned() else {
        return Err(invalid(format!(
            "no customer with crmCustomerId {}",
            req.crm_customer_id
        )));
    };
    let customer = state
        .customers
        .get_mut(&id)
        .expect("the CRM index points at existing customers");
    customer.name = req.customer_name;
    customer.branch = req.branch_name;
    if req.address.is_some() {
        customer.address = req.address;
    }
    Ok(())
}

/// Product instances a `delete_product` entry revokes.
struct Match<'r> {
    uri: &'r str,
    strict: bool,
    start: Option<i64>,
    end: Option<i64>,
    concurrent: i32,
    /// The order whose products are deleted; all the customer's orders when `None`.
    src: Option<&'r str>,
}

impl<'r> Match<'r> {
    /// An omitted `strictMatchWhenDelete` is its documented default, `false`.
    fn new(p: &'r o::RevokedProduct, src: Option<&'r str>) -> Self {
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
    fn hits(&self, p: &ProductRecord) -> bool {
        self.src.is_none_or(|src| p.origin.order == src)
            && p.product.product_uri == self.uri
            && (!self.strict
                || (p.product.limit_start_date == self.start
                    && p.product.limit_end_date == self.end
                    && p.product.limit_concurrent == self.concurrent))
    }
}

/// One validated order of a batch, ready to apply.
enum Plan<'r> {
    NewBuy(&'r o::NewBuyOrder, Vec<(&'r str, &'r o::Asset)>),
    DeleteAsset(Vec<&'r str>),
    DeleteProduct(Vec<(&'r str, Vec<Match<'r>>)>),
}

/// Applies a batch of orders, all or nothing: every order is checked against the state
/// before any is applied, and an asset number may appear in only one order of a batch,
/// so the checks stay true while the batch is applied. `sync` and `async` batches are
/// both applied before the reply.
pub(crate) fn batch_order(
    sim: &Shared,
    call: &Call,
) -> Result<Vec<o::BatchOrderResultItem>, Failure> {
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
    let now = sim.clock.now_ms();
    let plans = {
        let allocator = sim.allocator();
        let mut seen = HashSet::new();
        let mut copies = 0;
        req.order_list
            .iter()
            .enumerate()
            .map(|(i, order)| check_order(&state, &allocator, i, order, &mut seen, &mut copies))
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(req
        .order_list
        .iter()
        .zip(plans)
        .map(|(order, plan)| apply(&mut state, &req, order, plan, now))
        .collect())
}

/// Checks one order of a batch against the state and returns what applying it does. The
/// rules run in a fixed order, the first broken one answering, so that a batch always
/// gets the same cause.
fn check_order<'r>(
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

/// One order of a batch under check, with its place in the batch: every cause names the
/// field it blames by that place, so a caller can find it in a 50,000-order batch.
struct OrderCheck<'s, 'r> {
    state: &'s State,
    i: usize,
    order: &'r o::LicenseOrder,
}

impl<'s, 'r> OrderCheck<'s, 'r> {
    fn at(&self, field: &str) -> String {
        format!("orderList[{}].{field}", self.i)
    }

    fn at_asset(&self, j: usize, field: &str) -> String {
        format!("orderList[{}].assets[{j}].{field}", self.i)
    }

    /// typify leaves the enumerations open (`Unknown`) so that the SDK can read values
    /// added later; an order has to be applied, so here they are closed, as in the spec.
    /// (`orderType` is closed already: it picks the order's shape.)
    fn known_values(&self) -> Result<(), Failure> {
        let order = self.order;
        let customer_type = match order {
            o::LicenseOrder::NewBuy(o) => Some(&o.customer_type),
            o::LicenseOrder::DeleteAsset(o) => o.customer_type.as_ref(),
            o::LicenseOrder::DeleteProduct(o) => o.customer_type.as_ref(),
        };
        let license_type = order.license_type();
        for (field, known, value) in [
            (
                "licenseType",
                license_type.is_known(),
                license_type.as_str(),
            ),
            (
                "customerType",
                customer_type.is_none_or(|c| c.is_known()),
                customer_type.map_or("", |c| c.as_str()),
            ),
        ] {
            if !known {
                return Err(invalid(format!(
                    "{}: unknown value {value:?}",
                    self.at(field)
                )));
            }
        }
        Ok(())
    }

    /// An order sells to or revokes from one existing customer, and the enterprise it
    /// names must be that customer's: a sale puts the assets in that enterprise, which
    /// would otherwise list assets of a customer it does not have.
    fn customer(&self) -> Result<(), Failure> {
        let order = self.order;
        let Some(customer) = self.state.customers.get(order.customer_id()) else {
            return Err(invalid(format!(
                "{}: no customer {:?}",
                self.at("customerId"),
                order.customer_id()
            )));
        };
        if customer.enterprise != order.enterprise_global_id() {
            return Err(invalid(format!(
                "{}: customer {} belongs to enterprise {}, not {:?}",
                self.at("enterpriseGlobalId"),
                customer.id,
                customer.enterprise,
                order.enterprise_global_id()
            )));
        }
        Ok(())
    }

    /// `srcLicenseOrderId`, trimmed (`None` when empty). The document makes it mandatory
    /// for cloud licenses. A revocation deletes only from that order, so it must be a
    /// `new_buy` of the same customer: a revocation cannot reach another customer's sale.
    fn source_order(&self) -> Result<Option<&'r str>, Failure> {
        let order = self.order;
        let src = order
            .src_license_order_id()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        if is_cloud_license(order.license_type()) && src.is_none() {
            return Err(invalid(format!(
                "{} is required when licenseType is a cloud license ({})",
                self.at("srcLicenseOrderId"),
                order.license_type()
            )));
        }
        let deleting = !matches!(order, o::LicenseOrder::NewBuy(_));
        if deleting
            && let Some(src) = src
            && self.state.orders.get(src).is_none_or(|o: &LicenseOrder| {
                o.customer != order.customer_id() || o.order_type != OrderType::NewBuy
            })
        {
            return Err(invalid(format!(
                "{}: customer {} has no new_buy license order {src:?}",
                self.at("srcLicenseOrderId"),
                order.customer_id()
            )));
        }
        Ok(src)
    }

    /// The asset entries, whatever the order type. Each names well-formed numbers. A
    /// number appears once in the whole batch: the batch is checked before any of it is
    /// applied, and the checks stay true only if no two orders touch one asset. Only
    /// `delete_asset` goes without products: a `new_buy` would sell nothing and a
    /// `delete_product` revoke nothing.
    fn asset_entries(&self, seen: &mut HashSet<&'r str>) -> Result<(), Failure> {
        let entries = self.order.asset_entries();
        if entries.is_empty() {
            return Err(invalid(format!("{} must not be empty", self.at("assets"))));
        }
        for (j, entry) in entries.into_iter().enumerate() {
            let at = |field: &str| self.at_asset(j, field);
            if entry.asset_nos.is_empty() {
                return Err(invalid(format!("{} must not be empty", at("assetNos"))));
            }
            for num in entry.asset_nos {
                if !is_asset_number(num) {
                    return Err(invalid(format!(
                        "{}: {num:?} is not a 10-digit asset number",
                        at("assetNos")
                    )));
                }
                if !seen.insert(num.as_str()) {
                    return Err(invalid(format!(
                        "{}: asset number {num} appears more than once in the batch",
                        at("assetNos")
                    )));
                }
            }
            if entry.products == Some(0) {
                return Err(invalid(format!(
                    "{} must not be empty unless orderType is delete_asset",
                    at("products")
                )));
            }
        }
        Ok(())
    }

    /// An existing asset of the order's customer: whatever the order type, an order acts
    /// only on assets its customer owns.
    fn owned(&self, num: &str) -> Result<&'s Asset, Failure> {
        let asset = self
            .state
            .assets
            .get(num)
            .ok_or_else(|| invalid(format!("{}: no asset {num}", self.at("assets"))))?;
        if asset.customer != self.order.customer_id() {
            return Err(invalid(format!(
                "{}: asset {num} belongs to another customer",
                self.at("assets")
            )));
        }
        Ok(asset)
    }

    /// A `new_buy`: its products, the bound on what one batch may create (every product
    /// is copied onto every asset number of its entry, so a small batch can ask for
    /// millions), and the numbers it sells.
    fn new_buy(
        &self,
        order: &'r o::NewBuyOrder,
        allocator: &Allocator,
        copies: &mut usize,
    ) -> Result<Plan<'r>, Failure> {
        let mut targets = Vec::new();
        for (j, asset) in order.assets.iter().enumerate() {
            let products = self.products_sold(j, asset)?;
            *copies += products * asset.asset_nos.len();
            if *copies > MAX_PRODUCT_COPIES {
                return Err(invalid(format!(
                    "the batch would create more than {MAX_PRODUCT_COPIES} product instances"
                )));
            }
            for num in &asset.asset_nos {
                self.sellable(allocator, j, num)?;
                targets.push((num.as_str(), asset));
            }
        }
        Ok(Plan::NewBuy(order, targets))
    }

    /// The products and packages of a `new_buy` entry; returns how many products they
    /// hold.
    fn products_sold(&self, j: usize, asset: &o::Asset) -> Result<usize, Failure> {
        let at = |field: &str| self.at_asset(j, field);
        let mut products = 0;
        for (k, product) in asset.products.iter().enumerate() {
            check_product(product, &format!("{}[{k}]", at("products")))?;
            products += 1;
        }
        for (k, package) in asset.merchandises.iter().enumerate() {
            products += check_package(package, &format!("{}[{k}]", at("merchandises")), 1)?;
        }
        Ok(products)
    }

    /// A number a `new_buy` may sell: one the platform handed out, never revoked
    /// (revocation is for good), and, when sold before, to this customer under the same
    /// license type, since an asset has one.
    fn sellable(&self, allocator: &Allocator, j: usize, num: &str) -> Result<(), Failure> {
        let at = |field: &str| self.at_asset(j, field);
        if !allocator.allocated(num) {
            return Err(invalid(format!(
                "{}: asset number {num} has not been allocated (allocateShellNums)",
                at("assetNos")
            )));
        }
        if self.state.revoked.contains(num) {
            return Err(invalid(format!(
                "{}: asset number {num} was revoked and cannot be sold again",
                at("assetNos")
            )));
        }
        if self.state.assets.contains_key(num) {
            let existing = self.owned(num)?;
            if existing.license_type != *self.order.license_type() {
                return Err(invalid(format!(
                    "{}: asset {num} is a {} asset, not {}",
                    at("assetNos"),
                    existing.license_type,
                    self.order.license_type()
                )));
            }
        }
        Ok(())
    }

    /// A `delete_asset`: only the customer's own assets, and with a source order only
    /// those that order sold, as the document scopes a revocation by it.
    fn delete_asset(
        &self,
        order: &'r o::DeleteAssetOrder,
        src: Option<&str>,
    ) -> Result<Plan<'r>, Failure> {
        let mut targets = Vec::new();
        for num in order.assets.iter().flat_map(|a| &a.asset_nos) {
            let asset = self.owned(num)?;
            if let Some(src) = src.filter(|src| !asset.orders.contains(*src)) {
                return Err(invalid(format!(
                    "{}: asset {num} was not sold by license order {src}",
                    self.at("assets")
                )));
            }
            targets.push(num.as_str());
        }
        Ok(Plan::DeleteAsset(targets))
    }

    /// A `delete_product`: every product named must match one on the asset (see
    /// [`Match::hits`]); a revocation that would delete nothing is refused rather than
    /// answered as a success the caller would take for a deletion.
    fn delete_product(
        &self,
        order: &'r o::DeleteProductOrder,
        src: Option<&'r str>,
    ) -> Result<Plan<'r>, Failure> {
        let mut targets = Vec::new();
        for asset_entry in &order.assets {
            for num in &asset_entry.asset_nos {
                let asset = self.owned(num)?;
                let matches: Vec<_> = asset_entry
                    .products
                    .iter()
                    .map(|p| Match::new(p, src))
                    .collect();
                for m in &matches {
                    if !asset.all_products().any(|p| m.hits(p)) {
                        return Err(self.unmatched(num, m, src));
                    }
                }
                targets.push((num.as_str(), matches));
            }
        }
        Ok(Plan::DeleteProduct(targets))
    }

    /// The cause of a `delete_product` entry matching nothing, saying how it matched.
    fn unmatched(&self, num: &str, m: &Match<'_>, src: Option<&str>) -> Failure {
        let how = if m.strict {
            " with the same start date, end date and concurrent nodes"
        } else {
            ""
        };
        let scope = src.map_or(String::new(), |s| format!(" in order {s}"));
        invalid(format!(
            "{}: no product of asset {num} matches productUri {:?}{how}{scope}",
            self.at("assets"),
            m.uri
        ))
    }
}

/// The enumerations typify leaves open (`Unknown`) are closed here, as in the spec.
fn check_product(product: &o::Product, at: &str) -> Result<(), Failure> {
    if !product.trial.is_known() {
        return Err(invalid(format!("{at}.trial must be 0 or 1")));
    }
    for (f, feature) in product.product_features.iter().enumerate() {
        if !feature.trial.is_known() {
            return Err(invalid(format!(
                "{at}.productFeatures[{f}].trial must be 0 or 1"
            )));
        }
    }
    Ok(())
}

/// Checks a package tree; returns how many products it holds.
fn check_package(package: &o::Merchandise, at: &str, depth: usize) -> Result<usize, Failure> {
    if depth > MAX_PACKAGE_DEPTH {
        return Err(invalid(format!(
            "{at}: packages nest at most {MAX_PACKAGE_DEPTH} levels deep"
        )));
    }
    let mut products = 0;
    for (k, product) in package.license_order_product_list.iter().enumerate() {
        check_product(product, &format!("{at}.licenseOrderProductList[{k}]"))?;
        products += 1;
    }
    for (k, child) in package.children.iter().flatten().enumerate() {
        products += check_package(child, &format!("{at}.children[{k}]"), depth + 1)?;
    }
    Ok(products)
}

fn apply(
    state: &mut State,
    req: &o::BatchOrderRequest,
    order: &o::LicenseOrder,
    plan: Plan<'_>,
    now: i64,
) -> o::BatchOrderResultItem {
    let order_id = format!("LO-{:06}", state.next_id());
    state.orders.insert(
        order_id.clone(),
        LicenseOrder {
            customer: order.customer_id().to_string(),
            order_type: order.order_type(),
        },
    );
    match plan {
        Plan::NewBuy(buy_order, targets) => {
            let origin = Origin {
                order: order_id.clone(),
                channel_code: req.channel_code.clone(),
                channel_order_id: req.channel_order_id.clone(),
                license_type: buy_order.license_type.clone(),
                customer: buy_order.customer_id.clone(),
                src_order: buy_order
                    .src_license_order_id
                    .clone()
                    .filter(|s| !s.trim().is_empty()),
                created: now,
            };
            for (num, entry) in targets {
                buy(state, buy_order, &origin, num, entry);
            }
        }
        Plan::DeleteAsset(nums) => {
            for num in nums {
                state.revoke_asset(num);
            }
        }
        Plan::DeleteProduct(targets) => {
            for (num, matches) in targets {
                if let Some(asset) = state.assets.get_mut(num) {
                    let keep = |p: &ProductRecord| !matches.iter().any(|m| m.hits(p));
                    asset.products.retain(keep);
                    for package in &mut asset.merchandises {
                        package.retain_products(&keep);
                    }
                    asset.updated = now;
                }
            }
        }
    }
    o::BatchOrderResultItem {
        sequence: order.sequence(),
        license_order_id: order_id,
        customer_id: order.customer_id().to_string(),
    }
}

/// Puts an asset entry's products and packages on asset `num`, creating the asset on its
/// first purchase.
fn buy(state: &mut State, order: &o::NewBuyOrder, origin: &Origin, num: &str, entry: &o::Asset) {
    if !state.assets.contains_key(num) {
        let id = format!("A-{}", state.next_id());
        state.asset_ids.insert(id.clone(), num.to_string());
        if let Some(ent) = state.enterprises.get_mut(&order.enterprise_global_id) {
            ent.assets.insert(num.to_string());
        }
        state.assets.insert(
            num.to_string(),
            Asset {
                id,
                num: num.to_string(),
                customer: order.customer_id.clone(),
                enterprise: order.enterprise_global_id.clone(),
                license_type: order.license_type.clone(),
                orders: Default::default(),
                extends: Vec::new(),
                limit_start: None,
                limit_end: None,
                lent_lock: false,
                locked: false,
                created: origin.created,
                updated: origin.created,
                holder: None,
                assigned: None,
                products: Vec::new(),
                merchandises: Vec::new(),
                lent_into: None,
            },
        );
    }
    let products: Vec<_> = entry
        .products
        .iter()
        .map(|p| ProductRecord {
            id: state.next_id(),
            origin: origin.clone(),
            product: p.clone(),
            merchandise: None,
        })
        .collect();
    let packages: Vec<_> = entry
        .merchandises
        .iter()
        .map(|m| package(state, origin, m, None))
        .collect();
    let asset = state
        .assets
        .get_mut(num)
        .expect("the asset exists: created above");
    asset.orders.insert(origin.order.clone());
    for extension in &entry.asset_extend_list {
        match asset
            .extends
            .iter_mut()
            .find(|e| e.extend_code == extension.extend_code)
        {
            Some(existing) => existing.extend_value.clone_from(&extension.extend_value),
            None => asset.extends.push(extension.clone()),
        }
    }
    asset.limit_start = entry.limit_start_date.or(asset.limit_start);
    asset.limit_end = entry.limit_end_date.or(asset.limit_end);
    if entry.borrowed_usb_key == Some(true) {
        asset.lent_lock = true;
    }
    asset.products.extend(products);
    asset.merchandises.extend(packages);
    asset.updated = origin.created;
}

fn package(
    state: &mut State,
    origin: &Origin,
    m: &o::Merchandise,
    parent: Option<i64>,
) -> MerchandiseRecord {
    let id = state.next_id();
    let products = m
        .license_order_product_list
        .iter()
        .map(|p| ProductRecord {
            id: state.next_id(),
            origin: origin.clone(),
            product: p.clone(),
            merchandise: Some(m.crm_product_id.clone()),
        })
        .collect();
    let children = m
        .children
        .iter()
        .flatten()
        .map(|c| package(state, origin, c, Some(id)))
        .collect();
    MerchandiseRecord {
        id,
        parent,
        origin: origin.clone(),
        num: m.merchandise_num.clone(),
        name: m.merchandise_name.clone(),
        parent_num: m.parent_merchandise_num.clone(),
        time_expression: m.time_duration_expression.clone(),
        products,
        children,
    }
}

/// Disables the named locks.
pub(crate) fn disable_locks(sim: &Shared, call: &Call) -> Result<Vec<o::LockResultItem>, Failure> {
    set_locked(sim, call, true)
}

/// Enables the named locks.
pub(crate) fn enable_locks(sim: &Shared, call: &Call) -> Result<Vec<o::LockResultItem>, Failure> {
    set_locked(sim, call, false)
}

/// Status per lock: 2 when no active asset has the number, 4 unless it is a refillable
/// or big-customer lock, 3 when it is a lent lock carrying lent rights (its state cannot
/// change while rights are lent into it), 1 otherwise (also when already in that state).
fn set_locked(sim: &Shared, call: &Call, locked: bool) -> Result<Vec<o::LockResultItem>, Failure> {
    let req: o::LockRequest = body(call)?;
    non_empty("operatorIdentity", &req.operator_identity)?;
    if req.asset_nums.is_empty() || req.asset_nums.len() > MAX_LOCKS {
        return Err(invalid(format!(
            "assetNums must have 1 to {MAX_LOCKS} lock numbers (has {})",
            req.asset_nums.len()
        )));
    }
    let mut guard = sim.state_mut();
    let state = &mut *guard;
    let now = sim.clock.now_ms();
    Ok(req
        .asset_nums
        .into_iter()
        .map(|num| {
            let status = match state.assets.get_mut(&num) {
                None => LockStatus::LockNotFound,
                Some(asset) if !asset.lock_state_changeable() => LockStatus::WrongLockType,
                Some(_) if state.loans.contains_key(&num) => LockStatus::OperationFailed,
                Some(asset) => {
                    asset.locked = locked;
                    asset.updated = now;
                    LockStatus::Success
                }
            };
            o::LockResultItem {
                asset_num: num,
                status,
            }
        })
        .collect())
}

/// The enterprise's assets of cloud license types, optionally only those with an
/// extension attribute `extendCode`.
pub(crate) fn list_virtual_assets(
    sim: &Shared,
    call: &Call,
) -> Result<Vec<o::VirtualAsset>, Failure> {
    let enterprise = call.path("enterpriseGlobalId");
    let extend_code = call.query("extendCode").filter(|c| !c.is_empty());
    let state = sim.state();
    let Some(ent) = state.enterprises.get(enterprise) else {
        return Err(invalid(format!("no enterprise {enterprise:?}")));
    };
    Ok(ent
        .assets
        .iter()
        .filter_map(|num| state.assets.get(num))
        .filter(|a| is_cloud_license(&a.license_type))
        .filter(|a| {
            extend_code.is_none_or(|code| {
                a.extends
                    .iter()
                    .any(|e| e.extend_code.as_deref() == Some(code))
            })
        })
        .map(virtual_asset)
        .collect())
}

fn virtual_asset(a: &Asset) -> o::VirtualAsset {
    o::VirtualAsset {
        id: a.id.clone(),
        license_type: a.license_type.clone(),
        asset_num: a.num.clone(),
        grantable: !a.lent_lock,
        customer_id: a.customer.clone(),
        key_shell_number: a.shell_number().to_string(),
        key_chip_type: KeyChipType::FifthGeneration,
        locked: a.locked,
        freezing: false,
        create_time: a.created,
        update_time: a.updated,
        limit_start_time: a.limit_start,
        limit_end_time: a.limit_end,
        assign_status: o::AssignStatus {
            id: a.id.clone(),
            assign_status: if a.holder.is_some() {
                "assigned"
            } else {
                "unassigned"
            }
            .to_string(),
            assign_member_id: a.holder.clone().unwrap_or_default(),
            create_time: a.assigned.unwrap_or(a.created).to_string(),
            update_time: Some(serde_json::Value::Null),
        },
        asset_limits: None,
        asset_extends: a
            .extends
            .iter()
            .map(|e| o::AssetExtend {
                extend_code: e.extend_code.clone().unwrap_or_default(),
                extend_value: e.extend_value.clone().unwrap_or_default(),
            })
            .collect(),
        borrowed_usb_key: a.lent_lock,
    }
}

/// `size` new numbers of the current region.
pub(crate) fn allocate_shell_nums(
    sim: &Shared,
    call: &Call,
) -> Result<Vec<o::ShellNumber>, Failure> {
    let req: o::AllocateShellNumsRequest = body(call)?;
    let size = req.size.get();
    if size > MAX_ALLOCATION {
        return Err(invalid(format!(
            "size must be at most {MAX_ALLOCATION} (is {size})"
        )));
    }
    let numbers = sim
        .allocator()
        .allocate(size)
        .ok_or_else(|| invalid("the asset numbers of this region are exhausted"))?;
    Ok(numbers.into_iter().map(o::ShellNumber).collect())
}
