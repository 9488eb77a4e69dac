//! Bulk submit: the command line against the SDK called directly.

use serde_json::Value;

use super::format::{fmt_secs, thousands};
use crate::stats::{f, median, range};

use super::Report;

impl Report<'_> {
    pub(super) fn bulk(&mut self, b: &Value) {
        let times = |key: &str| -> Vec<f64> {
            b[key]
                .as_array()
                .map(|v| v.iter().map(f).collect())
                .unwrap_or_default()
        };
        let (cli, sdk) = (times("cli_s"), times("sdk_s"));
        let (cli_cpu, sdk_cpu) = (median(times("cli_cpu_s")), median(times("sdk_cpu_s")));
        let orders = f(&b["orders"]);
        // Throughput of the command line over the SDK's, pair by pair.
        let ratios: Vec<f64> = cli.iter().zip(&sdk).map(|(c, s)| s / c).collect();
        let ratio = median(ratios.clone());
        let [lo, hi] = range(&ratios);
        let what = format!(
            "bulk submit, {} orders (batches of {}, {} in flight), `licensing orders submit` vs the SDK called directly",
            thousands(orders),
            b["batch_size"],
            b["concurrency"]
        );
        let target = self.judge("bulk.throughput", &what, ratio);
        let rate = |ts: &[f64]| orders / median(ts.to_vec());
        self.row(
            what,
            format!(
                "{:.0} orders/s (SDK, {} s)",
                rate(&sdk),
                fmt_secs(median(sdk.clone()))
            ),
            format!(
                "{:.0} orders/s (command line, {} s)",
                rate(&cli),
                fmt_secs(median(cli.clone()))
            ),
            format!("{ratio:.2}× ({lo:.2}–{hi:.2})"),
            target,
            "cargo xtask bench",
        );
        let list = |ts: &[f64]| {
            ts.iter()
                .map(|t| format!("{t:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        self.notes.push(format!(
            "Bulk submit: one file of {} `new_buy` orders (JSON Lines, one asset with one product each), sent by \
             `licensing orders submit` (release build) and by `benches/bulk.rs`, a program on the SDK that reads the same \
             file into `LicenseOrder`s and sends the same `batchOrder` batches, as many at once, each a task of its own. \
             Each side is one process, timed from its start to its exit, configured by the same `LICENSING_*` variables, \
             against a `licensing-sim --seed demo` started fresh for it; {} pairs, each side first in every other pair. \
             The command line also checks every line on its own before batching and writes a results file ahead of \
             each batch (a header with the input's SHA-256, each batch's lines recorded as `sending` and synced once \
             per batch before it is sent, their outcomes appended after, the whole rewritten in line order and synced \
             at the end), under a lock on the file; it reads the file into batches on \
             a thread of its own while the first batches are sent, where the SDK program reads the whole file before \
             sending. The ratio is the SDK's time over the command line's (its throughput relative to the SDK's), the \
             median of the pairs, with their range; seconds per run: command line {}; SDK {}. CPU time (user and \
             system, the median of the runs): command line {:.3} s, SDK {:.3} s ({:.2}×): what the command line's \
             checks and results file cost, which reading while sending overlaps with the simulator's work.",
            thousands(orders),
            cli.len(),
            list(&cli),
            list(&sdk),
            cli_cpu,
            sdk_cpu,
            cli_cpu / sdk_cpu
        ));
    }
}
