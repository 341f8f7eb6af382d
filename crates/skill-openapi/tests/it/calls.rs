//! `Endpoint::call` against real HTTP servers on 127.0.0.1: request bodies as the server
//! received them (JSON, multipart with its parts' content types and headers and binary
//! parts from base64 and from a file, text, octet-stream), responses as tool results
//! (JSON as structured content, binary as a resource, truncation, non-2xx, redirects not
//! followed, timeout), credentials matched to security schemes and kept out of every
//! `Debug` output and error, and server URLs from `servers[0]` or a base URL.

mod bodies;
mod credentials;
mod multipart;
mod parameters;
mod responses;
mod servers;

use serde_json::Value;
use skill_openapi::{Credential, Document, Endpoint, OperationFilter, OperationTool, default_client};

use crate::wire::{Recorded, Recorder};

/// A document's tools, by name.
struct Api {
    document: Document,
    tools: Vec<OperationTool>,
}

impl Api {
    fn new(root: Value) -> Self {
        let document = Document::from_value("/specs/calls.json", root).unwrap();
        let set = document.tools(&OperationFilter::default()).unwrap();
        assert!(set.skipped.is_empty(), "{:?}", set.skipped);
        Api { document, tools: set.tools }
    }

    fn tool(&self, name: &str) -> &OperationTool {
        self.tools.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("no tool {name}"))
    }

    fn endpoint(&self, base_url: &str, credentials: Vec<Credential>) -> Endpoint {
        Endpoint::new(&self.document, Some(base_url), credentials).unwrap()
    }
}

/// Calls `name` and returns the one request the server received.
async fn sent(server: &Recorder, endpoint: &Endpoint, api: &Api, name: &str, arguments: Value) -> Recorded {
    let client = default_client();
    let call = endpoint.call(&client, api.tool(name), &arguments);
    // A `Tool`'s call future must be `Send`, to run on any runtime thread.
    is_send(&call);
    let output = call.await.unwrap();
    assert!(!output.is_error, "{output:?}");
    let mut received = server.take();
    assert_eq!(received.len(), 1);
    received.remove(0)
}

fn is_send<T: Send>(_: &T) {}
