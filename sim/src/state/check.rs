//! The checks of a state read from a document (an import, the state file): every
//! reference leads to a record that points back, ids are unique, and the indexes that are
//! not exported are rebuilt.

use std::ops::RangeInclusive;

use super::*;

/// The keys of a map in order, so that the first broken rule reported is always the same.
fn keys<V>(map: &HashMap<String, V>) -> Vec<String> {
    let mut keys: Vec<_> = map.keys().cloned().collect();
    keys.sort_unstable();
    keys
}

/// The counter value an id of the simulator's own forms was made from (`MG-000012` →
/// 12); ids of other forms (an imported document may use any) say nothing.
fn id_number(id: &str) -> Option<i64> {
    ["EG-", "MG-", "LO-", "A-"]
        .iter()
        .find_map(|prefix| id.strip_prefix(prefix))
        .or_else(|| id.strip_prefix('C'))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<i64>().ok())
        .map(|n| if id.starts_with('C') { n - 100_000 } else { n })
}

/// The state's id counter, which every id of the simulator's own forms must be below: an
/// id numbered above it would be handed out again.
#[derive(Clone, Copy)]
struct Counter(i64);

impl Counter {
    fn of(sequence: i64) -> Result<Self, Invalid> {
        if sequence < 0 {
            return Err(Invalid::new("state.sequence", "must not be negative"));
        }
        Ok(Self(sequence))
    }

