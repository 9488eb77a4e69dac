//! A fresh sandbox per test: our two packages against WireMock's jar and Prism.

use serde_json::Value;

use crate::stats::{f, paired, spread_of};

use super::Report;

/// Our sides: the record's key and how the row names it.
const OURS: [(&str, &str); 2] = [
    ("python", "`licensing_sandbox` (Python, `Sandbox.start`)"),
    ("node", "`startSandbox` (Node)"),
];

/// The phases: the record's key, how the row names it, and which of each baseline's
/// phases it is held against (Prism's one time stands for both).
const PHASES: [(&str, &str, &str); 2] = [
    ("first", "from start to the first answer", "first"),
    ("seeded", "from start to the `demo` seed loaded", "seeded"),
];

/// The baselines: the record's key and name.
const BASELINES: [(&str, &str); 2] = [("wiremock", "WireMock jar"), ("prism", "Prism")];

/// `0.123 s (0.101–0.150)`: the median of a side's rounds and their range.
fn seconds(runs: &Value) -> Option<String> {
    let xs: Vec<f64> = runs.as_array()?.iter().map(f).collect();
    if xs.is_empty() {
        return None;
    }
    let (median, lo, hi, _) = spread_of(xs);
    Some(format!("{median:.3} s ({lo:.3}–{hi:.3})"))
}

impl Report<'_> {
    pub(super) fn fresh(&mut self, s: &Value) {
        let rounds = s["rounds"].as_u64().unwrap_or(0);
        for (side, name) in OURS {
            for (phase, label, against) in PHASES {
                let ours = &s[side][phase];
                let mut baseline = Vec::new();
                let mut ratio = Vec::new();
                for (key, base) in BASELINES {
                    // Prism has one phase: its examples are served from the start.
                    let runs = match &s[key][against] {
                        Value::Null => &s[key]["first"],
                        runs => runs,
                    };
                    let Some(text) = seconds(runs) else { continue };
                    baseline.push(format!("{base} {text}"));
                    if let Some((median, lo, hi, _)) = paired(ours, runs) {
                        ratio.push(format!("{median:.3}× {base} ({lo:.3}–{hi:.3})"));
                    }
                }
                self.row(
                    format!("fresh sandbox per test, {label}: {name}"),
                    if baseline.is_empty() {
                        "not run (smoke)".into()
                    } else {
                        baseline.join("; ")
                    },
                    seconds(ours)
                        .map_or_else(|| "—".into(), |t| format!("{t} over {rounds} rounds")),
                    if ratio.is_empty() {
                        "—".into()
                    } else {
                        ratio.join("; ")
                    },
                    "—".into(),
                    "cargo xtask bench --only fresh",
                );
            }
        }
        let versions = &s["versions"];
        self.notes.push(format!(
            "Fresh sandbox per test: how long a test waits for a stub server of its own. `licensing_sandbox` \
             and `startSandbox` come from the packages of `target/dist` (built by `licensing-clients dist \
             --binaries` from the run's release binaries), installed into a venv ({}) and an npm project ({}) \
             of their own, and are timed in a driver process that stays up across rounds, as a test process \
             would: `Sandbox.start()` and `startSandbox()` return once the simulator, started on a free port, \
             answered a request and its state is checkpointed (with `seed=\"demo\"`: and the demo seed is \
             loaded), and the sandbox is stopped before the next round. WireMock {} (its standalone jar on {}, \
             the throughput comparison's flags) and Prism (`prism mock spec/order.yaml`) are timed from their \
             spawn to the first answer of `queryEnterprise`, polled every 5 ms: WireMock with no mappings \
             (any answer, its 404), and with the stubs of the two loaded operations (their example, HTTP 200), \
             which is its seeded state; Prism serves the spec's examples from the start, so its one time \
             stands for both phases. Every side runs in each of {rounds} rounds in turn; medians with their \
             range, each ratio the median of the rounds' ratios.",
            versions["python"].as_str().unwrap_or("Python"),
            versions["node"].as_str().unwrap_or("Node.js"),
            versions["wiremock"].as_str().unwrap_or(""),
            versions["java"].as_str().unwrap_or("Java"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::Report;

    #[test]
    fn each_ratio_is_the_median_of_the_rounds_ratios() {
        let record = json!({
            "rounds": 3,
            "python": { "first": [0.2, 0.1, 0.3], "seeded": [0.4, 0.4, 0.4] },
            "node": { "first": [0.1, 0.1, 0.1], "seeded": [0.2, 0.2, 0.2] },
            "wiremock": { "first": [1.0, 2.0, 1.0], "seeded": [2.0, 2.0, 4.0] },
            "prism": { "first": [4.0, 4.0, 2.0] },
            "versions": { "python": "Python 3.11.2", "node": "v20.20.2", "wiremock": "3.13.2", "java": "openjdk 17" },
        });
        let mut report = Report::new(&[]);
        report.fresh(&record);
        assert_eq!(report.rows.len(), 4);
        let python_first = &report.rows[0];
        assert!(python_first[0].contains("from start to the first answer"));
        assert_eq!(python_first[2], "0.200 s (0.100–0.300) over 3 rounds");
        // Rounds' ratios 0.2, 0.05, 0.3 against WireMock; 0.05, 0.025, 0.15 against Prism.
        assert_eq!(
            python_first[3],
            "0.200× WireMock jar (0.050–0.300); 0.050× Prism (0.025–0.150)"
        );
        // Prism's one time stands for the seeded phase too.
        assert!(
            report.rows[1][1].contains("Prism 4.000 s (2.000–4.000)"),
            "{:?}",
            report.rows[1]
        );
        assert!(report.notes[0].contains("openjdk 17"));
    }

    #[test]
    fn a_smoke_record_has_no_baselines() {
        let record = json!({
            "rounds": 1,
            "python": { "first": [0.1], "seeded": [0.2] },
            "node": { "first": [0.1], "seeded": [0.2] },
            "versions": {},
        });
        let mut report = Report::new(&[]);
        report.fresh(&record);
        assert_eq!(report.rows[3][1], "not run (smoke)");
        assert_eq!(report.rows[3][3], "—");
    }
}
