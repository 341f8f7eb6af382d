//! What a `SKILL.md` says, once parsed: [`MarkdownSkill`] and its parts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

/// One parsed `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkdownSkill {
    /// `name`, or the skill folder's name when the frontmatter has none.
    pub name: String,
    /// `description`.
    pub description: String,
    /// The Markdown after the frontmatter.
    pub body: String,
    /// The `SKILL.md` file (`pack:<pack>/<skill>/SKILL.md` for a skill embedded in a pack).
    pub path: PathBuf,
    /// The skill's folder, if it has one on disk.
    pub dir: Option<PathBuf>,
    /// An emoji for headings and lists.
    pub emoji: Option<String>,
    /// A page about the skill or the tool it wraps.
    pub homepage: Option<String>,
    /// Agent Skills `license`.
    pub license: Option<String>,
    /// Agent Skills `compatibility`.
    pub compatibility: Option<String>,
    /// Agent Skills `allowed-tools` (space-separated in the file).
    pub allowed_tools: Vec<String>,
    /// Agent Skills `metadata`: its string-valued entries.
    pub metadata: BTreeMap<String, String>,
    /// `user-invocable` (default true).
    pub user_invocable: bool,
    /// `disable-model-invocation` (default false): such a skill is never put in a prompt.
    pub disable_model_invocation: bool,
    /// `always`: offered without checking `bins`, `anyBins` and `env`.
    pub always: bool,
    /// The platforms the skill runs on (`darwin`, `linux`, `win32`); empty means all.
    pub os: Vec<String>,
    /// The environment variable that holds the skill's main credential.
    pub primary_env: Option<String>,
    /// What the skill needs.
    pub requires: Requires,
    /// How to install what it needs.
    pub install: Vec<InstallSpec>,
    /// Whether the folder has `hooks/` (never run; shown by `skills info`).
    pub has_hooks: bool,
    /// Whether the folder has `scripts/`.
    pub has_scripts: bool,
    /// Things in the file that were ignored, for `skills info` and logs.
    pub warnings: Vec<String>,
}

impl MarkdownSkill {
    /// The body with `{baseDir}` made the skill's folder; a pack skill's as written.
    pub(crate) fn body_in_folder(&self) -> String {
        match &self.dir {
            Some(dir) => self.body.replace("{baseDir}", &dir.display().to_string()),
            None => self.body.clone(),
        }
    }
}

/// `requires`: what must be present for the skill to be offered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Requires {
    /// Programs that must all be on PATH.
    pub bins: Vec<String>,
    /// Programs of which at least one must be on PATH.
    pub any_bins: Vec<String>,
    /// Environment variables that must be set and non-empty.
    pub env: Vec<String>,
    /// OpenClaw config paths; recorded, not checked (they name another host's config).
    pub config: Vec<String>,
    /// Secrets the agent's owner must bind in `skills.config.<name>.secrets`.
    pub secrets: Vec<SecretDecl>,
}

/// A secret a skill declares in `requires.secrets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretDecl {
    /// The name, also the environment variable its scripts read.
    pub name: String,
    /// What it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One way to install what a skill needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallSpec {
    /// The installer.
    pub kind: InstallKind,
    /// An id for the spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What to show people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The programs it provides.
    pub bins: Vec<String>,
    /// The platforms it applies to; empty means all.
    pub os: Vec<String>,
    /// Homebrew formula (or cask).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
    /// npm, apt or uv package.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Go module.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Download URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The installers a spec can name (`kind`, or `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InstallKind {
    /// Homebrew.
    Brew,
    /// npm, as OpenClaw names it.
    Node,
    /// npm.
    Npm,
    /// `go install`.
    Go,
    /// `uv tool install`.
    Uv,
    /// A file to download.
    Download,
    /// Debian's apt.
    Apt,
}

impl InstallKind {
    /// The kind named `name` (any case), if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "brew" => Self::Brew,
            "node" => Self::Node,
            "npm" => Self::Npm,
            "go" => Self::Go,
            "uv" => Self::Uv,
            "download" => Self::Download,
            "apt" => Self::Apt,
            _ => return None,
        })
    }
}

impl InstallSpec {
    /// The command (or action) that installs this, for `skills check`.
    pub fn hint(&self) -> Option<String> {
        let or_first_bin = |name: &Option<String>| name.clone().or_else(|| self.bins.first().cloned());
        Some(match self.kind {
            InstallKind::Brew => format!("brew install {}", or_first_bin(&self.formula)?),
            InstallKind::Apt => format!("sudo apt-get install {}", or_first_bin(&self.package)?),
            InstallKind::Node | InstallKind::Npm => format!("npm install -g {}", or_first_bin(&self.package)?),
            InstallKind::Uv => format!("uv tool install {}", or_first_bin(&self.package)?),
            InstallKind::Go => {
                let module = self.module.clone()?;
                if module.contains('@') {
                    format!("go install {module}")
                } else {
                    format!("go install {module}@latest")
                }
            }
            InstallKind::Download => format!("download {}", self.url.clone()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: InstallKind) -> InstallSpec {
        InstallSpec {
            kind,
            id: None,
            label: None,
            bins: vec!["gh".into()],
            os: Vec::new(),
            formula: None,
            package: None,
            module: None,
            url: None,
        }
    }

    #[test]
    fn hints_name_the_installer_command() {
        let check = |spec: InstallSpec, expect: Option<&str>| assert_eq!(spec.hint().as_deref(), expect);
        check(InstallSpec { formula: Some("gh".into()), ..spec(InstallKind::Brew) }, Some("brew install gh"));
        check(spec(InstallKind::Apt), Some("sudo apt-get install gh"));
        check(InstallSpec { package: Some("@x/cli".into()), ..spec(InstallKind::Node) }, Some("npm install -g @x/cli"));
        check(InstallSpec { package: Some("ruff".into()), ..spec(InstallKind::Uv) }, Some("uv tool install ruff"));
        check(
            InstallSpec { module: Some("golang.org/x/tools/gopls".into()), ..spec(InstallKind::Go) },
            Some("go install golang.org/x/tools/gopls@latest"),
        );
        check(
            InstallSpec { module: Some("example.com/m@v1.2.0".into()), ..spec(InstallKind::Go) },
            Some("go install example.com/m@v1.2.0"),
        );
        check(spec(InstallKind::Go), None);
        check(
            InstallSpec { url: Some("https://example.com/t.tgz".into()), ..spec(InstallKind::Download) },
            Some("download https://example.com/t.tgz"),
        );
    }
}
