//! The SDK's call overhead against hand-written calls.

use serde_json::Value;

use super::Report;
use crate::stats::f;

impl Report<'_> {
    pub(super) fn overhead(&mut self, o: &Value) {
        for (key, label) in [
            (
                "get_list",
                "GET with a list reply (queryEnterprise, 20 items)",
            ),
            ("post_body", "POST with a body (bindEnterprise)"),
            (
                "get_list_https",
                "HTTPS GET with a list reply (queryEnterprise, 20 items)",
            ),
            ("post_body_https", "HTTPS POST with a body (bindEnterprise)"),
        ] {
            let r = &o[key];
            for (stat, name) in [("median", "median"), ("p99", "p99")] {
                let (hand, sdk, ratio) = (
                    f(&r[format!("hand_{stat}_us")]),
                    f(&r[format!("sdk_{stat}_us")]),
                    f(&r[format!("ratio_{stat}")]),
                );
                let spread = &r[format!("ratio_{stat}_spread")];
                let what = format!("SDK overhead, {label}, {name} per call");
                let target = self.judge(&format!("overhead.{stat}"), &what, ratio);
                self.row(
                    what,
                    format!("{hand:.1} µs (hand-written)"),
                    format!("{sdk:.1} µs"),
                    format!(
                        "{ratio:.3} ({:.3}–{:.3} over {} blocks)",
                        f(&spread[0]),
                        f(&spread[1]),
                        r["blocks"]
                    ),
                    target,
                    "cargo bench --bench overhead",
                );
            }
        }
    }
}
