//! One MCP server's settings: ours (`mcp.servers.<name>`, strict) and the `mcpServers`
//! entries users paste from Claude Desktop, Cursor or Claude Code (lenient).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skill_core::SecretRef;
use skill_core::redact::{self, REDACTED};

use crate::sandbox::SandboxSettings;

/// How long start-up may take unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one call may take unless configured.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// An MCP server: a command run as a subprocess, or a streamable-HTTP URL.
///
/// Pasted configs keep tokens in `env`, `headers` and the URL, so `Debug` and `Serialize`
/// (what `config show` prints) show the names of variables and headers with `REDACTED`
/// values, and the URL without user info and with its query values redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ServerSettings", into = "ServerSettings")]
pub struct ServerConfig {
    /// How the server is reached.
    pub transport: Transport,
    /// Names that must have a value in the server's environment (or its secrets).
    pub required_env: Vec<String>,
    /// Secrets by name: each reaches the server as an environment variable (stdio) or
    /// through `${NAME}` in headers and arguments.
    pub secrets: BTreeMap<String, SecretRef>,
    /// Bounds on start-up and on each call.
    pub timeouts: Timeouts,
    /// Whether the server's tools and prompts are offered as `{server}__{name}` and its
    /// resources as `omniagent://{server}/{uri}` (the default), or under the server's own
    /// names and URIs (`prefix: false`).
    pub prefix: bool,
    /// The protocol version the connection speaks.
    pub protocol: Protocol,
    /// How a `url` server's OAuth login identifies this client, when not by dynamic
    /// registration.
    pub oauth: OAuthClient,
    /// How a `command` server is confined (over `mcp.sandbox`, which the host applies with
    /// [`SandboxSettings::over`]).
    pub sandbox: SandboxSettings,
    /// Whether its tools', prompts' and templates' definitions are pinned, over
    /// `trust.tools` (`None`: as that says).
    pub trust: Option<skill_core::TrustMode>,
}

/// How an OAuth login identifies this client (`oauth:`), in the order the MCP
/// authorization spec prefers: a pre-registered `client_id` (with its secret, for a
/// confidential client), else a client ID metadata document, else dynamic registration
/// (when nothing is set).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthClient {
    /// A client registered with the authorization server beforehand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, as a secret reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<SecretRef>,
    /// The HTTPS URL of this client's metadata document (CIMD), used as its client ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for; by default those the server names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// Which MCP protocol version a connection speaks (`protocol_version`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Protocol {
    /// The newest the server speaks: 2026-07-28 (`server/discover`) when it does,
    /// else the newest it answers `initialize` with.
    #[default]
    Auto,
    /// This version and no other, such as `2025-11-25`: one of [`Protocol::KNOWN`].
    Pinned(String),
}

impl Protocol {
    /// The versions a connection can be pinned to, oldest first.
    pub const KNOWN: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

    fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Self::Auto),
            version if Self::KNOWN.contains(&version) => Ok(Self::Pinned(version.to_owned())),
            other => Err(format!(
                "protocol_version `{other}` is not known (expected auto or one of {})",
                Self::KNOWN.join(", ")
            )),
        }
    }
}

impl ServerConfig {
    /// The variables its `${VAR}`s name, in `command`, `args`, the values of `env`, `url`
    /// and `headers` (without an `env:` prefix or a `:-default`), found as expansion
    /// finds them.
    pub fn variables(&self) -> BTreeSet<String> {
        let texts: Vec<&String> = match &self.transport {
            Transport::Stdio { command, args, env, .. } => {
                std::iter::once(command).chain(args).chain(env.values()).collect()
            }
            Transport::Http { url, headers } => std::iter::once(url).chain(headers.values()).collect(),
        };
        let names = RefCell::new(BTreeSet::new());
        for text in texts {
            // Every name stands for the empty value, so that the walk never stops at one.
            let _ = skill_core::expand_vars(text, |name| {
                names.borrow_mut().insert(name.to_owned());
                Some(String::new())
            });
        }
        names.into_inner()
    }
}

