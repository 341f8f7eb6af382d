//! Binary data in a tool's arguments: base64 text, or `file:` and the path of a file in
//! the skill's upload folder.
//!
//! A tool's input is JSON, so raw bytes come as text. The two shapes cannot be confused:
//! `:` is in neither base64 alphabet. Files are read only from the folder the endpoint was
//! given ([`Endpoint::with_upload_folder`](super::Endpoint::with_upload_folder)), so that a
//! model cannot send any file the process can read:
//!
//! - The path is first checked as written, without touching the filesystem: with `.` and
//!   `..` folded away it must be in the folder, or it is refused as outside it, so that
//!   nothing outside the folder can be probed for (whether a file exists there, or what
//!   it is). No name on its way may be hidden (start with `.`).
//! - The path, symbolic links resolved, must still be in the folder, with no hidden name
//!   under it. A path that does not resolve, or resolves out of the folder, gets one
//!   answer whatever lies outside: there is no readable file by that path in the folder.
//! - It may not be or be under a private path of the endpoint
//!   ([`Endpoint::with_private_paths`](super::Endpoint::with_private_paths)): the agent's
//!   configuration, keys and tokens, as written or once links are resolved.
//! - Only a regular file is read. It is opened without blocking (`O_NONBLOCK`), so that a FIFO swapped in after the check cannot hang
//!   the call, and what was opened is checked again: a regular file, and on Linux at the
//!   real path the kernel gives for the descriptor (`/proc/self/fd`) in the folder and not
//!   private, so that a link swapped in between the check and the opening cannot lead out.
//!   Where `/proc/self/fd` cannot be read (no `/proc` mounted, or not Linux), the check of
//!   the path before opening is all there is.
//! - A file is read up to the endpoint's upload limit ([`DEFAULT_MAX_UPLOAD_BYTES`]
//!   unless set), refused past it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::fetch::{absolute, resolved_private_paths};
use crate::serialize::ValueKind;

/// How a binary field of a tool's input is given, for tool descriptions and schemas: base64.
/// A skill with an upload folder adds [`FILE_ARGUMENT_HELP`].
pub const BINARY_ARGUMENT_HELP: &str = "Binary data: base64 text (standard or URL-safe alphabet, padding optional).";

/// The other way binary data can be given, where the endpoint has an upload folder
/// ([`Endpoint::with_upload_folder`](super::Endpoint::with_upload_folder)).
pub const FILE_ARGUMENT_HELP: &str =
    "Or `file:` followed by the path of a file in the skill's upload folder (relative to it, or absolute).";

/// The default limit on one file sent from the upload folder: 100 MiB.
pub const DEFAULT_MAX_UPLOAD_BYTES: u64 = 100 * 1024 * 1024;

/// The prefix that makes a string a file path rather than base64 text.
const FILE_PREFIX: &str = "file:";

/// Where `file:` arguments may be read from, and how much of each.
#[derive(Debug, Clone, Copy)]
pub(super) struct Uploads<'a> {
    /// The upload folder; `None`: no file is ever read.
    pub(super) folder: Option<&'a Path>,
    /// The most bytes one file may have.
    pub(super) max_bytes: u64,
    /// Files and folders never read, even in the upload folder.
    pub(super) private_paths: &'a [PathBuf],
}

/// Bytes from a tool's arguments, with the file's name when they came from a file.
#[derive(Debug)]
pub(super) struct BinaryData {
    pub(super) bytes: Vec<u8>,
    pub(super) file_name: Option<String>,
}

/// The bytes `value` stands for; the problem, for the model, when it stands for none.
pub(super) async fn read_binary(value: &Value, uploads: Uploads<'_>) -> Result<BinaryData, String> {
    let Value::String(text) = value else {
        return Err(format!(
            "binary data must be base64 text or `{FILE_PREFIX}` and a path, not {}",
            ValueKind::of(value)
        ));
    };
    match text.strip_prefix(FILE_PREFIX) {
        Some(path) => read_file(path, uploads).await,
        None => decode_base64(text).map(|bytes| BinaryData { bytes, file_name: None }),
    }
}

fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let engine = if compact.contains(['-', '_']) { URL_SAFE_PAD_INDIFFERENT } else { STANDARD_PAD_INDIFFERENT };
    engine
        .decode(compact.as_bytes())
        .map_err(|error| format!("binary data is neither base64 text ({error}) nor `{FILE_PREFIX}` and a path"))
}

async fn read_file(path: &str, uploads: Uploads<'_>) -> Result<BinaryData, String> {
    let cannot = |reason: &str| format!("cannot read `{path}`: {reason}");
    let Some(folder) = uploads.folder else {
        return Err(cannot("this skill has no upload folder, so it reads no files"));
    };
    // As written: nothing is looked up before the path is known to be in the folder.
    let given_folder = absolute(folder);
    let written = absolute(&given_folder.join(path));
    let real_folder = tokio::fs::canonicalize(folder)
        .await
        .map_err(|error| cannot(&format!("the upload folder {} is unusable: {error}", folder.display())))?;
    // An absolute path may name the folder by its real path as well as as given.
    let Ok(relative) = written.strip_prefix(&given_folder).or_else(|_| written.strip_prefix(&real_folder)) else {
        return Err(cannot(&format!("it is outside the upload folder {}", folder.display())));
    };
    let hidden = || cannot("it names a hidden file or folder (one whose name starts with `.`)");
    if relative.components().any(|component| is_hidden(component.as_os_str())) {
        return Err(hidden());
    }
    let private_paths: Vec<PathBuf> = uploads
        .private_paths
        .iter()
        .map(|private| absolute(private))
        .chain(resolved_private_paths(uploads.private_paths))
        .collect();
    let private = || cannot("it is private to the agent (its configuration, keys or tokens)");
    let is_private = |path: &Path| private_paths.iter().any(|private| path.starts_with(private));
    if is_private(&written) || is_private(&real_folder.join(relative)) {
        return Err(private());
    }
    // Past this point the path is in the folder as written; whatever it leads to, a
    // failure says nothing about what is outside.
    let unavailable =
        || cannot(&format!("there is no readable file by that path in the upload folder {}", folder.display()));
    let check_real = |real: &Path| {
        let inside = real.strip_prefix(&real_folder).map_err(|_| unavailable())?;
        if inside.components().any(|component| is_hidden(component.as_os_str())) {
            return Err(hidden());
        }
        if is_private(real) {
            return Err(private());
        }
        Ok(())
    };
    let resolved = tokio::fs::canonicalize(real_folder.join(relative)).await.map_err(|_| unavailable())?;
    check_real(&resolved)?;
    let not_regular = || cannot("it is not a regular file");
    let too_large = || cannot(&format!("it is larger than the upload limit of {} bytes", uploads.max_bytes));
    // Only a regular file is opened (where `O_NONBLOCK` is unknown, all that keeps a FIFO
    // from blocking the opening).
    let metadata = tokio::fs::metadata(&resolved).await.map_err(|_| unavailable())?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    if metadata.len() > uploads.max_bytes {
        return Err(too_large());
    }
    let file = open_nonblocking(&resolved).await.map_err(|_| unavailable())?;
    // What was opened, whatever changed on the way to it since the check above.
    check_real(&opened_path(&file, &resolved).await)?;
    let opened = file.metadata().await.map_err(|_| unavailable())?;
    if !opened.is_file() {
        return Err(not_regular());
    }
    // One byte more than the limit tells a file that grew past it since.
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len().min(uploads.max_bytes)).unwrap_or(0));
    file.take(uploads.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .await
        .map_err(|error| cannot(&error.to_string()))?;
    if bytes.len() as u64 > uploads.max_bytes {
        return Err(too_large());
    }
    let file_name = Path::new(path).file_name().map(|name| name.to_string_lossy().into_owned());
    Ok(BinaryData { bytes, file_name })
}

/// A hidden file or folder: its name starts with `.`.
fn is_hidden(name: &OsStr) -> bool {
    name.as_encoded_bytes().starts_with(b".")
}

