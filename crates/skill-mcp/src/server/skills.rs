//! The MCP skills extension (SEP-2640, `io.modelcontextprotocol/skills`): every
//! `skill://…/SKILL.md` resource of the agent is a skill, and the resources under its
//! folder are its files, each with the SHA-256 digest of what `resources/read` gives.

use rmcp::ErrorData;
use rmcp::model::{Skill, SkillFrontmatter, SkillResource, SkillResources, skill_name_from_uri};
use skill_core::{Agent, ResourceContents, ResourceInfo, SKILL_FRONTMATTER_META_KEY};

/// Every skill the agent's resources make, in URI order; a skill the extension would
/// refuse (a name outside its rules, a file that cannot be read) is left out, with a
/// warning.
pub(super) async fn skills(agent: &Agent) -> Vec<Skill> {
    let mut resources = agent.resources();
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));
    let mut skills = Vec::new();
    for manifest in resources.iter().filter(|resource| is_manifest(&resource.uri)) {
        match skill(agent, manifest, &resources).await {
            Ok(skill) => skills.push(skill),
            Err(reason) => tracing::warn!(uri = %manifest.uri, "not offered as a skill: {reason}"),
        }
    }
    skills
}

/// The skill whose `SKILL.md` is at `uri`.
pub(super) async fn skill_at(agent: &Agent, uri: &str) -> Result<Skill, ErrorData> {
    let resources = agent.resources();
    let manifest = resources
        .iter()
        .find(|resource| resource.uri == uri && is_manifest(uri))
        .ok_or_else(|| ErrorData::invalid_params(format!("no skill at `{uri}`"), None))?;
    skill(agent, manifest, &resources).await.map_err(|reason| ErrorData::internal_error(reason, None))
}

fn is_manifest(uri: &str) -> bool {
    uri.starts_with("skill://") && skill_name_from_uri(uri).is_some()
}

async fn skill(agent: &Agent, manifest: &ResourceInfo, resources: &[ResourceInfo]) -> Result<Skill, String> {
    let name = skill_name_from_uri(&manifest.uri).unwrap_or_default();
    let folder = manifest.uri.strip_suffix(rmcp::model::SKILL_MD).unwrap_or_default();
    let mut files = Vec::new();
    for resource in resources.iter().filter(|resource| resource.uri.starts_with(folder)) {
        let read = agent.read_resource(&resource.uri).await.map_err(|error| error.to_string())?;
        let mut bytes = Vec::new();
        for part in &read.contents {
            match part {
                ResourceContents::Text { text, .. } => bytes.extend_from_slice(text.as_bytes()),
                ResourceContents::Blob { blob, .. } => {
                    let decoded = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, blob)
                        .map_err(|error| format!("{}: not base64: {error}", resource.uri))?;
                    bytes.extend_from_slice(&decoded);
                }
            }
        }
        files.push(SkillResource::from_bytes(resource.uri.clone(), &bytes));
    }
    let mut frontmatter = SkillFrontmatter::new(name, manifest.description.clone().unwrap_or_default());
    // The frontmatter as written, when the skill gives it; `name` and `description` stay
    // the ones the skill goes by.
    let written = manifest.meta.as_ref().and_then(|meta| meta.get(SKILL_FRONTMATTER_META_KEY));
    for (key, value) in written.and_then(|value| value.as_object()).into_iter().flatten() {
        if key != "name" && key != "description" {
            frontmatter.extra.insert(key.clone(), value.clone());
        }
    }
    let skill = Skill::new(manifest.uri.clone(), frontmatter, SkillResources::Files(files));
    skill.validate().map_err(|error| error.to_string())?;
    Ok(skill)
}
