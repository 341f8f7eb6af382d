//! What the gateway answers to each request ([`ServerHandler`]): every list and call
//! through the agent of the client that sent it. rmcp serves it through
//! [`traced::Served`], which gives each request its span: a method answered here is
//! answered there too, by this one.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, Reference, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use skill_core::trace::TraceParent;
use skill_core::{Agent, Caller, CompletionRequest, ToolError, ToolIndex};

use super::announce::{Subscribed, session_of};
use super::answer::{call_error, failed_call, item_error, passed_up};
use super::page::page;
use super::progress::progress_to;
use super::{Gateway, caller, convert, http, lock, progress, search, skills, traced};

impl Gateway {
    /// The client a request comes from: the fixed one (stdio), else the one the HTTP
    /// layer authenticated, else the open server's `""`.
    pub(super) fn client_of(&self, extensions: &rmcp::model::Extensions) -> String {
        if let Some(client) = &self.fixed_client {
            return client.clone();
        }
        extensions
            .get::<::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<http::ClientName>())
            .map(|name| name.0.clone())
            .unwrap_or_default()
    }

    /// The words of the tools of `client`'s `agent`, taken again when they changed.
    fn search_index(&self, client: &str, agent: &Agent) -> Arc<ToolIndex> {
        let cached = lock(&self.inner.search_indexes).get(client).filter(|index| index.is_current(agent)).cloned();
        cached.unwrap_or_else(|| {
            let index = Arc::new(ToolIndex::of(agent));
            lock(&self.inner.search_indexes).insert(client.to_owned(), Arc::clone(&index));
            index
        })
    }

    /// The instructions for the client of `context`.
    async fn instructions(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let instructions = self.inner.instructions.as_ref()?;
        instructions(self.client_of(&context.extensions)).await
    }

    async fn request_agent(&self, context: &RequestContext<RoleServer>) -> Result<Agent, ErrorData> {
        let apps = || apps_settings(context);
        let client = self.client_of(&context.extensions);
        let agent = self
            .agent(&client, apps)
            .await
            .map_err(|reason| ErrorData::internal_error(format!("the agent could not start: {reason}"), None))?;
        let claims = context
            .extensions
            .get::<::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<http::ClientClaims>())
            .map(|claims| (*claims.0).clone())
            .unwrap_or_default();
        let session = Some(session_of(&context.extensions)).filter(|session| !session.is_empty());
        Ok(agent.acting_for(Caller::new(client).with_claims(claims).with_trace(trace_of(context)).in_session(session)))
    }
}

/// The trace context a request is served in: its span's, once one is started
/// ([`traced`]); else the one it came with, its `_meta.traceparent` (2026-07-28), else
/// its HTTP `traceparent` header. One that is malformed is no trace context (W3C: a
/// receiver starts a new trace).
pub(super) fn trace_of(context: &RequestContext<RoleServer>) -> Option<TraceParent> {
    if let Some(traced::RequestTrace(trace)) = context.extensions.get() {
        return Some(*trace);
    }
    let header = || {
        let parts = context.extensions.get::<::http::request::Parts>()?;
        parts.headers.get("traceparent")?.to_str().ok()
    };
    context.meta.get_traceparent().or_else(header)?.parse().ok()
}

/// The settings of the MCP Apps extension the client of `context` declared, if it shows
/// apps.
fn apps_settings(context: &RequestContext<RoleServer>) -> Option<JsonObject> {
    context.client_capabilities()?.extensions?.remove(crate::APPS_EXTENSION)
}

