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

impl State {
    /// Checks an imported state and rebuilds everything it does not export (the indexes,
    /// the employees' assets and loans, each enterprise's assets and trial members, the
    /// default customers). Every reference must lead to a record that points back, ids
    /// must be unique and below the id counter, and asset numbers must have been handed
    /// out by `allocator`; the first broken rule is reported by its JSON path.
    pub fn reindex(&mut self, allocator: &Allocator) -> Result<(), Invalid> {
        let counter = self.sequence;
        if counter < 0 {
            return Err(Invalid::new("state.sequence", "must not be negative"));
        }
        let below_counter = |path: String, id: &str, n: Option<i64>| match n {
            Some(n) if n > counter => Err(Invalid::new(
                path,
                format!(
                    "{id} is numbered {n}, above state.sequence ({counter}): a later id would repeat it"
                ),
            )),
            _ => Ok(()),
        };
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

        for id in keys(&self.enterprises) {
            let at = format!("state.enterprises.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
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

        // Who each enterprise lists, to look up (a list may be 100,000 employees long).
        let enterprises = std::mem::take(&mut self.enterprises);
        let listed = |list: fn(&Enterprise) -> &Vec<String>| -> HashSet<(&str, &str)> {
            enterprises
                .iter()
                .flat_map(|(id, e)| list(e).iter().map(move |c| (id.as_str(), c.as_str())))
                .collect()
        };
        let listed_customers = listed(|e| &e.customers);
        let listed_members = listed(|e| &e.members);

        for id in keys(&self.customers) {
            let at = format!("state.customers.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
            let customer = &self.customers[&id];
            if customer.id != id {
                return Err(Invalid::new(format!("{at}.id"), "differs from its key"));
            }
            if !listed_customers.contains(&(customer.enterprise.as_str(), id.as_str())) {
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
        for ent in enterprises.values() {
            for (i, id) in ent.customers.iter().enumerate() {
                if let Some(customer) = self.customers.get_mut(id) {
                    customer.is_default = i == 0;
                }
            }
        }

        for id in keys(&self.orders) {
            let at = format!("state.orders.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
            let customer = &self.orders[&id].customer;
            if !self.customers.contains_key(customer) {
                return Err(Invalid::new(
                    format!("{at}.customer"),
                    format!("no customer {customer:?}"),
                ));
            }
        }

        for id in keys(&self.members) {
            let at = format!("state.members.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
            let member = &self.members[&id];
            if member.global_id != id {
                return Err(Invalid::new(
                    format!("{at}.globalId"),
                    "differs from its key",
                ));
            }
            if !listed_members.contains(&(member.enterprise.as_str(), id.as_str())) {
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
        drop((listed_customers, listed_members));
        self.enterprises = enterprises;

        // Lists the records above point back to: checked after them, so that a record
        // naming an unknown enterprise is reported as such.
        for id in keys(&self.enterprises) {
            let at = format!("state.enterprises.{id}");
            let ent = &self.enterprises[&id];
            let mut seen = HashSet::default();
            for (i, customer) in ent.customers.iter().enumerate() {
                let points_back = self
                    .customers
                    .get(customer)
                    .is_some_and(|c| c.enterprise == id);
                if !points_back || !seen.insert(customer) {
                    return Err(Invalid::new(
                        format!("{at}.customers[{i}]"),
                        format!(
                            "{customer:?} is not a customer of this enterprise, or listed twice"
                        ),
                    ));
                }
            }
            let mut seen = HashSet::default();
            for (i, member) in ent.members.iter().enumerate() {
                let points_back = self.members.get(member).is_some_and(|m| m.enterprise == id);
                if !points_back || !seen.insert(member) {
                    return Err(Invalid::new(
                        format!("{at}.members[{i}]"),
                        format!(
                            "{member:?} is not an employee of this enterprise, or listed twice"
                        ),
                    ));
                }
            }
        }

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

        for num in keys(&self.assets) {
            let at = format!("state.assets.{num}");
            let asset = &self.assets[&num];
            if asset.num != num {
                return Err(Invalid::new(format!("{at}.num"), "differs from its key"));
            }
            if !allocator.allocated(&num) {
                return Err(Invalid::new(
                    format!("{at}.num"),
                    "not a number the allocator has handed out (see allocator.last)",
                ));
            }
            if self.revoked.contains(&num) {
                return Err(Invalid::new(format!("{at}.num"), "is also revoked"));
            }
            below_counter(format!("{at}.id"), &asset.id, id_number(&asset.id))?;
            if let Some(other) = self.asset_ids.insert(asset.id.clone(), num.clone()) {
                return Err(Invalid::new(
                    format!("{at}.id"),
                    format!("{:?} is also the id of asset {other}", asset.id),
                ));
            }
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
            if let Some(holder) = asset.holder.clone()
                && let Some(member) = self.members.get_mut(&holder)
            {
                member.assets.insert(num.clone());
            }
            if let Some(ent) = self.enterprises.get_mut(&asset.enterprise) {
                ent.assets.insert(num.clone());
            }
        }

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
            match self.members.get(&loan.member) {
                Some(m) if m.enterprise != enterprise => {
                    return Err(Invalid::new(
                        format!("{at}.member"),
                        format!("not an employee of the lock's enterprise {enterprise}"),
                    ));
                }
                Some(m) if m.borrow.is_some() => {
                    return Err(Invalid::new(
                        format!("{at}.member"),
                        format!("{} already borrows with another lent lock", loan.member),
                    ));
                }
                Some(_) => {}
                None => {
                    return Err(Invalid::new(
                        format!("{at}.member"),
                        format!("no employee {:?}", loan.member),
                    ));
                }
            }
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
            let member = loan.member.clone();
            if let Some(m) = self.members.get_mut(&member) {
                m.borrow = Some(lock.clone());
            }
        }
        Ok(())
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
