//! The sandbox of stdio servers (`sandbox:`): its settings, as written under
//! `mcp.sandbox` (the defaults) and per server, and what they add up to.
//!
//! A server's code is someone else's: by default on Linux it runs confined (see
//! [`child_sandbox`]) to what its profile gives it: the system's read-only
//! locations, its executable and installation, what its arguments name, its caches, a
//! temporary folder of its own, and the `read` and `write` paths; within memory and
//! process limits; without seeing or tracing other processes.

use std::fmt;

use serde::{Deserialize, Serialize};

mod network;
mod profile;
mod proxy;
mod spawn;

pub(crate) use self::spawn::{Confinement, confine, explained};

/// The memory limit unless configured: 2 GiB of data per process.
pub const DEFAULT_MEMORY: u64 = 2 << 30;
/// The task limit unless configured.
pub const DEFAULT_PROCESSES: u64 = 256;
/// The open files limit of each process.
pub(crate) const OPEN_FILES: u64 = 4096;

/// `sandbox:` as written: `off`, or settings that override the defaults one by one
/// (`read` and `write` add to them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Written", into = "Written")]
pub struct SandboxSettings {
    /// Whether the server runs sandboxed (`off` is `false`).
    pub enabled: Option<bool>,
    /// Paths it may read (and execute), `~` for the home folder.
    pub read: Vec<String>,
    /// Paths it may read and write.
    pub write: Vec<String>,
    /// Where it may connect.
    pub network: Option<Network>,
    /// Its data limit per process, in bytes.
    pub memory: Option<u64>,
    /// How many tasks (processes and threads) it may run at once.
    pub processes: Option<u64>,
    /// Whether a part that cannot be applied stops it from starting (else it starts
    /// without that part, and the log says so).
    pub required: Option<bool>,
}

/// Where a sandboxed server may connect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Network {
    /// Anywhere (the default).
    #[default]
    All,
    /// Nowhere.
    None,
    /// Only these `host:port` patterns (`*.example.com:443`), through an egress proxy
    /// the gateway runs for the server.
    Only(Vec<String>),
}

impl SandboxSettings {
    /// These settings over `defaults`: each one set here wins, `read` and `write` add up.
    #[must_use]
    pub fn over(&self, defaults: &SandboxSettings) -> SandboxSettings {
        let mut read = defaults.read.clone();
        read.extend(self.read.iter().cloned());
        let mut write = defaults.write.clone();
        write.extend(self.write.iter().cloned());
        SandboxSettings {
            enabled: self.enabled.or(defaults.enabled),
            read,
            write,
            network: self.network.clone().or_else(|| defaults.network.clone()),
            memory: self.memory.or(defaults.memory),
            processes: self.processes.or(defaults.processes),
            required: self.required.or(defaults.required),
        }
    }

    /// Whether nothing is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self == &SandboxSettings::default()
    }

    /// What these settings add up to, with the defaults filled in.
    #[must_use]
    pub fn effective(&self) -> Effective {
        Effective {
            enabled: self.enabled.unwrap_or(true),
            read: self.read.clone(),
            write: self.write.clone(),
            network: self.network.clone().unwrap_or_default(),
            memory: self.memory.unwrap_or(DEFAULT_MEMORY),
            processes: self.processes.unwrap_or(DEFAULT_PROCESSES),
            required: self.required.unwrap_or(false),
        }
    }
}

impl From<Effective> for SandboxSettings {
    /// Every setting written out, as `config show` shows a server's sandbox.
    fn from(effective: Effective) -> Self {
        if !effective.enabled {
            return SandboxSettings { enabled: Some(false), ..SandboxSettings::default() };
        }
        SandboxSettings {
            enabled: Some(true),
            read: effective.read,
            write: effective.write,
            network: Some(effective.network),
            memory: Some(effective.memory),
            processes: Some(effective.processes),
            required: Some(effective.required),
        }
    }
}

/// A server's sandbox as it runs: every setting with its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effective {
    /// Whether it runs sandboxed.
    pub enabled: bool,
    /// The `read` paths, beside the profile's.
    pub read: Vec<String>,
    /// The `write` paths, beside its temporary folder and caches.
    pub write: Vec<String>,
    /// Where it may connect.
    #[serde(serialize_with = "network_shown")]
    pub network: Network,
    /// Data limit per process, bytes.
    #[serde(serialize_with = "size_shown")]
    pub memory: u64,
    /// Task limit.
    pub processes: u64,
    /// Whether a part that cannot be applied stops the start.
    pub required: bool,
}

