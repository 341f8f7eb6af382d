//! The tools of a URL document offered from the trust lock before the document is
//! fetched (the gateway's instant start): each is the recorded definition, and its first
//! call fetches the document, hands the document's own tools to the agent in their place
//! (whose trust compares them with the lock) and calls the operation of that name.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use skill_core::trust::Recorded;
use skill_core::{
    Icon, ItemKind, ResourceCatalog, SkillHandle, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput,
};

use super::Loader;

/// The tools `recorded` holds, offered until the document is fetched through `loader`;
/// `handle` is the skill's, through which the document's own tools replace them. A
/// definition without a name or an input schema is passed over (the document brings it).
pub(super) fn stand_ins(recorded: Recorded, loader: Loader, handle: Option<SkillHandle>) -> Vec<Arc<dyn Tool>> {
    let live = Arc::new(Live { loader, handle, tools: tokio::sync::Mutex::new(None) });
    recorded
        .tools
        .into_iter()
        .filter_map(|definition| StandIn::new(definition, Arc::clone(&live)))
        .map(|tool| Arc::new(tool) as Arc<dyn Tool>)
        .collect()
}

/// The document's own tools by name.
type ByName = Arc<HashMap<String, Arc<dyn Tool>>>;

/// The document's own tools, once fetched.
struct Live {
    loader: Loader,
    handle: Option<SkillHandle>,
    /// The document's tools by name once it was fetched. Held while it is fetched, so
    /// that the calls that come meanwhile wait for that one fetch; a fetch that failed
    /// leaves none, and the next call tries again.
    tools: tokio::sync::Mutex<Option<ByName>>,
}

impl Live {
    /// The document's tools by name: fetched the first time, and then handed to the
    /// agent in place of the stand-ins.
    async fn tools(&self) -> Result<ByName, ToolError> {
        let mut slot = self.tools.lock().await;
        if let Some(tools) = slot.as_ref() {
            return Ok(Arc::clone(tools));
        }
        let name = &self.loader.name;
        let loaded = self.loader.load().await.map_err(|error| {
            ToolError::failed(format!("the OpenAPI document of `{name}` could not be loaded: {error}"))
        })?;
        let tools: Vec<Arc<dyn Tool>> = loaded.tools.into_iter().map(|tool| tool as Arc<dyn Tool>).collect();
        if let Some(handle) = &self.handle
            && let Err(error) = handle.replace_stand_ins(tools.clone(), Vec::new(), ResourceCatalog::default())
        {
            tracing::warn!("openapi skill {name}: the document's tools were not all taken: {error}");
        }
        let tools: HashMap<String, Arc<dyn Tool>> =
            tools.into_iter().map(|tool| (tool.name().to_owned(), tool)).collect();
        let tools = Arc::new(tools);
        *slot = Some(Arc::clone(&tools));
        Ok(tools)
    }

    /// Why the agent withholds the document's tool `name` (as the document names it), now
    /// that the document's tools replaced the lock's: its definition changed, or a scan
    /// rule flags it.
    fn refusal(&self, name: &str) -> Option<String> {
        self.handle.as_ref()?.withheld(ItemKind::Tool, name).map(|item| item.refusal())
    }
}

/// A tool as the lock recorded it.
struct StandIn {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
    icons: Vec<Icon>,
    meta: Option<Value>,
    live: Arc<Live>,
}

impl StandIn {
    fn new(mut definition: Value, live: Arc<Live>) -> Option<Self> {
        let mut take = |key: &str| definition.get_mut(key).map(Value::take).filter(|value| !value.is_null());
        let name = take("name")?.as_str()?.to_owned();
        let input_schema = take("inputSchema")?;
        Some(Self {
            name,
            title: take("title").and_then(|title| title.as_str().map(str::to_owned)),
            description: take("description").and_then(|text| text.as_str().map(str::to_owned)).unwrap_or_default(),
            input_schema,
            output_schema: take("outputSchema"),
            annotations: take("annotations").and_then(|hints| serde_json::from_value(hints).ok()).unwrap_or_default(),
            icons: take("icons").and_then(|icons| serde_json::from_value(icons).ok()).unwrap_or_default(),
            meta: take("_meta"),
            live,
        })
    }
}

#[async_trait]
impl Tool for StandIn {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    fn icons(&self) -> &[Icon] {
        &self.icons
    }

    fn meta(&self) -> Option<&Value> {
        self.meta.as_ref()
    }

    /// Fetches the document (once), then calls its operation of this name, unless the
    /// document no longer has it or its definition now differs from the one offered
    /// (the agent withholds it then).
    async fn call(&self, context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError> {
        let tools = self.live.tools().await?;
        let Some(tool) = tools.get(&self.name) else {
            let skill = &self.live.loader.name;
            return Err(ToolError::failed(format!(
                "the OpenAPI document of `{skill}` no longer has the operation `{}`",
                self.name
            )));
        };
        if let Some(message) = self.live.refusal(&self.name) {
            return Err(ToolError::Withheld { message });
        }
        tool.call(context, arguments).await
    }
}