/// `O_NONBLOCK`: opening a FIFO with it returns at once instead of waiting for a writer,
/// and it changes nothing for a regular file. Its value on Linux (by architecture), on
/// macOS and the BSDs; elsewhere no flag, and the check of the type before opening is all
/// there is.
#[cfg(unix)]
const O_NONBLOCK: i32 = if cfg!(any(target_os = "linux", target_os = "android")) {
    if cfg!(any(target_arch = "mips", target_arch = "mips64", target_arch = "mips32r6", target_arch = "mips64r6")) {
        0x80
    } else if cfg!(any(target_arch = "sparc", target_arch = "sparc64")) {
        0x4000
    } else {
        0o4000
    }
} else if cfg!(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)) {
    0x4
} else {
    0
};

/// `path` opened for reading without blocking ([`O_NONBLOCK`]).
#[cfg(unix)]
async fn open_nonblocking(path: &Path) -> std::io::Result<tokio::fs::File> {
    tokio::fs::OpenOptions::new().read(true).custom_flags(O_NONBLOCK).open(path).await
}

/// Elsewhere `path` opened plainly: the check of its type before opening is all there is.
#[cfg(not(unix))]
async fn open_nonblocking(path: &Path) -> std::io::Result<tokio::fs::File> {
    tokio::fs::File::open(path).await
}

/// The path of the file `file` is open on, as the kernel knows it (Linux: the
/// `/proc/self/fd` link of its descriptor, so that no path is looked up again); `checked`,
/// the path checked before opening, where that cannot be read.
#[cfg(target_os = "linux")]
async fn opened_path(file: &tokio::fs::File, checked: &Path) -> PathBuf {
    opened_path_in(Path::new("/proc/self/fd"), file, checked).await
}

/// The path `file` is open on, by its link in `descriptors` (`/proc/self/fd`); `checked`
/// when the link cannot be read (no `/proc` mounted), rather than failing every upload.
#[cfg(target_os = "linux")]
async fn opened_path_in(descriptors: &Path, file: &tokio::fs::File, checked: &Path) -> PathBuf {
    use std::os::fd::AsRawFd;
    match tokio::fs::read_link(descriptors.join(file.as_raw_fd().to_string())).await {
        Ok(opened) => opened,
        Err(error) => {
            tracing::debug!(
                "{} is unreadable ({error}): the upload is checked before opening only",
                descriptors.display()
            );
            checked.to_owned()
        }
    }
}

