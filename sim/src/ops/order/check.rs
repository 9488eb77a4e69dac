//! The checks of one order of a batch, against the state and the orders before it.

use super::*;

/// One order of a batch under check, with its place in the batch: every cause names the
/// field it blames by that place, so a caller can find it in a 50,000-order batch.
pub(super) struct OrderCheck<'s, 'r> {
    pub(super) state: &'s State,
    pub(super) i: usize,
    pub(super) order: &'r o::LicenseOrder,
}

impl<'s, 'r> OrderCheck<'s, 'r> {
    pub(super) fn at(&self, field: &str) -> String {
        format!("orderList[{}].{field}", self.i)
    }

    pub(super) fn at_asset(&self, j: usize, field: &str) -> String {
        format!("orderList[{}].assets[{j}].{field}", self.i)
    }

    /// typify leaves the enumerations open (`Unknown`) so that the SDK can read values
    /// added later; an order has to be applied, so here they are closed, as in the spec.
    /// (`orderType` is closed already: it picks the order's shape.)
    pub(super) fn known_values(&self) -> Result<(), Failure> {
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
    pub(super) fn customer(&self) -> Result<(), Failure> {
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
    pub(super) fn source_order(&self) -> Result<Option<&'r str>, Failure> {
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
    pub(super) fn asset_entries(&self, seen: &mut HashSet<&'r str>) -> Result<(), Failure> {
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
    pub(super) fn owned(&self, num: &str) -> Result<&'s Asset, Failure> {
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
    pub(super) fn new_buy(
        &self,
        order: &'r o::NewBuyOrder,
        allocator: &Allocator,
        copies: &mut usize,
    ) -> Result<Plan<'r>, Failure> {
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
            }
        }
        Ok(Plan::NewBuy)
    }

    /// The products and packages of a `new_buy` entry; returns how many products they
    /// hold.
    pub(super) fn products_sold(&self, j: usize, asset: &o::Asset) -> Result<usize, Failure> {
        let at = |field: &str| self.at_asset(j, field);
        let mut products = 0;
        for (k, product) in asset.products.iter().enumerate() {
            check_product(product, &|| format!("{}[{k}]", at("products")))?;
            products += 1;
        }
        for (k, package) in asset.merchandises.iter().enumerate() {
            products += check_package(package, &|| format!("{}[{k}]", at("merchandises")), 1)?;
        }
        Ok(products)
    }

    /// A number a `new_buy` may sell: one the platform handed out, never revoked
    /// (revocation is for good), and, when sold before, to this customer under the same
    /// license type, since an asset has one.
    pub(super) fn sellable(
        &self,
        allocator: &Allocator,
        j: usize,
        num: &str,
    ) -> Result<(), Failure> {
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
    pub(super) fn delete_asset(
        &self,
        order: &'r o::DeleteAssetOrder,
        src: Option<&str>,
    ) -> Result<Plan<'r>, Failure> {
        let mut targets = Vec::new();
        for num in order.assets.iter().flat_map(|a| &a.asset_nos) {
            let asset = self.owned(num)?;
            if let Some(src) = src.filter(|src| !asset.orders.contains(src)) {
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
    pub(super) fn delete_product(
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
    pub(super) fn unmatched(&self, num: &str, m: &Match<'_>, src: Option<&str>) -> Failure {
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

/// Where a checked field is in the batch, written out only when a cause names it: a
/// batch of 50,000 orders has hundreds of thousands of products, nearly always all good.
pub(super) type At<'a> = &'a dyn Fn() -> String;

/// The enumerations typify leaves open (`Unknown`) are closed here, as in the spec.
pub(super) fn check_product(product: &o::Product, at: At<'_>) -> Result<(), Failure> {
    if !product.trial.is_known() {
        return Err(invalid(format!("{}.trial must be 0 or 1", at())));
    }
    for (f, feature) in product.product_features.iter().enumerate() {
        if !feature.trial.is_known() {
            return Err(invalid(format!(
                "{}.productFeatures[{f}].trial must be 0 or 1",
                at()
            )));
        }
    }
    Ok(())
}

/// Checks a package tree; returns how many products it holds.
pub(super) fn check_package(
    package: &o::Merchandise,
    at: At<'_>,
    depth: usize,
) -> Result<usize, Failure> {
    if depth > MAX_PACKAGE_DEPTH {
        return Err(invalid(format!(
            "{}: packages nest at most {MAX_PACKAGE_DEPTH} levels deep",
            at()
        )));
    }
    let mut products = 0;
    for (k, product) in package.license_order_product_list.iter().enumerate() {
        check_product(product, &|| {
            format!("{}.licenseOrderProductList[{k}]", at())
        })?;
        products += 1;
    }
    for (k, child) in package.children.iter().flatten().enumerate() {
        products += check_package(child, &|| format!("{}.children[{k}]", at()), depth + 1)?;
    }
    Ok(products)
}
