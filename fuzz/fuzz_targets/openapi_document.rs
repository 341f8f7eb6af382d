//! An OpenAPI document (JSON or YAML) to tools: loading never panics, one bad operation
//! costs only itself, and every tool has a name within the limit and an object schema.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skill_openapi::{Document, Endpoint, MAX_TOOL_NAME_LEN, OperationFilter};

fuzz_target!(|bytes: &[u8]| {
    let root: Value = match serde_json::from_slice(bytes) {
        Ok(root) => root,
        Err(_) => match std::str::from_utf8(bytes).ok().and_then(|text| serde_yaml_ng::from_str(text).ok()) {
            Some(root) => root,
            None => return,
        },
    };
    let Ok(document) = Document::from_value("/specs/fuzzed.yaml", root) else { return };
    let _ = Endpoint::new(&document, Some("http://127.0.0.1:9"), Vec::new());
    let Ok(set) = document.tools(&OperationFilter::default()) else { return };
    for tool in &set.tools {
        assert!(!tool.name.is_empty() && tool.name.len() <= MAX_TOOL_NAME_LEN, "{}", tool.name);
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
    }
});
