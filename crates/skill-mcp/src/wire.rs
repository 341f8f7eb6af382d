//! rmcp's model types and skill-core's share MCP's wire form: one converts into the
//! other through it.

/// `value` read as the type of the same MCP wire form on the other side (rmcp's model
/// or skill-core's).
pub(crate) fn wire_into<T: serde::de::DeserializeOwned>(value: &impl serde::Serialize) -> Result<T, serde_json::Error> {
    serde_json::to_value(value).and_then(T::deserialize)
}
