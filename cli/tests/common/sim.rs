//! The in-process simulator of the commands' and the probe's tests (each target starts it
//! its own way, in its own `impl Sim`): its runtime, the simulator, and a directory for
//! the files a run of `licensing` writes.

/// A simulator on a runtime of its own, and a directory for the run's files.
pub struct Sim {
    pub rt: tokio::runtime::Runtime,
    pub sim: licensing_sim::Simulator,
    pub dir: tempfile::TempDir,
}

impl Sim {
    /// The journal's entries, oldest first.
    pub fn journal_entries(&self) -> Vec<licensing_sim::admin::types::JournalEntry> {
        self.rt
            .block_on(self.sim.admin().list_journal().send())
            .unwrap()
            .into_inner()
            .entries
    }
}
