//! The MCP service: static tools from `#[tool_router]`, tools added at run time, and a
//! hand-written `list_tools` that can serve the list in pages.

use std::{
    io::{self, Write as _},
    process::{Command, Stdio},
    sync::{Arc, Mutex, PoisonError, RwLock},
    time::Duration,
};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::{
        router::tool::{ToolRoute, ToolRouter},
        tool::{ToolCallContext, schema_for_output},
        wrapper::Parameters,
    },
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
        ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerCapabilities,
        ServerConfig, SubscriptionFilter, Tool,
    },
    service::{RequestContext, SubscriptionContext, SubscriptionSink},
    tool, tool_router,
};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// Name the server reports in its `initialize` answer.
pub(crate) const SERVER_NAME: &str = "mcp-sample-server";

/// Length of each line that the stderr writers emit, newline included.
const STDERR_LINE_LEN: usize = 64;
const MEGABYTE: u64 = 1024 * 1024;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct EchoArgs {
    /// Text to send back unchanged.
    text: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct AddArgs {
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct AddOutput {
    /// `a + b`.
    sum: i64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct EnvArgs {
    /// Name of the environment variable to read.
    name: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct CrashArgs {
    /// A line to write to stderr before exiting.
    stderr: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct RefuseArgs {
    /// The message of the JSON-RPC error.
    message: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct SleepArgs {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct StderrArgs {
    /// How many megabytes (MiB) of text lines to write to stderr.
    megabytes: u32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct AddToolArgs {
    /// Name of the new tool.
    name: String,
}

/// The sample server. Clones share the tool list and the subscriptions.
#[derive(Debug, Clone)]
pub(crate) struct SampleServer {
    /// The tools served now: replaced as a whole (copy on write) when `add_tool` runs, so a
    /// call only holds the lock long enough to clone the `Arc`.
    tools: Arc<RwLock<Arc<ToolRouter<SampleServer>>>>,
    /// `tools/list` page size; `None` serves every tool in one page.
    page_size: Option<usize>,
    /// Open `subscriptions/listen` streams of clients on protocol 2026-07-28 or newer,
    /// which get `notifications/tools/list_changed` only through such a stream.
    subscriptions: Arc<Mutex<Vec<SubscriptionSink>>>,
    /// Becomes `true` at stdin EOF, which ends the subscriptions gracefully.
    input_closed: watch::Receiver<bool>,
}

#[tool_router]
impl SampleServer {
    pub(crate) fn new(page_size: Option<usize>, input_closed: watch::Receiver<bool>) -> Self {
        Self {
            tools: Arc::new(RwLock::new(Arc::new(Self::tool_router()))),
            page_size,
            subscriptions: Arc::default(),
            input_closed,
        }
    }

    #[tool(description = "Answer with `text` unchanged")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(
        description = "Add two integers; the sum comes as text and as structured content {\"sum\": n}",
        output_schema = schema_for_output::<AddOutput>(),
        icons = crate::icons::item()
    )]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> CallToolResult {
        let sum = a.wrapping_add(b);
        let mut result = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
        result.structured_content = Some(serde_json::json!(AddOutput { sum }));
        result
    }

    #[tool(description = "Answer with the value of environment variable `name`, or a tool error when it is not set")]
    fn env(&self, Parameters(EnvArgs { name }): Parameters<EnvArgs>) -> Result<String, String> {
        match std::env::var_os(&name) {
            Some(value) => Ok(value.to_string_lossy().into_owned()),
            None => Err(format!("{name} is not set")),
        }
    }

    #[tool(description = "Exit the server process with code 3 without answering, after writing `stderr` to stderr")]
    fn crash(&self, Parameters(CrashArgs { stderr }): Parameters<CrashArgs>) -> String {
        if let Some(line) = stderr {
            let _ignored = writeln!(io::stderr(), "{line}");
        }
        std::process::exit(3)
    }

    #[tool(description = "Refuse the call with a JSON-RPC invalid-params error (-32602) carrying `message`")]
    fn refuse(&self, Parameters(RefuseArgs { message }): Parameters<RefuseArgs>) -> Result<String, McpError> {
        Err(McpError::invalid_params(message, None))
    }

    #[tool(description = "Never answer, and ignore cancellation")]
    async fn hang(&self) -> String {
        loop {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }

    #[tool(
        description = "Sleep for `ms` milliseconds, then answer \"slept\"; when cancelled, stops and writes `sleep cancelled` to stderr"
    )]
    async fn sleep(
        &self,
        Parameters(SleepArgs { ms }): Parameters<SleepArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<String, McpError> {
        // Progress 0 tells a client that asked for progress that the call has begun here,
        // so its test can cancel a call that is surely running.
        if let Some(token) = context.meta.get_progress_token() {
            let started = ProgressNotificationParam::new(token, 0.0).with_total(ms as f64);
            let _not_sent = context.peer.notify_progress(started).await;
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => Ok("slept".to_owned()),
            // rmcp drops the answer to a cancelled request, so this error is never sent;
            // the line on stderr tells a host's tests that the cancellation arrived.
            () = context.ct.cancelled() => {
                let _ignored = writeln!(io::stderr(), "{SERVER_NAME}: sleep cancelled");
                Err(McpError::internal_error("sleep cancelled", None))
            }
        }
    }

    #[tool(
        description = "Write `megabytes` MiB of text lines to stderr, one unbuffered write per line, then answer \"wrote N MB\""
    )]
    async fn stderr(&self, Parameters(StderrArgs { megabytes }): Parameters<StderrArgs>) -> Result<String, String> {
        // A host that does not drain stderr blocks this write; the blocking pool keeps the
        // rest of the server answering meanwhile.
        tokio::task::spawn_blocking(move || write_stderr(u64::from(megabytes)))
            .await
            .map_err(|error| format!("stderr writer failed: {error}"))?
            .map_err(|error| format!("cannot write stderr: {error}"))?;
        Ok(format!("wrote {megabytes} MB"))
    }

    #[tool(
        description = "Add a tool called `name` that echoes its arguments as JSON text, then send notifications/tools/list_changed"
    )]
    async fn add_tool(
        &self,
        Parameters(AddToolArgs { name }): Parameters<AddToolArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<String, String> {
        {
            let mut tools = self.tools.write().unwrap_or_else(PoisonError::into_inner);
            if tools.has_route(&name) {
                return Err(format!("tool `{name}` already exists"));
            }
            let mut updated = ToolRouter::clone(&tools);
            updated.add_route(ToolRoute::new(
                Tool::new(
                    name,
                    "Answer with this call's arguments as JSON text (added by add_tool)",
                    rmcp::model::object(serde_json::json!({ "type": "object" })),
                ),
                echo_arguments,
            ));
            *tools = Arc::new(updated);
        }
        self.notify_tool_list_changed(&context)
            .await
            .map_err(|error| format!("tool added, but the notification failed: {error}"))?;
        Ok("added".to_owned())
    }

    #[tool(
        description = "Start a grandchild process `sleep 3600` in the server's process group and answer with its pid"
    )]
    fn spawn_child(&self) -> Result<String, String> {
        // stdin and stdout are the MCP channel, so the grandchild gets neither.
        let child = Command::new("sleep")
            .arg("3600")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| format!("cannot start `sleep 3600`: {error}"))?;
        Ok(child.id().to_string())
    }

    #[tool(description = "Answer with the server's own process id")]
    fn pid(&self) -> String {
        std::process::id().to_string()
    }

    #[tool(
        description = "Answer with the client's name, version and capabilities as this call declared them, and the capabilities it declared in `initialize` (none on 2026-07-28), as JSON"
    )]
    fn client(&self, context: RequestContext<RoleServer>) -> String {
        let initialized = context.peer.peer_info().map(|info| info.capabilities.clone());
        serde_json::json!({
            "clientInfo": context.client_info(),
            "capabilities": context.client_capabilities(),
            "initialized": initialized,
        })
        .to_string()
    }

    #[tool(description = "Answer with the protocol version the call was made in")]
    fn protocol_version(&self, context: RequestContext<RoleServer>) -> String {
        context.protocol_version().map_or_else(|| "unknown".to_owned(), |version| version.as_str().to_owned())
    }
}

