//! The audit trail (`observability.audit`): one JSON line per tool call, prompt get and
//! resource read, written by a layer of every agent's call path, inside telemetry and
//! outside policy, rate limits, the secret egress guard and the pinning check, so that a
//! refused call is recorded with the layer that refused it. A call of an unknown item, or
//! whose arguments its schema refuses, is recorded too: it is refused innermost.
//!
//! A line is one [`AuditRecord`], every field present (`null` when it does not apply), in
//! this order:
//!
//! ```json
//! {"time":"2026-12-05T08:01:02.345Z","client":"alice","agent":"alice","identity":null,
//!  "kind":"tool","item":"memory__remember","skill":"memory","source":"skill",
//!  "arguments":"sha256:07a4…","outcome":"ok","error_kind":null,"layer":null,"reason":null,
//!  "duration_ms":0.412,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}
//! ```
//!
//! The format is stable: fields may be added, none renamed or removed. [`read_recent`]
//! reads the latest lines back, newest first.
//!
//! Lines are appended by one writer per file in the process (every agent of a gateway
//! shares it), each with one `write` under a lock, so concurrent calls give whole lines,
//! none lost and none interleaved. A file that would pass `max_bytes` is rotated first:
//! `audit.jsonl` becomes `audit.jsonl.1`, `.1` becomes `.2`, up to `keep` old files.
//!
//! No line holds a secret value: arguments are a digest by default; `redacted` shows them
//! with every string that holds a secret value of the agent (whole or encoded, as the
//! secret egress guard finds them) and every value under a key named like a secret
//! (`token`, `api_key`, `password`, ...) replaced by `REDACTED`; a refusal's reason names a
//! secret's reference, never its value; a tool's own error message (which may repeat its
//! arguments) is not recorded, only its kind.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skill_core::{
    CallContext, CallFuture, CallLayer, CallOutput, ItemKind, Next, SecretMatcher, Secrets, ToolError, redact,
};

use crate::config::{AgentConfig, Home};

/// `observability.audit`: where the audit goes and what it shows of arguments.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The file lines are appended to (`~/` expanded, a relative path taken from the
    /// config file's folder), or `-` for standard error. Default
    /// `$OMNIAGENT_HOME/audit.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What a line shows of the arguments.
    #[serde(default, skip_serializing_if = "is_default")]
    pub arguments: AuditArguments,
    /// The size a file may reach before it is rotated (default 64 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// How many rotated files are kept (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<usize>,
    /// What a call gets when its line cannot be written.
    #[serde(default, skip_serializing_if = "is_default")]
    pub on_error: AuditOnError,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// What an audit line shows of a call's arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditArguments {
    /// `sha256:` and the SHA-256 of their canonical JSON: which calls had the same
    /// arguments, and nothing of what they were.
    #[default]
    Digest,
    /// The arguments, with secret values and the values of keys named like secrets
    /// replaced by `REDACTED`.
    Redacted,
    /// Nothing (`null`).
    Off,
}

/// What a call gets when its audit line cannot be written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditOnError {
    /// Fail closed: while the audit cannot be written, calls are refused, and a call
    /// whose line could not be written gets an error instead of its result. An operator
    /// who keeps an audit counts on every call being in it; a full disk or a removed
    /// folder must not let calls through unrecorded.
    #[default]
    Refuse,
    /// Fail open: the call goes on, and the failure is logged.
    Allow,
}

/// The default largest size of an audit file before it is rotated.
const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The default number of rotated audit files kept.
const DEFAULT_KEEP: usize = 5;

/// The room made for a line as it is written: most lines are shorter.
const LINE_CAPACITY: usize = 512;

