//! AAuth agent client: every HTTP request signed as an AAuth agent.
//!
//! This crate will hold the agent key, enrollment with an agent provider, the signing
//! middleware (HTTP Message Signatures, RFC 9421, with the `Signature-Key` header), the
//! person and auth token flows driven by `AAuth-Requirement`, and interaction polling. It
//! is filled by the issue that brings AAuth; until then it is empty on purpose.
