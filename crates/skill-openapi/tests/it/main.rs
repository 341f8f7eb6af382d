//! Behaviour tests of `skill-openapi`, on real documents written by no one here.

mod real_documents;
