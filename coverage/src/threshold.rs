//! `--min operations=100%,codes=80%`: the ratios a report must reach.

use crate::{Ratio, Report};

/// The least each total must reach, as fractions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Minimums(Vec<(String, f64)>);

/// The totals a minimum may name.
const NAMES: [&str; 5] = ["operations", "codes", "enums", "optional", "paging"];

impl std::str::FromStr for Minimums {
    type Err = String;

    /// `name=N%` (or `name=0.N`) pairs separated by commas, each name one of
    /// `operations`, `codes`, `enums`, `optional`, `paging`.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{pair}`: expected name=percent, e.g. codes=80%"))?;
            let name = name.trim();
            if !NAMES.contains(&name) {
                return Err(format!(
                    "`{name}`: not a total (one of {})",
                    NAMES.join(", ")
                ));
            }
            let value = value.trim();
            let fraction = match value.strip_suffix('%') {
                Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
                None => value.parse::<f64>(),
            }
            .ok()
            .filter(|f| (0.0..=1.0).contains(f))
            .ok_or_else(|| format!("`{pair}`: the minimum must be 0% to 100%"))?;
            out.push((name.to_string(), fraction));
        }
        Ok(Self(out))
    }
}

impl Minimums {
    /// What falls short, one line each (`codes 41/63 (65%) < 80%`); empty when all are met.
    pub fn missed(&self, report: &Report) -> Vec<String> {
        let t = &report.totals;
        self.0
            .iter()
            .filter_map(|(name, min)| {
                let ratio: Ratio = match name.as_str() {
                    "operations" => t.operations,
                    "codes" => t.codes,
                    "enums" => t.enums,
                    "optional" => t.optional,
                    _ => t.paging,
                };
                // Compared in whole parts per million, so that 2/3 meets 66.6667% as shown.
                let reached = (ratio.fraction() * 1e6).round() >= (min * 1e6).round();
                (!reached).then(|| format!("{name} {ratio} < {:.0}%", min * 100.0))
            })
            .collect()
    }
}