/// How a server is reached.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A subprocess speaking MCP on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments (`${VAR}` and `${env:VAR}` expanded).
        args: Vec<String>,
        /// Variables set for it, after the inherited allowlist.
        env: BTreeMap<String, String>,
        /// Its working folder.
        cwd: Option<String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request (`${VAR}` and `${env:VAR}` expanded).
        headers: BTreeMap<String, String>,
    },
}

/// Shows names and `REDACTED` values, and the URL redacted: see [`ServerConfig`].
impl fmt::Debug for Transport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio { command, args, env, cwd } => formatter
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &redacted_values(env))
                .field("cwd", cwd)
                .finish(),
            Transport::Http { url, headers } => formatter
                .debug_struct("Http")
                .field("url", &redact::url_text(url))
                .field("headers", &redacted_values(headers))
                .finish(),
        }
    }
}

/// The names of `values`, each with `REDACTED` for its value.
fn redacted_values(values: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    values.keys().map(|name| (name.clone(), REDACTED.to_owned())).collect()
}

/// Start-up and per-call bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Spawn (or connect) to listed tools.
    pub startup: Duration,
    /// One `tools/call`.
    pub call: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { startup: DEFAULT_STARTUP_TIMEOUT, call: DEFAULT_CALL_TIMEOUT }
    }
}

/// `mcp.servers.<name>` as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerSettings {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    required_env: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    secrets: BTreeMap<String, SecretRef>,
    /// `30s` (both bounds), a number of seconds, or `{startup: 10s, call: 2m}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout: Option<serde_json::Value>,
    /// `false`: the server's own names, without the `{server}__` prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prefix: Option<bool>,
    /// `auto` (the default) or a version such as `2025-11-25`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oauth: Option<OAuthClient>,
    /// `off`, or what the server may read, write and reach, and its limits.
    #[serde(default, skip_serializing_if = "SandboxSettings::is_empty")]
    sandbox: SandboxSettings,
    /// `on-first-use`, `approved` or `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trust: Option<skill_core::TrustMode>,
}

fn timeouts_of(value: &serde_json::Value) -> Result<Timeouts, String> {
    let duration = skill_core::duration::from_json;
    match value {
        serde_json::Value::Object(fields) => {
            let mut timeouts = Timeouts::default();
            for (key, value) in fields {
                match key.as_str() {
                    "startup" => timeouts.startup = duration(value)?,
                    "call" => timeouts.call = duration(value)?,
                    other => return Err(format!("unknown timeout `{other}` (expected `startup` or `call`)")),
                }
            }
            Ok(timeouts)
        }
        both => duration(both).map(|both| Timeouts { startup: both, call: both }),
    }
}

impl TryFrom<ServerSettings> for ServerConfig {
    type Error = String;

    fn try_from(settings: ServerSettings) -> Result<Self, String> {
        let kind = settings.kind.as_deref().map(str::to_ascii_lowercase);
        let transport = match (kind.as_deref(), settings.command, settings.url) {
            (Some("http" | "streamable-http" | "streamablehttp" | "sse") | None, None, Some(url)) => {
                if !settings.args.is_empty() || !settings.env.is_empty() || settings.cwd.is_some() {
                    return Err("`args`, `env` and `cwd` apply to a `command`, not to a `url`".to_owned());
                }
                if !settings.sandbox.is_empty() {
                    return Err("`sandbox` applies to a `command`, not to a `url`".to_owned());
                }
                Transport::Http { url, headers: settings.headers }
            }
            (_, Some(_), None) if settings.oauth.is_some() => {
                return Err("`oauth` applies to a `url`, not to a `command`".to_owned());
            }
            (Some("stdio") | None, Some(command), None) => {
                if !settings.headers.is_empty() {
                    return Err("`headers` apply to a `url`, not to a `command`".to_owned());
                }
                Transport::Stdio { command, args: settings.args, env: settings.env, cwd: settings.cwd }
            }
            (_, Some(_), Some(_)) => return Err("give either `command` or `url`, not both".to_owned()),
            (_, None, None) => return Err("give `command` (a subprocess) or `url` (streamable HTTP)".to_owned()),
            (Some(other), _, _) => {
                return Err(format!(
                    "`type: {other}` does not fit the entry (expected stdio with `command`, or http with `url`)"
                ));
            }
        };
        let timeouts = settings.timeout.as_ref().map_or(Ok(Timeouts::default()), timeouts_of)?;
        Ok(Self {
            transport,
            required_env: settings.required_env,
            secrets: settings.secrets,
            timeouts,
            prefix: settings.prefix.unwrap_or(true),
            protocol: settings.protocol_version.as_deref().map_or(Ok(Protocol::Auto), Protocol::parse)?,
            oauth: settings.oauth.unwrap_or_default(),
            sandbox: settings.sandbox,
            trust: settings.trust,
        })
    }
}

