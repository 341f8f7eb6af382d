//! The call path: every tool call, prompt get and resource read of an agent passes
//! through one list of layers, outermost first, each seeing the same [`CallContext`].
//! A layer that refuses ends the call with its reason (a tool call's result is then an
//! `isError` result for the model), and the layers inside it never see the call.
//!
//! The agent composes them in one place ([`Layers::new`]): the hooks it was built with,
//! then the pinning check; the concerns DESIGN.md lists after them add layers here.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::trust::WithheldItem;
use crate::{ItemKind, ToolCall, ToolError, ToolHook, ToolOutput, ToolSource};

/// One call, as every layer sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallContext<'a> {
    /// What is called: a tool, a prompt or a resource.
    pub kind: ItemKind,
    /// Its agent-level name (a resource's agent-level URI).
    pub name: &'a str,
    /// The skill that gives it.
    pub skill: &'a str,
    /// Where a tool comes from (tool calls only).
    pub source: Option<&'a ToolSource>,
    /// The arguments, as checked against the input schema (`{}` for a read).
    pub arguments: &'a Value,
    /// Why the item is withheld, when it is.
    pub withheld: Option<&'a WithheldItem>,
}

/// A concern of every call: it may refuse a call before it runs, and sees how each tool
/// call it let through ended.
pub trait CallLayer: Send + Sync {
    /// Runs before the call; an error ends it with that error.
    fn check(&self, _call: &CallContext<'_>) -> Result<(), ToolError> {
        Ok(())
    }

    /// Runs when a tool call this layer let through has finished, with its outcome and
    /// how long it took.
    fn finished(&self, _call: &CallContext<'_>, _outcome: &Result<ToolOutput, ToolError>, _duration: Duration) {}
}

/// The agent's layers, in order.
pub(super) struct Layers {
    layers: Vec<Arc<dyn CallLayer>>,
    /// Whether any layer but the pinning check is there (a call then takes the time).
    observed: bool,
}

impl Layers {
    /// The layers of an agent built with `hooks` (outermost first), then the pinning
    /// check.
    pub(super) fn new(hooks: Vec<Arc<dyn ToolHook>>) -> Self {
        let observed = !hooks.is_empty();
        let mut layers: Vec<Arc<dyn CallLayer>> =
            hooks.into_iter().map(|hook| Arc::new(Hook(hook)) as Arc<dyn CallLayer>).collect();
        layers.push(Arc::new(Pinning));
        Self { layers, observed }
    }

    /// Runs every layer's check, outermost first; the first refusal ends the call. For
    /// a prompt get or a resource read, whose end no layer watches, and for a tool call
    /// when no layer is [observed](Self::observed).
    pub(super) fn check(&self, call: &CallContext<'_>) -> Result<(), ToolError> {
        self.layers.iter().try_for_each(|layer| layer.check(call))
    }

    /// Whether any layer sees how a tool call ends.
    pub(super) fn observed(&self) -> bool {
        self.observed
    }

    /// Runs a tool call through the layers: each checks it, outermost first, and the
    /// first refusal is its outcome; else `run` is. Then every layer that let it through
    /// sees the outcome, in the same order (hooks run in the order they were added).
    pub(super) async fn call(
        &self,
        call: &CallContext<'_>,
        run: impl Future<Output = Result<ToolOutput, ToolError>>,
    ) -> Result<ToolOutput, ToolError> {
        let started = std::time::Instant::now();
        let mut passed = 0;
        let mut refused = None;
        for layer in &self.layers {
            match layer.check(call) {
                Ok(()) => passed += 1,
                Err(refusal) => {
                    refused = Some(refusal);
                    break;
                }
            }
        }
        let outcome = match refused {
            Some(refusal) => Err(refusal),
            None => run.await,
        };
        if self.observed {
            let duration = started.elapsed();
            for layer in &self.layers[..passed] {
                layer.finished(call, &outcome, duration);
            }
        }
        outcome
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

/// A [`ToolHook`] as a layer: it watches tool calls and refuses none.
struct Hook(Arc<dyn ToolHook>);

impl CallLayer for Hook {
    fn check(&self, call: &CallContext<'_>) -> Result<(), ToolError> {
        if let Some(source) = call.source {
            self.0.before_call(source, call.arguments);
        }
        Ok(())
    }

    fn finished(&self, call: &CallContext<'_>, outcome: &Result<ToolOutput, ToolError>, duration: Duration) {
        if let Some(source) = call.source {
            self.0.after_call(&ToolCall { name: call.name, source, arguments: call.arguments, outcome, duration });
        }
    }
}
