//! Markdown skills as resources, the way the MCP skills extension (SEP-2640) serves
//! them: [`SkillFiles`], a skill whose resources are the files of each skill `omniagent
//! prompt` would inject, at `skill://{name}/{path in its folder}`.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use skill_core::{
    ItemKind, ResourceCatalog, ResourceContents, ResourceInfo, ResourceOutput, ResourceReader,
    SKILL_FRONTMATTER_META_KEY, Skill, Tool, ToolError,
};

use crate::{LoadedSkill, PACKS, PromptConfig, prompt_skills};

/// The name of the skill that serves skill files.
pub const SKILL_FILES_NAME: &str = "skill-files";

/// At most this many files of one skill are offered (the extension's limit).
const MAX_FILES: usize = 512;
/// At most this many bytes of one skill's files, together (the extension's limit).
const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;

/// A skill whose resources are the files of the skills [`crate::inject_into_prompt`]
/// would inject: `skill://{name}/SKILL.md` (described as the skill is) and every other
/// file of its folder, at most 512 files and 16 MiB per skill, leaving out hidden names
/// and symbolic links. A pack skill has only its `SKILL.md`. Its URIs are its own (the
/// skill is not namespaced), so hosts that know the extension find them where it says.
#[derive(Debug)]
pub struct SkillFiles {
    files: Arc<BTreeMap<String, FileSource>>,
    resources: Vec<ResourceInfo>,
}

/// Where a served file's bytes come from.
#[derive(Debug)]
enum FileSource {
    Disk(PathBuf),
    Pack(&'static str),
}

impl SkillFiles {
    /// The files of `skills` (a loaded [`crate::SkillSet`]'s skills) under `config`,
    /// read from disk when a client asks for one.
    pub fn new(skills: &[LoadedSkill], config: &PromptConfig) -> Self {
        let mut files = BTreeMap::new();
        let mut resources = Vec::new();
        for loaded in prompt_skills(skills, config) {
            let skill = &loaded.skill;
            let manifest_uri = format!("skill://{}/SKILL.md", skill.name);
            let listed = match &skill.dir {
                Some(dir) => folder_files(dir),
                None => pack_text(&skill.path)
                    .map(|text| vec![("SKILL.md".to_owned(), FileSource::Pack(text), text.len() as u64)])
                    .unwrap_or_default(),
            };
            for (relative, source, size) in listed {
                let uri = format!("skill://{}/{relative}", skill.name);
                let is_manifest = uri == manifest_uri;
                let meta = if is_manifest {
                    frontmatter_of(&source).map(|map| serde_json::json!({SKILL_FRONTMATTER_META_KEY: map}))
                } else {
                    None
                };
                let info = serde_json::json!({
                    "uri": uri,
                    "name": if is_manifest { skill.name.clone() } else { relative.clone() },
                    "description": if is_manifest { Some(skill.description.clone()) } else { None },
                    "mimeType": mime_type(&relative),
                    "size": size,
                    "_meta": meta,
                });
                if let Ok(info) = serde_json::from_value(info) {
                    resources.push(info);
                    files.insert(uri, source);
                }
            }
        }
        Self { files: Arc::new(files), resources }
    }
}

#[async_trait]
impl Skill for SkillFiles {
    fn name(&self) -> &str {
        SKILL_FILES_NAME
    }

    fn description(&self) -> &str {
        "The files of the markdown skills, as skill:// resources"
    }

    fn namespaced(&self) -> bool {
        false
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        Vec::new()
    }

    fn resources(&self) -> ResourceCatalog {
        ResourceCatalog {
            resources: self.resources.clone(),
            templates: Vec::new(),
            reader: Some(Arc::new(FileReader { files: Arc::clone(&self.files) })),
        }
    }
}

/// Reads the listed files, and only those.
struct FileReader {
    files: Arc<BTreeMap<String, FileSource>>,
}

#[async_trait]
impl ResourceReader for FileReader {
    async fn read(&self, uri: &str) -> Result<ResourceOutput, ToolError> {
        let source = self.files.get(uri).ok_or_else(|| ToolError::not_found(ItemKind::Resource, uri))?;
        let bytes = match source {
            FileSource::Pack(text) => text.as_bytes().to_vec(),
            FileSource::Disk(path) => {
                let path = path.clone();
                skill_core::off_runtime(move || read_bounded(&path))
                    .await
                    .map_err(|_| ToolError::failed("reading the file stopped"))?
                    .map_err(|error| ToolError::failed(format!("cannot read {uri}: {error}")))?
            }
        };
        let mime_type = Some(mime_type(uri).to_owned());
        let contents = match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::Text { uri: uri.to_owned(), mime_type, text, meta: None },
            Err(not_text) => ResourceContents::Blob {
                uri: uri.to_owned(),
                mime_type: Some("application/octet-stream".to_owned()),
                blob: base64::Engine::encode(&base64::engine::general_purpose::STANDARD, not_text.into_bytes()),
                meta: None,
            },
        };
        Ok(ResourceOutput { contents: vec![contents], meta: None })
    }
}

