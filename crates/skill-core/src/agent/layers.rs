//! The call path: every tool call, prompt get and resource read of an agent passes
//! through one list of layers, outermost first, each seeing the same [`CallContext`].
//! A layer that refuses ends the call with its reason (a tool call's result is then an
//! `isError` result for the model), and the layers inside it never see the call. A call
//! of an unknown item, or with arguments its schema refuses, is no exception: it passes
//! through the layers and is refused innermost, where the item would run.
//!
//! The agent composes them in one place ([`Layers::new`]): the hooks it was built with,
//! the layers its builder was given in order (telemetry, audit, policy, rate limits),
//! then the secret egress guard and the pinning check.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::caller::Caller;
use crate::trust::WithheldItem;
use crate::{
    ItemKind, PromptOutput, ResourceOutput, ToolAnnotations, ToolCall, ToolError, ToolHook, ToolOutput, ToolSource,
};

/// An item of an agent as the layers see it, in a call or in a list.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Item<'a> {
    /// A tool, a prompt or a resource.
    pub kind: ItemKind,
    /// Its agent-level name (a resource's agent-level URI).
    pub name: &'a str,
    /// The skill that gives it; empty for a call of a name the agent has no item of,
    /// which the layers see all the same and which ends innermost with `NotFound`.
    pub skill: &'a str,
    /// Where a tool comes from (tools only).
    pub source: Option<&'a ToolSource>,
    /// A tool's behaviour hints (none for prompts and resources).
    pub annotations: ToolAnnotations,
}

impl<'a> Item<'a> {
    /// A prompt, resource or template: no source, no hints.
    pub(super) fn plain(kind: ItemKind, name: &'a str, skill: &'a str) -> Self {
        Self { kind, name, skill, source: None, annotations: ToolAnnotations::default() }
    }
}

/// One call, as every layer sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallContext<'a> {
    /// The agent's name.
    pub agent: &'a str,
    /// Who calls.
    pub caller: &'a Caller,
    /// What is called.
    pub item: Item<'a>,
    /// The arguments, as checked against the input schema (a prompt's as an object of
    /// strings; `{}` for a read).
    pub arguments: &'a Value,
    /// Why the item is withheld, when it is.
    pub withheld: Option<&'a WithheldItem>,
}

/// What a call gave, as it passes back out through the layers.
#[derive(Debug)]
#[non_exhaustive]
pub enum CallOutput {
    /// A tool call's result.
    Tool(ToolOutput),
    /// A filled prompt.
    Prompt(PromptOutput),
    /// A resource's contents.
    Resource(ResourceOutput),
}

impl CallOutput {
    /// A tool's result, which a tool call's path gives.
    pub(super) fn tool(self) -> Result<ToolOutput, ToolError> {
        match self {
            CallOutput::Tool(output) => Ok(output),
            other => Err(other.mismatched()),
        }
    }

    /// A filled prompt, which a prompt get's path gives.
    pub(super) fn prompt(self) -> Result<PromptOutput, ToolError> {
        match self {
            CallOutput::Prompt(output) => Ok(output),
            other => Err(other.mismatched()),
        }
    }

    /// A resource's contents, which a read's path gives.
    pub(super) fn resource(self) -> Result<ResourceOutput, ToolError> {
        match self {
            CallOutput::Resource(output) => Ok(output),
            other => Err(other.mismatched()),
        }
    }

    /// The error of a layer that answered a call with another kind of output: a bug of
    /// that layer, which costs only this call.
    fn mismatched(&self) -> ToolError {
        let kind = match self {
            CallOutput::Tool(_) => "a tool's result",
            CallOutput::Prompt(_) => "a prompt",
            CallOutput::Resource(_) => "a resource's contents",
        };
        ToolError::Failed { message: format!("a layer of the call path answered with {kind}, which was not asked for") }
    }
}

/// A call on its way through the rest of the path.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = Result<CallOutput, ToolError>> + Send + 'a>>;

/// A concern of every call, in tower's shape: it gets the call and the rest of the path
/// ([`Next`]), and may refuse the call, run code around it, or watch how it ended.
///
/// A layer that only decides whether a call may go on implements [`check`](Self::check);
/// one that must see the call run (to time it, trace it, record it) implements
/// [`call`](Self::call).
pub trait CallLayer: Send + Sync {
    /// Whether the item is refused to the caller whatever the arguments: then it is left
    /// out of the caller's lists and searches (and its calls are refused by
    /// [`check`](Self::check) all the same).
    fn hides(&self, _caller: &Caller, _item: &Item<'_>) -> bool {
        false
    }