impl ServerHandler for Gateway {
    // Logging is deprecated by 2026-07-28 (SEP-2577), but 2025-11-25 clients use it: the
    // gateway sends approvals and its upstreams' log messages.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_skills()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("omniagent", env!("CARGO_PKG_VERSION")))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = self.instructions(&context).await;
        Ok(result)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        info.instructions = self.instructions(&context).await;
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), info))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let client = self.client_of(&context.extensions);
        let mut peers = lock(&self.inner.peers);
        // Sessions that ended are forgotten here too, so a gateway whose lists never
        // change does not keep them.
        peers.retain(|(_, peer)| !peer.is_transport_closed());
        peers.push((client, context.peer));
    }

    /// Accepted: the gateway sends only what its upstreams and approvals send, which
    /// their own levels choose.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let shows_apps = apps_settings(&context).is_some();
        let mut tools = agent.tools();
        tools.retain(|tool| convert::for_the_host(tool, shows_apps));
        let (tools, next_cursor) = match &self.tool_search {
            None => {
                let (tools, next_cursor) = page(tools, |tool| tool.name(), request.as_ref());
                (tools.iter().map(convert::tool).collect(), next_cursor)
            }
            Some(listed) => {
                let listed = tools.iter().filter(|tool| listed.contains(&tool.source().skill));
                let mut tools: Vec<_> = listed.map(convert::tool).chain(search::tools()).collect();
                tools.sort_by(|a, b| a.name.cmp(&b.name));
                page(tools, |tool| &tool.name, request.as_ref())
            }
        };
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let agent = self.request_agent(&context).await?;
        // `through_search`: whether the model called the tool through `call_tool`.
        let (name, arguments, through_search) = match (&self.tool_search, &*request.name) {
            (Some(_), search::SEARCH_TOOLS) => {
                let index = self.search_index(&self.client_of(&context.extensions), &agent);
                let shows_apps = apps_settings(&context).is_some();
                return Ok(search::search(&index, shows_apps, &request.arguments.unwrap_or_default()).into());
            }
            (Some(_), search::CALL_TOOL) => match search::called(request.arguments) {
                Ok((name, arguments)) => (name, arguments, true),
                Err(wrong) => return Ok(failed_call(wrong).into()),
            },
            _ => {
                (request.name.into_owned(), request.arguments.map(serde_json::Value::Object).unwrap_or_default(), false)
            }
        };
        // A client that cancels (or, over HTTP, goes away) drops the call, and with it
        // the upstream request.
        let progress = progress_to(&context);
        let sink = progress.as_ref().map(progress::Forwarding::sink);
        let caller = caller::Caller::of(&context).answering(request.input_responses, request.request_state);
        // Boxed: rmcp spawns each request's future as a task, copying it whole (about 6 KB
        // with the call inline) as it starts and as it ends.
        let call = Box::pin(caller.clone().serving(agent.call_tool(&name, arguments)));
        let call = async move {
            match sink {
                Some(sink) => skill_core::progress::with_progress(sink, call).await,
                None => call.await,
            }
        };
        let outcome = tokio::select! {
            outcome = call => outcome,
            () = context.ct.cancelled() => Err(ToolError::Cancelled),
        };
        if let Some(progress) = progress {
            // Every progress notification goes out before the result.
            progress.flush().await;
        }
        if let Some(answer) = passed_up(&caller) {
            return answer;
        }
        match outcome {
            Ok(output) => convert::call_result(output).map(Into::into),
            Err(error) if through_search => Ok(search::call_failed(error).into()),
            Err(error) => call_error(error),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let asked = CompletionRequest {
            argument: request.argument.name,
            value: request.argument.value,
            context: request.context.and_then(|context| context.arguments).unwrap_or_default().into_iter().collect(),
        };
        let completion = match &request.r#ref {
            Reference::Prompt(prompt) => agent.complete_prompt(&prompt.name, &asked).await,
            Reference::Resource(template) => agent.complete_resource_template(&template.uri, &asked).await,
            other => {
                let kind = other.reference_type();
                return Err(ErrorData::invalid_params(format!("cannot complete a `{kind}` reference"), None));
            }
        }
        .map_err(item_error)?;
        convert::complete_result(&completion)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let (prompts, next_cursor) = page(agent.prompts(), |prompt| prompt.name(), request.as_ref());
        let mut result = ListPromptsResult::with_all_items(prompts.iter().map(convert::prompt).collect());
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let arguments = convert::prompt_arguments(request.arguments);
        let caller = caller::Caller::of(&context).answering(request.input_responses, request.request_state);
        let outcome = caller.clone().serving(agent.get_prompt(&request.name, arguments)).await;
        if let Some(answer) = passed_up(&caller) {
            return answer;
        }
        convert::prompt_result(&outcome.map_err(item_error)?).map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let mut resources = agent.resources();
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        let (resources, next_cursor) = page(resources, |resource| &resource.uri, request.as_ref());
        let mut result = ListResourcesResult::with_all_items(convert::wire_all(&resources)?);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let mut templates = agent.resource_templates();
        templates.sort_by(|a, b| a.uri_template.cmp(&b.uri_template));
        let (templates, next_cursor) = page(templates, |template| &template.uri_template, request.as_ref());
        let mut result = ListResourceTemplatesResult::with_all_items(convert::wire_all(&templates)?);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let caller = caller::Caller::of(&context).answering(request.input_responses, request.request_state);
        let outcome = caller.clone().serving(agent.read_resource(&request.uri)).await;
        if let Some(answer) = passed_up(&caller) {
            return answer;
        }
        let output = outcome.map_err(|error| match error {
            // 2026-07-28 (SEP-2164) makes an unknown resource invalid params; before, it
            // has its own code. Both carry the URI.
            ToolError::NotFound { .. } => {
                let message = format!("no resource `{}`", request.uri);
                let data = Some(serde_json::json!({"uri": request.uri}));
                if context.protocol_version().is_some_and(|version| version >= ProtocolVersion::V_2026_07_28) {
                    ErrorData::invalid_params(message, data)
                } else {
                    ErrorData::resource_not_found(message, data)
                }
            }
            other => item_error(other),
        })?;
        convert::read_result(&output).map(Into::into)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let (skills, next_cursor) = page(skills::skills(&agent).await, |skill| &skill.uri, request.as_ref());
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        skills::skill_at(&agent, &request.uri).await.map(GetSkillResult::new)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = self.request_agent(&context).await?;
        agent.subscribe_resource(&request.uri).await.map_err(item_error)?;
        let subscription = Subscribed {
            client: self.client_of(&context.extensions),
            session: session_of(&context.extensions),
            peer: context.peer,
            uri: request.uri,
        };
        lock(&self.inner.subscribed).push(subscription);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = self.request_agent(&context).await?;
        let (client, session) = (self.client_of(&context.extensions), session_of(&context.extensions));
        let still_wanted = {
            let mut subscribed = lock(&self.inner.subscribed);
            subscribed.retain(|subscription| {
                !(subscription.client == client && subscription.session == session && subscription.uri == request.uri)
            });
            subscribed.iter().any(|subscription| subscription.client == client && subscription.uri == request.uri)
        };
        // The upstream keeps announcing while another session of this client listens.
        if !still_wanted {
            agent.unsubscribe_resource(&request.uri).await.map_err(item_error)?;
        }
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let client = self.client_of(&context.request_context().extensions);
        let sink = context.sink().clone();
        let id = sink.id().clone();
        // The agent exists (and so announces its changes) from the moment a client listens.
        self.request_agent(context.request_context()).await?;
        lock(&self.inner.sinks).push((client, sink));
        tokio::select! {
            () = context.cancelled() => {}
            () = self.inner.stopping.cancelled() => {}
        }
        lock(&self.inner.sinks).retain(|(_, sink)| *sink.id() != id);
        Ok(())
    }
}