/// The frontmatter of the `SKILL.md` at `source`, read as the skill was.
fn frontmatter_of(source: &FileSource) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = match source {
        FileSource::Pack(text) => (*text).to_owned(),
        FileSource::Disk(path) => String::from_utf8(read_bounded(path).ok()?).ok()?,
    };
    let split = crate::frontmatter::split(&text).ok()?;
    Some(crate::frontmatter::read(&split.frontmatter).0)
}

/// The file at `path`, refusing one that grew past the per-skill bound since it was listed.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    let metadata = std::fs::symlink_metadata(path)?;
    if !metadata.is_file() || metadata.len() > MAX_TOTAL_BYTES {
        return Err(std::io::Error::other("no longer a file within 16 MiB"));
    }
    std::fs::read(path)
}

/// The files of the skill folder `dir`: relative path (with `/`), where, size; in name
/// order, within the bounds.
fn folder_files(dir: &Path) -> Vec<(String, FileSource, u64)> {
    let mut found = Vec::new();
    let mut total = 0;
    crate::folder::walk_files(dir, &|_| false, &mut |relative, entry| {
        if found.len() >= MAX_FILES {
            return ControlFlow::Break(());
        }
        let size = entry.metadata().map(|metadata| metadata.len()).unwrap_or(0);
        if total + size <= MAX_TOTAL_BYTES {
            total += size;
            found.push((relative, FileSource::Disk(entry.path()), size));
        }
        ControlFlow::Continue(())
    });
    found
}

/// The media type `skill://` gives a file of text.
fn mime_type(path: &str) -> &'static str {
    crate::folder::media_type(path).unwrap_or("text/plain")
}

/// The `SKILL.md` text of the pack skill at `path` (`pack:{pack}/{dir}/SKILL.md`).
fn pack_text(path: &Path) -> Option<&'static str> {
    let path = path.to_str()?.strip_prefix("pack:")?;
    let (pack_name, rest) = path.split_once('/')?;
    let dir = rest.strip_suffix("/SKILL.md")?;
    let pack = PACKS.iter().find(|pack| pack.name == pack_name)?;
    pack.skills.iter().find(|(name, _)| *name == dir).map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Environment, SkillsConfig, Sources, load};

    #[tokio::test]
    async fn a_skills_files_are_resources_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("hello");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::create_dir_all(skill.join(".git")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\nname: hello\ndescription: Greets\n---\nHi.\n").unwrap();
        std::fs::write(skill.join("scripts/run.sh"), "echo hi\n").unwrap();
        std::fs::write(skill.join(".git/config"), "hidden").unwrap();
        std::fs::write(skill.join("logo.bin"), [0xff, 0xfe, 0x00]).unwrap();
        let sources = Sources {
            packs: vec!["omniagent-skills".to_owned()],
            dirs: vec![dir.path().to_owned()],
            ..Sources::default()
        };
        let set = load(&sources, &SkillsConfig::default(), &Environment::current(), &BTreeMap::new());
        let files = SkillFiles::new(&set.skills, &PromptConfig::default());
        let catalog = files.resources();
        let uris: Vec<&str> = catalog.resources.iter().map(|resource| resource.uri.as_str()).collect();
        assert!(uris.contains(&"skill://git/SKILL.md"), "a pack skill's manifest: {uris:?}");
        let hello: Vec<&str> = uris.iter().copied().filter(|uri| uri.starts_with("skill://hello/")).collect();
        assert_eq!(hello, ["skill://hello/SKILL.md", "skill://hello/logo.bin", "skill://hello/scripts/run.sh"]);
        let manifest = catalog.resources.iter().find(|resource| resource.uri == "skill://hello/SKILL.md").unwrap();
        assert_eq!((manifest.name.as_str(), manifest.description.as_deref()), ("hello", Some("Greets")));
        assert_eq!(
            manifest.meta,
            Some(serde_json::json!({SKILL_FRONTMATTER_META_KEY: {"name": "hello", "description": "Greets"}}))
        );

        let reader = catalog.reader.unwrap();
        let script = reader.read("skill://hello/scripts/run.sh").await.unwrap();
        assert!(matches!(&script.contents[0], ResourceContents::Text { text, .. } if text == "echo hi\n"));
        let logo = reader.read("skill://hello/logo.bin").await.unwrap();
        assert!(matches!(&logo.contents[0], ResourceContents::Blob { blob, .. } if blob == "//4A"));
        let git = reader.read("skill://git/SKILL.md").await.unwrap();
        assert!(matches!(&git.contents[0], ResourceContents::Text { text, .. } if text.starts_with("---")));
        for refused in ["skill://hello/.git/config", "skill://hello/../hello/SKILL.md", "skill://other/SKILL.md"] {
            assert!(matches!(reader.read(refused).await, Err(ToolError::NotFound { .. })), "{refused}");
        }
    }
}
