//! The tools of an agent's skills: their registry, with each tool's compiled input
//! schema, the parts of schemas left out (a keyword the validator cannot use costs only
//! itself: [`left_out`](super::left_out)), the tools left out (a schema that still does not
//! compile costs only its tool), and calls, checked against the schema.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tracing::Instrument;

use super::items::Announce;
use super::layers::{CallContext, CallOutput, Item};
use super::left_out::{LeftOut, LeftOutKeyword, compile_leaving_out, description_note};
use super::trusted::Kind;
use super::{Agent, read, write};
use crate::naming::close_names;
use crate::{
    FilterReport, Icon, ItemKind, SourceKind, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSource,
};

/// A tool a loaded skill gave that the agent could not register, and why: its input
/// schema does not compile. The skill's other tools are registered all the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolFailure {
    /// The skill.
    pub skill: String,
    /// The tool's name inside the skill.
    pub tool: String,
    /// What is wrong with it.
    pub reason: String,
}

/// What the agent could not take whole of one skill's tools.
#[derive(Debug, Default)]
pub(super) struct ToolProblems {
    /// The tools left out.
    skipped: Vec<ToolFailure>,
    /// The parts of input schemas left out, the tools registered without them.
    left_out: Vec<LeftOutKeyword>,
    /// How many tools the agent's filter left out.
    filtered: usize,
    /// The positions of the filter's patterns that match any of the skill's tools
    /// ([`ToolFilter::patterns_matching`](crate::ToolFilter)).
    matched_patterns: BTreeSet<usize>,
}

/// A tool as the agent registered it: the tool, its agent-level name and its source.
#[derive(Clone)]
pub struct RegisteredTool {
    entry: Arc<Entry>,
}

struct Entry {
    context: ToolContext,
    tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
    /// The input schema as compiled, when parts of the tool's own were left out.
    input_schema: Option<Value>,
    /// The tool's description with a note of what goes unchecked, when that matters.
    description: Option<String>,
    /// The tool's `_meta` with the MCP App it names under its agent-level URI, when it
    /// names one.
    meta: Option<Value>,
}

impl RegisteredTool {
    /// The agent-level name, `{skill}__{tool}`.
    pub fn name(&self) -> &str {
        &self.entry.context.name
    }

    /// Where the tool comes from.
    pub fn source(&self) -> &ToolSource {
        &self.entry.context.source
    }

    /// What the tool does; with a note of what its arguments are not checked for, when
    /// parts of its input schema were left out.
    pub fn description(&self) -> &str {
        self.entry.description.as_deref().unwrap_or_else(|| self.entry.tool.description())
    }

    /// The JSON Schema of the tool's arguments, as the agent checks them: the tool's own,
    /// less the parts left out ([`Agent::left_out_keywords`]).
    pub fn input_schema(&self) -> &Value {
        self.entry.input_schema.as_ref().unwrap_or_else(|| self.entry.tool.input_schema())
    }

    /// A human-readable title, if the tool has one.
    pub fn title(&self) -> Option<&str> {
        self.entry.tool.title()
    }

    /// The tool's behaviour hints.
    pub fn annotations(&self) -> ToolAnnotations {
        self.entry.tool.annotations()
    }

    /// Whether `other` shows a model and a host the very same tool.
    fn shows_as(&self, other: &RegisteredTool) -> bool {
        self.name() == other.name()
            && self.description() == other.description()
            && self.title() == other.title()
            && self.input_schema() == other.input_schema()
            && self.output_schema() == other.output_schema()
            && self.annotations() == other.annotations()
            && self.meta() == other.meta()
            && self.icons() == other.icons()
    }

    /// The tool as the layers of the call path see it.
    pub(super) fn item(&self) -> Item<'_> {
        let source = self.source();
        Item {
            kind: ItemKind::Tool,
            name: self.name(),
            skill: &source.skill,
            source: Some(source),
            annotations: self.annotations(),
        }
    }

    /// The JSON Schema of the tool's structured content, if it declares one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.entry.tool.output_schema()
    }

    /// The tool's `_meta`, if it has one: the MCP App it names (`ui.resourceUri`) under
    /// its agent-level URI.
    pub fn meta(&self) -> Option<&Value> {
        self.entry.meta.as_ref().or_else(|| self.entry.tool.meta())
    }

    /// Images a host may show beside the tool.
    pub fn icons(&self) -> &[Icon] {
        self.entry.tool.icons()
    }

    /// `arguments` if its input schema takes them; else, when leaving out the optional
    /// members that are `null` makes them valid, those without (models often write
    /// `null` for an argument they do not give). Otherwise `arguments` as they are, with
    /// the error that refuses them.
    pub(super) fn accept_arguments(&self, arguments: Value) -> (Value, Option<ToolError>) {
        let validator = &self.entry.validator;
        if validator.is_valid(&arguments) {
            return (arguments, None);
        }
        if let Value::Object(members) = &arguments {
            let required = self.input_schema().get("required").and_then(Value::as_array);
            let is_required = |name: &str| required.is_some_and(|required| required.iter().any(|r| r == name));
            let given: serde_json::Map<String, Value> = members
                .iter()
                .filter(|(name, value)| !value.is_null() || is_required(name))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            let given = Value::Object(given);
            if given != arguments && validator.is_valid(&given) {
                return (given, None);
            }
        }
        let problems = validator
            .iter_errors(&arguments)
            .map(|error| match error.instance_path().as_str() {
                "" => format!("arguments: {error}"),
                path => format!("{path}: {error}"),
            })
            .collect();
        let refusal = ToolError::InvalidArguments { tool: self.name().to_owned(), problems };
        (arguments, Some(refusal))
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool").field("name", &self.name()).field("source", self.source()).finish()
    }
}

