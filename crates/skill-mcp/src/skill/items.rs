//! An MCP server's prompts and resources as skill items, and the conversions between
//! rmcp's model types and skill-core's (both in MCP's wire form).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, GetPromptRequestParams, GetPromptResponse,
    ReadResourceRequestParams, ReadResourceResponse, Reference,
};
use serde_json::Value;
use skill_core::{
    Completion, CompletionRequest, ItemKind, Prompt, PromptInfo, PromptOutput, ResourceOutput, ResourceReader,
    ToolError,
};

use super::Shared;
use super::input::{Answer, until_complete};
use crate::wire::wire_into;

impl Shared {
    /// Whether the server takes resource subscriptions.
    fn subscribes(&self) -> bool {
        self.current()
            .and_then(|connection| connection.peer.peer_info())
            .and_then(|info| info.capabilities.resources.clone())
            .is_some_and(|resources| resources.subscribe == Some(true))
    }

    /// The server's suggestions for an argument of `reference`; none when the server
    /// does not complete, or answers with an error (suggestions are optional: the
    /// failure is logged, as an optional listing's is).
    async fn complete(
        self: &Arc<Self>,
        reference: Reference,
        request: &CompletionRequest,
    ) -> Result<Completion, ToolError> {
        let completes = self
            .current()
            .and_then(|connection| connection.peer.peer_info())
            .is_none_or(|info| info.capabilities.completions.is_some());
        if !completes {
            return Ok(Completion::default());
        }
        let context = CompletionContext::with_arguments(request.context.clone().into_iter().collect());
        let params = CompleteRequestParams::new(reference, ArgumentInfo::new(&request.argument, &request.value))
            .with_context(context);
        let answered = self
            .request(async |connection| match connection.peer.complete(params).await {
                Ok(result) => Ok(Some(result)),
                Err(ServiceError::McpError(error)) => {
                    self.failed("completion/complete", &error.message);
                    Ok(None)
                }
                Err(error) => Err(error),
            })
            .await?;
        let Some(result) = answered else { return Ok(Completion::default()) };
        wire_into(&result.completion).map_err(|error| {
            ToolError::failed(format!("MCP server `{}` sent unreadable completions: {error}", self.server))
        })
    }
}

/// One prompt of an MCP server.
pub(super) struct McpPrompt {
    pub(super) info: PromptInfo,
    pub(super) shared: Arc<Shared>,
    /// Whether it is the trust lock's definition, offered before the server started (see
    /// [`Shared::ready_stand_in`]).
    pub(super) stand_in: bool,
}

#[async_trait]
impl Prompt for McpPrompt {
    fn info(&self) -> &PromptInfo {
        &self.info
    }

    async fn get(&self, arguments: BTreeMap<String, String>) -> Result<PromptOutput, ToolError> {
        let arguments: serde_json::Map<String, Value> =
            arguments.into_iter().map(|(name, value)| (name, Value::String(value))).collect();
        let shared = &self.shared;
        if self.stand_in {
            shared.ready_stand_in(ItemKind::Prompt, &self.info.name).await?;
        }
        let result = until_complete(&shared.server, &shared.person, |responses, state| {
            let mut params = GetPromptRequestParams::new(self.info.name.clone()).with_arguments(arguments.clone());
            (params.input_responses, params.request_state) = (responses, state);
            crate::wire::with_trace(&mut params);
            async move {
                let response = shared.request(async |connection| connection.peer.get_prompt_once(params).await).await?;
                Ok(match response {
                    GetPromptResponse::InputRequired(asked) => Answer::InputRequired(asked),
                    GetPromptResponse::Complete(result) => Answer::Complete(result),
                    _ => {
                        return Err(ToolError::failed(format!(
                            "MCP server `{}` answered prompts/get with something else",
                            shared.server
                        )));
                    }
                })
            }
        })
        .await?;
        wire_into(&result).map_err(|error| {
            ToolError::failed(format!("MCP server `{}` sent an unreadable prompt: {error}", self.shared.server))
        })
    }

    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, ToolError> {
        self.shared.complete(Reference::for_prompt(self.info.name.clone()), request).await
    }
}

/// Reads the resources of an MCP server.
pub(super) struct McpResources {
    pub(super) shared: Arc<Shared>,
    /// Whether it reads the resources the trust lock recorded, offered before the server
    /// started (see [`Shared::ready_stand_in`]).
    pub(super) stand_in: bool,
}

#[async_trait]
impl ResourceReader for McpResources {
    async fn read(&self, uri: &str) -> Result<ResourceOutput, ToolError> {
        let shared = &self.shared;
        if self.stand_in {
            shared.ready_stand_in(ItemKind::Resource, uri).await?;
        }
        let result = until_complete(&shared.server, &shared.person, |responses, state| {
            let mut params = ReadResourceRequestParams::new(uri);
            (params.input_responses, params.request_state) = (responses, state);
            crate::wire::with_trace(&mut params);
            async move {
                let response =
                    shared.request(async |connection| connection.peer.read_resource_once(params).await).await?;
                Ok(match response {
                    ReadResourceResponse::InputRequired(asked) => Answer::InputRequired(asked),
                    ReadResourceResponse::Complete(result) => Answer::Complete(result),
                    _ => {
                        return Err(ToolError::failed(format!(
                            "MCP server `{}` answered resources/read with something else",
                            shared.server
                        )));
                    }
                })
            }
        })
        .await?;
        wire_into(&result).map_err(|error| {
            ToolError::failed(format!("MCP server `{}` sent an unreadable resource: {error}", self.shared.server))
        })
    }

    async fn complete(&self, uri_template: &str, request: &CompletionRequest) -> Result<Completion, ToolError> {
        self.shared.complete(Reference::for_resource(uri_template), request).await
    }

    /// Subscribes on the server when it declares subscriptions; its
    /// `notifications/resources/updated` then reach the agent.
    async fn subscribe(&self, uri: &str) -> Result<(), ToolError> {
        if !self.shared.subscribes() {
            return Ok(());
        }
        self.shared.request(async |connection| connection.subscribe(uri).await).await
    }

    async fn unsubscribe(&self, uri: &str) -> Result<(), ToolError> {
        if !self.shared.subscribes() {
            return Ok(());
        }
        self.shared.request(async |connection| connection.unsubscribe(uri).await).await
    }
}
