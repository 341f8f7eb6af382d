//! The `storage:` section: where skills keep state.

use serde::{Deserialize, Serialize};
use skill_core::SecretRef;

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StorageConfig {
    #[serde(default)]
    pub(crate) backend: StorageBackend,
    /// The Redis server of `backend: redis`, as a secret reference (it may hold a
    /// password); a `redis://`, `rediss://` or `unix://` URL written as is is a literal.
    /// `${VAR}` and `${env:VAR}` in its value are expanded from the environment.
    #[serde(default, deserialize_with = "redis_url", skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<SecretRef>,
}

/// `storage.url`: a Redis URL as written is a literal (its scheme is no secret scheme),
/// anything else a secret reference. A value that is not a string is refused without
/// being quoted, as [`SecretRef`] refuses it.
fn redis_url<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<SecretRef>, D::Error> {
    struct UrlVisitor;

    impl UrlVisitor {
        fn not_a_string<E: serde::de::Error>(found: &str) -> E {
            E::custom(format_args!("expected a Redis URL or a secret reference string, found {found}"))
        }
    }

    impl<'de> serde::de::Visitor<'de> for UrlVisitor {
        type Value = SecretRef;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a Redis URL or a secret reference string")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SecretRef, E> {
            if ["redis://", "rediss://", "unix://"].iter().any(|scheme| text.starts_with(scheme)) {
                return Ok(SecretRef::Literal(skill_core::SecretString::from(text)));
            }
            text.parse().map_err(E::custom)
        }

        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<SecretRef, E> {
            Err(Self::not_a_string("a boolean"))
        }

        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<SecretRef, E> {
            Err(Self::not_a_string("a number"))
        }

        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<SecretRef, E> {
            Err(Self::not_a_string("a number"))
        }

        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<SecretRef, E> {
            Err(Self::not_a_string("a number"))
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<SecretRef, E> {
            Err(Self::not_a_string("nothing"))
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<SecretRef, A::Error> {
            Err(Self::not_a_string("a list"))
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<SecretRef, A::Error> {
            Err(Self::not_a_string("a mapping"))
        }
    }

    deserializer.deserialize_any(UrlVisitor).map(Some)
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StorageBackend {
    /// One SQLite file under `$OMNIAGENT_HOME/state/`, shared by every process.
    #[default]
    Sqlite,
    /// Memory, gone when the process ends.
    Memory,
    /// A Redis server (`storage.url`), shared by every host that names it.
    Redis,
}