impl fmt::Display for Effective {
    /// One line: `off`, or the network, limits and paths.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.enabled {
            return formatter.write_str("off");
        }
        write!(
            formatter,
            "network {}, memory {}, processes {}",
            network_text(&self.network),
            size_text(self.memory),
            self.processes
        )?;
        if !self.read.is_empty() {
            write!(formatter, ", read {}", self.read.join(" "))?;
        }
        if !self.write.is_empty() {
            write!(formatter, ", write {}", self.write.join(" "))?;
        }
        if self.required {
            formatter.write_str(", required")?;
        }
        Ok(())
    }
}

fn network_text(network: &Network) -> String {
    match network {
        Network::All => "all".to_owned(),
        Network::None => "none".to_owned(),
        Network::Only(allowed) => allowed.join(" "),
    }
}

fn network_shown<S: serde::Serializer>(network: &Network, serializer: S) -> Result<S::Ok, S::Error> {
    network_value(network).serialize(serializer)
}

fn size_shown<S: serde::Serializer>(size: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    size_text(*size).serialize(serializer)
}

fn network_value(network: &Network) -> serde_json::Value {
    match network {
        Network::All => "all".into(),
        Network::None => "none".into(),
        Network::Only(allowed) => allowed.clone().into(),
    }
}

/// `size` in the largest binary unit that divides it.
fn size_text(size: u64) -> String {
    for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if size >= scale && size.is_multiple_of(scale) {
            return format!("{}{unit}", size / scale);
        }
    }
    size.to_string()
}

/// A size: a number of bytes, or a number with a unit (`512MiB`, `2GiB`, `1G`, `100MB`).
fn size_of(value: &serde_json::Value) -> Result<u64, String> {
    let refused = || format!("memory `{value}` is not a size (write e.g. 512MiB or 2GiB)");
    match value {
        serde_json::Value::Number(number) => number.as_u64().ok_or_else(refused),
        serde_json::Value::String(text) => {
            let text = text.trim();
            let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
            let (digits, unit) = text.split_at(split);
            let number: u64 = digits.parse().map_err(|_| refused())?;
            let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
                "" | "b" => 1,
                "k" | "kib" => 1 << 10,
                "m" | "mib" => 1 << 20,
                "g" | "gib" => 1 << 30,
                "kb" => 1_000,
                "mb" => 1_000_000,
                "gb" => 1_000_000_000,
                _ => return Err(refused()),
            };
            number.checked_mul(scale).ok_or_else(refused)
        }
        _ => Err(refused()),
    }
}

/// `sandbox:` as written: `off` (or `on`, or a YAML 1.1 boolean), or a map.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum Written {
    Flag(bool),
    Switch(String),
    Settings(WrittenSettings),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    read: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    write: Vec<String>,
    /// `all`, `none`, or a list of `host:port` patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    network: Option<serde_json::Value>,
    /// Bytes, or a size such as `2GiB`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memory: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    processes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    required: Option<bool>,
}

impl TryFrom<Written> for SandboxSettings {
    type Error = String;

    fn try_from(written: Written) -> Result<Self, String> {
        let settings = match written {
            Written::Flag(enabled) => {
                return Ok(SandboxSettings { enabled: Some(enabled), ..SandboxSettings::default() });
            }
            Written::Switch(switch) => {
                return match switch.as_str() {
                    "off" => Ok(SandboxSettings { enabled: Some(false), ..SandboxSettings::default() }),
                    "on" => Ok(SandboxSettings { enabled: Some(true), ..SandboxSettings::default() }),
                    other => Err(format!("sandbox `{other}` is not known (expected off, on, or settings)")),
                };
            }
            Written::Settings(settings) => settings,
        };
        let network = settings.network.as_ref().map(network_of).transpose()?;
        let memory = settings.memory.as_ref().map(size_of).transpose()?;
        if settings.processes == Some(0) {
            return Err("sandbox processes must be at least 1".to_owned());
        }
        Ok(SandboxSettings {
            enabled: settings.enabled,
            read: settings.read,
            write: settings.write,
            network,
            memory,
            processes: settings.processes,
            required: settings.required,
        })
    }
}