impl Agent {
    /// Replaces the registered tools of the skill `skill` (of kind `kind`) with `tools`,
    /// all or none; on a name collision the old tools stay. A tool the agent's
    /// [`ToolFilter`](crate::ToolFilter) leaves out is passed over. A part of an input schema the
    /// validator cannot use costs only itself: it is left out, and kept among the
    /// [left-out keywords](Agent::left_out_keywords). A tool whose input schema still
    /// cannot be compiled costs only itself: it is left out, and kept among the skill's
    /// [skipped tools](Agent::skipped_tools) with the reason. Only [`Agent::admit`] and a
    /// [`SkillHandle`](super::SkillHandle) call it, with the members locked.
    pub(super) fn replace_tools(
        &self,
        skill: &str,
        kind: SourceKind,
        tools: Vec<Arc<dyn Tool>>,
        announce: Announce,
    ) -> Result<(), String> {
        let mut registry = write(&self.inner.tools);
        let mut new_tools: BTreeMap<String, RegisteredTool> = BTreeMap::new();
        let mut problems = ToolProblems::default();
        for tool in tools {
            let source = ToolSource { kind, skill: skill.to_owned(), tool: tool.name().to_owned() };
            let name = self.item_name(skill, &source.tool);
            let filter = &self.inner.tool_filter;
            problems.matched_patterns.extend(filter.patterns_matching(&name));
            if !filter.offers(&name) {
                problems.filtered += 1;
                continue;
            }
            let existing = registry.get(&name).filter(|existing| existing.source().skill != skill);
            if let Some(existing) = existing.or_else(|| new_tools.get(&name)) {
                return Err(format!("tool name `{name}` of {source} collides with {}", existing.source()));
            }
            let compiled = match compile_leaving_out(tool.input_schema(), compile) {
                Ok(compiled) => compiled,
                Err(error) => {
                    let reason = format!("its input schema is not usable: {error}");
                    tracing::warn!(skill, tool = %source.tool, "tool left out: {reason}");
                    problems.skipped.push(ToolFailure { skill: skill.to_owned(), tool: source.tool, reason });
                    continue;
                }
            };
            let description = description_note(&compiled.left_out).map(|note| match tool.description() {
                "" => note,
                description => format!("{description}\n\n{note}"),
            });
            for LeftOut { location, keyword, reason } in compiled.left_out {
                tracing::warn!(skill, tool = %source.tool, "`{keyword}` at `{location}` left out of the input schema: {reason}");
                let (skill, tool) = (skill.to_owned(), source.tool.clone());
                problems.left_out.push(LeftOutKeyword { skill, tool, location, keyword, reason });
            }
            let meta = tool.meta().and_then(|meta| self.tool_meta(skill, meta));
            let context = ToolContext::new(name.clone(), source);
            let (validator, input_schema) = (compiled.validator, compiled.schema);
            let entry = Entry { context, tool, validator, input_schema, description, meta };
            new_tools.insert(name, RegisteredTool { entry: Arc::new(entry) });
        }
        let judged: Vec<(String, Arc<dyn Tool>)> =
            new_tools.iter().map(|(name, registered)| (name.clone(), Arc::clone(&registered.entry.tool))).collect();
        let unchanged = announce == Announce::IfChanged && {
            let old: Vec<&RegisteredTool> =
                registry.values().filter(|registered| registered.source().skill == skill).collect();
            old.len() == new_tools.len()
                && old.iter().all(|old| new_tools.get(old.name()).is_some_and(|new| new.shows_as(old)))
        };
        registry.retain(|_, registered| registered.source().skill != skill);
        registry.extend(new_tools);
        drop(registry);
        self.judge_tools(skill, &judged);
        write(&self.inner.tool_problems).insert(skill.to_owned(), problems);
        if !unchanged {
            self.inner.changes.send_modify(|changes| changes.tools += 1);
        }
        Ok(())
    }

    /// Every registered tool the agent offers (none its trust withholds), by name.
    pub fn tools(&self) -> Vec<RegisteredTool> {
        let tools = read(&self.inner.tools);
        let withholds = self.withholds(Kind::Tool);
        tools
            .values()
            .filter(|tool| !withholds || self.withheld_item(Kind::Tool, tool.name()).is_none())
            .filter(|tool| !self.inner.layers.hides(&self.caller, &tool.item()))
            .cloned()
            .collect()
    }

