//! Loading skills on demand: [`SkillTools`], the compiled skill `skills` whose tools
//! `skills__activate` and `skills__read` give a skill's body and its files when the model
//! asks, so a prompt need only name the skills.

mod read;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use serde_json::{Value, json};
use skill_core::{Content, Skill, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput};

use self::read::{Folder, Refused, resolved_private_paths};
use crate::folder::{media_type, walk_files};
use crate::{LoadedSkill, Origin};

/// The name of the skill, and so the prefix of its tools: `skills__activate`,
/// `skills__read`.
pub const SKILL_TOOLS_NAME: &str = "skills";

/// The tool of [`SKILL_TOOLS_NAME`] that loads a skill, which a catalog prompt tells the
/// model to call.
pub const ACTIVATE_TOOL_NAME: &str = "activate";

/// At most this many of a skill's files are listed when it is activated.
const MAX_LISTED_FILES: usize = 100;

/// The compiled skill `skills`: two tools over the markdown skills that are available and
/// allow model invocation (whatever a prompt's budget left out).
///
/// - `activate {name}` gives the skill's body (`{baseDir}` made its folder) between
///   `<skill name="…" location="…">` and `</skill>`, with the list of its files (at most
///   100, hidden names and links left out). Each body is given once per agent: a second
///   activation says the skill is already active, unless it asks with `reload: true`
///   (a host may hold one agent across conversations).
/// - `read {name, path}` gives one file of the skill's folder, at most 256 KiB; it refuses
///   absolute paths, `..`, hidden names, links that lead out of the folder and the
///   agent's private paths (given to [`SkillTools::new`]). A binary file is not
///   shown as text: an image comes back as image content, anything else as its size.
///   A pack skill has no folder, so no files.
///
/// With no such skill it offers no tools.
#[derive(Debug, Clone)]
pub struct SkillTools {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// The skills by name, in the order given.
    skills: BTreeMap<String, Offered>,
    /// Their names in the order given: the `enum` of both input schemas.
    names: Vec<String>,
    private: Arc<[PathBuf]>,
    /// The skills activated in this agent.
    active: Mutex<BTreeSet<String>>,
    schemas: OnceLock<[Value; 2]>,
}

/// What the tools need of one skill.
#[derive(Debug)]
struct Offered {
    body: String,
    dir: Option<PathBuf>,
    /// The pack of a pack skill.
    pack: Option<String>,
    folder: OnceLock<Folder>,
}

impl SkillTools {
    /// The tools over `skills` (a loaded [`crate::SkillSet`]'s skills): those available
    /// whose model invocation is allowed, in the order given. They never read
    /// `private_paths` (files or folders, as given or with links resolved): the agent's
    /// own files, such as its home but `skills/`, its config file and its `file:` secrets.
    pub fn new(skills: &[LoadedSkill], private_paths: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut offered = BTreeMap::new();
        let mut names = Vec::new();
        for loaded in skills.iter().filter(|loaded| loaded.available() && !loaded.skill.disable_model_invocation) {
            let skill = &loaded.skill;
            if offered.contains_key(&skill.name) {
                continue;
            }
            let body = skill.body_in_folder();
            let pack = match &loaded.origin {
                Origin::Pack { pack } => Some(pack.clone()),
                Origin::Dir => None,
            };
            names.push(skill.name.clone());
            offered.insert(skill.name.clone(), Offered { body, dir: skill.dir.clone(), pack, folder: OnceLock::new() });
        }
        Self {
            shared: Arc::new(Shared {
                skills: offered,
                names,
                private: resolved_private_paths(private_paths),
                active: Mutex::new(BTreeSet::new()),
                schemas: OnceLock::new(),
            }),
        }
    }

    /// The two tools; none when no skill is offered.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        if self.shared.names.is_empty() {
            return Vec::new();
        }
        [Operation::Activate, Operation::Read]
            .into_iter()
            .map(|operation| Arc::new(OnDemandTool { operation, shared: Arc::clone(&self.shared) }) as Arc<dyn Tool>)
            .collect()
    }
}

#[async_trait]
impl Skill for SkillTools {
    fn name(&self) -> &str {
        SKILL_TOOLS_NAME
    }

