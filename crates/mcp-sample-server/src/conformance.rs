//! `--conformance`: the fixtures that the server scenarios of the MCP conformance suite
//! (`@modelcontextprotocol/conformance`) call, served beside the sample tools.
//!
//! Every name, text and schema here is one that a scenario calls or checks, so change
//! none without reading the scenario. The fixtures answer in both protocol eras: on a
//! session that began with `initialize` (2025-11-25 and older) the server asks the client
//! with requests of its own (`sampling/createMessage`, `elicitation/create`) and logs with
//! `notifications/message`; on 2026-07-28 it returns an `InputRequiredResult` instead and
//! logs only when the request's `_meta` names a log level.

mod client_requests;
mod completion;
mod input_required;
mod prompts;
mod resources;
mod tools;

use std::sync::{Arc, Mutex, PoisonError};

#[allow(deprecated, reason = "logging/setLevel is still part of protocol 2025-11-25")]
use rmcp::model::{LoggingLevel, SetLevelRequestMethod, SetLevelRequestParams};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
        GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
        ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext},
};

use crate::{
    conformance::{input_required::RequestStates, tools::FixtureTool},
    server::{self, SampleServer},
};

/// The sample server plus the conformance fixtures. Clones share everything; a new
/// legacy HTTP session gets its own log level through [`Self::for_new_session`].
#[derive(Debug, Clone)]
pub(crate) struct ConformanceServer {
    sample: SampleServer,
    /// Seals the `requestState` of the multi-round (`input_required`) fixtures.
    request_states: Arc<RequestStates>,
    /// The level that `logging/setLevel` set on this session; `None` logs every level.
    #[allow(deprecated, reason = "logging/setLevel is still part of protocol 2025-11-25")]
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
}

impl ConformanceServer {
    /// Fails only when the operating system cannot give a random key for `requestState`.
    pub(crate) fn new(sample: SampleServer) -> Result<Self, getrandom::Error> {
        Ok(Self { sample, request_states: Arc::new(RequestStates::new()?), log_level: Arc::default() })
    }

    /// The same server, with the log level of a session that has not sent `logging/setLevel`.
    pub(crate) fn for_new_session(&self) -> Self {
        Self { log_level: Arc::default(), ..self.clone() }
    }

    #[allow(deprecated, reason = "logging/setLevel is still part of protocol 2025-11-25")]
    fn session_log_level(&self) -> Option<LoggingLevel> {
        *self.log_level.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether `context` is a request on protocol 2026-07-28 or newer (no `initialize`,
/// everything the server needs to know in the request's `_meta`).
fn is_2026(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_some_and(|version| version >= rmcp::model::ProtocolVersion::V_2026_07_28)
}

impl ServerHandler for ConformanceServer {
    #[allow(deprecated, reason = "the logging capability is still part of protocol 2025-11-25")]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(server::SERVER_NAME, env!("CARGO_PKG_VERSION")).with_icons(crate::icons::server()),
            )
            .with_instructions("Test tools for the skill-mcp tests, and the MCP conformance suite's fixtures.")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = self.sample.tools();
        tools.extend(FixtureTool::ALL.iter().map(|tool| tool.definition()));
        tools.sort_by(|left, right| left.name.cmp(&right.name));
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        let (tools, next_cursor) = server::page_of_tools(tools, cursor, self.sample.page_size())?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match FixtureTool::from_name(name) {
            Some(tool) => Some(tool.definition()),
            None => self.sample.get_tool(name),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match FixtureTool::from_name(&request.name) {
            Some(tool) => tools::call(self, tool, request, context).await,
            None => self.sample.call_tool(request, context).await,
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        prompts::get(&request)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&request.uri).map(ReadResourceResponse::from)
    }

    // The watched resource never changes, so a subscription only has to be accepted.
    #[allow(deprecated, reason = "resources/subscribe is still part of protocol 2025-11-25")]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::read(&request.uri).map(drop)
    }

    #[allow(deprecated, reason = "resources/unsubscribe is still part of protocol 2025-11-25")]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::read(&request.uri).map(drop)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Ok(CompleteResult::new(completion::complete(&request)))
    }

    #[allow(deprecated, reason = "logging/setLevel is still part of protocol 2025-11-25")]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // Protocol 2026-07-28 removed the method: the level comes with each request.
        if is_2026(&context) {
            return Err(McpError::method_not_found::<SetLevelRequestMethod>());
        }
        *self.log_level.lock().unwrap_or_else(PoisonError::into_inner) = Some(request.level);
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.sample.listen(context).await
    }
}
