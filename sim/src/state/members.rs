//! Employees and their loans.

use super::*;

impl State {
    /// A new employee of an enterprise, created at `now` (the simulator clock).
    pub fn new_member(&mut self, enterprise: &str, new: NewMember, now: i64) -> String {
        let n = self.next_id();
        let global_id = format!("MG-{n:06}");
        let Some(ent) = self.enterprises.get_mut(enterprise) else {
            unreachable!("members are only created for existing enterprises");
        };
        ent.members.push(global_id.clone());
        if new.trial {
            ent.trial_members += 1;
        }
        self.accounts
            .entry(new.account.to_ascii_lowercase())
            .or_default()
            .insert(enterprise.to_string(), global_id.clone());
        self.members.insert(
            global_id.clone(),
            Member {
                id: 1000 + n,
                user_id: 2000 + n,
                global_id: global_id.clone(),
                enterprise: enterprise.to_string(),
                account: new.account,
                password: new.password,
                name: new.name,
                department: new.department,
                remark: new.remark,
                mobile: new.mobile,
                trial: new.trial,
                created: now,
                updated: now,
                assets: BTreeSet::new(),
                borrow: None,
            },
        );
        global_id
    }

    /// The employees with this account (case-insensitive), in any enterprise.
    pub fn members_with_account(&self, account: &str) -> impl Iterator<Item = &Member> {
        self.accounts
            .get(&account.to_ascii_lowercase())
            .into_iter()
            .flat_map(|by_enterprise| by_enterprise.values())
            .filter_map(|id| self.members.get(id))
    }

    /// Whether an employee of `enterprise` has this account (case-insensitive).
    pub fn has_account(&self, enterprise: &str, account: &str) -> bool {
        self.accounts
            .get(&account.to_ascii_lowercase())
            .is_some_and(|by_enterprise| by_enterprise.contains_key(enterprise))
    }

    /// Ends the loan held by a lent lock: the lent assets get their rights back.
    pub fn end_loan(&mut self, lock: &str) {
        let Some(loan) = self.loans.remove(lock) else {
            return;
        };
        for id in &loan.assets {
            if let Some(asset) = self.asset_ids.get(id).and_then(|n| self.assets.get_mut(n)) {
                asset.lent_into = None;
            }
        }
        if let Some(member) = self.members.get_mut(&loan.member) {
            member.borrow = None;
        }
    }

    /// Removes an employee: its assets are unassigned (at `now`) and its loan ends.
    pub fn remove_member(&mut self, global_id: &str, now: i64) {
        let Some(member) = self.members.remove(global_id) else {
            return;
        };
        if let Some(lock) = &member.borrow {
            self.end_loan(lock);
        }
        let account = member.account.to_ascii_lowercase();
        if let Some(ids) = self.accounts.get_mut(&account) {
            ids.remove(&member.enterprise);
            if ids.is_empty() {
                self.accounts.remove(&account);
            }
        }
        for num in &member.assets {
            if let Some(asset) = self.assets.get_mut(num) {
                asset.holder = None;
                asset.assigned = Some(now);
            }
        }
        if let Some(ent) = self.enterprises.get_mut(&member.enterprise) {
            ent.members.retain(|m| m != global_id);
            if member.trial {
                ent.trial_members = ent.trial_members.saturating_sub(1);
            }
        }
    }
}