/// One line of the audit: one call.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[non_exhaustive]
pub struct AuditRecord {
    /// When the call ended, RFC 3339 in UTC to the millisecond.
    pub time: String,
    /// The client that called (`cli` for the command line).
    pub client: String,
    /// The agent that answered.
    pub agent: String,
    /// The `sub` of the client's OAuth identity, if it has one.
    pub identity: Option<String>,
    /// `tool`, `prompt`, `resource` or `resource_template`.
    pub kind: String,
    /// The item's agent-level name (a resource's URI).
    pub item: String,
    /// The skill that gives it; empty for a call of a name the agent has no item of
    /// (its `error_kind` is `not_found`).
    pub skill: String,
    /// The kind of a tool's skill: `skill` (compiled), `mcp` or `openapi`.
    pub source: Option<String>,
    /// As `observability.audit.arguments` says: a digest, the redacted arguments, or
    /// `null`.
    pub arguments: Option<Value>,
    /// `ok`; `error` (the call failed, or its result is an error); `refused` (a layer of
    /// the call path refused it); `withheld` (its item is withheld by the trust).
    pub outcome: String,
    /// Why it was not `ok`: `tool_error` (a result marked as an error), `failed`,
    /// `timeout`, `cancelled`, `invalid_arguments`, `not_found`, `refused`, `withheld`.
    pub error_kind: Option<String>,
    /// The layer that refused it: `policy`, `rate_limit`, `secret_guard`, `audit`.
    pub layer: Option<String>,
    /// A refusal's or a withholding's message (a rule's name, a wait, a secret's
    /// reference, the command that reviews the item).
    pub reason: Option<String>,
    /// How long the call took inside this layer, in milliseconds.
    pub duration_ms: f64,
    /// The W3C trace id of the call's trace.
    pub trace_id: Option<String>,
}

/// A line as it is written: an [`AuditRecord`], its fields in the same order, borrowed
/// from the call rather than copied into strings of their own, since a line is written
/// for every call.
#[derive(Serialize)]
struct AuditLine<'a> {
    time: &'a str,
    client: &'a str,
    agent: &'a str,
    identity: Option<&'a str>,
    kind: &'static str,
    item: &'a str,
    skill: &'a str,
    source: Option<&'static str>,
    arguments: Option<Value>,
    outcome: &'static str,
    error_kind: Option<&'static str>,
    layer: Option<&'static str>,
    reason: Option<&'a str>,
    duration_ms: f64,
    trace_id: Option<&'a str>,
}

/// Which lines [`read_recent`] gives: each field set must equal the line's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditFilter {
    /// The client.
    pub client: Option<String>,
    /// The item's agent-level name.
    pub item: Option<String>,
    /// The outcome (`ok`, `error`, `refused`, `withheld`).
    pub outcome: Option<String>,
}

impl AuditFilter {
    fn admits(&self, record: &AuditRecord) -> bool {
        let same = |wanted: &Option<String>, value: &str| wanted.as_deref().is_none_or(|wanted| wanted == value);
        same(&self.client, &record.client) && same(&self.item, &record.item) && same(&self.outcome, &record.outcome)
    }

    /// Each field set as a line writes it (`"client":"bob"`): a line without one of them
    /// cannot be admitted, which is found without parsing it (the console filters 10,000
    /// lines).
    fn needles(&self) -> Vec<Vec<u8>> {
        [("client", &self.client), ("item", &self.item), ("outcome", &self.outcome)]
            .into_iter()
            .filter_map(|(key, wanted)| {
                let value = serde_json::to_string(wanted.as_ref()?).ok()?;
                Some(format!("\"{key}\":{value}").into_bytes())
            })
            .collect()
    }
}

/// Whether `line` holds `needle`.
fn holds(line: &[u8], needle: &[u8]) -> bool {
    let Some((&first, _)) = needle.split_first() else { return true };
    line.windows(needle.len()).any(|window| window[0] == first && window == needle)
}

/// What the console counts of a line, read without the rest of it.
#[derive(Debug, Deserialize)]
#[non_exhaustive]
pub struct AuditBrief<'a> {
    /// As [`AuditRecord::time`].
    #[serde(borrow)]
    pub time: std::borrow::Cow<'a, str>,
    /// As [`AuditRecord::outcome`].
    #[serde(borrow)]
    pub outcome: std::borrow::Cow<'a, str>,
}

/// Calls `each` with the brief of every line of the audit file `path` (and of its rotated
/// files), newest first, until it returns `false`; cheaper than [`read_recent`] for counts.
pub fn scan_recent(path: &Path, mut each: impl FnMut(AuditBrief<'_>) -> bool) -> io::Result<()> {
    let mut going = true;
    let mut files = vec![path.to_path_buf()];
    files.extend((1..=DEFAULT_KEEP.max(1)).map(|n| rotated(path, n)));
    for file in files {
        let scanned = scan_backwards(&file, |line| {
            if let Ok(brief) = serde_json::from_slice::<AuditBrief<'_>>(line) {
                going = each(brief);
            }
            going
        });
        match scanned {
            Err(error) if error.kind() == io::ErrorKind::NotFound => break,
            other => other?,
        }
        if !going {
            break;
        }
    }
    Ok(())
}

