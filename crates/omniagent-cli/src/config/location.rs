//! Where OmniAgent's files are ([`Home`]) and which config file is read
//! ([`ConfigLocation`]), and why ([`Origin`]).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_yaml_ng::{Mapping, Value};

use super::{Config, Sections};
use crate::HostError;

/// Where OmniAgent keeps its files: `$OMNIAGENT_HOME`, default `~/.omniagent`.
#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// The home folder `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `$OMNIAGENT_HOME`, else `$HOME/.omniagent`.
    pub fn from_env() -> Result<Self, HostError> {
        if let Some(root) = std::env::var_os("OMNIAGENT_HOME").filter(|root| !root.is_empty()) {
            return Ok(Self { root: PathBuf::from(root) });
        }
        match skill_core::user_home() {
            Some(home) => Ok(Self { root: home.join(".omniagent") }),
            None => Err(HostError::NoHome),
        }
    }

    /// The home folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of skills every agent of this home gets.
    #[cfg(feature = "markdown")]
    pub(crate) fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// The AAuth agent's folder: its key and its cached tokens.
    #[cfg(any(feature = "openapi", feature = "aauth", feature = "markdown"))]
    pub(crate) fn aauth_dir(&self) -> PathBuf {
        self.root.join("aauth")
    }

    /// Where `agent`'s OAuth client and tokens for the MCP server `server` are kept.
    #[cfg(feature = "mcp")]
    pub fn oauth_tokens(&self, agent: &str, server: &str) -> skill_mcp::TokenFile {
        skill_mcp::TokenFile::new(self.root.join("oauth").join(agent).join(format!("{server}.json")))
    }

    /// The embedded store's database file.
    #[cfg(feature = "sqlite")]
    pub(crate) fn state_db(&self) -> PathBuf {
        self.root.join("state").join("omniagent.db")
    }

    fn default_config(&self) -> PathBuf {
        self.root.join("config.yaml")
    }
}

/// Why a config file was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// `-c/--config`.
    Flag,
    /// `$OMNIAGENT_CONFIG`.
    Env,
    /// `$OMNIAGENT_HOME/config.yaml`, which exists.
    Home,
    /// No file: built-in defaults.
    Defaults,
}

/// The config file to read, if any, and why that one.
#[derive(Debug, Clone)]
pub struct ConfigLocation {
    path: Option<PathBuf>,
    origin: Origin,
}

impl ConfigLocation {
    /// The file the caller names (`flag`, from `-c`), else the one `$OMNIAGENT_CONFIG`
    /// names (`env`), else `config.yaml` in `home` when it exists, else none (built-in
    /// defaults).
    pub fn find(flag: Option<PathBuf>, env: Option<PathBuf>, home: &Home) -> Self {
        if let Some(path) = flag {
            return Self { path: Some(path), origin: Origin::Flag };
        }
        if let Some(path) = env {
            return Self { path: Some(path), origin: Origin::Env };
        }
        let path = home.default_config();
        if path.is_file() {
            Self { path: Some(path), origin: Origin::Home }
        } else {
            Self { path: None, origin: Origin::Defaults }
        }
    }

    /// The file; `None` for the built-in defaults.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Why this file (or none) was chosen.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// Reads and validates the file (built-in defaults when there is none).
    pub fn load(&self) -> Result<Config, HostError> {
        let Some(path) = &self.path else {
            return Ok(Config { file: None, tree: Value::Mapping(Mapping::new()), sections: Sections::default() });
        };
        let text =
            std::fs::read_to_string(path).map_err(|error| HostError::ReadConfig { path: path.clone(), error })?;
        Config::parse(path, &text)
    }
}