    /// Refuses `id` if the counter has not reached its number yet; `at` names it (made
    /// only then, as this runs once per record of a 50,000-asset state).
    fn check(self, id: &str, at: impl FnOnce() -> String) -> Result<(), Invalid> {
        match id_number(id) {
            Some(n) if n > self.0 => Err(Invalid::new(
                at(),
                format!(
                    "{id} is numbered {n}, above state.sequence ({}): a later id would repeat it",
                    self.0
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// Every (enterprise, id) pair the enterprises' `list` holds, to look up (a list may be
/// 100,000 employees long).
fn listed(
    enterprises: &HashMap<String, Enterprise>,
    list: fn(&Enterprise) -> &Vec<String>,
) -> HashSet<(&str, &str)> {
    enterprises
        .iter()
        .flat_map(|(id, e)| list(e).iter().map(move |c| (id.as_str(), c.as_str())))
        .collect()
}

/// Checks that every record `list` names (`what` it must be: "a customer") exists, belongs
/// to the enterprise (`points_back`) and is named once.
fn check_list(
    at: &str,
    field: &str,
    list: &[String],
    what: &str,
    points_back: impl Fn(&str) -> bool,
) -> Result<(), Invalid> {
    let mut seen = HashSet::default();
    for (i, item) in list.iter().enumerate() {
        if !points_back(item) || !seen.insert(item) {
            return Err(Invalid::new(
                format!("{at}.{field}[{i}]"),
                format!("{item:?} is not {what} of this enterprise, or listed twice"),
            ));
        }
    }
    Ok(())
}

impl State {
    /// Checks an imported state and rebuilds everything it does not export (the indexes,
    /// the employees' assets and loans, each enterprise's assets and trial members, the
    /// default customers). Every reference must lead to a record that points back, ids
    /// must be unique and below the id counter, and asset numbers must have been handed
    /// out by `allocator`; the first broken rule is reported by its JSON path.
    pub fn reindex(&mut self, allocator: &Allocator) -> Result<(), Invalid> {
        let counter = Counter::of(self.sequence)?;
        self.clear_indexes();
        self.index_enterprises(counter)?;
        // Taken out while their lists are looked up, as the records checked against them
        // are indexed meanwhile.
        let enterprises = std::mem::take(&mut self.enterprises);
        let indexed = self.index_records(&enterprises, counter);
        self.enterprises = enterprises;
        indexed?;
        // Checked after the records, so that a record naming an unknown enterprise is
        // reported as such rather than as missing from a list.
        self.check_enterprise_lists()?;
        self.clear_holdings();
        self.index_assets(allocator, counter)?;
        self.check_revoked(allocator)?;
        self.index_loans()
    }

    fn clear_indexes(&mut self) {
        for index in [
            &mut self.enterprise_by_name,
            &mut self.customer_by_crm,
            &mut self.asset_ids,
        ] {
            index.clear();
        }
        self.enterprise_codes.clear();
        self.customer_by_channel.clear();
        self.accounts.clear();
    }

    /// Indexes the enterprises by name and code, each of which must be unique.
    fn index_enterprises(&mut self, counter: Counter) -> Result<(), Invalid> {
        for id in keys(&self.enterprises) {
            let at = format!("state.enterprises.{id}");
            counter.check(&id, || at.clone())?;
            let ent = &self.enterprises[&id];
            if let Some(other) = self.enterprise_by_name.insert(ent.name.clone(), id.clone()) {
                return Err(Invalid::new(
                    format!("{at}.name"),
                    format!("{:?} is also the name of enterprise {other}", ent.name),
                ));
            }
            if ent.code.is_empty() || !self.enterprise_codes.insert(ent.code.clone()) {
                return Err(Invalid::new(
                    format!("{at}.code"),
                    format!("{:?} is empty or the code of another enterprise", ent.code),
                ));
            }
        }
        Ok(())
    }

    /// Checks and indexes the customers, the orders and the employees, in that order, each
    /// against the `enterprises` (the state's, taken out of it) that must list it.
    fn index_records(
        &mut self,
        enterprises: &HashMap<String, Enterprise>,
        counter: Counter,
    ) -> Result<(), Invalid> {
        self.index_customers(&listed(enterprises, |e| &e.customers), counter)?;
        for ent in enterprises.values() {
            for (i, id) in ent.customers.iter().enumerate() {
                if let Some(customer) = self.customers.get_mut(id) {
                    customer.is_default = i == 0;
                }
            }
        }
        self.check_orders(counter)?;
        self.index_members(&listed(enterprises, |e| &e.members), counter)
    }

    /// Indexes the customers by CRM id and by channel customer, each bound to one at most.
    fn index_customers(
        &mut self,
        listed: &HashSet<(&str, &str)>,
        counter: Counter,
    ) -> Result<(), Invalid> {
        for id in keys(&self.customers) {
            let at = format!("state.customers.{id}");
            counter.check(&id, || at.clone())?;
            let customer = &self.customers[&id];
            if customer.id != id {
                return Err(Invalid::new(format!("{at}.id"), "differs from its key"));
            }
            if !listed.contains(&(customer.enterprise.as_str(), id.as_str())) {
                return Err(Invalid::new(
                    format!("{at}.enterprise"),
                    format!(
                        "no enterprise {:?} lists this customer among its customers",
                        customer.enterprise
                    ),
                ));
            }
            if let Some(crm) = &customer.crm
                && let Some(other) = self.customer_by_crm.insert(crm.clone(), id.clone())
            {
                return Err(Invalid::new(
                    format!("{at}.crm"),
                    format!("{crm:?} is also the CRM id of customer {other}"),
                ));
            }
            if let Some(channel) = &customer.channel
                && let Some(other) = self.customer_by_channel.insert(channel, id.clone())
            {
                return Err(Invalid::new(
                    format!("{at}.channel"),
                    format!("the channel customer is also bound to customer {other}"),
                ));
            }
        }
        Ok(())
    }

    fn check_orders(&self, counter: Counter) -> Result<(), Invalid> {
        for id in keys(&self.orders) {
            let at = format!("state.orders.{id}");
            counter.check(&id, || at.clone())?;
            let customer = &self.orders[&id].customer;
            if !self.customers.contains_key(customer) {
                return Err(Invalid::new(
                    format!("{at}.customer"),
                    format!("no customer {customer:?}"),
                ));
            }
        }
        Ok(())
    }

    /// Indexes the employees by account, which names one employee of an enterprise at most.
    fn index_members(
        &mut self,
        listed: &HashSet<(&str, &str)>,
        counter: Counter,
    ) -> Result<(), Invalid> {
        for id in keys(&self.members) {
            let at = format!("state.members.{id}");
            counter.check(&id, || at.clone())?;
            let member = &self.members[&id];
            if member.global_id != id {
                return Err(Invalid::new(
                    format!("{at}.globalId"),
                    "differs from its key",
                ));
            }
            if !listed.contains(&(member.enterprise.as_str(), id.as_str())) {
                return Err(Invalid::new(
                    format!("{at}.enterprise"),
                    format!(
                        "no enterprise {:?} lists this employee among its members",
                        member.enterprise
                    ),
                ));
            }
            if member.account.is_empty() {
                return Err(Invalid::new(format!("{at}.account"), "must not be empty"));
            }
            let same = self
                .accounts
                .entry(member.account.to_ascii_lowercase())
                .or_default();
            if let Some(other) = same.get(&member.enterprise) {
                return Err(Invalid::new(
                    format!("{at}.account"),
                    format!(
                        "{:?} is also the account of employee {other} of the same enterprise",
                        member.account
                    ),
                ));
            }
            same.insert(member.enterprise.clone(), id.clone());
        }
        Ok(())
    }

    /// Checks that each enterprise's lists name its own customers and employees, once each.
    fn check_enterprise_lists(&self) -> Result<(), Invalid> {
        for id in keys(&self.enterprises) {
            let at = format!("state.enterprises.{id}");
            let ent = &self.enterprises[&id];
            check_list(&at, "customers", &ent.customers, "a customer", |c| {
                self.customers.get(c).is_some_and(|c| c.enterprise == id)
            })?;
            check_list(&at, "members", &ent.members, "an employee", |m| {
                self.members.get(m).is_some_and(|m| m.enterprise == id)
            })?;
        }
        Ok(())
    }

    /// Forgets what the assets and loans rebuild (who holds and borrows what, each
    /// enterprise's assets) and counts each enterprise's trial members anew.
    fn clear_holdings(&mut self) {
        for member in self.members.values_mut() {
            member.assets.clear();
            member.borrow = None;
        }
        for ent in self.enterprises.values_mut() {
            ent.assets.clear();
            ent.trial_members = 0;
        }
        for member in self.members.values() {
            if member.trial
                && let Some(ent) = self.enterprises.get_mut(&member.enterprise)
            {
                ent.trial_members += 1;
            }
        }
    }

    /// Checks every asset, indexes it by id, and gives it to its enterprise and holder.
    fn index_assets(&mut self, allocator: &Allocator, counter: Counter) -> Result<(), Invalid> {
        for num in keys(&self.assets) {
            let at = format!("state.assets.{num}");
            let asset = &self.assets[&num];
            self.check_asset_number(&at, &num, asset, allocator)?;
            counter.check(&asset.id, || format!("{at}.id"))?;
            if let Some(other) = self.asset_ids.insert(asset.id.clone(), num.clone()) {
                return Err(Invalid::new(
                    format!("{at}.id"),
                    format!("{:?} is also the id of asset {other}", asset.id),
                ));
            }
            self.check_asset_references(&at, asset)?;
            if let Some(holder) = &asset.holder
                && let Some(member) = self.members.get_mut(holder)
            {
                member.assets.insert(num.clone());
            }
            if let Some(ent) = self.enterprises.get_mut(&asset.enterprise) {
                ent.assets.insert(num.clone());
            }
        }
        Ok(())
    }

    /// An asset's number: its key, handed out by the allocator, and not revoked.
    fn check_asset_number(
        &self,
        at: &str,
        num: &str,
        asset: &Asset,
        allocator: &Allocator,
    ) -> Result<(), Invalid> {
        if asset.num != num {
            return Err(Invalid::new(format!("{at}.num"), "differs from its key"));
        }
        if !allocator.allocated(num) {
            return Err(Invalid::new(
                format!("{at}.num"),
                "not a number the allocator has handed out (see allocator.last)",
            ));
        }
        if self.revoked.contains(num) {
            return Err(Invalid::new(format!("{at}.num"), "is also revoked"));
        }
        Ok(())
    }

    /// Everything an asset names: its enterprise, a customer and a holder of that
    /// enterprise, its orders, and its products' and packages' origins.
    fn check_asset_references(&self, at: &str, asset: &Asset) -> Result<(), Invalid> {
        if !self.enterprises.contains_key(&asset.enterprise) {
            return Err(Invalid::new(
                format!("{at}.enterprise"),
                format!("no enterprise {:?}", asset.enterprise),
            ));
        }
        if self
            .customers
            .get(&asset.customer)
            .is_none_or(|c| c.enterprise != asset.enterprise)
        {
            return Err(Invalid::new(
                format!("{at}.customer"),
                format!(
                    "no customer {:?} of enterprise {}",
                    asset.customer, asset.enterprise
                ),
            ));
        }
        for (i, order) in asset.orders.iter().enumerate() {
            if !self.orders.contains_key(order) {
                return Err(Invalid::new(
                    format!("{at}.orders[{i}]"),
                    format!("no order {order:?}"),
                ));
            }
        }
        if let Some(holder) = &asset.holder
            && self
                .members
                .get(holder)
                .is_none_or(|m| m.enterprise != asset.enterprise)
        {
            return Err(Invalid::new(
                format!("{at}.holder"),
                format!("no employee {holder:?} of enterprise {}", asset.enterprise),
            ));
        }
        for (i, product) in asset.products.iter().enumerate() {
            self.check_product(&format!("{at}.products[{i}]"), product)?;
        }
        for (i, package) in asset.merchandises.iter().enumerate() {
            self.check_package(&format!("{at}.merchandises[{i}]"), package)?;
        }
        Ok(())
    }

    fn check_revoked(&self, allocator: &Allocator) -> Result<(), Invalid> {
        let mut revoked: Vec<_> = self.revoked.iter().collect();
        revoked.sort_unstable();
        for (i, num) in revoked.into_iter().enumerate() {
            if !allocator.allocated(num) {
                return Err(Invalid::new(
                    format!("state.revoked[{i}]"),
                    format!("{num:?} is not a number the allocator has handed out"),
                ));
            }
        }
        Ok(())
    }

    /// Checks every loan (an active lent lock, lent to one employee of its enterprise,
    /// holding other assets of that enterprise, none lent twice) and marks what it lends
    /// and who borrows.
    fn index_loans(&mut self) -> Result<(), Invalid> {
        for asset in self.assets.values_mut() {
            asset.lent_into = None;
        }
        for lock in keys(&self.loans) {
            let at = format!("state.loans.{lock}");
            let loan = &self.loans[&lock];
            let Some(lent_lock) = self.assets.get(&lock).filter(|a| a.lent_lock) else {
                return Err(Invalid::new(at, "no active lent lock has this number"));
            };
            let enterprise = lent_lock.enterprise.clone();
            self.check_borrower(&at, &loan.member, &enterprise)?;
            if loan.assets.is_empty() {
                return Err(Invalid::new(format!("{at}.assets"), "must not be empty"));
            }
            for (i, id) in loan.assets.iter().enumerate() {
                let asset = self
                    .asset_ids
                    .get(id)
                    .filter(|n| **n != lock)
                    .and_then(|n| self.assets.get_mut(n))
                    .filter(|a| a.enterprise == enterprise);
                let Some(asset) = asset.filter(|a| a.lent_into.is_none()) else {
                    return Err(Invalid::new(
                        format!("{at}.assets[{i}]"),
                        format!(
                            "no other asset {id:?} of enterprise {enterprise}, or one already lent"
                        ),
                    ));
                };
                asset.lent_into = Some(lock.clone());
            }
            if let Some(m) = self.members.get_mut(&loan.member) {
                m.borrow = Some(lock.clone());
            }
        }
        Ok(())
    }

    /// A loan's employee: one of the lock's `enterprise`, borrowing with no other lock.
    fn check_borrower(&self, at: &str, member: &str, enterprise: &str) -> Result<(), Invalid> {
        match self.members.get(member) {
            Some(m) if m.enterprise != enterprise => Err(Invalid::new(
                format!("{at}.member"),
                format!("not an employee of the lock's enterprise {enterprise}"),
            )),
            Some(m) if m.borrow.is_some() => Err(Invalid::new(
                format!("{at}.member"),
                format!("{member} already borrows with another lent lock"),
            )),
            Some(_) => Ok(()),
            None => Err(Invalid::new(
                format!("{at}.member"),
                format!("no employee {member:?}"),
            )),
        }
    }

    fn check_product(&self, at: &str, product: &ProductRecord) -> Result<(), Invalid> {
        self.check_origin(at, &product.origin)?;
        if product.id > self.sequence {
            return Err(Invalid::new(
                format!("{at}.id"),
                format!("{} is above state.sequence ({})", product.id, self.sequence),
            ));
        }
        Ok(())
    }

    fn check_package(&self, at: &str, package: &MerchandiseRecord) -> Result<(), Invalid> {
        self.check_origin(at, &package.origin)?;
        if package.id > self.sequence {
            return Err(Invalid::new(
                format!("{at}.id"),
                format!("{} is above state.sequence ({})", package.id, self.sequence),
            ));
        }
        for (i, product) in package.products.iter().enumerate() {
            self.check_product(&format!("{at}.products[{i}]"), product)?;
        }
        for (i, child) in package.children.iter().enumerate() {
            self.check_package(&format!("{at}.children[{i}]"), child)?;
        }
        Ok(())
    }

    fn check_origin(&self, at: &str, origin: &Origin) -> Result<(), Invalid> {
        if !self.orders.contains_key(&origin.order) {
            return Err(Invalid::new(
                format!("{at}.origin.order"),
                format!("no order {:?}", origin.order),
            ));
        }
        if !self.customers.contains_key(&origin.customer) {
            return Err(Invalid::new(
                format!("{at}.origin.customer"),
                format!("no customer {:?}", origin.customer),
            ));
        }
        Ok(())
    }

    /// Checks every employee added through `addMembers` (a trial member account) against
    /// the field rules that operation applies (after [`State::reindex`], so every
    /// reference leads somewhere): an import can hold no such employee the services would
    /// have refused. The accounts `createEnterprise` makes are the platform's own and have
    /// no password. The first broken rule is named by its JSON path
    /// (`state.members.MG-000003.password`).
    pub fn check_fields(&self, password_length: &RangeInclusive<usize>) -> Result<(), Invalid> {
        use serde_json::{Map, Value};
        for id in keys(&self.members) {
            let member = &self.members[&id];
            if !member.trial {
                continue;
            }
            let code = self
                .enterprises
                .get(&member.enterprise)
                .map_or("", |e| e.code.as_str());
            let mut fields = Map::new();
            fields.insert("userName".into(), Value::from(member.account.clone()));
            fields.insert("name".into(), Value::from(member.name.clone()));
            fields.insert("password".into(), Value::from(member.password.clone()));
            if let Some(remark) = &member.remark {
                fields.insert("remark".into(), Value::from(remark.clone()));
            }
            if let Some(mobile) = &member.mobile {
                fields.insert("passwordMobile".into(), Value::from(mobile.clone()));
            }
            if let Some(department) = member.department {
                fields.insert("departmentId".into(), Value::from(department));
            }
            rules::member_fields(&fields, code)
                .and_then(|()| rules::password(&fields, password_length))
                .map_err(|broken| {
                    // The document's names for the request's fields.
                    let field = match broken.field {
                        "userName" => "account",
                        "passwordMobile" => "mobile",
                        "departmentId" => "department",
                        other => other,
                    };
                    let message = broken.message.unwrap_or_default();
                    let message = if message.is_empty() {
                        broken.cause
                    } else {
                        format!("{message} ({})", broken.cause)
                    };
                    Invalid::new(
                        format!("state.members.{id}.{field}"),
                        format!("{message} (code {} when an employee is added)", broken.code),
                    )
                })?;
        }
        Ok(())
    }
}
