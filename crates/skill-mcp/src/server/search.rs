//! Tool search ([`super::Gateway::with_tool_search`]): for hosts whose model cannot hold
//! every tool in its context (GitHub's API alone gives 1,223), the gateway lists two
//! tools in place of the agent's. `search_tools` finds tools by the words of their names,
//! titles and descriptions and gives their input schemas; `call_tool` calls one by name.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use skill_core::{Agent, RegisteredTool};

use super::convert;

/// The tool that finds tools.
pub(super) const SEARCH_TOOLS: &str = "search_tools";
/// The tool that calls a tool by name.
pub(super) const CALL_TOOL: &str = "call_tool";
/// How many tools a search gives unless it asks for another number.
const DEFAULT_LIMIT: usize = 10;
/// The most tools one search gives.
const MAX_LIMIT: usize = 50;

/// The two tools listed in place of the agent's.
pub(super) fn tools() -> [Tool; 2] {
    let search = Tool::new(
        SEARCH_TOOLS,
        "Finds the tools that can do something, by words of their names and descriptions \
         (most matching first), with the arguments each takes. Call one with `call_tool`.",
        Arc::new(object(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words for what the tool should do, e.g. `list issues`."},
                "limit": {
                    "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                    "description": format!("How many tools to give at most (default {DEFAULT_LIMIT})."),
                },
            },
            "required": ["query"],
        }))),
    )
    .with_title("Search tools")
    .with_raw_output_schema(Arc::new(object(json!({
        "type": "object",
        "properties": {
            "tools": {"type": "array", "items": {"type": "object"}},
            "matched": {"type": "integer", "description": "How many tools matched, given or not."},
        },
        "required": ["tools", "matched"],
    }))))
    .with_annotations(ToolAnnotations::new().read_only(true).idempotent(true).open_world(false));
    let call = Tool::new(
        CALL_TOOL,
        "Calls a tool that `search_tools` found, by its name, with its arguments.",
        Arc::new(object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as `search_tools` gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments, as its `inputSchema` says."},
            },
            "required": ["name"],
        }))),
    )
    .with_title("Call a tool");
    [search, call]
}

/// The words of an agent's tools, taken once for each version of its tool list.
pub(super) struct Index {
    agent: Agent,
    /// The version of the agent's tool list ([`skill_core::Changes::tools`]).
    version: u64,
    tools: Vec<RegisteredTool>,
    /// Of each tool, the words of its name, and those of its title and description.
    words: Vec<(Vec<String>, Vec<String>)>,
}

impl Index {
    /// The words of `agent`'s tools as they are now.
    pub(super) fn of(agent: &Agent) -> Self {
        // The version first: should the tools change meanwhile, the index is only
        // taken again.
        let version = agent.changes().borrow().tools;
        let tools = agent.tools();
        let words = tools
            .iter()
            .map(|tool| {
                let text = words(tool.title().unwrap_or_default()).chain(words(tool.description()));
                (words(tool.name()).collect(), text.collect())
            })
            .collect();
        Self { agent: agent.clone(), version, tools, words }
    }

    /// Whether this is the index of `agent`'s tools as they are now.
    pub(super) fn is_current(&self, agent: &Agent) -> bool {
        self.agent.is(agent) && agent.changes().borrow().tools == self.version
    }
}

/// What a `search_tools` call with `arguments` finds in `index`, for a host that shows
/// MCP Apps (`shows_apps`) or not.
pub(super) fn search(index: &Index, shows_apps: bool, arguments: &JsonObject) -> Result<CallToolResult, ErrorData> {
    let query = arguments.get("query").and_then(Value::as_str).filter(|query| !query.trim().is_empty());
    let query = query.ok_or_else(|| ErrorData::invalid_params("`query` must be a string with words in it", None))?;
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(limit) => limit
            .as_u64()
            .filter(|limit| (1..=MAX_LIMIT as u64).contains(limit))
            .and_then(|limit| usize::try_from(limit).ok())
            .ok_or_else(|| ErrorData::invalid_params(format!("`limit` must be from 1 to {MAX_LIMIT}"), None))?,
    };
    let terms: Vec<String> = words(query).filter(|term| !STOP_WORDS.contains(&term.as_str())).collect();
    let ranked = rank(&index.words, &terms).into_iter().map(|found| &index.tools[found]);
    let for_the_host: Vec<&RegisteredTool> =
        ranked.filter(|tool| shows_apps || !convert::app_only(tool.meta())).collect();
    let found: Vec<Value> = for_the_host
        .iter()
        .take(limit)
        .map(|tool| {
            let listed = convert::tool(tool);
            let mut found =
                json!({"name": listed.name, "description": listed.description, "inputSchema": listed.input_schema});
            if let Some(title) = listed.title {
                found["title"] = Value::String(title);
            }
            found
        })
        .collect();
    Ok(CallToolResult::structured(json!({"tools": found, "matched": for_the_host.len()})))
}

