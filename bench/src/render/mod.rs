//! `BENCHMARKS.md` from a run's record: the summary of targets, one table row per
//! figure, the notes that say how each was measured, the sections of their own; for a
//! full run, the profiles of the missed targets (`benches/profiles/missed.md`, written by
//! hand) and the partner-build section kept from the document it replaces.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::results::{Results, read_bounded};
use crate::targets::{self, Target};

mod batch;
mod build;
mod bulk;
mod chart;
mod format;
mod fresh;
mod oha;
mod overhead;
mod paging;
mod proxy;
mod reply;
mod seed;
mod tenants;
mod throughput;

/// Where `cargo xtask partner-build` writes its section, which a new document keeps.
pub const PARTNER_BEGIN: &str = "<!-- partner-build: written by `cargo xtask partner-build` -->";
/// The section's end.
pub const PARTNER_END: &str = "<!-- /partner-build -->";

/// The longest document (`BENCHMARKS.md`, `missed.md`) read: each is tens of KiB.
const MAX_DOCUMENT: u64 = 4 << 20;

/// The document's parts, filled section by section.
struct Report<'a> {
    targets: &'a [Target],
    rows: Vec<[String; 6]>,
    /// Sections of their own (a heading and a table), after the notes.
    sections: Vec<String>,
    notes: Vec<String>,
    met: usize,
    missed: Vec<String>,
}

impl<'a> Report<'a> {
    fn new(targets: &'a [Target]) -> Self {
        Self {
            targets,
            rows: Vec::new(),
            sections: Vec::new(),
            notes: Vec::new(),
            met: 0,
            missed: Vec::new(),
        }
    }

    fn row(
        &mut self,
        what: String,
        baseline: String,
        ours: String,
        ratio: String,
        target: String,
        command: &str,
    ) {
        self.rows
            .push([what, baseline, ours, ratio, target, format!("`{command}`")]);
    }

    /// `≤ 1.3×: met` or `**missed**` for `value` against the target `key`, counted for
    /// the summary; a NaN value (nothing measured) misses.
    fn judge(&mut self, key: &str, what: &str, value: f64) -> String {
        let Some(target) = targets::find(self.targets, key) else {
            self.missed.push(format!("{what} (no target `{key}`)"));
            return format!("no target `{key}`: **missed**");
        };
        let rule = &target.shown;
        if target.met_by(value) {
            self.met += 1;
            format!("{rule}: met")
        } else {
            self.missed.push(format!("{what} ({rule})"));
            format!("{rule}: **missed**")
        }
    }

    fn render(&self, results: &Results) -> String {
        let mut s = String::new();
        let machine = &results.machine;
        let commit = match &results.commit {
            Some(c) if c.dirty => format!(" at commit `{}` with local changes", short(&c.id)),
            Some(c) => format!(" at commit `{}`", short(&c.id)),
            None => String::new(),
        };
        let _ = writeln!(s, "# Benchmarks\n");
        let _ = writeln!(
            s,
            "Measured by `cargo xtask bench`{commit} on a {}-core machine, every comparison in one run \
             ({:.0} s in all, building included). Ratios compare ours with the baseline measured in the same run; absolute \
             numbers depend on the machine. Regenerate with `cargo xtask bench`.\n",
            machine.cores, results.run.seconds
        );
        let memory = machine.memory_kib.map_or_else(
            || "memory unknown".into(),
            |kb| format!("{:.0} GiB", kb / 1048576.0),
        );
        let _ = writeln!(
            s,
            "Machine: {}, {} cores available, {memory}, Linux {}, {}.\n",
            machine.cpu, machine.cores, machine.kernel, machine.rustc
        );
        if self.missed.is_empty() {
            let _ = writeln!(s, "Targets: all {} met.\n", self.met);
        } else {
            let _ = writeln!(
                s,
                "Targets: {} met, {} missed:\n",
                self.met,
                self.missed.len()
            );
            for m in &self.missed {
                let _ = writeln!(s, "- {m}");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s, "| what | baseline | ours | ratio | target | reproduce |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", r.join(" | "));
        }
        let _ = writeln!(
            s,
            "\n![batch cost against order count: round trip, simulator, client side and the serde floor](benches/batch-scale.svg)\n"
        );
        for n in &self.notes {
            let _ = writeln!(s, "- {n}");
        }
        for section in &self.sections {
            let _ = writeln!(s, "\n{}", section.trim_end());
        }
        s
    }
}

/// A commit's first 7 digits.
fn short(id: &str) -> &str {
    id.get(..7).unwrap_or(id)
}

