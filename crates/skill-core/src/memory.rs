//! `memory`: a compiled skill that lets the model remember, recall, forget and list
//! short notes, kept in the agent's store.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{Skill, SkillStore, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput};

/// The `memory` skill: tools `remember(key, value)`, `recall(key)`, `forget(key)` and
/// `list(prefix)`, on the storage capability.
///
/// With the CLI's default store, memories persist under `$OMNIAGENT_HOME/state/` and are
/// shared by every process of the same agent.
#[derive(Debug, Default)]
pub struct MemorySkill {
    store: Option<SkillStore>,
}

impl MemorySkill {
    /// The skill; it gets its store from the agent.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl Skill for MemorySkill {
    fn name(&self) -> &str {
        "memory"
    }

    fn description(&self) -> &str {
        "Remember short notes by key and recall them later, across sessions"
    }

    fn set_storage(&mut self, store: SkillStore) {
        self.store = Some(store);
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        [Operation::Remember, Operation::Recall, Operation::Forget, Operation::List]
            .into_iter()
            .map(|operation| Arc::new(MemoryTool { operation, store: store.clone() }) as Arc<dyn Tool>)
            .collect()
    }
}

#[derive(Debug, Clone, Copy)]
enum Operation {
    Remember,
    Recall,
    Forget,
    List,
}

struct MemoryTool {
    operation: Operation,
    store: SkillStore,
}

#[derive(Deserialize)]
struct Arguments {
    #[serde(default)]
    key: String,
    #[serde(default)]
    value: String,
    #[serde(default)]
    prefix: String,
}

fn key_property() -> Value {
    json!({"type": "string", "minLength": 1, "description": "The note's key, e.g. `user.name`"})
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::Remember => "remember",
            Operation::Recall => "recall",
            Operation::Forget => "forget",
            Operation::List => "list",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Operation::Remember => "Store a note under a key, replacing any earlier note with that key",
            Operation::Recall => "Return the note stored under a key",
            Operation::Forget => "Delete the note stored under a key",
            Operation::List => "List the keys of stored notes, optionally only those starting with a prefix",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Operation::Remember => "Remember a note",
            Operation::Recall => "Recall a note",
            Operation::Forget => "Forget a note",
            Operation::List => "List remembered notes",
        }
    }

    /// Recall and list only read; remember overwrites a note of the same key, forget
    /// deletes one; both have no further effect when repeated. Nothing leaves the store.
    fn annotations(self) -> ToolAnnotations {
        let read_only = matches!(self, Operation::Recall | Operation::List);
        ToolAnnotations {
            read_only_hint: Some(read_only),
            destructive_hint: (!read_only).then_some(true),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        }
    }

    fn schema(self) -> &'static Value {
        static SCHEMAS: [OnceLock<Value>; 4] = [const { OnceLock::new() }; 4];
        SCHEMAS[self as usize].get_or_init(|| match self {
            Operation::Remember => json!({
                "type": "object",
                "properties": {
                    "key": key_property(),
                    "value": {"type": "string", "description": "The note to keep"}
                },
                "required": ["key", "value"],
                "additionalProperties": false
            }),
            Operation::Recall | Operation::Forget => json!({
                "type": "object",
                "properties": {"key": key_property()},
                "required": ["key"],
                "additionalProperties": false
            }),
            Operation::List => json!({
                "type": "object",
                "properties": {
                    "prefix": {"type": "string", "description": "Only keys starting with this (default: all keys)"}
                },
                "additionalProperties": false
            }),
        })
    }
}

#[async_trait]
impl Tool for MemoryTool {
    fn name(&self) -> &str {
        self.operation.name()
    }

    fn description(&self) -> &str {
        self.operation.description()
    }

    fn input_schema(&self) -> &Value {
        self.operation.schema()
    }

    fn title(&self) -> Option<&str> {
        Some(self.operation.title())
    }

    fn annotations(&self) -> ToolAnnotations {
        self.operation.annotations()
    }