/// The name and arguments a `call_tool` call with `arguments` names.
pub(super) fn called(arguments: Option<JsonObject>) -> Result<(String, Value), ErrorData> {
    let mut arguments = arguments.unwrap_or_default();
    let Some(Value::String(name)) = arguments.remove("name") else {
        return Err(ErrorData::invalid_params("`name` must be the name of a tool, as a string", None));
    };
    match arguments.remove("arguments") {
        None | Some(Value::Null) => Ok((name, Value::Object(JsonObject::new()))),
        Some(object @ Value::Object(_)) => Ok((name, object)),
        Some(_) => Err(ErrorData::invalid_params("`arguments` must be an object", None)),
    }
}

/// The indexes of the tools that match any of `terms`, best first (equals by the length
/// of their names, then in the order given), each tool given as the words of its name
/// and the words of its title and description. A term counts most as a word of a name,
/// less as the start of one, least as the start of a word of the text; and the fewer
/// tools it matches, the more it counts (its inverse document frequency), so `issues`
/// weighs more than `repository`.
fn rank(tools: &[(Vec<String>, Vec<String>)], terms: &[String]) -> Vec<usize> {
    let levels: Vec<Vec<u32>> = tools
        .iter()
        .map(|(name, text)| {
            terms
                .iter()
                .map(|term| {
                    let starts = |word: &String| word.starts_with(term.as_str());
                    if name.contains(term) {
                        4
                    } else if name.iter().any(starts) {
                        2
                    } else {
                        u32::from(text.iter().any(starts))
                    }
                })
                .collect()
        })
        .collect();
    let weights: Vec<f64> = (0..terms.len())
        .map(|term| {
            // BM25's, above 0 even for a term that every tool matches.
            let matching = levels.iter().filter(|levels| levels[term] > 0).count() as f64;
            (1.0 + (tools.len() as f64 - matching + 0.5) / (matching + 0.5)).ln()
        })
        .collect();
    let mut scored: Vec<(f64, usize)> = levels
        .iter()
        .enumerate()
        .map(|(index, levels)| {
            (levels.iter().zip(&weights).map(|(level, weight)| f64::from(*level) * weight).sum(), index)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    // Among equals, the shorter name first: it says less else.
    scored.sort_by(|(a, first), (b, second)| b.total_cmp(a).then(tools[*first].0.len().cmp(&tools[*second].0.len())));
    scored.into_iter().map(|(_, index)| index).collect()
}

/// Words too common to tell tools apart, left out of a query.
const STOP_WORDS: &[&str] =
    &["a", "all", "an", "and", "by", "for", "from", "i", "in", "it", "me", "my", "of", "on", "or", "the", "to", "with"];

/// The words of `text`, in lower case and without a plural `s` (`issues` is `issue`):
/// runs of letters and digits, with a run in camel case (`listIssues`) split where a
/// capital follows a small letter.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|run| !run.is_empty()).flat_map(|run| {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut after_small = false;
        for c in run.chars() {
            if c.is_uppercase() && after_small {
                words.push(std::mem::take(&mut word));
            }
            after_small = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        }
        words.push(word);
        words.into_iter().map(singular)
    })
}

/// `word` without a plural `s` (not of `ss`, nor of a word of three letters or fewer).
fn singular(mut word: String) -> String {
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    word
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_names_descriptions_and_camel_case() {
        let split = |text| words(text).collect::<Vec<_>>();
        assert_eq!(split("github__issues_list-for_repos"), ["github", "issue", "list", "for", "repo"]);
        assert_eq!(split("listIssues for a class."), ["list", "issue", "for", "a", "class"]);
        assert_eq!(split("getHTTPStatus v2Api"), ["get", "httpstatu", "v2", "api"]);
        assert_eq!(split("  "), Vec::<String>::new());
    }

    #[test]
    fn names_count_more_than_text_and_rare_words_more_than_common_ones() {
        let tool = |name: &str, text: &str| (words(name).collect(), words(text).collect());
        let tools = [
            tool("github__repos_get", "Gets a repository."),
            tool("github__issues_list_for_repo", "Lists the issues of a repository."),
            tool("github__repos_list_for_org", "Lists the repositories of an organization."),
            tool("github__issues_listing", ""),
            tool("github__pulls_list", "Lists the pull requests of a repository, and their issues."),
        ];
        let terms: Vec<String> = words("list issues").collect();
        // Both words in the name, then `issue` in the name and `list` starting a word
        // of it, then `issue` in the text, then `list` alone.
        assert_eq!(rank(&tools, &terms), [1, 3, 4, 2]);
        assert_eq!(rank(&tools, &words("zebra").collect::<Vec<_>>()), Vec::<usize>::new());
        // A word every tool has still finds them.
        assert_eq!(rank(&tools[..1], &words("repos").collect::<Vec<_>>()), [0]);
    }

    #[test]
    fn call_tool_takes_a_name_and_an_object() {
        let args = |value: Value| Some(object(value));
        assert_eq!(called(args(json!({"name": "a__b"}))).unwrap(), ("a__b".to_owned(), json!({})));
        assert_eq!(called(args(json!({"name": "a__b", "arguments": {"x": 1}}))).unwrap().1, json!({"x": 1}));
        assert!(called(args(json!({"arguments": {}}))).is_err());
        assert!(called(args(json!({"name": "a__b", "arguments": [1]}))).is_err());
        assert!(called(None).is_err());
    }
}