    /// Whether the call may go on; an error ends it with that error.
    fn check(&self, _call: &CallContext<'_>) -> Result<(), ToolError> {
        Ok(())
    }

    /// Runs the call through this layer: by default, [`check`](Self::check) and then
    /// the rest of the path.
    fn call<'a>(&'a self, call: &'a CallContext<'a>, next: Next<'a>) -> CallFuture<'a> {
        match self.check(call) {
            Ok(()) => next.run(),
            Err(refusal) => Box::pin(std::future::ready(Err(refusal))),
        }
    }
}

/// The rest of a call's path, after the layer it is given to.
pub struct Next<'a> {
    rest: &'a [Arc<dyn CallLayer>],
    call: &'a CallContext<'a>,
    run: CallFuture<'a>,
}

impl<'a> Next<'a> {
    /// Runs the call through the remaining layers and the item itself.
    ///
    /// The inner layers' [`check`](CallLayer::check)s run as this is called, not as the
    /// future is polled: a layer that wraps the rest of the path in a scope (a trace
    /// context) calls `run` inside it.
    pub fn run(self) -> CallFuture<'a> {
        match self.rest.split_first() {
            None => self.run,
            Some((layer, rest)) => layer.call(self.call, Next { rest, call: self.call, run: self.run }),
        }
    }
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("layers", &self.rest.len()).finish_non_exhaustive()
    }
}

/// The agent's layers, in order.
pub(super) struct Layers {
    layers: Vec<Arc<dyn CallLayer>>,
}

impl Layers {
    /// The layers of an agent: `hooks` (outermost first), then `layers` in order, then
    /// the pinning check.
    pub(super) fn new(hooks: Vec<Arc<dyn ToolHook>>, layers: Vec<Arc<dyn CallLayer>>) -> Self {
        let hooks = (!hooks.is_empty()).then(|| Arc::new(Hooks(hooks)) as Arc<dyn CallLayer>);
        let layers = hooks.into_iter().chain(layers).chain([Arc::new(Pinning) as Arc<dyn CallLayer>]).collect();
        Self { layers }
    }

    /// Whether some layer keeps `item` from `caller`'s lists.
    pub(super) fn hides(&self, caller: &Caller, item: &Item<'_>) -> bool {
        self.layers.iter().any(|layer| layer.hides(caller, item))
    }

    /// Runs a call through the layers, outermost first, and then `run`, unless a layer
    /// refuses it.
    pub(super) async fn call(
        &self,
        call: &CallContext<'_>,
        run: impl Future<Output = Result<CallOutput, ToolError>> + Send,
    ) -> Result<CallOutput, ToolError> {
        Next { rest: &self.layers, call, run: Box::pin(run) }.run().await
    }
}

/// The pinning check: a withheld item is refused, naming the command that reviews it.
struct Pinning;

impl CallLayer for Pinning {
    fn check(&self, call: &CallContext<'_>) -> Result<(), ToolError> {
        match call.withheld {
            Some(item) => Err(ToolError::Withheld { message: item.refusal() }),
            None => Ok(()),
        }
    }
}

/// The agent's [`ToolHook`]s as one layer: they watch tool calls and refuse none, each
/// seeing a call before and after it in the order they were added.
struct Hooks(Vec<Arc<dyn ToolHook>>);

impl CallLayer for Hooks {
    fn call<'a>(&'a self, call: &'a CallContext<'a>, next: Next<'a>) -> CallFuture<'a> {
        let Some(source) = call.item.source else { return next.run() };
        for hook in &self.0 {
            hook.before_call(source, call.arguments);
        }
        Box::pin(async move {
            let started = Instant::now();
            let outcome = match next.run().await {
                Ok(CallOutput::Tool(output)) => Ok(output),
                Ok(other) => return Ok(other),
                Err(error) => Err(error),
            };
            let duration = started.elapsed();
            let finished =
                ToolCall { name: call.item.name, source, arguments: call.arguments, outcome: &outcome, duration };
            for hook in &self.0 {
                hook.after_call(&finished);
            }
            outcome.map(CallOutput::Tool)
        })
    }
}
