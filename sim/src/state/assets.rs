//! Assets: revocation.

use super::*;

impl State {
    /// Revokes an asset: it disappears from every listing, its holder loses it, loans it
    /// takes part in end, and its number is never sold again.
    pub fn revoke_asset(&mut self, num: &str) {
        if self.loans.contains_key(num) {
            self.end_loan(num);
        }
        let Some(asset) = self.assets.remove(num) else {
            return;
        };
        if let Some(lock) = &asset.lent_into
            && let Some(loan) = self.loans.get_mut(lock)
        {
            loan.assets.remove(&asset.id);
            if loan.assets.is_empty() {
                self.end_loan(lock);
            }
        }
        if let Some(member) = asset.holder.as_ref().and_then(|h| self.members.get_mut(h)) {
            member.assets.remove(num);
        }
        if let Some(ent) = self.enterprises.get_mut(&asset.enterprise) {
            ent.assets.remove(num);
        }
        self.asset_ids.remove(&asset.id);
        self.revoked.insert(num.to_string());
    }
}
