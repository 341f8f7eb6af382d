//! OpenAPI skills: any OpenAPI 3.0 or 3.1 document becomes tools, one per operation.
//!
//! This crate will hold the document loader (files and http(s) URLs, `$ref` resolution
//! with the fetch rules of `DESIGN.md`), the operation-to-tool mapping, the request
//! serialization for every parameter style and body media type, and authentication. It
//! accepts any `reqwest_middleware::ClientWithMiddleware`, so an AAuth signing client can
//! be plugged in. It is filled by the issue that brings OpenAPI skills; until then it is
//! empty on purpose.