    /// The tools the loaded skills gave that could not be registered, with the reason, in
    /// skill order.
    pub fn skipped_tools(&self) -> Vec<ToolFailure> {
        read(&self.inner.tool_problems).values().flat_map(|problems| problems.skipped.iter().cloned()).collect()
    }

    /// The parts of the registered tools' input schemas that were left out, with the
    /// reason (a keyword the validator cannot use, a value that contradicts its `type`),
    /// in skill order, then tool order.
    pub fn left_out_keywords(&self) -> Vec<LeftOutKeyword> {
        read(&self.inner.tool_problems).values().flat_map(|problems| problems.left_out.iter().cloned()).collect()
    }

    /// What the agent's [`ToolFilter`](crate::ToolFilter) did to the tools of its loaded
    /// skills: how many it left out, and which of its patterns match none of them.
    pub fn tool_filter_report(&self) -> FilterReport {
        let problems = read(&self.inner.tool_problems);
        let left_out = problems.values().map(|problems| problems.filtered).sum();
        let matched = problems.values().flat_map(|problems| problems.matched_patterns.iter().copied()).collect();
        self.inner.tool_filter.report(left_out, &matched)
    }

    /// The tool called `name`: its agent-level name, or a bare tool name that exactly
    /// one skill has.
    pub fn find_tool(&self, name: &str) -> Result<RegisteredTool, ToolError> {
        let tools = read(&self.inner.tools);
        if let Some(tool) = tools.get(name) {
            return Ok(tool.clone());
        }
        let mut bare: Vec<RegisteredTool> = tools.values().filter(|tool| tool.source().tool == name).cloned().collect();
        drop(tools);
        if bare.len() == 1 {
            return Ok(bare.remove(0));
        }
        // Only what this caller is offered is suggested: a hidden or withheld tool's name
        // is not told.
        let offered = self.tools();
        let suggestions = match bare.as_slice() {
            [] => close_names(name, offered.iter().map(RegisteredTool::name)),
            several => several
                .iter()
                .filter(|tool| offered.iter().any(|offered| offered.name() == tool.name()))
                .map(|tool| tool.name().to_owned())
                .collect(),
        };
        Err(ToolError::NotFound { kind: ItemKind::Tool, name: name.to_owned(), suggestions })
    }

    /// Calls a tool after checking `arguments` against its input schema (`null` stands
    /// for no arguments, `{}`; an optional argument the schema does not let be `null` is
    /// left out when it is).
    ///
    /// The call runs in a `tool_call` tracing span carrying the tool's source; hooks see
    /// it before and after. Links to and embedded copies of the skill's own resources in
    /// the result come under their agent-level URIs.
    ///
    /// A call of an unknown tool, or whose arguments the schema refuses, goes through the
    /// layers all the same (so that it is traced, counted and audited) and ends there
    /// with `NotFound` or `InvalidArguments`, unless a layer refuses it first.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
        let arguments = if arguments.is_null() { Value::Object(Default::default()) } else { arguments };
        let tool = match self.find_tool(name) {
            Ok(tool) => tool,
            Err(not_found) => return self.call_unknown(ItemKind::Tool, name, &arguments, not_found).await?.tool(),
        };
        let (arguments, invalid) = tool.accept_arguments(arguments);
        let entry = &tool.entry;
        let source = &entry.context.source;
        let withheld = self.withheld_item(Kind::Tool, &entry.context.name);
        let context = CallContext {
            agent: &self.inner.name,
            caller: &self.caller,
            item: tool.item(),
            arguments: &arguments,
            withheld: withheld.as_deref(),
        };
        let call = async {
            // Refused here, innermost: the layers have seen the call.
            if let Some(invalid) = invalid {
                return Err(invalid);
            }
            let span = tracing::info_span!(
                "tool_call",
                tool = %entry.context.name,
                source.kind = %source.kind,
                source.skill = %source.skill,
                source.tool = %source.tool,
            );
            let mut output = entry.tool.call(&entry.context, arguments.clone()).instrument(span).await?;
            self.name_resources_in(&source.skill, &mut output.content);
            Ok(CallOutput::Tool(output))
        };
        self.inner.layers.call(&context, call).await?.tool()
    }
}

/// Compiles an input schema. A `$ref` to anything outside the schema (a URL, another
/// file) is never fetched: it stands for the empty schema, so that part goes unchecked
/// and the tool keeps the schema as its skill gave it.
fn compile(schema: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options().with_retriever(Offline).build(schema)
}

/// What an external `$ref` resolves to: the empty schema, which accepts anything.
struct Offline;

impl jsonschema::Retrieve for Offline {
    fn retrieve(&self, _uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Value::Object(serde_json::Map::new()))
    }
}
