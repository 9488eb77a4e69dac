//! Each batch's `channelOrderId`, and which ids a line could have been sent under.

use std::collections::HashSet;

/// Each batch's `channelOrderId`: the prefix and the batch's first and last line, then
/// `-rN` (N the run's attempt) in a run whose results file has lost some lines' batches,
/// then `-aN` when an earlier batch that the results file records (or this run sent) had
/// that id: a batch sent again after a refusal, or without its bad line. No two batches
/// a results file records share one, and a batch is named as it was the first time.
///
/// `-rN` is there because a file that lost records also lost the ids they named: an id
/// made from the lines alone could be one of those, and the platform would then hold two
/// batches of one `channelOrderId`. Only run N makes ids ending in `-rN` (or `-rN-aM`).
pub struct Ids {
    prefix: String,
    used: HashSet<String>,
    tag: Option<u32>,
}

impl Ids {
    /// Ids after those already `used`; `lost` for a run whose results file lost some
    /// lines' batches, with the run's attempt.
    pub fn new(prefix: String, used: HashSet<String>, lost: Option<u32>) -> Self {
        Ids {
            prefix,
            used,
            tag: lost,
        }
    }

    /// The id of the next batch of lines `first` to `last`.
    pub fn next(&mut self, first: u64, last: u64) -> String {
        let mut base = format!("{}-{first}-{last}", self.prefix);
        if let Some(attempt) = self.tag {
            base.push_str(&format!("-r{attempt}"));
        }
        let mut id = base.clone();
        let mut n = 1;
        while self.used.contains(&id) {
            n += 1;
            id = format!("{base}-a{n}");
        }
        self.used.insert(id.clone());
        id
    }
}

/// Whether `id` is one [`Ids`] of a run with `prefix` could have given a batch holding
/// line `no`: `PREFIX-FIRST-LAST`, then `-rN` and `-aN` as it makes them, with FIRST ≤ no
/// ≤ LAST (a batch's lines are in file order, so each one is between its first and its
/// last). What a check looks for when the batch a line was sent in is not recorded.
pub fn could_hold(prefix: &str, id: &str, no: u64) -> bool {
    let Some(rest) = id.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    let number = |text: &str| {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u64>().ok())
            .flatten()
    };
    let mut parts = rest.split('-');
    let (Some(first), Some(last)) = (parts.next().and_then(number), parts.next().and_then(number))
    else {
        return false;
    };
    // What may follow, in this order: `-rN`, then `-aN`.
    let mut tags = ['r', 'a'].into_iter();
    for part in parts {
        let Some(tag) = part.chars().next() else {
            return false;
        };
        if !tags.by_ref().any(|t| t == tag) || number(&part[1..]).is_none() {
            return false;
        }
    }
    first <= no && no <= last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_batches_share_a_channel_order_id() {
        let mut ids = Ids::new("t".into(), HashSet::from(["t-1-500".to_string()]), None);
        assert_eq!(ids.next(501, 1000), "t-501-1000");
        assert_eq!(ids.next(1, 500), "t-1-500-a2");
        assert_eq!(ids.next(1, 500), "t-1-500-a3");
        assert_eq!(ids.next(501, 1000), "t-501-1000-a2");
        // A run whose file lost batches tags its own.
        let mut ids = Ids::new("t".into(), HashSet::new(), Some(3));
        assert_eq!(ids.next(1, 500), "t-1-500-r3");
        assert_eq!(ids.next(1, 500), "t-1-500-r3-a2");
    }

    #[test]
    fn a_lost_batch_is_looked_for_by_the_ids_that_could_hold_the_line() {
        for id in ["k-1-4", "k-1-4-a2", "k-3-3-r2", "k-1-9-r2-a3", "k-4-4"] {
            assert!(
                could_hold("k", id, if id == "k-3-3-r2" { 3 } else { 4 }),
                "{id}"
            );
        }
        for id in [
            "k-5-8",       // after the line
            "k-1-3",       // before it
            "kk-1-4",      // another prefix
            "k-1",         // no last line
            "k-1-4-b2",    // not a tag of ours
            "k-1-4-a2-r2", // tags out of order
            "k-1-4-a",     // a tag without its number
            "k-+1-4",      // not digits
            "k-1-4-",
            "k-1-4-r2-r3",
        ] {
            assert!(!could_hold("k", id, 4), "{id}");
        }
        // A prefix that itself ends in numbers is read as the run's, not as lines.
        assert!(could_hold("batch-7", "batch-7-1-4", 2));
        assert!(!could_hold("batch", "batch-7-1-4", 2));
    }
}
