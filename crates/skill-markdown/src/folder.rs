//! A skill folder's files, as both the `skill://` resources ([`crate::files`]) and
//! `skills__activate` list them: one walk, and the media types of their names.

use std::ops::ControlFlow;
use std::path::Path;

/// How many folders deep below the skill folder files are found.
const MAX_DEPTH: usize = 4;

/// Hands `visit` each regular file below the skill folder `dir`, in name order, with its
/// path relative to `dir` (`/`-separated), until it breaks. Hidden names, links, names
/// that are not UTF-8 and whatever `skip` names (a file or a folder) are passed over, and
/// so is everything more than [`MAX_DEPTH`] folders down.
pub(crate) fn walk_files(
    dir: &Path,
    skip: &dyn Fn(&Path) -> bool,
    visit: &mut dyn FnMut(String, &std::fs::DirEntry) -> ControlFlow<()>,
) {
    let _ = walk(dir, "", 0, skip, visit);
}

fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    skip: &dyn Fn(&Path) -> bool,
    visit: &mut dyn FnMut(String, &std::fs::DirEntry) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return ControlFlow::Continue(()) };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        let Ok(kind) = entry.file_type() else { continue };
        if name.starts_with('.') || kind.is_symlink() || skip(&entry.path()) {
            continue;
        }
        let relative = format!("{prefix}{name}");
        if kind.is_dir() && depth < MAX_DEPTH {
            walk(&entry.path(), &format!("{relative}/"), depth + 1, skip, visit)?;
        } else if kind.is_file() {
            visit(relative, &entry)?;
        }
    }
    ControlFlow::Continue(())
}

/// The media type of a file, by its extension (in any case), when it is one a model host
/// knows.
pub(crate) fn media_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase())?;
    Some(match extension.as_str() {
        "md" => "text/markdown",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "sh" => "text/x-shellscript",
        "py" => "text/x-python",
        "txt" => "text/plain",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        _ => return None,
    })
}
