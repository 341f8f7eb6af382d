//! The prompts and resources of an agent's skills, beside its tools: their registry,
//! agent-level names and URIs, and the change counters a server watches.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::layers::{CallContext, CallOutput, Item};
use super::trusted::Kind;
use super::{Agent, read, write};
use crate::naming::{agent_resource_uri, close_names, split_agent_resource_uri};
use crate::{
    Completion, CompletionRequest, Content, ItemKind, Prompt, PromptInfo, PromptOutput, ResourceCatalog, ResourceInfo,
    ResourceOutput, ResourceTemplateInfo, ToolError,
};

/// A prompt as the agent registered it: the prompt, its agent-level name and its skill.
#[derive(Clone)]
pub struct RegisteredPrompt {
    name: String,
    skill: String,
    prompt: Arc<dyn Prompt>,
}

impl RegisteredPrompt {
    /// The agent-level name, `{skill}__{prompt}` (or the prompt's own name, for a skill
    /// that is not [namespaced](Skill::namespaced)).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skill that gives it.
    pub fn skill(&self) -> &str {
        &self.skill
    }

    /// What the prompt is, as its skill describes it (`name` is the skill's own name for it).
    pub fn info(&self) -> &PromptInfo {
        self.prompt.info()
    }
}

impl fmt::Debug for RegisteredPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredPrompt").field("name", &self.name).field("skill", &self.skill).finish()
    }
}

/// The `_meta` key under which MCP Apps' first release named a tool's UI resource, which
/// servers still send beside `ui.resourceUri`.
const LEGACY_UI_RESOURCE_KEY: &str = "ui/resourceUri";

/// The skill that reads an agent-level resource URI, and that URI as the skill gives it.
struct FoundReader {
    skill: String,
    reader: Arc<dyn crate::ResourceReader>,
    uri: String,
}

/// Whether replacing a skill's list moves its change counter when the new list reads
/// the same as the one it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Announce {
    /// Always: a skill's own change is news, even when its list reads the same (a
    /// server's `list_changed` is, whatever it then lists).
    Always,
    /// Only when the list reads differently: a skill that goes from stand-ins (the
    /// definitions a trust lock recorded) to its live lists changes nothing a client saw
    /// when they are the same.
    IfChanged,
}

/// Whether `old` and `new` hold the same items, in whatever order (the trust lock keeps
/// them in the order of `key`, a server in its own).
fn same_items<T: PartialEq>(old: &[T], new: &[T], key: fn(&T) -> &String) -> bool {
    fn sorted<T>(items: &[T], key: fn(&T) -> &String) -> Vec<&T> {
        let mut sorted: Vec<&T> = items.iter().collect();
        sorted.sort_by(|a, b| key(a).cmp(key(b)));
        sorted
    }
    old.len() == new.len() && sorted(old, key) == sorted(new, key)
}

/// How many times each list of an agent changed since it was built: a server watching
/// [`Agent::changes`] tells its clients to list again when a counter moves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Changes {
    /// Changes of the tool list.
    pub tools: u64,
    /// Changes of the prompt list.
    pub prompts: u64,
    /// Changes of the resource and resource-template lists.
    pub resources: u64,
}

impl Agent {
    /// Replaces the registered prompts of the skill `skill` with `prompts`, all or none,
    /// as `replace_tools` does for tools (and with the members locked, as it is).
    pub(super) fn replace_prompts(
        &self,
        skill: &str,
        prompts: Vec<Arc<dyn Prompt>>,
        announce: Announce,
    ) -> Result<(), String> {
        let mut registry = write(&self.inner.prompts);
        let had_any = registry.values().any(|registered| registered.skill == skill);
        if prompts.is_empty() && !had_any {
            return Ok(());
        }
        let mut new_prompts: BTreeMap<String, RegisteredPrompt> = BTreeMap::new();
        for prompt in prompts {
            let name = self.item_name(skill, &prompt.info().name);
            let existing = registry.get(&name).filter(|existing| existing.skill != skill);
            if let Some(existing) = existing.or_else(|| new_prompts.get(&name)) {
                return Err(format!(
                    "prompt name `{name}` of skill `{skill}` collides with a prompt of skill `{}`",
                    existing.skill
                ));
            }
            new_prompts.insert(name.clone(), RegisteredPrompt { name, skill: skill.to_owned(), prompt });
        }
        let judged: Vec<(String, Arc<dyn Prompt>)> =
            new_prompts.iter().map(|(name, registered)| (name.clone(), Arc::clone(&registered.prompt))).collect();
        let unchanged = announce == Announce::IfChanged && {
            let old: Vec<&RegisteredPrompt> =
                registry.values().filter(|registered| registered.skill == skill).collect();
            old.len() == new_prompts.len()
                && old.iter().all(|old| new_prompts.get(&old.name).is_some_and(|new| new.info() == old.info()))
        };
        registry.retain(|_, registered| registered.skill != skill);
        registry.extend(new_prompts);
        drop(registry);
        self.judge_prompts(skill, &judged);
        if !unchanged {
            self.inner.changes.send_modify(|changes| changes.prompts += 1);
        }
        Ok(())
    }