/// Elsewhere there is no portable way to ask: the path checked before opening.
#[cfg(not(target_os = "linux"))]
async fn opened_path(_file: &tokio::fs::File, checked: &Path) -> PathBuf {
    checked.to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    async fn read(value: Value, folder: Option<&Path>) -> Result<(Vec<u8>, Option<String>), String> {
        read_limited(value, folder, DEFAULT_MAX_UPLOAD_BYTES).await
    }

    async fn read_limited(
        value: Value,
        folder: Option<&Path>,
        max_bytes: u64,
    ) -> Result<(Vec<u8>, Option<String>), String> {
        read_private(value, folder, max_bytes, &[]).await
    }

    async fn read_private(
        value: Value,
        folder: Option<&Path>,
        max_bytes: u64,
        private_paths: &[PathBuf],
    ) -> Result<(Vec<u8>, Option<String>), String> {
        read_binary(&value, Uploads { folder, max_bytes, private_paths }).await.map(|data| (data.bytes, data.file_name))
    }

    #[tokio::test]
    async fn base64_in_either_alphabet_with_or_without_padding() {
        assert_eq!(read(json!("AAH/+g=="), None).await, Ok((vec![0, 1, 255, 250], None)));
        assert_eq!(read(json!("AAH_-g"), None).await, Ok((vec![0, 1, 255, 250], None)));
        assert_eq!(read(json!("AAH/\n+g=="), None).await, Ok((vec![0, 1, 255, 250], None)));
        assert!(read(json!("not base64!"), None).await.unwrap_err().starts_with("binary data is neither base64 text"));
        assert_eq!(
            read(json!({"path": "/a"}), None).await.unwrap_err(),
            "binary data must be base64 text or `file:` and a path, not an object"
        );
        assert_eq!(
            read(json!(7), None).await.unwrap_err(),
            "binary data must be base64 text or `file:` and a path, not a primitive"
        );
    }

    #[tokio::test]
    async fn files_are_read_up_to_the_upload_limit_and_must_be_regular_files() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("ten.bin"), [7; 10]).unwrap();
        std::fs::create_dir(folder.path().join("dir")).unwrap();
        let ten = read_limited(json!("file:ten.bin"), Some(folder.path()), 10).await.unwrap();
        assert_eq!(ten, (vec![7; 10], Some("ten.bin".to_owned())));
        assert_eq!(
            read_limited(json!("file:ten.bin"), Some(folder.path()), 9).await.unwrap_err(),
            "cannot read `ten.bin`: it is larger than the upload limit of 9 bytes"
        );
        // A sparse file of 100 MiB and one byte: refused before anything is read.
        let huge = std::fs::File::create(folder.path().join("huge.bin")).unwrap();
        huge.set_len(DEFAULT_MAX_UPLOAD_BYTES + 1).unwrap();
        assert_eq!(
            read(json!("file:huge.bin"), Some(folder.path())).await.unwrap_err(),
            "cannot read `huge.bin`: it is larger than the upload limit of 104857600 bytes"
        );
        assert_eq!(
            read(json!("file:dir"), Some(folder.path())).await.unwrap_err(),
            "cannot read `dir`: it is not a regular file"
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_opened_file_is_known_by_its_real_path() {
        // What `read_file` checks after opening: a path swapped for a link between the
        // check and the opening would show here as the link's target.
        let root = tempfile::tempdir().unwrap();
        let real = root.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("uploads")).unwrap();
        std::fs::write(real.join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(real.join("secret.txt"), real.join("uploads/report.pdf")).unwrap();
        let file = tokio::fs::File::open(real.join("uploads/report.pdf")).await.unwrap();
        let opened = opened_path(&file, &real.join("uploads/report.pdf")).await;
        assert_eq!(opened, real.join("secret.txt"));
        assert!(!opened.starts_with(real.join("uploads")));
        // Without `/proc/self/fd` (here: a folder that is not there), the path checked
        // before opening stands, rather than every upload failing.
        let checked = real.join("uploads/report.pdf");
        assert_eq!(opened_path_in(&real.join("no-proc/self/fd"), &file, &checked).await, checked);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn files_are_opened_without_blocking() {
        // A FIFO swapped in after the check would make a blocking open wait for a writer.
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileTypeExt;
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("a.bin"), [1]).unwrap();
        let file = open_nonblocking(&folder.path().join("a.bin")).await.unwrap();
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", file.as_raw_fd())).unwrap();
        let flags = info.lines().find_map(|line| line.strip_prefix("flags:")).unwrap().trim();
        assert_ne!(i32::from_str_radix(flags, 8).unwrap() & O_NONBLOCK, 0, "{info}");

        assert!(std::process::Command::new("mkfifo").arg(folder.path().join("pipe")).status().unwrap().success());
        let pipe = open_nonblocking(&folder.path().join("pipe")).await.unwrap();
        assert!(pipe.metadata().await.unwrap().file_type().is_fifo());
        assert_eq!(
            read(json!("file:pipe"), Some(folder.path())).await.unwrap_err(),
            "cannot read `pipe`: it is not a regular file"
        );
    }

    #[tokio::test]
    async fn files_only_from_the_upload_folder() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("uploads");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("cat.png"), [137, 80, 78, 71]).unwrap();
        std::fs::write(root.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), folder.join("link.txt")).unwrap();

        let png = Some((vec![137, 80, 78, 71], Some("cat.png".to_owned())));
        assert_eq!(read(json!("file:cat.png"), Some(&folder)).await.ok(), png);
        let absolute = format!("file:{}", folder.join("cat.png").display());
        assert_eq!(read(json!(absolute), Some(&folder)).await.ok(), png);
        let error = read(json!("file:cat.png"), None).await.unwrap_err();
        assert_eq!(error, "cannot read `cat.png`: this skill has no upload folder, so it reads no files");
    }

    #[tokio::test]
    async fn nothing_outside_the_upload_folder_can_be_probed() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("uploads");
        std::fs::create_dir(&folder).unwrap();
        std::fs::create_dir(folder.join("sub")).unwrap();
        std::fs::write(folder.join("cat.png"), [137, 80, 78, 71]).unwrap();
        std::fs::write(root.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), folder.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(root.path().join("missing.txt"), folder.join("dangling.txt")).unwrap();

        // Out of the folder as written: refused alike, whether the file is there or not.
        let secret = root.path().join("secret.txt");
        let missing = root.path().join("missing.txt");
        for path in ["../secret.txt", "../missing.txt", "sub/../../secret.txt", "./../missing.txt"]
            .map(str::to_owned)
            .into_iter()
            .chain([secret.display().to_string(), missing.display().to_string()])
        {
            assert_eq!(
                read(json!(format!("file:{path}")), Some(&folder)).await.unwrap_err(),
                format!("cannot read `{path}`: it is outside the upload folder {}", folder.display())
            );
        }
        // `..` folded away as written still in the folder is fine.
        assert_eq!(read(json!("file:sub/../cat.png"), Some(&folder)).await.unwrap().0, [137, 80, 78, 71]);
        // In the folder as written: a missing file, a link out to a file and a link out to
        // nothing get one answer.
        let real_folder = folder.canonicalize().unwrap();
        for path in ["missing.png", "sub/missing.png", "link.txt", "dangling.txt"] {
            assert_eq!(
                read(json!(format!("file:{path}")), Some(&folder)).await.unwrap_err(),
                format!(
                    "cannot read `{path}`: there is no readable file by that path in the upload folder {}",
                    folder.display()
                )
            );
        }
        // The folder named by its real path in an absolute path is the folder too.
        let absolute = format!("file:{}", real_folder.join("cat.png").display());
        assert_eq!(read(json!(absolute), Some(&folder)).await.unwrap().0, [137, 80, 78, 71]);
    }

    #[tokio::test]
    async fn hidden_and_private_files_are_never_sent() {
        let folder = tempfile::tempdir().unwrap();
        let home = folder.path();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("aauth")).unwrap();
        std::fs::create_dir_all(home.join("photos")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "key").unwrap();
        std::fs::write(home.join(".env"), "TOKEN=1").unwrap();
        std::fs::write(home.join("aauth/agent.json"), "{}").unwrap();
        std::fs::write(home.join("config.yaml"), "token: 1").unwrap();
        std::fs::write(home.join("photos/cat.png"), [1]).unwrap();
        std::os::unix::fs::symlink(home.join(".env"), home.join("photos/env.txt")).unwrap();
        std::os::unix::fs::symlink(home.join("config.yaml"), home.join("photos/config.txt")).unwrap();
        std::os::unix::fs::symlink(home.join("aauth"), home.join("photos/keys")).unwrap();
        let private = [home.join("config.yaml"), home.join("aauth")];
        let read = |path: &str| read_private(json!(format!("file:{path}")), Some(home), 100, &private);

        assert_eq!(read("photos/cat.png").await.unwrap().0, [1]);
        for hidden in [".env", ".ssh/id_ed25519", "photos/env.txt", ".ssh/missing"] {
            assert_eq!(
                read(hidden).await.unwrap_err(),
                format!("cannot read `{hidden}`: it names a hidden file or folder (one whose name starts with `.`)")
            );
        }
        for private in
            ["config.yaml", "aauth/agent.json", "aauth/missing.json", "photos/config.txt", "photos/keys/agent.json"]
        {
            assert_eq!(
                read(private).await.unwrap_err(),
                format!("cannot read `{private}`: it is private to the agent (its configuration, keys or tokens)")
            );
        }
    }
}
