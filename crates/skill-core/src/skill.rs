//! The [`Skill`] trait and its opt-in capabilities.

use std::sync::Arc;

use async_trait::async_trait;

use crate::{BoxError, Prompt, ResourceCatalog, Secrets, SkillHandle, SkillStore, SourceKind, Tool};

/// A named set of tools, with a lifecycle.
///
/// # Capabilities
///
/// A skill opts into what the agent can give it by overriding the matching method; each
/// has a default body that declines. This one idiom is used for every capability:
///
/// | capability | method | default |
/// |---|---|---|
/// | storage | [`set_storage`](Skill::set_storage): a [`SkillStore`] in the skill's own namespace | ignored |
/// | agent | [`set_agent`](Skill::set_agent): a weak [`SkillHandle`], the only way to change its own items later | ignored |
/// | secrets | [`set_secrets`](Skill::set_secrets): this agent's values for this skill | ignored |
/// | required secrets | [`required_secrets`](Skill::required_secrets): names without which the skill is skipped | none |
/// | source type | [`source_type`](Skill::source_type): the [`SourceKind`] its tools carry | `skill` |
/// | prompts | [`prompts`](Skill::prompts): prompt templates the host may offer | none |
/// | resources | [`resources`](Skill::resources): resources, resource templates and their reader | none |
/// | names | [`namespaced`](Skill::namespaced): whether its items' names get the `{skill}__` prefix | yes |
///
/// The agent calls the setters before [`init`](Skill::init), then registers the tools
/// that [`tools`](Skill::tools) returns after `init` succeeded; tools a skill discovers
/// during `init` (an MCP server's, an OpenAPI document's operations) are registered then.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use async_trait::async_trait;
/// use skill_core::{BoxError, Secrets, Skill, Tool};
///
/// struct Weather {
///     secrets: Secrets,
/// }
///
/// #[async_trait]
/// impl Skill for Weather {
///     fn name(&self) -> &str { "weather" }
///     fn description(&self) -> &str { "Forecasts from a weather API" }
///     fn set_secrets(&mut self, secrets: Secrets) { self.secrets = secrets; }
///     fn required_secrets(&self) -> Vec<String> { vec!["WEATHER_API_KEY".into()] }
///     fn tools(&self) -> Vec<Arc<dyn Tool>> { Vec::new() }
/// }
/// ```
#[async_trait]
pub trait Skill: Send + Sync {
    /// The skill's name: the `{skill}` of its tools' agent-level names.
    fn name(&self) -> &str;

    /// What the skill offers.
    fn description(&self) -> &str;

    /// The kind its tools report in their [`crate::ToolSource`].
    fn source_type(&self) -> SourceKind {
        SourceKind::Skill
    }

    /// Storage capability: receives the skill's namespaced store.
    fn set_storage(&mut self, _store: SkillStore) {}

    /// Agent capability: receives the skill's handle on the agent hosting it, bound to
    /// this skill: it reaches the agent, and replaces this skill's tools, prompts and
    /// resources (and no other skill's) while the agent runs.
    fn set_agent(&mut self, _agent: SkillHandle) {}

    /// Secrets capability: receives this agent's secret values for this skill.
    fn set_secrets(&mut self, _secrets: Secrets) {}

    /// Required-secrets capability: the secret names the skill cannot work without. The
    /// agent skips the skill, with the reason, when one has no value.
    fn required_secrets(&self) -> Vec<String> {
        Vec::new()
    }

    /// Prepares the skill (start a server, load a document). A failure skips the skill,
    /// with the error as the reason; the agent's other skills still load.
    async fn init(&mut self) -> Result<(), BoxError> {
        Ok(())
    }

    /// The skill's tools; called after a successful `init`.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;

    /// Prompts capability: the skill's prompts, called after a successful `init`.
    fn prompts(&self) -> Vec<Arc<dyn Prompt>> {
        Vec::new()
    }

    /// Resources capability: the skill's resources and resource templates, called after
    /// a successful `init`.
    fn resources(&self) -> ResourceCatalog {
        ResourceCatalog::default()
    }

    /// Whether the agent offers this skill's tools and prompts as `{skill}__{name}` and its
    /// resources as `omniagent://{skill}/{uri}` (the default), or under their own names
    /// and URIs (for a server whose clients expect exact names; a collision is then an
    /// error, as always).
    fn namespaced(&self) -> bool {
        true
    }

    /// Releases what the skill holds (children, connections).
    async fn close(&mut self) -> Result<(), BoxError> {
        Ok(())
    }
}
