//! The consumers proved on their own inputs (`proven::OWN`): Java and Go. Each is set up
//! once (its tools, and its consumer written from the code generated from the current
//! specs and checked against that code), then compiled against each mutation's.

use std::path::Path;

use anyhow::{Result, bail};

use licensing_clients::toolchain;
use licensing_spec_diff::load::Side;
use licensing_spec_diff::rules::Verdict;

use super::bench::Outcome;
use super::go::Go;
use super::java::Java;
use super::proven::Single;
use super::{Mutation, apply};

/// The spec texts of a side, as the tools take them: (service, file, text).
type Texts = Vec<(&'static str, String, String)>;

pub enum Own {
    Java(Java),
    Go(Go),
}

impl Own {
    pub fn name(&self) -> &'static str {
        match self {
            Own::Java(_) => "java",
            Own::Go(_) => "go",
        }
    }

    /// `consumer`'s tools and its consumer of the current specs, which must compile
    /// against the current specs' code or its verdicts would prove nothing.
    pub fn prepare(root: &Path, base: &Side, consumer: &str) -> Result<Own> {
        let t = toolchain::step(&format!(
            "spec-diff corpus: the {consumer} tools and consumer"
        ));
        let target = toolchain::target_dir(root)?;
        let dir = target.join("spec-diff-corpus");
        let tools = dir.join("tools");
        let texts: Texts = base
            .specs
            .iter()
            .map(|s| (s.service, s.file.clone(), s.text.clone()))
            .collect();
        let own = match consumer {
            "java" => {
                let java = Java::prepare(root, &dir.join("java"), &tools.join("java"))?;
                java.write_consumers(&texts)?;
                Own::Java(java)
            }
            "go" => {
                let go = Go::prepare(root, &dir.join("go"), &tools)?;
                go.write_consumers(&texts)?;
                Own::Go(go)
            }
            other => bail!("no consumer {other}"),
        };
        let current = own.check(&texts)?;
        if current.broke {
            bail!(
                "the {consumer} consumer does not compile against the current specs' code: {}",
                current.why
            );
        }
        toolchain::done(t);
        Ok(own)
    }

    fn check(&self, texts: &Texts) -> Result<Outcome> {
        match self {
            Own::Java(java) => java.check(texts),
            Own::Go(go) => go.check(texts),
        }
    }

    /// The consumer compiled against the code generated from `m`'s specs.
    pub fn prove(&self, base: &Side, m: &Mutation) -> Result<Single> {
        let texts = apply(base, m)?;
        let o = self.check(&texts)?;
        Ok(Single {
            edits: super::proven::edits_digest(m),
            verdict: if o.broke {
                Verdict::Breaking
            } else {
                Verdict::Compatible
            },
            why: o.broke.then_some(o.why),
        })
    }
}