/// `all`, `none`, or a non-empty list of `host:port` patterns.
fn network_of(value: &serde_json::Value) -> Result<Network, String> {
    match value {
        serde_json::Value::String(mode) if mode == "all" => Ok(Network::All),
        serde_json::Value::String(mode) if mode == "none" => Ok(Network::None),
        serde_json::Value::Array(items) if !items.is_empty() => {
            let patterns = items
                .iter()
                .map(|item| match item.as_str() {
                    Some(pattern) if network::is_pattern(pattern) => Ok(pattern.to_owned()),
                    _ => Err(format!("sandbox network `{item}` is not a host:port pattern (e.g. api.github.com:443)")),
                })
                .collect::<Result<_, _>>()?;
            Ok(Network::Only(patterns))
        }
        other => Err(format!("sandbox network `{other}` is not known (expected all, none, or a list of host:port)")),
    }
}

impl From<SandboxSettings> for Written {
    fn from(settings: SandboxSettings) -> Self {
        if settings.enabled == Some(false) {
            return Written::Switch("off".to_owned());
        }
        Written::Settings(WrittenSettings {
            enabled: settings.enabled,
            read: settings.read,
            write: settings.write,
            network: settings.network.as_ref().map(network_value),
            memory: settings.memory.map(|memory| size_text(memory).into()),
            processes: settings.processes,
            required: settings.required,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: serde_json::Value) -> Result<SandboxSettings, String> {
        serde_json::from_value(json).map_err(|error| error.to_string())
    }

    #[test]
    fn reads_off_and_settings_and_writes_them_back() {
        assert!(!parse("off".into()).unwrap().effective().enabled);
        let written = serde_json::json!({
            "read": ["~/reference"], "write": ["~/notes"], "network": ["api.github.com:443", "*.example.com:443"],
            "memory": "512MiB", "processes": 64, "required": true
        });
        let settings = parse(written.clone()).unwrap();
        assert_eq!(settings.memory, Some(512 << 20));
        assert_eq!(
            settings.network,
            Some(Network::Only(vec!["api.github.com:443".into(), "*.example.com:443".into()]))
        );
        assert_eq!(serde_json::to_value(&settings).unwrap(), written);
        assert_eq!(serde_json::to_value(parse("off".into()).unwrap()).unwrap(), serde_json::json!("off"));
        assert_eq!(parse(serde_json::json!({"memory": 1000})).unwrap().memory, Some(1000));
        assert_eq!(parse(serde_json::json!({"memory": "1GB"})).unwrap().memory, Some(1_000_000_000));
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        let check = |json: serde_json::Value, expect: &str| {
            let error = parse(json).unwrap_err();
            assert!(error.contains(expect), "{error}");
        };
        check("maybe".into(), "sandbox `maybe` is not known");
        check(serde_json::json!({"memory": "lots"}), "memory `\"lots\"` is not a size");
        check(serde_json::json!({"network": "some"}), "sandbox network `\"some\"` is not known");
        check(serde_json::json!({"network": ["github.com"]}), "is not a host:port pattern");
        check(serde_json::json!({"processes": 0}), "at least 1");
    }

    #[test]
    fn a_server_overrides_the_defaults_and_adds_paths() {
        let defaults = parse(serde_json::json!({"network": "none", "memory": "1GiB", "read": ["/srv/a"]})).unwrap();
        let server = parse(serde_json::json!({"memory": "3GiB", "read": ["/srv/b"], "write": ["/srv/c"]})).unwrap();
        let effective = server.over(&defaults).effective();
        assert_eq!(effective.network, Network::None);
        assert_eq!(effective.memory, 3 << 30);
        assert_eq!(effective.read, ["/srv/a", "/srv/b"]);
        assert_eq!(effective.processes, DEFAULT_PROCESSES);
        assert_eq!(effective.to_string(), "network none, memory 3GiB, processes 256, read /srv/a /srv/b, write /srv/c");
        assert_eq!(parse("off".into()).unwrap().over(&defaults).effective().to_string(), "off");
        assert_eq!(SandboxSettings::default().effective().to_string(), "network all, memory 2GiB, processes 256");
    }
}
