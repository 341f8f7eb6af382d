//! An entry that names a gateway already serving over HTTP (`omniagent mcp serve --http`,
//! on this machine or another) by its URL, with the variable the host reads the client's
//! bearer token from: each host spells that variable in its own way, and the token itself
//! is written nowhere.

use serde_json::{Map, Value, json};

use crate::UsageError;
use crate::args::McpHost;

/// The entry for `host` that reaches the gateway at `url`, sending the token in the
/// variable `token_env` (if any) as `Authorization: Bearer`.
pub(super) fn entry(host: McpHost, url: &str, token_env: Option<&str>) -> anyhow::Result<Value> {
    let parsed = url::Url::parse(url).map_err(|error| UsageError::new(format!("--url {url}: {error}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(UsageError::new(format!("--url {url}: not an http or https URL")).into());
    }
    if let Some(variable) = token_env.filter(|variable| !is_variable_name(variable)) {
        return Err(UsageError::new(format!(
            "--token-env {variable}: not a variable's name (letters, digits and `_`, not starting with a digit)"
        ))
        .into());
    }
    // How the host writes "the value of the variable" where it reads headers.
    let (mut entry, spelled) = match host {
        McpHost::ClaudeDesktop => {
            return Err(UsageError::new(
                "Claude Desktop adds servers that run elsewhere in its Settings, under Connectors, not in its \
                 config file; --url works for the other hosts",
            )
            .into());
        }
        McpHost::Codex => {
            let mut entry = json!({"url": url});
            if let Some(variable) = token_env {
                entry["bearer_token_env_var"] = variable.into();
            }
            return Ok(entry);
        }
        McpHost::ClaudeCode => (json!({"type": "http", "url": url}), token_env.map(|name| format!("${{{name}}}"))),
        McpHost::Cursor => (json!({"url": url}), token_env.map(|name| format!("${{env:{name}}}"))),
        McpHost::Vscode => (json!({"type": "http", "url": url}), token_env.map(|name| format!("${{env:{name}}}"))),
        McpHost::Gemini => (json!({"httpUrl": url}), token_env.map(|name| format!("${{{name}}}"))),
    };
    if let Some(token) = spelled {
        let headers = Map::from_iter([("Authorization".to_owned(), Value::String(format!("Bearer {token}")))]);
        entry["headers"] = Value::Object(headers);
    }
    Ok(entry)
}

/// The URL an entry reaches, if it names a gateway over HTTP.
pub(crate) fn url_of(entry: &Value) -> Option<&str> {
    entry.get("url").or_else(|| entry.get("httpUrl")).and_then(Value::as_str)
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_spells_the_tokens_variable_its_own_way() {
        let url = "https://gateway.example/mcp";
        let header = |host| entry(host, url, Some("OMNIAGENT_TOKEN")).unwrap()["headers"]["Authorization"].clone();
        assert_eq!(header(McpHost::ClaudeCode), "Bearer ${OMNIAGENT_TOKEN}");
        assert_eq!(header(McpHost::Cursor), "Bearer ${env:OMNIAGENT_TOKEN}");
        assert_eq!(header(McpHost::Vscode), "Bearer ${env:OMNIAGENT_TOKEN}");
        assert_eq!(header(McpHost::Gemini), "Bearer ${OMNIAGENT_TOKEN}");
        assert_eq!(
            entry(McpHost::Codex, url, Some("OMNIAGENT_TOKEN")).unwrap(),
            json!({"url": url, "bearer_token_env_var": "OMNIAGENT_TOKEN"})
        );
        assert_eq!(entry(McpHost::Cursor, url, None).unwrap(), json!({"url": url}));
    }

    #[test]
    fn what_cannot_work_is_refused() {
        let refused = |host, url, token| entry(host, url, token).unwrap_err().to_string();
        assert!(refused(McpHost::ClaudeDesktop, "http://127.0.0.1:8765/mcp", None).contains("Connectors"));
        assert!(refused(McpHost::Cursor, "ftp://example.com/mcp", None).contains("not an http or https URL"));
        assert!(refused(McpHost::Cursor, "127.0.0.1:8765", None).contains("--url 127.0.0.1:8765"));
        assert!(refused(McpHost::Cursor, "http://127.0.0.1:8765/mcp", Some("MY-TOKEN")).contains("not a variable"));
    }
}