/// A list whose change the server announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangedList {
    Tools,
    Prompts,
}

impl SampleServer {
    fn current_tools(&self) -> Arc<ToolRouter<Self>> {
        Arc::clone(&self.tools.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Every tool served now, in name order.
    pub(crate) fn tools(&self) -> Vec<Tool> {
        self.current_tools().list_all()
    }

    /// The `tools/list` page size; `None` serves every tool in one page.
    /// Adds `bad_schema` and `remote_ref` (see `--odd-schemas`), both echoing their
    /// arguments.
    pub(crate) fn add_odd_schemas(&self) {
        let mut tools = ToolRouter::clone(&self.current_tools());
        let odd = [
            ("bad_schema", serde_json::json!({"type": "object", "properties": {"x": {"type": 12}}})),
            (
                "remote_ref",
                serde_json::json!({"type": "object", "properties": {"thing": {"$ref": "http://127.0.0.1:9/thing.json"}}}),
            ),
        ];
        for (name, schema) in odd {
            let description = "Answer with this call's arguments as JSON text (an odd input schema)";
            tools.add_route(ToolRoute::new(Tool::new(name, description, rmcp::model::object(schema)), echo_arguments));
        }
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(tools);
    }

    /// Adds the tools of `--hostile` (see [`crate::hostile`]) to those served.
    pub(crate) fn add_hostile_tools(&self) {
        let mut tools = ToolRouter::clone(&self.current_tools());
        tools.merge(Self::hostile_router());
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(tools);
    }

    pub(crate) fn page_size(&self) -> Option<usize> {
        self.page_size
    }

    async fn notify_tool_list_changed(&self, context: &RequestContext<RoleServer>) -> Result<(), String> {
        self.notify_list_changed(context, ChangedList::Tools).await
    }

    /// Tells the client that a list changed: a plain notification for clients that used
    /// `initialize`, the open subscription streams for clients on 2026-07-28 or newer
    /// (a stream whose filter leaves that list out does not get it).
    ///
    /// Notifications belong to the session, so a session that began with `initialize`
    /// gets a plain one even when the request's `_meta` names 2026-07-28, as a gateway's
    /// forwarded requests may.
    pub(crate) async fn notify_list_changed(
        &self,
        context: &RequestContext<RoleServer>,
        list: ChangedList,
    ) -> Result<(), String> {
        let session_version = context.peer.peer_info().map(|info| info.protocol_version.clone());
        let uses_subscriptions = session_version.is_none_or(|version| version >= ProtocolVersion::V_2026_07_28);
        if !uses_subscriptions {
            let sent = match list {
                ChangedList::Tools => context.peer.notify_tool_list_changed().await,
                ChangedList::Prompts => context.peer.notify_prompt_list_changed().await,
            };
            return sent.map_err(|error| error.to_string());
        }
        let sinks = self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner).clone();
        for sink in sinks {
            // A stream closed since it was listed, or filtered to other lists, simply
            // misses the notification.
            let _not_sent = match list {
                ChangedList::Tools => sink.notify_tool_list_changed().await,
                ChangedList::Prompts => sink.notify_prompt_list_changed().await,
            };
        }
        Ok(())
    }
}

/// The handler of every tool that `add_tool` creates.
fn echo_arguments(arguments: JsonObject) -> String {
    serde_json::Value::Object(arguments).to_string()
}

/// Writes `megabytes` MiB of numbered 64-byte lines to stderr, one write per line.
pub(crate) fn write_stderr(megabytes: u64) -> io::Result<()> {
    let n_lines = megabytes * (MEGABYTE / STDERR_LINE_LEN as u64);
    let mut stderr = io::stderr().lock();
    let mut line = [b'.'; STDERR_LINE_LEN];
    line[STDERR_LINE_LEN - 1] = b'\n';
    for line_idx in 0..n_lines {
        let label = format!("{SERVER_NAME} stderr line {line_idx:>12} ");
        line[..label.len()].copy_from_slice(label.as_bytes());
        stderr.write_all(&line)?;
    }
    Ok(())
}

/// One page of `tools` starting at the numeric `cursor`, and the cursor of the next page.
pub(crate) fn page_of_tools(
    mut tools: Vec<Tool>,
    cursor: Option<&str>,
    page_size: Option<usize>,
) -> Result<(Vec<Tool>, Option<String>), McpError> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&start| start <= tools.len())
            .ok_or_else(|| McpError::invalid_params(format!("invalid cursor `{cursor}`"), None))?,
    };
    let end = page_size.map_or(tools.len(), |page_size| start.saturating_add(page_size).min(tools.len()));
    let next_cursor = (end < tools.len()).then(|| end.to_string());
    tools.truncate(end);
    Ok((tools.split_off(start), next_cursor))
}