/// The latest `limit` lines of the audit file `path` (and of its rotated files, as far as
/// needed) that `filter` admits, newest first. Lines that are not records (one being
/// written, say) are skipped. A file that does not exist has no lines.
pub fn read_recent(path: &Path, limit: usize, filter: &AuditFilter) -> io::Result<Vec<AuditRecord>> {
    let mut found = Vec::new();
    let needles = filter.needles();
    let mut files = vec![path.to_path_buf()];
    files.extend((1..=DEFAULT_KEEP.max(1)).map(|n| rotated(path, n)));
    for file in files {
        if found.len() >= limit {
            break;
        }
        let scanned = scan_backwards(&file, |line| {
            if needles.iter().all(|needle| holds(line, needle))
                && let Ok(record) = serde_json::from_slice::<AuditRecord>(line)
                && filter.admits(&record)
            {
                found.push(record);
            }
            found.len() < limit
        });
        match scanned {
            Err(error) if error.kind() == io::ErrorKind::NotFound => break,
            other => other?,
        }
    }
    Ok(found)
}

/// Calls `each` with every line of the file at `path`, last first, until it returns
/// `false`; reads the file backwards in blocks, so the latest lines of a large file cost
/// what they weigh.
fn scan_backwards(path: &Path, mut each: impl FnMut(&[u8]) -> bool) -> io::Result<()> {
    const BLOCK: u64 = 64 * 1024;
    let mut file = File::open(path)?;
    let mut end = file.metadata()?.len();
    // The start of the earliest line read so far, whose beginning is in an earlier block.
    let mut partial = Vec::new();
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0; usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        block.extend_from_slice(&partial);
        let mut rest = block.as_slice();
        while let Some(newline) = rest.iter().rposition(|&byte| byte == b'\n') {
            let line = &rest[newline + 1..];
            if !line.is_empty() && !each(line) {
                return Ok(());
            }
            rest = &rest[..newline];
        }
        partial = rest.to_vec();
        end = start;
    }
    if !partial.is_empty() {
        each(&partial);
    }
    Ok(())
}

/// The file the audit of `config` is appended to, which [`read_recent`] reads: `None`
/// without `observability.audit`, or when it goes to standard error (`path: "-"`).
pub fn audit_file(config: &AgentConfig, home: &Home) -> Option<PathBuf> {
    let audit = config.sections.observability.audit.as_ref()?;
    Some(configured_path(audit, config, home)).filter(|path| path.as_os_str() != "-")
}

/// Where `audit` (of `config`) writes: its `path`, else `$OMNIAGENT_HOME/audit.jsonl`.
fn configured_path(audit: &AuditConfig, config: &AgentConfig, home: &Home) -> PathBuf {
    match audit.path.as_deref() {
        None => home.root().join("audit.jsonl"),
        Some("-") => PathBuf::from("-"),
        #[cfg(any(feature = "openapi", feature = "markdown", feature = "mcp"))]
        Some(path) => config.resolve_path(path),
        #[cfg(not(any(feature = "openapi", feature = "markdown", feature = "mcp")))]
        Some(path) => {
            // Without those features, no path of the config is taken from its folder.
            let _ = config;
            skill_core::expand_home(path)
        }
    }
}