    async fn call(&self, _context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError> {
        let Arguments { key, value, prefix } = Arguments::deserialize(&arguments)
            .map_err(|error| ToolError::failed(format!("unreadable arguments: {error}")))?;
        let failed = |error: crate::Error| ToolError::failed(error);
        match self.operation {
            Operation::Remember => {
                self.store.put(&key, value.as_bytes()).await.map_err(failed)?;
                Ok(ToolOutput::text(format!("remembered `{key}`")).with_structured(json!({"key": key})))
            }
            Operation::Recall => match self.store.get(&key).await.map_err(failed)? {
                Some(bytes) => {
                    let value = String::from_utf8_lossy(&bytes).into_owned();
                    Ok(ToolOutput::text(value.clone()).with_structured(json!({"key": key, "value": value})))
                }
                None => Ok(ToolOutput::error(format!("nothing is remembered under `{key}`"))),
            },
            Operation::Forget => {
                let forgotten = self.store.delete(&key).await.map_err(failed)?;
                let text =
                    if forgotten { format!("forgot `{key}`") } else { format!("nothing was remembered under `{key}`") };
                Ok(ToolOutput::text(text).with_structured(json!({"key": key, "forgotten": forgotten})))
            }
            Operation::List => {
                let keys = self.store.keys(&prefix).await.map_err(failed)?;
                Ok(ToolOutput::text(keys.join("\n")).with_structured(json!({"keys": keys})))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Agent;

    async fn agent() -> Agent {
        let agent = Agent::builder().with_compiled_skill(MemorySkill::new()).build();
        assert_eq!(agent.init_compiled_skills().await.loaded, ["memory"]);
        agent
    }

    #[tokio::test]
    async fn remembers_recalls_lists_and_forgets() {
        let agent = agent().await;
        for (key, value) in [("user.name", "Ada"), ("user.city", "Lyon"), ("todo", "tea")] {
            agent.call_tool("memory__remember", json!({"key": key, "value": value})).await.unwrap();
        }
        let recalled = agent.call_tool("memory__recall", json!({"key": "user.city"})).await.unwrap();
        assert_eq!(recalled, ToolOutput::text("Lyon").with_structured(json!({"key": "user.city", "value": "Lyon"})));

        let listed = agent.call_tool("memory__list", json!({"prefix": "user."})).await.unwrap();
        assert_eq!(listed.structured_content, Some(json!({"keys": ["user.city", "user.name"]})));
        let listed = agent.call_tool("memory__list", json!({})).await.unwrap();
        assert_eq!(listed.structured_content, Some(json!({"keys": ["todo", "user.city", "user.name"]})));

        let forgot = agent.call_tool("memory__forget", json!({"key": "todo"})).await.unwrap();
        assert_eq!(forgot.structured_content, Some(json!({"key": "todo", "forgotten": true})));
        let again = agent.call_tool("memory__forget", json!({"key": "todo"})).await.unwrap();
        assert_eq!(again.structured_content, Some(json!({"key": "todo", "forgotten": false})));

        let missing = agent.call_tool("memory__recall", json!({"key": "todo"})).await.unwrap();
        assert_eq!(missing, ToolOutput::error("nothing is remembered under `todo`"));
    }

    #[tokio::test]
    async fn schemas_refuse_bad_arguments_before_the_store_is_touched() {
        let agent = agent().await;
        let check = |arguments: Value, expect: &'static str| {
            let agent = agent.clone();
            async move {
                let error = agent.call_tool("memory__remember", arguments).await.unwrap_err();
                assert_eq!(error.to_string(), expect);
            }
        };
        check(
            json!({"key": "a"}),
            "invalid arguments for `memory__remember`: arguments: \"value\" is a required property",
        )
        .await;
        check(
            json!({"key": "", "value": "v"}),
            "invalid arguments for `memory__remember`: /key: \"\" is shorter than 1 character",
        )
        .await;
        check(
            json!({"key": "a", "value": 1}),
            "invalid arguments for `memory__remember`: /value: 1 is not of type \"string\"",
        )
        .await;
    }
}
