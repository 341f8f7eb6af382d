//! Binary data in a tool's arguments: base64 text, or `file:` and the path of a file in
//! the skill's upload folder.
//!
//! A tool's input is JSON, so raw bytes come as text. The two shapes cannot be confused:
//! `:` is in neither base64 alphabet. Files are read only from the folder the endpoint was
//! given ([`Endpoint::with_upload_folder`](super::Endpoint::with_upload_folder)), after
//! symbolic links are resolved, so that a model cannot send any file the process can read.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT};
use serde_json::Value;

/// How a binary field of a tool's input is given, for tool descriptions and schemas.
pub const BINARY_ARGUMENT_HELP: &str = "Binary data: base64 text (standard or URL-safe alphabet, padding optional), \
     or `file:` followed by the path of a file in the skill's upload folder (relative to it, or absolute).";

/// The prefix that makes a string a file path rather than base64 text.
const FILE_PREFIX: &str = "file:";

/// Bytes from a tool's arguments, with the file's name when they came from a file.
#[derive(Debug)]
pub(super) struct BinaryData {
    pub(super) bytes: Vec<u8>,
    pub(super) file_name: Option<String>,
}

/// The bytes `value` stands for; the problem, for the model, when it stands for none.
pub(super) async fn read_binary(value: &Value, upload_folder: Option<&Path>) -> Result<BinaryData, String> {
    let Value::String(text) = value else {
        return Err(format!("binary data must be base64 text or `{FILE_PREFIX}` and a path, not {}", kind(value)));
    };
    match text.strip_prefix(FILE_PREFIX) {
        Some(path) => read_file(path, upload_folder).await,
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

async fn read_file(path: &str, upload_folder: Option<&Path>) -> Result<BinaryData, String> {
    let Some(folder) = upload_folder else {
        return Err(format!("cannot read `{path}`: this skill has no upload folder, so it reads no files"));
    };
    let folder = tokio::fs::canonicalize(folder).await.map_err(|error| {
        format!("cannot read `{path}`: the upload folder {} is unusable: {error}", folder.display())
    })?;
    let resolved =
        tokio::fs::canonicalize(folder.join(path)).await.map_err(|error| format!("cannot read `{path}`: {error}"))?;
    if !resolved.starts_with(&folder) {
        return Err(format!("cannot read `{path}`: it is outside the upload folder {}", folder.display()));
    }
    let bytes = tokio::fs::read(&resolved).await.map_err(|error| format!("cannot read `{path}`: {error}"))?;
    let file_name = Path::new(path).file_name().map(|name| name.to_string_lossy().into_owned());
    Ok(BinaryData { bytes, file_name })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    async fn read(value: Value, folder: Option<&Path>) -> Result<(Vec<u8>, Option<String>), String> {
        read_binary(&value, folder).await.map(|data| (data.bytes, data.file_name))
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
