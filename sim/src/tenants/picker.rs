//! What the simulator's console reads of the tenants: the rows of its picker, and a
//! session of one tenant's console for the simulator's own admin.

use crate::{
    console::{Directory, Row},
    state::Region,
};

use super::Registry;

impl Directory for Registry {
    fn rows(&self) -> (Vec<Row>, usize) {
        let rows = self
            .list()
            .iter()
            .map(|entry| {
                let (enterprises, assets, members) = entry.unit.db.counts();
                Row {
                    id: entry.id.clone(),
                    name: entry.name.clone(),
                    created_at: entry.created_at,
                    idle_ms: self.idle_ms(entry),
                    ttl_secs: entry.ttl.as_secs(),
                    region: match entry.unit.db.region() {
                        Region::Domestic => "domestic",
                        Region::Singapore => "singapore",
                    },
                    enterprises,
                    assets,
                    members,
                }
            })
            .collect();
        (rows, self.max)
    }

    fn open(&self, id: &str) -> Option<String> {
        // Opening it is a use: its idle time starts again.
        self.get(id).map(|entry| entry.unit.admin.open_session())
    }
}