/// The `n`th rotated file of `path` (`audit.jsonl.1`).
fn rotated(path: &Path, n: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Where the lines go.
enum Sink {
    Stderr,
    File {
        path: PathBuf,
        /// `None` after a failed write or rotation, until it is opened again.
        file: Option<File>,
        /// The file's size as this writer knows it.
        size: u64,
        max_bytes: u64,
        keep: usize,
    },
}

/// The one writer of an audit file (or of standard error) in this process.
pub(crate) struct AuditLog {
    sink: Mutex<Sink>,
    /// What the file is called in messages.
    shown: String,
}

/// The writers of this process, by path (`-` for standard error), so that every agent
/// writing to one file shares its writer.
static LOGS: LazyLock<Mutex<BTreeMap<PathBuf, Weak<AuditLog>>>> = LazyLock::new(Mutex::default);

impl AuditLog {
    /// The writer of `path` (`-`: standard error), opened unless this process has it
    /// open already.
    fn shared(path: &Path, max_bytes: u64, keep: usize) -> io::Result<Arc<AuditLog>> {
        let mut logs = LOGS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(log) = logs.get(path).and_then(Weak::upgrade) {
            return Ok(log);
        }
        let sink = if path == Path::new("-") {
            Sink::Stderr
        } else {
            let file = open_append(path)?;
            let size = file.metadata()?.len();
            Sink::File { path: path.to_path_buf(), file: Some(file), size, max_bytes, keep }
        };
        let log = Arc::new(AuditLog { sink: Mutex::new(sink), shown: path.display().to_string() });
        logs.retain(|_, log| log.strong_count() > 0);
        logs.insert(path.to_path_buf(), Arc::downgrade(&log));
        Ok(log)
    }

    /// Whether lines can be written: a file whose last write failed is opened again.
    fn ready(&self) -> Result<(), String> {
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *sink {
            Sink::Stderr | Sink::File { file: Some(_), .. } => Ok(()),
            Sink::File { path, file, size, .. } => {
                let reopened = open_append(path).and_then(|opened| Ok((opened.metadata()?.len(), opened)));
                let (length, opened) = reopened.map_err(|error| self.failure(&error))?;
                (*file, *size) = (Some(opened), length);
                Ok(())
            }
        }
    }

    /// Appends `line` and a newline with one write, rotating the file first if the line
    /// would take it past its largest size.
    fn append(&self, mut line: Vec<u8>) -> Result<(), String> {
        line.push(b'\n');
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *sink {
            Sink::Stderr => io::stderr().lock().write_all(&line).map_err(|error| self.failure(&error)),
            Sink::File { path, file, size, max_bytes, keep } => {
                if *size > 0 && *size + line.len() as u64 > *max_bytes {
                    *file = None;
                    rotate(path, *keep).map_err(|error| self.failure(&error))?;
                    *file = Some(open_append(path).map_err(|error| self.failure(&error))?);
                    *size = 0;
                }
                let Some(open) = file else { return Err(self.failure(&io::ErrorKind::NotFound.into())) };
                match open.write_all(&line) {
                    Ok(()) => {
                        *size += line.len() as u64;
                        Ok(())
                    }
                    Err(error) => {
                        *file = None;
                        Err(self.failure(&error))
                    }
                }
            }
        }
    }

    fn failure(&self, error: &io::Error) -> String {
        format!("the audit {} cannot be written: {error}", self.shown)
    }
}

/// Opens `path` for appending, creating it (and its folder) if need be, readable by its
/// owner only: it names clients and what they called.
fn open_append(path: &Path) -> io::Result<File> {
    if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Shifts `path`'s rotated files up by one (dropping the one past `keep`) and makes
/// `path` the first of them.
fn rotate(path: &Path, keep: usize) -> io::Result<()> {
    if keep == 0 {
        return std::fs::remove_file(path);
    }
    for n in (1..keep).rev() {
        match std::fs::rename(rotated(path, n), rotated(path, n + 1)) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
    }
    std::fs::rename(path, rotated(path, 1))
}

/// The audit layer of one agent: its share of the log, and what it shows of arguments.
pub(crate) struct AuditLayer {
    log: Arc<AuditLog>,
    arguments: AuditArguments,
    on_error: AuditOnError,
    /// The agent's secret values, for `redacted` arguments.
    secrets: SecretMatcher,
}

impl AuditLayer {
    /// The audit layer `config` asks for, if any; `secrets` are the agent's skills' (for
    /// `arguments: redacted`). The file is opened now, so that one that cannot be opened
    /// is an error at start.
    pub(crate) fn from_config(
        config: &AgentConfig,
        home: &Home,
        secrets: &[(String, Secrets)],
    ) -> Result<Option<Arc<dyn CallLayer>>, crate::HostError> {
        let Some(audit) = &config.sections.observability.audit else { return Ok(None) };
        let path = configured_path(audit, config, home);
        let log =
            AuditLog::shared(&path, audit.max_bytes.unwrap_or(DEFAULT_MAX_BYTES), audit.keep.unwrap_or(DEFAULT_KEEP))
                .map_err(|error| crate::HostError::Audit { path: path.display().to_string(), error })?;
        let secrets = match audit.arguments {
            AuditArguments::Redacted => {
                SecretMatcher::new(secrets.iter().map(|(skill, secrets)| (skill.as_str(), secrets)))
            }
            _ => SecretMatcher::new([]),
        };
        Ok(Some(Arc::new(AuditLayer { log, arguments: audit.arguments, on_error: audit.on_error, secrets })))
    }

    /// The line of a call that ended with `outcome` after `duration`, as JSON.
    fn line(&self, call: &CallContext<'_>, outcome: &Result<CallOutput, ToolError>, duration: Duration) -> Vec<u8> {
        let caller = call.caller;
        let (outcome, error_kind, layer, reason) = match outcome {
            Ok(CallOutput::Tool(output)) if output.is_error => ("error", Some("tool_error"), None, None),
            Ok(_) => ("ok", None, None, None),
            Err(ToolError::Refused { layer, message }) => ("refused", Some("refused"), Some(*layer), Some(message)),
            Err(ToolError::Withheld { message }) => ("withheld", Some("withheld"), None, Some(message)),
            Err(error) => ("error", Some(error_kind(error)), None, None),
        };
        let arguments = match self.arguments {
            AuditArguments::Digest => Some(Value::String(redact::digest(call.arguments))),
            AuditArguments::Redacted => Some(redact::secret_keys(&self.secrets.redact(call.arguments))),
            AuditArguments::Off => None,
        };
        let trace_id = skill_core::trace::current().or(caller.trace).map(|trace| trace.trace_id_hex());
        let line = AuditLine {
            time: &rfc3339_millis(SystemTime::now()),
            client: &caller.client,
            agent: call.agent,
            identity: caller.claims.get("sub").and_then(Value::as_str),
            kind: kind_name(call.item.kind),
            item: call.item.name,
            skill: call.item.skill,
            source: call.item.source.map(|source| source.kind.as_str()),
            arguments,
            outcome,
            error_kind,
            layer,
            reason: reason.map(String::as_str),
            duration_ms: duration.as_secs_f64() * 1000.0,
            trace_id: trace_id.as_deref(),
        };
        // Room for a line's usual length, so that writing it does not grow the buffer,
        // and its newline; serializing strings and numbers does not fail.
        let mut text = Vec::with_capacity(LINE_CAPACITY);
        let _ = serde_json::to_writer(&mut text, &line);
        text
    }

    /// What a call gets when the audit cannot be written: a refusal (fail closed), or
    /// nothing (fail open, the failure logged).
    fn refusal(&self, message: String) -> Option<ToolError> {
        match self.on_error {
            AuditOnError::Refuse => {
                tracing::error!("{message}; calls are refused until it can be (observability.audit.on_error: refuse)");
                Some(ToolError::Refused { layer: "audit", message })
            }
            AuditOnError::Allow => {
                tracing::warn!("{message}; calls go on unrecorded (observability.audit.on_error: allow)");
                None
            }
        }
    }
}

impl CallLayer for AuditLayer {
    fn call<'a>(&'a self, call: &'a CallContext<'a>, next: Next<'a>) -> CallFuture<'a> {
        if let Err(message) = self.log.ready()
            && let Some(refusal) = self.refusal(message)
        {
            return Box::pin(std::future::ready(Err(refusal)));
        }
        Box::pin(async move {
            let started = Instant::now();
            let outcome = next.run().await;
            match self.log.append(self.line(call, &outcome, started.elapsed())) {
                Ok(()) => outcome,
                Err(message) => match self.refusal(format!("{message}; the call ran, but its result is withheld")) {
                    Some(refusal) => Err(refusal),
                    None => outcome,
                },
            }
        })
    }
}

fn kind_name(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => "tool",
        ItemKind::Prompt => "prompt",
        ItemKind::Resource => "resource",
        ItemKind::ResourceTemplate => "resource_template",
        _ => "other",
    }
}

fn error_kind(error: &ToolError) -> &'static str {
    match error {
        ToolError::InvalidArguments { .. } => "invalid_arguments",
        ToolError::NotFound { .. } => "not_found",
        ToolError::Timeout { .. } => "timeout",
        ToolError::Cancelled => "cancelled",
        ToolError::Withheld { .. } => "withheld",
        ToolError::Refused { .. } => "refused",
        _ => "failed",
    }
}

/// `time` as RFC 3339 in UTC to the millisecond (`2026-12-05T08:01:02.345Z`): as a
/// line's `time` is written, so that times compare as text.
pub fn rfc3339_millis(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests;
