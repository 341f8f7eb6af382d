//! Who answers a server's elicitation (`elicitation/create`, or an `input_required`
//! request for one) when no gateway client is there to: an [`Elicitor`] given to the
//! skill. Without one every elicitation is declined.

use async_trait::async_trait;
use serde_json::{Map, Value};

/// What a server asks of the person.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    /// The server asking.
    pub server: String,
    /// What it says it needs, for the person.
    pub message: String,
    /// How the person answers.
    pub mode: ElicitationMode,
}

/// How an elicitation is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationMode {
    /// Fields to fill in: an object schema of primitive properties, with `required`,
    /// `default`, `enum`, `title` and `description` as MCP allows them.
    Form {
        /// The requested schema, as the server sent it.
        schema: Value,
    },
    /// A page the person opens; the answer only says whether they will.
    Url {
        /// The page.
        url: String,
    },
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Given, with the fields' values (empty for URL mode).
    Accept(Map<String, Value>),
    /// Refused; the call goes on without it.
    Decline,
    /// Dismissed; the call may stop.
    Cancel,
}

/// Answers elicitations on behalf of the person.
#[async_trait]
pub trait Elicitor: Send + Sync {
    /// The answer to `elicitation`.
    async fn elicit(&self, elicitation: Elicitation) -> ElicitationAnswer;
}

/// Accepts a form when every required field has a default, with the defaults of every
/// field that has one; declines anything else (for runs without a person).
#[derive(Debug, Clone, Copy, Default)]
pub struct AcceptDefaults;

#[async_trait]
impl Elicitor for AcceptDefaults {
    async fn elicit(&self, elicitation: Elicitation) -> ElicitationAnswer {
        let ElicitationMode::Form { schema } = &elicitation.mode else { return ElicitationAnswer::Decline };
        defaults_of(schema).map_or(ElicitationAnswer::Decline, ElicitationAnswer::Accept)
    }
}

/// The defaults of `schema`'s properties, or `None` when a required one has none.
fn defaults_of(schema: &Value) -> Option<Map<String, Value>> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let defaults: Map<String, Value> = properties
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect();
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
    required.filter_map(Value::as_str).all(|name| defaults.contains_key(name)).then_some(defaults)
}

/// `request` as an [`Elicitation`] of `server`; `None` for a mode MCP added since.
pub(crate) fn from_wire(server: &str, request: rmcp::model::ElicitRequestParams) -> Option<Elicitation> {
    use rmcp::model::ElicitRequestParams;
    let (message, mode) = match request {
        ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
            let schema = serde_json::to_value(requested_schema).unwrap_or_default();
            (message, ElicitationMode::Form { schema })
        }
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => (message, ElicitationMode::Url { url }),
        _ => return None,
    };
    Some(Elicitation { server: server.to_owned(), message, mode })
}

/// `answer` as MCP's `ElicitResult`.
pub(crate) fn to_wire(answer: ElicitationAnswer) -> rmcp::model::ElicitResult {
    use rmcp::model::{ElicitResult, ElicitationAction};
    match answer {
        ElicitationAnswer::Accept(content) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
        }
        ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_fill_a_form_only_when_every_required_field_has_one() {
        let schema = json!({
            "type": "object",
            "properties": {"name": {"type": "string", "default": "Ada"}, "age": {"type": "integer"}},
            "required": ["name"],
        });
        assert_eq!(defaults_of(&schema), Some(Map::from_iter([("name".to_owned(), json!("Ada"))])));
        let mut strict = schema.clone();
        strict["required"] = json!(["name", "age"]);
        assert_eq!(defaults_of(&strict), None);
    }

    #[tokio::test]
    async fn accept_defaults_declines_a_url() {
        let url = Elicitation {
            server: "s".to_owned(),
            message: "Sign in".to_owned(),
            mode: ElicitationMode::Url { url: "https://example.com".to_owned() },
        };
        assert_eq!(AcceptDefaults.elicit(url).await, ElicitationAnswer::Decline);
    }
}
