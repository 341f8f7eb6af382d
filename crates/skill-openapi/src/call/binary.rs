//! Binary data in a tool's arguments: base64 text, or `file:` and the path of a file in
//! the skill's upload folder.
//!
//! A tool's input is JSON, so raw bytes come as text. The two shapes cannot be confused:
//! `:` is in neither base64 alphabet. Files are read only from the folder the endpoint was
//! given ([`Endpoint::with_upload_folder`](super::Endpoint::with_upload_folder)), so that a
//! model cannot send any file the process can read: the path, symbolic links resolved,
//! must be in the folder; and on Linux the file actually opened is checked again
//! (`/proc/self/fd`), so that a link swapped in between the check and the opening cannot
//! lead out of it. A file is read up to the endpoint's upload limit
//! ([`DEFAULT_MAX_UPLOAD_BYTES`] unless set), refused past it.

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT};
use serde_json::Value;
use tokio::io::AsyncReadExt;

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
    let cannot = |reason: String| format!("cannot read `{path}`: {reason}");
    let Some(folder) = uploads.folder else {
        return Err(cannot("this skill has no upload folder, so it reads no files".to_owned()));
    };
    let folder = tokio::fs::canonicalize(folder)
        .await
        .map_err(|error| cannot(format!("the upload folder {} is unusable: {error}", folder.display())))?;
    let outside = || cannot(format!("it is outside the upload folder {}", folder.display()));
    let resolved = tokio::fs::canonicalize(folder.join(path)).await.map_err(|error| cannot(error.to_string()))?;
    if !resolved.starts_with(&folder) {
        return Err(outside());
    }
    // Only a regular file is opened: opening a FIFO would wait for a writer.
    let metadata = tokio::fs::metadata(&resolved).await.map_err(|error| cannot(error.to_string()))?;
    let too_large = || cannot(format!("it is larger than the upload limit of {} bytes", uploads.max_bytes));
    if !metadata.is_file() {
        return Err(cannot("it is not a regular file".to_owned()));
    }
    if metadata.len() > uploads.max_bytes {
        return Err(too_large());
    }
    let file = tokio::fs::File::open(&resolved).await.map_err(|error| cannot(error.to_string()))?;
    // What was opened, whatever changed on the way to it since the check above.
    if !opened_path(&file, &resolved).await.map_err(|error| cannot(error.to_string()))?.starts_with(&folder) {
        return Err(outside());
    }
    let opened = file.metadata().await.map_err(|error| cannot(error.to_string()))?;
    if !opened.is_file() {
        return Err(cannot("it is not a regular file".to_owned()));
    }
    // One byte more than the limit tells a file that grew past it since.
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len().min(uploads.max_bytes)).unwrap_or(0));
    file.take(uploads.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .await
        .map_err(|error| cannot(error.to_string()))?;
    if bytes.len() as u64 > uploads.max_bytes {
        return Err(too_large());
    }
    let file_name = Path::new(path).file_name().map(|name| name.to_string_lossy().into_owned());
    Ok(BinaryData { bytes, file_name })
}

/// The path of the file `file` is open on, as the kernel knows it (Linux: the
/// `/proc/self/fd` link of its descriptor, so that no path is looked up again).
#[cfg(target_os = "linux")]
async fn opened_path(file: &tokio::fs::File, _checked: &Path) -> std::io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    tokio::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).await
}

/// Elsewhere there is no portable way to ask: the path checked before opening.
#[cfg(not(target_os = "linux"))]
async fn opened_path(_file: &tokio::fs::File, checked: &Path) -> std::io::Result<PathBuf> {
    Ok(checked.to_owned())
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
        read_binary(&value, Uploads { folder, max_bytes }).await.map(|data| (data.bytes, data.file_name))
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
        let opened = opened_path(&file, &real.join("uploads/report.pdf")).await.unwrap();
        assert_eq!(opened, real.join("secret.txt"));
        assert!(!opened.starts_with(real.join("uploads")));
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
        for outside in ["file:../secret.txt", "file:link.txt"] {
            let error = read(json!(outside), Some(&folder)).await.unwrap_err();
            assert!(error.contains("is outside the upload folder"), "{error}");
        }
        let error = read(json!("file:cat.png"), None).await.unwrap_err();
        assert_eq!(error, "cannot read `cat.png`: this skill has no upload folder, so it reads no files");
        assert!(
            read(json!("file:missing.png"), Some(&folder))
                .await
                .unwrap_err()
                .starts_with("cannot read `missing.png`: ")
        );
    }
}
