//! Whether a skill's requirements are met here: programs on PATH, environment
//! variables, the platform, and the secrets its agent bound.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use skill_core::Secrets;

use crate::MarkdownSkill;

/// What a skill lacks; all empty means it is available.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Missing {
    /// `bins` not found on PATH.
    pub bins: Vec<String>,
    /// All of `anyBins`, when none was found.
    #[serde(rename = "anyBins")]
    pub any_bins: Vec<String>,
    /// `env` variables unset or empty.
    pub env: Vec<String>,
    /// The skill's `os` list, when this platform is not in it.
    pub os: Vec<String>,
    /// Required secrets without a value.
    pub secrets: Vec<String>,
}

impl Missing {
    /// Whether nothing is missing.
    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
            && self.any_bins.is_empty()
            && self.env.is_empty()
            && self.os.is_empty()
            && self.secrets.is_empty()
    }

    /// Why the skill is not offered, listing exactly what is missing.
    pub fn reason(&self) -> String {
        let mut parts = Vec::new();
        if !self.bins.is_empty() {
            parts.push(format!("missing bins {}", self.bins.join(", ")));
        }
        if !self.any_bins.is_empty() {
            parts.push(format!("missing any of bins {}", self.any_bins.join(", ")));
        }
        if !self.env.is_empty() {
            parts.push(format!("missing env {}", self.env.join(", ")));
        }
        if !self.os.is_empty() {
            parts.push(format!("runs only on {}", self.os.join(", ")));
        }
        for secret in &self.secrets {
            parts.push(format!("missing secret {secret}"));
        }
        parts.join("; ")
    }
}

/// The machine requirements are checked against. [`Environment::current`] reads this
/// process's; tests build their own instead of changing the process environment.
#[derive(Debug)]
pub struct Environment {
    path: Vec<PathBuf>,
    vars: HashMap<String, OsString>,
    os: &'static str,
    found_bins: Mutex<HashMap<String, bool>>,
}

impl Environment {
    /// This process's PATH, variables and platform.
    pub fn current() -> Self {
        let vars: HashMap<String, OsString> =
            std::env::vars_os().filter_map(|(name, value)| Some((name.into_string().ok()?, value))).collect();
        let os = match std::env::consts::OS {
            "macos" => "darwin",
            "windows" => "win32",
            other => other,
        };
        Self::new(vars, os)
    }

    /// An environment with these variables (PATH among them) on platform `os`
    /// (`darwin`, `linux`, `win32`).
    pub fn new(vars: HashMap<String, OsString>, os: &'static str) -> Self {
        let path = vars.get("PATH").map(|path| std::env::split_paths(path).collect()).unwrap_or_default();
        Self { path, vars, os, found_bins: Mutex::new(HashMap::new()) }
    }

    /// The platform name skills use.
    pub fn os(&self) -> &str {
        self.os
    }

    /// Whether `bin` is a regular executable file in a PATH folder (a folder of that name
    /// does not count).
    pub fn has_bin(&self, bin: &str) -> bool {
        let mut found_bins = self.found_bins.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *found_bins
            .entry(bin.to_owned())
            .or_insert_with(|| self.path.iter().any(|dir| is_executable_file(&dir.join(bin))))
    }

    /// Whether `name` is set and non-empty.
    pub fn has_var(&self, name: &str) -> bool {
        self.vars.get(name).is_some_and(|value| !value.is_empty())
    }

    /// What `skill` lacks here, given the secrets its agent bound for it.
    pub fn missing(&self, skill: &MarkdownSkill, secrets: &Secrets) -> Missing {
        let requires = &skill.requires;
        let mut missing = Missing::default();
        if !skill.os.is_empty() && !skill.os.iter().any(|os| os == self.os) {
            missing.os = skill.os.clone();
        }
        if !skill.always {
            missing.bins = requires.bins.iter().filter(|bin| !self.has_bin(bin)).cloned().collect();
            if !requires.any_bins.is_empty() && !requires.any_bins.iter().any(|bin| self.has_bin(bin)) {
                missing.any_bins = requires.any_bins.clone();
            }
            // A bound secret of the same name satisfies an `env` requirement: it reaches
            // the skill's scripts as that variable.
            missing.env =
                requires.env.iter().filter(|name| !self.has_var(name) && !secrets.contains(name)).cloned().collect();
        }
        missing.secrets = requires
            .secrets
            .iter()
            .filter(|secret| !secrets.contains(&secret.name))
            .map(|secret| secret.name.clone())
            .collect();
        missing
    }
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    let extensions = std::env::var("PATHEXT").unwrap_or_else(|_| ".EXE;.CMD;.BAT;.COM".to_owned());
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file())
        || extensions.split(';').any(|extension| {
            std::fs::metadata(path.with_extension(extension.trim_start_matches('.'))).is_ok_and(|m| m.is_file())
        })
}
