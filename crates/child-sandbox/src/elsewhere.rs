//! Elsewhere than Linux there is no sandbox: every part is missing.

use crate::{Error, Missing, Part, Policy};

/// A sandbox that confines nothing, and says so.
#[derive(Debug)]
pub struct Sandbox {
    missing: Vec<Missing>,
}

/// Nothing to keep.
#[derive(Debug)]
pub struct Confined;

impl Sandbox {
    /// Every part missing: only Linux has them.
    pub fn prepare(_policy: &Policy) -> Result<Self, Error> {
        let parts = [
            Part::Filesystem,
            Part::Scopes,
            Part::Network,
            Part::Seccomp,
            Part::Memory,
            Part::Processes,
            Part::ProcessView,
        ];
        let missing = parts.into_iter().map(|part| Missing { part, reason: "only Linux has it".into() }).collect();
        Ok(Self { missing })
    }

    /// The parts left out: all of them.
    pub fn missing(&self) -> &[Missing] {
        &self.missing
    }

    /// Leaves `command` as it is.
    pub fn install(self, _command: &mut std::process::Command) -> Confined {
        Confined
    }
}
