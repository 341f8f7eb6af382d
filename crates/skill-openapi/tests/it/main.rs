//! Behaviour tests of `skill-openapi`, on real documents written by no one here.

mod calls;
mod fetch;
mod file_refs;
mod generate;
mod openapi_3_2;
mod origins;
mod prism_sweep;
mod real_apis;
mod real_documents;
mod runtime;
mod swagger2;
mod wire;
