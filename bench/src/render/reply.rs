//! A hostile reply's peak heap.

use serde_json::Value;

use super::format::{kib, thousands};
use crate::stats::{f, spread_of};

use super::Report;

impl Report<'_> {
    pub(super) fn reply(&mut self, r: &Value) {
        let what = format!(
            "listVirtualAssets reply of {} ({} values in `assetLimits`), peak client heap",
            kib(f(&r["reply_bytes"])),
            thousands(f(&r["values"]))
        );
        let ratio = f(&r["ratio"]);
        let target = self.judge("reply.heap", &what, ratio);
        self.row(
            what,
            format!("{} reply", kib(f(&r["reply_bytes"]))),
            format!(
                "{} ({})",
                kib(f(&r["peak_bytes"])),
                r["outcome"].as_str().unwrap_or_default()
            ),
            match r["runs_peak_bytes"].as_array().filter(|runs| runs.len() > 1) {
                Some(runs) => {
                    let (_, lo, hi, n) = spread_of(runs.iter().map(f).collect());
                    let reply = f(&r["reply_bytes"]);
                    format!(
                        "{ratio:.2}× reply ({:.2}–{:.2}× over {n} calls; the largest is the figure)",
                        lo / reply,
                        hi / reply
                    )
                }
                None => format!("{ratio:.2}× reply"),
            },
            target,
            "cargo xtask bench",
        );
        self.notes.push(
            "Hostile reply: `listVirtualAssets` answered by a thread of the benchmark's process with a body made before \
             the measurement (the spec's example asset, its `assetLimits` holding 30 million `1`s: 60 MB, under the \
             default 64 MiB bound); peak heap is the client's growth during a call, counted by a global allocator, the largest of 3 calls. \
             The SDK reads fields whose shape the documents do not show against a bound of `MAX_OPAQUE_VALUES` values \
             per reply, so this reply ends with a decode error naming the field."
                .into(),
        );
    }
}