    fn description(&self) -> &str {
        "Load a markdown skill's instructions and files when a task needs them"
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        SkillTools::tools(self)
    }
}

#[derive(Debug, Clone, Copy)]
enum Operation {
    Activate,
    Read,
}

struct OnDemandTool {
    operation: Operation,
    shared: Arc<Shared>,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::Activate => ACTIVATE_TOOL_NAME,
            Operation::Read => "read",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Operation::Activate => {
                "Load a skill: returns its instructions and the list of its files. Call it when a task \
                 matches a skill's description, before following that skill"
            }
            Operation::Read => {
                "Read one file of a skill's folder (a script, a reference, a template), by its path \
                 relative to that folder, as listed by activate"
            }
        }
    }

    fn title(self) -> &'static str {
        match self {
            Operation::Activate => "Activate a skill",
            Operation::Read => "Read a skill's file",
        }
    }
}

impl Shared {
    /// The input schemas of `activate` and `read`, made once.
    fn schemas(&self) -> &[Value; 2] {
        self.schemas.get_or_init(|| {
            let name = json!({"type": "string", "enum": self.names, "description": "The skill's name"});
            [
                json!({
                    "type": "object",
                    "properties": {
                        "name": name,
                        "reload": {
                            "type": "boolean",
                            "description": "Give the instructions even if the skill was activated before, when they are no longer in your context"
                        }
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }),
                json!({
                    "type": "object",
                    "properties": {
                        "name": name,
                        "path": {
                            "type": "string",
                            "minLength": 1,
                            "description": "The file's path relative to the skill's folder, e.g. `references/api.md`"
                        }
                    },
                    "required": ["name", "path"],
                    "additionalProperties": false
                }),
            ]
        })
    }

    fn folder<'a>(&self, offered: &'a Offered) -> Option<&'a Folder> {
        let dir = offered.dir.as_deref()?;
        Some(offered.folder.get_or_init(|| Folder::new(dir, Arc::clone(&self.private))))
    }
}

/// The output schemas of `activate` and `read`.
fn output_schema(operation: Operation) -> &'static Value {
    static SCHEMAS: OnceLock<[Value; 2]> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(|| {
        [
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "location": {"type": ["string", "null"], "description": "The skill's folder; null for a built-in skill"},
                    "already_active": {"type": "boolean", "description": "The skill was activated before in this agent: its body is given again only with `reload`"},
                    "files": {"type": "array", "items": {"type": "string"}, "description": "Files of the skill's folder, relative to it"},
                    "more_files": {"type": "integer", "description": "How many more files there are than listed"}
                },
                "required": ["name", "location", "already_active", "files", "more_files"]
            }),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "path": {"type": "string"},
                    "size": {"type": "integer", "description": "The file's size in bytes"},
                    "binary": {"type": "boolean", "description": "Not UTF-8 text: its bytes are not given as text"},
                    "mime_type": {"type": "string"}
                },
                "required": ["name", "path", "size", "binary", "mime_type"]
            }),
        ]
    });
    &schemas[operation as usize]
}

#[async_trait]
impl Tool for OnDemandTool {
    fn name(&self) -> &str {
        self.operation.name()
    }

    fn description(&self) -> &str {
        self.operation.description()
    }

    fn input_schema(&self) -> &Value {
        &self.shared.schemas()[self.operation as usize]
    }

    fn title(&self) -> Option<&str> {
        Some(self.operation.title())
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only_hint: Some(true),
            destructive_hint: None,
            idempotent_hint: Some(matches!(self.operation, Operation::Read)),
            open_world_hint: Some(false),
        }
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(output_schema(self.operation))
    }

    async fn call(&self, _context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError> {
        let name = arguments["name"].as_str().unwrap_or_default().to_owned();
        let Some(offered) = self.shared.skills.get(&name) else {
            return Ok(ToolOutput::error(format!("there is no available skill `{name}`")));
        };
        match self.operation {
            Operation::Activate => {
                let reload = arguments["reload"].as_bool().unwrap_or(false);
                Ok(self.activate(&name, offered, reload).await)
            }
            Operation::Read => {
                let path = arguments["path"].as_str().unwrap_or_default().to_owned();
                Ok(self.read(&name, offered, path).await)
            }
        }
    }
}