/// The report of a record: the summary, the table, the notes and the sections of every
/// section it holds, in the run's order.
pub fn report(results: &Results) -> Result<String> {
    let mut report = Report::new(&results.targets);
    let s = &results.sections;
    if let Some(o) = &s.overhead {
        report.overhead(o);
    }
    if let Some(t) = &s.throughput {
        report.throughput(t);
    }
    if let Some(b) = &s.batch {
        report.batch(b);
    }
    if let Some(p) = &s.paging {
        report.paging(p);
    }
    if let Some(r) = &s.reply {
        report.reply(r);
    }
    if let Some(b) = &s.bulk {
        report.bulk(b);
    }
    if let Some(p) = &s.proxy {
        report.proxy(p);
    }
    if let Some(seed) = &s.seed {
        report.seed(seed);
    }
    if let Some(f) = &s.fresh {
        report.fresh(f);
    }
    if let Some(t) = &s.tenants {
        report.tenants(t);
    }
    if let Some(b) = &s.build {
        report.build(b);
    }
    Ok(report.render(results))
}

/// The whole document of a full run: its report, then the profiles of the missed targets
/// read from `root`, then the partner-build section of `existing` (the document it
/// replaces), if that has one.
pub fn document(root: &Path, results: &Results, existing: Option<&str>) -> Result<String> {
    let mut text = report(results)?;
    // What the targets still missed leave, by profile: written by hand where the profiles
    // are taken, and kept with the figures it explains.
    let missed = root.join("benches/profiles/missed.md");
    if missed.exists() {
        let missed = String::from_utf8(read_bounded(&missed, MAX_DOCUMENT)?)
            .with_context(|| format!("{}: not UTF-8", missed.display()))?;
        text = format!("{}\n\n{}\n", text.trim_end(), missed.trim_end());
    }
    if let Some(section) = existing.and_then(partner_section) {
        text = format!("{}\n\n{section}\n", text.trim_end_matches('\n'));
    }
    Ok(text)
}

/// The marked partner-build section of `text`, markers included, if there is one.
fn partner_section(text: &str) -> Option<&str> {
    let begin = text.find(PARTNER_BEGIN)?;
    let end = text[begin..].find(PARTNER_END)? + begin + PARTNER_END.len();
    Some(&text[begin..end])
}

/// Where `publish` writes.
#[derive(Default)]
pub struct Outputs {
    /// The document; by default `BENCHMARKS.md` for a full run's record, else
    /// `bench-only.md` in the target directory.
    pub document: Option<PathBuf>,
    /// The batch chart; by default `benches/batch-scale.svg` when the document is the
    /// default `BENCHMARKS.md`, else none.
    pub chart: Option<PathBuf>,
}

/// Renders the record at `path`: a full run's as the document (and the chart), a partial
/// run's as its report alone. Returns the text and where it went.
pub fn publish(root: &Path, path: &Path, outputs: Outputs) -> Result<(String, PathBuf)> {
    let results = crate::results::Results::read(path)?;
    let full = results.run.is_full();
    let default_document = if full {
        root.join("BENCHMARKS.md")
    } else {
        crate::cargo::target_dir(root)?.join("bench-only.md")
    };
    let chart = match (&outputs.chart, &outputs.document) {
        (Some(chart), _) => Some(chart.clone()),
        (None, None) if full => Some(root.join("benches/batch-scale.svg")),
        (None, _) => None,
    };
    let document = outputs.document.unwrap_or(default_document);
    let text = if full {
        let existing = read_bounded(&document, MAX_DOCUMENT)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        self::document(root, &results, existing.as_deref())?
    } else {
        report(&results)?
    };
    std::fs::write(&document, &text).with_context(|| format!("writing {}", document.display()))?;
    if let (Some(chart), Some(batch)) = (chart, &results.sections.batch) {
        chart::write(&chart, batch)?;
    }
    Ok((text, document))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partner_section_is_kept_whole() {
        let old = format!(
            "# Benchmarks\n\nold rows\n\n{PARTNER_BEGIN}\n## A partner's first build\n\n| a |\n{PARTNER_END}\n"
        );
        assert_eq!(
            partner_section(&old),
            Some(
                format!("{PARTNER_BEGIN}\n## A partner's first build\n\n| a |\n{PARTNER_END}")
                    .as_str()
            )
        );
        assert_eq!(partner_section("# Benchmarks\n"), None);
        assert_eq!(partner_section(&format!("{PARTNER_BEGIN}\nno end")), None);
    }

    /// `cargo xtask partner-build` writes the section between the same markers.
    #[test]
    fn the_markers_are_the_partner_builds() {
        let writer = std::fs::read_to_string(crate::root().join("xtask/src/partner_build.rs"))
            .expect("xtask's partner build");
        for marker in [PARTNER_BEGIN, PARTNER_END] {
            assert!(writer.contains(&format!("\"{marker}\"")), "{marker}");
        }
    }
}