/// For `Serialize`, which shows a config: the values of `env` and `headers` and the URL
/// redacted (see [`ServerConfig`]), so what is written is no longer what was read.
impl From<ServerConfig> for ServerSettings {
    fn from(config: ServerConfig) -> Self {
        let timeout = (config.timeouts != Timeouts::default()).then(|| {
            serde_json::json!({
                "startup": skill_core::duration::format(config.timeouts.startup),
                "call": skill_core::duration::format(config.timeouts.call),
            })
        });
        let mut settings = ServerSettings {
            required_env: config.required_env,
            secrets: config.secrets,
            timeout,
            prefix: (!config.prefix).then_some(false),
            protocol_version: match config.protocol {
                Protocol::Auto => None,
                Protocol::Pinned(version) => Some(version),
            },
            oauth: (config.oauth != OAuthClient::default()).then_some(config.oauth),
            sandbox: config.sandbox,
            trust: config.trust,
            ..ServerSettings::default()
        };
        match config.transport {
            Transport::Stdio { command, args, env, cwd } => {
                settings.command = Some(command);
                settings.args = args;
                settings.env = redacted_values(&env);
                settings.cwd = cwd;
            }
            Transport::Http { url, headers } => {
                settings.kind = Some("http".to_owned());
                settings.url = Some(redact::url_text(&url));
                settings.headers = redacted_values(&headers);
            }
        }
        settings
    }
}

/// The keys of a pasted `mcpServers` entry that omniagent uses.
pub const PASTED_KEYS: [&str; 7] = ["type", "command", "args", "env", "cwd", "url", "headers"];

/// An entry of a pasted `mcpServers` map: the keys the MCP clients write, and any other
/// key kept aside so the caller can warn about it.
#[derive(Debug, Clone, Deserialize)]
pub struct PastedServer {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Keys this crate does not use (`disabled`, `autoApprove`, …).
    #[serde(flatten)]
    pub ignored: BTreeMap<String, serde_json::Value>,
}

impl TryFrom<PastedServer> for ServerConfig {
    type Error = String;