    /// Replaces the resources and resource templates of the skill `skill` with
    /// `catalog`, all or none (with the members locked). A skill that is not
    /// [namespaced](crate::Skill::namespaced) may not list a URI that another such skill
    /// lists.
    pub(super) fn replace_resources(
        &self,
        skill: &str,
        catalog: ResourceCatalog,
        announce: Announce,
    ) -> Result<(), String> {
        let mut registry = write(&self.inner.resources);
        if catalog.is_empty() && !registry.contains_key(skill) {
            return Ok(());
        }
        if !catalog.is_empty() && catalog.reader.is_none() {
            return Err(format!("skill `{skill}` lists resources but gives no reader"));
        }
        let plain = read(&self.inner.plain);
        if plain.contains(skill) {
            let others = registry.iter().filter(|(other, _)| *other != skill && plain.contains(*other));
            for (other, other_catalog) in others {
                let taken = catalog
                    .resources
                    .iter()
                    .find(|resource| other_catalog.resources.iter().any(|listed| listed.uri == resource.uri));
                if let Some(resource) = taken {
                    return Err(format!(
                        "resource `{}` of skill `{skill}` is also one of skill `{other}`",
                        resource.uri
                    ));
                }
            }
        }
        let templates: Vec<(String, ResourceTemplateInfo)> = catalog
            .templates
            .iter()
            .map(|template| (self.resource_uri(skill, &template.uri_template, &plain), template.clone()))
            .collect();
        let resources: Vec<(String, ResourceInfo)> = catalog
            .resources
            .iter()
            .map(|resource| (self.resource_uri(skill, &resource.uri, &plain), resource.clone()))
            .collect();
        drop(plain);
        let unchanged = announce == Announce::IfChanged
            && registry.get(skill).is_some_and(|old| {
                same_items(&old.resources, &catalog.resources, |resource| &resource.uri)
                    && same_items(&old.templates, &catalog.templates, |template| &template.uri_template)
            });
        if catalog.is_empty() {
            registry.remove(skill);
        } else {
            registry.insert(skill.to_owned(), catalog);
        }
        drop(registry);
        self.judge_templates(skill, &templates);
        self.judge_resources(skill, &resources);
        if !unchanged {
            self.inner.changes.send_modify(|changes| changes.resources += 1);
        }
        Ok(())
    }

    /// The agent-level URI of the resource (or template) `uri` of `skill`.
    fn resource_uri(&self, skill: &str, uri: &str, plain: &BTreeSet<String>) -> String {
        if plain.contains(skill) { uri.to_owned() } else { agent_resource_uri(skill, uri) }
    }

