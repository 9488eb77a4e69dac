//! Enterprises and their customers: creation, codes, removal.

use super::*;

impl State {
    /// A new enterprise main account; its code is derived from the name.
    pub fn new_enterprise(&mut self, name: &str) -> String {
        let n = self.next_id();
        let global_id = format!("EG-{n:06}");
        let stem: String = name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(12)
            .collect::<String>()
            .to_ascii_lowercase();
        // Unique by construction: a name can spell another enterprise's derived code
        // (`zede11`), so the fallback is checked too, and extended until it is free.
        let mut code = if stem.is_empty() || self.enterprise_codes.contains(&stem) {
            format!("{stem}e{n}")
        } else {
            stem.clone()
        };
        let mut k = 1;
        while self.enterprise_codes.contains(&code) {
            code = format!("{stem}e{n}n{k}");
            k += 1;
        }
        self.enterprise_codes.insert(code.clone());
        self.enterprise_by_name
            .insert(name.to_string(), global_id.clone());
        self.enterprises.insert(
            global_id.clone(),
            Enterprise {
                id: 3000 + n,
                name: name.to_string(),
                code,
                customers: Vec::new(),
                members: Vec::new(),
                assets: BTreeSet::new(),
                trial_members: 0,
            },
        );
        global_id
    }

    /// A new customer of an enterprise; the enterprise's first customer is its default.
    pub fn new_customer(&mut self, enterprise: &str, new: NewCustomer) -> String {
        let id = format!("C{}", 100_000 + self.next_id());
        let Some(ent) = self.enterprises.get_mut(enterprise) else {
            unreachable!("customers are only created for existing enterprises");
        };
        let is_default = ent.customers.is_empty();
        ent.customers.push(id.clone());
        if let Some(crm) = &new.crm {
            self.customer_by_crm.insert(crm.clone(), id.clone());
        }
        let crm = new.crm;
        if let Some(channel) = &new.channel {
            self.customer_by_channel.insert(channel, id.clone());
        }
        self.customers.insert(
            id.clone(),
            Customer {
                id: id.clone(),
                enterprise: enterprise.to_string(),
                name: new.name,
                branch: new.branch,
                address: new.address,
                crm,
                channel: new.channel,
                is_default,
            },
        );
        id
    }

    /// Removes an enterprise and everything of it: customers, their orders, its assets
    /// (their numbers are never sold again, as if revoked), employees and loans. Returns
    /// whether there was such an enterprise.
    pub fn remove_enterprise(&mut self, global_id: &str) -> bool {
        let Some(ent) = self.enterprises.remove(global_id) else {
            return false;
        };
        if self.enterprise_by_name.get(&ent.name).map(String::as_str) == Some(global_id) {
            self.enterprise_by_name.remove(&ent.name);
        }
        self.enterprise_codes.remove(&ent.code);
        let locks: Vec<String> = self
            .loans
            .iter()
            .filter(|(lock, loan)| ent.assets.contains(*lock) || ent.members.contains(&loan.member))
            .map(|(lock, _)| lock.clone())
            .collect();
        for lock in locks {
            self.end_loan(&lock);
        }
        for num in &ent.assets {
            if let Some(asset) = self.assets.remove(num) {
                self.asset_ids.remove(&asset.id);
                self.revoked.insert(num.clone());
            }
        }
        for id in &ent.members {
            let Some(member) = self.members.remove(id) else {
                continue;
            };
            let account = member.account.to_ascii_lowercase();
            if let Some(ids) = self.accounts.get_mut(&account) {
                ids.remove(&member.enterprise);
                if ids.is_empty() {
                    self.accounts.remove(&account);
                }
            }
        }
        let customers: HashSet<&String> = ent.customers.iter().collect();
        for id in &ent.customers {
            if let Some(customer) = self.customers.remove(id) {
                if let Some(crm) = &customer.crm {
                    self.customer_by_crm.remove(crm);
                }
                if let Some(channel) = &customer.channel {
                    self.customer_by_channel.remove(channel);
                }
            }
        }
        self.orders
            .retain(|_, order| !customers.contains(&order.customer));
        true
    }
}