impl ServerHandler for SampleServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")).with_icons(crate::icons::server()),
            )
            .with_instructions("Test tools for the skill-mcp integration tests and benchmarks.")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        // `list_all` sorts by name, so the numeric cursors stay stable while tools are added
        // only if the new names sort last; a client re-lists after list_changed anyway.
        let (tools, next_cursor) = page_of_tools(self.current_tools().list_all(), cursor, self.page_size)?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.current_tools().get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tools = self.current_tools();
        tools.call(ToolCallContext::new(self, request, context)).await
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let sink = context.sink().clone();
        let subscription_id = context.request_context().id.clone();
        self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner).push(sink);
        let mut input_closed = self.input_closed.clone();
        // Without the EOF arm rmcp would wait for this handler before exiting on EOF.
        tokio::select! {
            () = context.cancelled() => {}
            _closed = input_closed.wait_for(|&closed| closed) => {}
        }
        self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner).retain(|sink| *sink.id() != subscription_id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_names(n_tools: usize) -> Vec<Tool> {
        (0..n_tools).map(|tool_idx| Tool::new(format!("t{tool_idx}"), "", JsonObject::new())).collect()
    }

    fn check(n_tools: usize, cursor: Option<&str>, page_size: Option<usize>, expected: (&[&str], Option<&str>)) {
        let (page, next_cursor) = page_of_tools(tool_names(n_tools), cursor, page_size).unwrap();
        let names: Vec<&str> = page.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!((names.as_slice(), next_cursor.as_deref()), expected);
    }

    #[test]
    fn pages() {
        check(3, None, None, (&["t0", "t1", "t2"], None));
        check(3, None, Some(2), (&["t0", "t1"], Some("2")));
        check(3, Some("2"), Some(2), (&["t2"], None));
        check(4, Some("2"), Some(2), (&["t2", "t3"], None));
        check(3, Some("3"), Some(2), (&[], None));
        check(0, None, Some(2), (&[], None));
    }

    #[test]
    fn bad_cursors() {
        for cursor in ["4", "-1", "abc", ""] {
            let error = page_of_tools(tool_names(3), Some(cursor), Some(2)).unwrap_err();
            assert_eq!(error.message, format!("invalid cursor `{cursor}`"));
        }
    }

    #[test]
    fn stderr_lines_are_64_bytes() {
        let label = format!("{SERVER_NAME} stderr line {:>12} ", u64::MAX / 2);
        assert!(label.len() < STDERR_LINE_LEN);
    }
}
