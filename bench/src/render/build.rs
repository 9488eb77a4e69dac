//! The build's cost.

use super::Report;
use crate::results::Build;

impl Report<'_> {
    /// The generation row; the debug builds' rows when measured.
    pub(super) fn build(&mut self, build: &Build) {
        let what = "build.rs generation (parse, transform, generate, format both specs)";
        let [generation_ms, fastest, slowest] = build.generation_ms;
        let target = self.judge("build.generation_ms", what, generation_ms as f64);
        self.row(
            what.into(),
            "—".into(),
            format!(
                "{generation_ms} ms ({fastest}–{slowest} ms; median of 5 runs of the generator, in the lab's unoptimized process, as a build script runs it)"
            ),
            "—".into(),
            target,
            "cargo xtask bench",
        );
        let Some(debug) = &build.debug else {
            self.notes.push(
                "The debug builds (the rebuild after touching a spec, target ≤ 10 s, and the \
                 clean build) are timed only on request, `cargo xtask bench --build-cost`: they \
                 need a second full build of every dependency, in the dev profile, about two \
                 more minutes on two cores."
                    .into(),
            );
            return;
        };
        let what = "rebuild after touching spec/order.yaml";
        let target = self.judge("build.rebuild_s", what, debug.rebuild_s);
        self.row(
            what.into(),
            "—".into(),
            format!("{:.1} s", debug.rebuild_s),
            "—".into(),
            target,
            "touch spec/order.yaml && cargo build",
        );
        self.row(
            "clean build of the crate (debug, default features)".into(),
            "—".into(),
            format!("{:.0} s", debug.clean_s),
            "—".into(),
            "—".into(),
            "cargo clean && cargo build",
        );
    }
}