    /// A receiver that sees every change of the agent's tool, prompt and resource lists.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<Changes> {
        self.inner.changes.subscribe()
    }

    /// Every registered prompt the agent offers (none its trust withholds), by name.
    pub fn prompts(&self) -> Vec<RegisteredPrompt> {
        let prompts = read(&self.inner.prompts);
        let withholds = self.withholds(Kind::Prompt);
        prompts
            .values()
            .filter(|prompt| !withholds || self.withheld_item(Kind::Prompt, &prompt.name).is_none())
            .filter(|prompt| !self.hides(ItemKind::Prompt, &prompt.name, &prompt.skill))
            .cloned()
            .collect()
    }

    /// Fills the prompt called `name` (its agent-level name) with `arguments`; a
    /// required argument that is missing is an [`ToolError::InvalidArguments`].
    pub async fn get_prompt(&self, name: &str, arguments: BTreeMap<String, String>) -> Result<PromptOutput, ToolError> {
        let given =
            Value::Object(arguments.iter().map(|(key, value)| (key.clone(), Value::from(value.as_str()))).collect());
        let found = read(&self.inner.prompts).get(name).cloned();
        // Only what this caller is offered is suggested.
        let found = found.ok_or_else(|| ToolError::NotFound {
            kind: ItemKind::Prompt,
            name: name.to_owned(),
            suggestions: close_names(name, self.prompts().iter().map(|prompt| prompt.name.as_str())),
        });
        let prompt = match found {
            Ok(prompt) => prompt,
            Err(not_found) => return self.call_unknown(ItemKind::Prompt, name, &given, not_found).await?.prompt(),
        };
        let missing: Vec<String> = prompt
            .info()
            .arguments
            .iter()
            .filter(|argument| argument.required == Some(true) && !arguments.contains_key(&argument.name))
            .map(|argument| format!("missing required argument `{}`", argument.name))
            .collect();
        let withheld = self.withheld_item(Kind::Prompt, name);
        let context = CallContext {
            agent: &self.inner.name,
            caller: &self.caller,
            item: Item::plain(ItemKind::Prompt, name, &prompt.skill),
            arguments: &given,
            withheld: withheld.as_deref(),
        };
        let get = async {
            // Refused here, innermost: the layers have seen the call.
            if !missing.is_empty() {
                return Err(ToolError::InvalidArguments { tool: name.to_owned(), problems: missing });
            }
            let mut output = prompt.prompt.get(arguments).await?;
            for message in &mut output.messages {
                self.name_resources_in(&prompt.skill, std::slice::from_mut(&mut message.content));
            }
            Ok(CallOutput::Prompt(output))
        };
        self.inner.layers.call(&context, get).await?.prompt()
    }

    /// A call of an item the agent does not have: it goes through the layers all the
    /// same, as the item `name` of no skill (`""`), so that it is traced, counted and
    /// audited, and ends innermost with `not_found`, unless a layer refuses it first.
    pub(super) async fn call_unknown(
        &self,
        kind: ItemKind,
        name: &str,
        arguments: &Value,
        not_found: ToolError,
    ) -> Result<CallOutput, ToolError> {
        let context = CallContext {
            agent: &self.inner.name,
            caller: &self.caller,
            item: Item::plain(kind, name, ""),
            arguments,
            withheld: None,
        };
        self.inner.layers.call(&context, std::future::ready(Err(not_found))).await
    }

    /// Suggestions for an argument of the prompt called `name` (its agent-level name).
    pub async fn complete_prompt(&self, name: &str, request: &CompletionRequest) -> Result<Completion, ToolError> {
        let prompt =
            read(&self.inner.prompts).get(name).cloned().ok_or_else(|| ToolError::not_found(ItemKind::Prompt, name))?;
        prompt.prompt.complete(request).await
    }

    /// Suggestions for a variable of the resource template at the agent-level
    /// `uri_template`.
    pub async fn complete_resource_template(
        &self,
        uri_template: &str,
        request: &CompletionRequest,
    ) -> Result<Completion, ToolError> {
        let found = {
            let plain = read(&self.inner.plain);
            read(&self.inner.resources).iter().find_map(|(skill, catalog)| {
                let template = catalog
                    .templates
                    .iter()
                    .find(|template| self.resource_uri(skill, &template.uri_template, &plain) == uri_template)?;
                Some((catalog.reader.clone()?, template.uri_template.clone()))
            })
        };
        let (reader, own_template) =
            found.ok_or_else(|| ToolError::not_found(ItemKind::ResourceTemplate, uri_template))?;
        reader.complete(&own_template, request).await
    }

    /// Every resource of every skill (none its trust withholds), under its agent-level
    /// URI, skills in name order.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        let plain = read(&self.inner.plain);
        let registry = read(&self.inner.resources);
        let listed = registry.iter().flat_map(|(skill, catalog)| catalog.resources.iter().map(move |r| (skill, r)));
        let withholds = self.withholds(Kind::Resource);
        listed
            .map(|(skill, resource)| {
                (skill, ResourceInfo { uri: self.resource_uri(skill, &resource.uri, &plain), ..resource.clone() })
            })
            .filter(|(_, resource)| !withholds || self.withheld_item(Kind::Resource, &resource.uri).is_none())
            .filter(|(skill, resource)| !self.hides(ItemKind::Resource, &resource.uri, skill))
            .map(|(_, resource)| resource)
            .collect()
    }

    /// Every resource template of every skill, its URI template under the agent-level
    /// prefix, skills in name order.
    pub fn resource_templates(&self) -> Vec<ResourceTemplateInfo> {
        let plain = read(&self.inner.plain);
        let registry = read(&self.inner.resources);
        let listed = registry.iter().flat_map(|(skill, catalog)| catalog.templates.iter().map(move |t| (skill, t)));
        let withholds = self.withholds(Kind::Template);
        listed
            .map(|(skill, template)| {
                let uri_template = self.resource_uri(skill, &template.uri_template, &plain);
                (skill, ResourceTemplateInfo { uri_template, ..template.clone() })
            })
            .filter(|(_, template)| !withholds || self.withheld_item(Kind::Template, &template.uri_template).is_none())
            .filter(|(skill, template)| !self.hides(ItemKind::ResourceTemplate, &template.uri_template, skill))
            .map(|(_, template)| template)
            .collect()
    }

    /// Asks the skill of the resource at the agent-level `uri` to announce its changes.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ToolError> {
        let found = self.reader_or_not_found(uri)?;
        found.reader.subscribe(&found.uri).await
    }

    /// Asks the skill of the resource at the agent-level `uri` to stop announcing its
    /// changes.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ToolError> {
        let found = self.reader_or_not_found(uri)?;
        found.reader.unsubscribe(&found.uri).await
    }

    /// Announces that the resource `uri` (as the skill `skill` gives it) changed: a
    /// skill whose resources change calls this through its [`crate::SkillHandle`].
    pub(super) fn resource_updated(&self, skill: &str, uri: &str) {
        let agent_uri = self.resource_uri(skill, uri, &read(&self.inner.plain));
        // Nobody listening is no error.
        let _ = self.inner.updates.send(agent_uri);
    }

    /// A receiver of the agent-level URIs of resources whose content changed.
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.inner.updates.subscribe()
    }

    /// Reads the resource at the agent-level `uri`: `omniagent://{skill}/{uri}` (and
    /// `ui://{skill}/{rest}`) goes to that skill, unless a skill that is not namespaced
    /// has that very URI and the named skill does not have `uri`; any other URI goes to
    /// the skill that is not namespaced and lists it, else to the first such skill with a
    /// template whose fixed start matches.
    ///
    /// The contents come under agent-level URIs, as the agent lists the resources.
    pub async fn read_resource(&self, uri: &str) -> Result<ResourceOutput, ToolError> {
        let no_arguments = Value::Object(serde_json::Map::new());
        let found = match self.reader_or_not_found(uri) {
            Ok(found) => found,
            Err(not_found) => {
                return self.call_unknown(ItemKind::Resource, uri, &no_arguments, not_found).await?.resource();
            }
        };
        let withheld = self.withheld_item(Kind::Resource, uri);
        let context = CallContext {
            agent: &self.inner.name,
            caller: &self.caller,
            item: Item::plain(ItemKind::Resource, uri, &found.skill),
            arguments: &no_arguments,
            withheld: withheld.as_deref(),
        };
        let read_it = async {
            let mut output = found.reader.read(&found.uri).await?;
            let plain = read(&self.inner.plain);
            for part in &mut output.contents {
                let uri = part.uri_mut();
                *uri = self.resource_uri(&found.skill, uri, &plain);
            }
            Ok(CallOutput::Resource(output))
        };
        self.inner.layers.call(&context, read_it).await?.resource()
    }

    /// Whether a layer keeps the prompt, resource or template `name` of `skill` from
    /// this handle's caller.
    fn hides(&self, kind: ItemKind, name: &str, skill: &str) -> bool {
        self.inner.layers.hides(&self.caller, &Item::plain(kind, name, skill))
    }

    /// The `_meta` of a tool of `skill` as the agent lists it: the MCP App it names
    /// (`ui.resourceUri`, and the older `ui/resourceUri`) under its agent-level URI. `None`
    /// when that is `meta` as it is.
    pub(super) fn tool_meta(&self, skill: &str, meta: &Value) -> Option<Value> {
        let names_app = meta.pointer("/ui/resourceUri").is_some_and(Value::is_string)
            || meta.get(LEGACY_UI_RESOURCE_KEY).is_some_and(Value::is_string);
        if !names_app || read(&self.inner.plain).contains(skill) {
            return None;
        }
        let mut meta = meta.clone();
        if let Some(Value::String(uri)) = meta.pointer_mut("/ui/resourceUri") {
            *uri = agent_resource_uri(skill, uri);
        }
        if let Some(Value::String(uri)) = meta.get_mut(LEGACY_UI_RESOURCE_KEY) {
            *uri = agent_resource_uri(skill, uri);
        }
        Some(meta)
    }

    /// Names the resources that `blocks` (a tool's or a prompt's content, from the skill
    /// `skill`) link to or embed by their agent-level URIs, so a client can read them
    /// through the agent. A URI that is none of the skill's resources (listed, or one its
    /// templates may expand to) stays as it is.
    pub(super) fn name_resources_in(&self, skill: &str, blocks: &mut [Content]) {
        let mut uris = blocks.iter_mut().filter_map(Content::resource_uri_mut).peekable();
        if uris.peek().is_none() {
            return;
        }
        let plain = read(&self.inner.plain);
        let registry = read(&self.inner.resources);
        let Some(catalog) = registry.get(skill).filter(|_| !plain.contains(skill)) else { return };
        for uri in uris.filter(|uri| catalog.lists(uri) || catalog.may_expand_to(uri)) {
            *uri = agent_resource_uri(skill, uri);
        }
    }

    fn reader_or_not_found(&self, uri: &str) -> Result<FoundReader, ToolError> {
        self.resource_reader(uri).ok_or_else(|| ToolError::NotFound {
            kind: ItemKind::Resource,
            name: uri.to_owned(),
            suggestions: close_names(uri, self.resources().iter().map(|resource| resource.uri.as_str())),
        })
    }

    fn resource_reader(&self, uri: &str) -> Option<FoundReader> {
        let registry = read(&self.inner.resources);
        let plain = read(&self.inner.plain);
        let unprefixed = || registry.iter().filter(|(skill, _)| plain.contains(*skill));
        let listed = unprefixed().find(|(_, catalog)| catalog.lists(uri));
        let plain_skill = listed.or_else(|| unprefixed().find(|(_, catalog)| catalog.may_expand_to(uri)));
        if let Some((skill, skill_uri)) = split_agent_resource_uri(uri)
            && !plain.contains(&skill)
            && let Some(catalog) = registry.get(&skill)
            // A skill that keeps its own URIs may have one that looks like another
            // skill's agent-level URI (`ui://w/app.html` beside a skill `w`): the URI is
            // its own unless that other skill has the resource.
            && (plain_skill.is_none() || catalog.lists(&skill_uri) || catalog.may_expand_to(&skill_uri))
        {
            return Some(FoundReader { reader: catalog.reader.clone()?, skill, uri: skill_uri });
        }
        let (skill, catalog) = plain_skill?;
        Some(FoundReader { skill: skill.clone(), reader: catalog.reader.clone()?, uri: uri.to_owned() })
    }

    /// Unregisters every tool, prompt and resource of `skill` (which failed to load).
    pub(super) fn forget_items(&self, skill: &str) {
        write(&self.inner.tools).retain(|_, registered| registered.source().skill != skill);
        write(&self.inner.tool_problems).remove(skill);
        write(&self.inner.prompts).retain(|_, registered| registered.skill != skill);
        write(&self.inner.resources).remove(skill);
        write(&self.inner.plain).remove(skill);
        self.forget_judged(skill);
    }
}