impl OnDemandTool {
    async fn activate(&self, name: &str, offered: &Offered, reload: bool) -> ToolOutput {
        let first = lock(&self.shared.active).insert(name.to_owned());
        let location = offered.dir.as_ref().map(|dir| dir.display().to_string());
        let (files, more_files) = match self.shared.folder(offered) {
            Some(folder) => {
                let folder = folder.clone();
                skill_core::off_runtime(move || listed_files(&folder)).await.unwrap_or_default()
            }
            None => (Vec::new(), 0),
        };
        let structured = json!({
            "name": name,
            "location": location,
            "already_active": !first,
            "files": files,
            "more_files": more_files,
        });
        let text = if first || reload {
            activation_text(name, offered, location.as_deref(), &files, more_files)
        } else {
            format!(
                "Skill `{name}` is already active: its instructions were given earlier. If they are no longer in \
                 your context, call skills__activate with \"reload\": true."
            )
        };
        ToolOutput::text(text).with_structured(structured)
    }

    async fn read(&self, name: &str, offered: &Offered, path: String) -> ToolOutput {
        let Some(folder) = self.shared.folder(offered) else {
            let pack = offered.pack.as_deref().unwrap_or("a pack");
            return ToolOutput::error(format!(
                "skill `{name}` is built in (pack `{pack}`): it has no folder, so no files to read"
            ));
        };
        let folder = folder.clone();
        let written = path.clone();
        let bytes = match skill_core::off_runtime(move || folder.read(&written)).await {
            Ok(bytes) => bytes,
            Err(_) => Err(Refused::Unreadable("the read stopped".to_owned())),
        };
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(refused) => return ToolOutput::error(refused.message(name, &path)),
        };
        let size = bytes.len();
        let mime_type = media_type(&path);
        let structured = |binary: bool, mime_type: &str| json!({"name": name, "path": path, "size": size, "binary": binary, "mime_type": mime_type});
        if !bytes.contains(&0)
            && let Ok(text) = std::str::from_utf8(&bytes)
        {
            return ToolOutput::text(text).with_structured(structured(false, mime_type.unwrap_or("text/plain")));
        }
        let mime_type = mime_type.unwrap_or("application/octet-stream");
        let note = format!("`{path}` is a binary file ({size} bytes, {mime_type}); its bytes are not shown as text");
        let mut output = ToolOutput::text(note).with_structured(structured(true, mime_type));
        if mime_type.starts_with("image/") {
            let data = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bytes);
            output.content.push(Content::Image {
                data,
                mime_type: mime_type.to_owned(),
                annotations: None,
                meta: None,
            });
        }
        output
    }
}

/// What the model reads on a skill's first activation.
fn activation_text(name: &str, offered: &Offered, location: Option<&str>, files: &[String], more: usize) -> String {
    let mut text = match location {
        Some(location) => format!(
            "<skill name=\"{name}\" location=\"{location}\">\nThis skill's folder is {location}; paths in it are \
             relative to that folder. Read its files with skills__read.\n\n"
        ),
        None => format!("<skill name=\"{name}\">\nThis skill is built in: it has no folder and no files.\n\n"),
    };
    text.push_str(offered.body.trim());
    text.push('\n');
    if !files.is_empty() {
        text.push_str("\n<skill_files>\n");
        for file in files {
            text.push_str(file);
            text.push('\n');
        }
        if more > 0 {
            text.push_str(&format!("(and {more} more)\n"));
        }
        text.push_str("</skill_files>\n");
    }
    text.push_str("</skill>");
    text
}

/// The files of `folder` but its `SKILL.md`, relative to it with `/`, in name order: at
/// most [`MAX_LISTED_FILES`], and how many more there are. Hidden names, links and the
/// agent's private files are left out.
fn listed_files(folder: &Folder) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    let mut more = 0;
    walk_files(folder.real(), &|path| folder.is_private(path), &mut |relative, _| {
        if relative != "SKILL.md" {
            if files.len() < MAX_LISTED_FILES {
                files.push(relative);
            } else {
                more += 1;
            }
        }
        ControlFlow::Continue(())
    });
    (files, more)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