    fn try_from(pasted: PastedServer) -> Result<Self, String> {
        ServerConfig::try_from(ServerSettings {
            kind: pasted.kind,
            command: pasted.command,
            args: pasted.args,
            env: pasted.env,
            cwd: pasted.cwd,
            url: pasted.url,
            headers: pasted.headers,
            ..ServerSettings::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: serde_json::Value) -> Result<ServerConfig, String> {
        serde_json::from_value(json).map_err(|error| error.to_string())
    }

    #[test]
    fn reads_stdio_and_http_servers() {
        let config = parse(serde_json::json!({
            "command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}, "timeout": "5s",
            "required_env": ["KEY"], "secrets": {"KEY": "env:HOST_KEY"}
        }))
        .unwrap();
        assert_eq!(config.timeouts, Timeouts { startup: Duration::from_secs(5), call: Duration::from_secs(5) });
        assert!(matches!(config.transport, Transport::Stdio { ref command, .. } if command == "npx"));
        assert_eq!(config.protocol, Protocol::Auto);
        let pinned = serde_json::json!({"command": "npx", "protocol_version": "2025-11-25"});
        assert_eq!(parse(pinned.clone()).unwrap().protocol, Protocol::Pinned("2025-11-25".to_owned()));
        assert_eq!(serde_json::to_value(parse(pinned.clone()).unwrap()).unwrap(), pinned);
        let config = parse(serde_json::json!({"url": "http://127.0.0.1:1/mcp", "timeout": {"call": "250ms"}})).unwrap();
        assert_eq!(config.timeouts, Timeouts { startup: DEFAULT_STARTUP_TIMEOUT, call: Duration::from_millis(250) });
    }

    #[test]
    fn the_known_versions_are_rmcps() {
        let rmcp: Vec<&str> =
            rmcp::model::ProtocolVersion::KNOWN_VERSIONS.iter().map(|version| version.as_str()).collect();
        assert_eq!(rmcp, Protocol::KNOWN);
    }

    #[test]
    fn debug_and_serialize_show_no_value_of_env_headers_or_the_url_query() {
        const CANARY: &str = "ghp_canary8d1e";
        let stdio = parse(serde_json::json!({"command": "npx", "env": {"GITHUB_TOKEN": CANARY}})).unwrap();
        let http = parse(serde_json::json!({
            "url": format!("https://me:{CANARY}@mcp.example.com/mcp?key={CANARY}"),
            "headers": {"X-Api-Key": CANARY},
        }))
        .unwrap();
        for config in [stdio.clone(), http.clone()] {
            let shown = [format!("{config:?}"), serde_json::to_string(&config).unwrap()].join("\n");
            assert!(!shown.contains(CANARY), "{shown}");
        }
        assert_eq!(
            serde_json::to_value(&stdio).unwrap(),
            serde_json::json!({"command": "npx", "env": {"GITHUB_TOKEN": "REDACTED"}})
        );
        assert_eq!(
            serde_json::to_value(&http).unwrap(),
            serde_json::json!({
                "type": "http",
                "url": "https://mcp.example.com/mcp?key=REDACTED",
                "headers": {"X-Api-Key": "REDACTED"},
            })
        );
        assert!(format!("{http:?}").contains(r#"headers: {"X-Api-Key": "REDACTED"}"#));
    }

    #[test]
    fn variables_are_the_names_expansion_looks_up() {
        let stdio = parse(serde_json::json!({
            "command": "${BIN:-npx}", "args": ["--token=${env:TOKEN}", "$PLAIN"], "env": {"A": "${HOST_A}"}
        }))
        .unwrap();
        assert_eq!(stdio.variables(), BTreeSet::from(["BIN", "HOST_A", "TOKEN"].map(str::to_owned)));
        let http =
            parse(serde_json::json!({"url": "https://h/${PATH_PART}?k=${KEY}", "headers": {"X": "${X_KEY}"}})).unwrap();
        assert_eq!(http.variables(), BTreeSet::from(["KEY", "PATH_PART", "X_KEY"].map(str::to_owned)));
    }

    #[test]
    fn refuses_entries_that_do_not_add_up() {
        let check = |json: serde_json::Value, expect: &str| assert_eq!(parse(json).unwrap_err(), expect);
        check(serde_json::json!({}), "give `command` (a subprocess) or `url` (streamable HTTP)");
        check(serde_json::json!({"command": "a", "url": "b"}), "give either `command` or `url`, not both");
        check(
            serde_json::json!({"command": "a", "headers": {"A": "b"}}),
            "`headers` apply to a `url`, not to a `command`",
        );
        check(
            serde_json::json!({"command": "a", "timeout": "soon"}),
            "timeout `\"soon\"` is not a duration (write e.g. 500ms, 30s, 2m)",
        );
        check(
            serde_json::json!({"command": "a", "timeout": {"init": "1s"}}),
            "unknown timeout `init` (expected `startup` or `call`)",
        );
        check(
            serde_json::json!({"command": "a", "comand": "b"}),
            "unknown field `comand`, expected one of `type`, `command`, `args`, `env`, `cwd`, `url`, `headers`, `required_env`, `secrets`, `timeout`, `prefix`, `protocol_version`, `oauth`, `sandbox`, `trust`",
        );
        check(
            serde_json::json!({"command": "a", "protocol_version": "2025-11-26"}),
            "protocol_version `2025-11-26` is not known (expected auto or one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)",
        );
    }
}
