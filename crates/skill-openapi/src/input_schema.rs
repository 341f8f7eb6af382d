//! Schemas for tool inputs: OpenAPI schemas rewritten into self-contained JSON Schema
//! 2020-12, each `$ref` turned into `#/$defs/<key>` and the schemas it reaches carried
//! under `$defs`.
//!
//! Nothing is inlined, so a recursive schema stays a cycle of `$ref`s of bounded size. A
//! schema in `#/components/schemas/X` of the spec keeps `X` as its key (made safe for a URI
//! fragment); any other target (another file, a pointer elsewhere) gets its last pointer
//! token, made unique with `_2`, `_3`. Keys are chosen once per document, so every tool
//! uses the same key for the same schema, and each target is rewritten once.
//!
//! OpenAPI 3.0 schemas are converted where 2020-12 differs in a way a validator would
//! reject or misread: `nullable: true` adds `"null"` to `type` (and to `enum`), and
//! boolean `exclusiveMinimum`/`exclusiveMaximum` become the numeric form.
//!
//! Every schema here describes a request, so a property marked `readOnly` (by itself, its
//! `$ref` or a member of its `allOf`) is left out, and out of `required`, in 3.0 and in
//! 3.1 alike; `writeOnly` ones stay.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use crate::Error;
use crate::document::SpecVersion;
use crate::reference::{DocId, RefTarget, Resolver};

/// The keys chosen so far and the rewritten schemas of the targets reached so far.
#[derive(Debug)]
pub(crate) struct SchemaCatalog {
    version: SpecVersion,
    keys: HashMap<RefTarget, String>,
    used_keys: HashSet<String>,
    /// Each key's target and the ref that first reached it (for error messages).
    targets: HashMap<String, (RefTarget, DocId, String)>,
    /// Rewritten schemas and the keys they refer to.
    definitions: HashMap<String, (Value, Vec<String>)>,
    /// Whether the schema under each key looked at so far is `readOnly`.
    read_only: HashMap<String, bool>,
}

impl SchemaCatalog {
    /// A catalog for the spec at the root of `resolver`, with the spec's component schemas'
    /// keys reserved first, in document order, so that they never depend on which tool
    /// was built first.
    pub(crate) fn new(version: SpecVersion, resolver: &Resolver) -> Self {
        let mut catalog = SchemaCatalog {
            version,
            keys: HashMap::new(),
            used_keys: HashSet::new(),
            targets: HashMap::new(),
            definitions: HashMap::new(),
            read_only: HashMap::new(),
        };
        let root = resolver.document(DocId::ROOT);
        if let Some(schemas) = root.pointer("/components/schemas").and_then(Value::as_object) {
            for name in schemas.keys() {
                let target =
                    RefTarget { doc: DocId::ROOT, pointer: format!("/components/schemas/{}", escape_token(name)) };
                let reference = format!("#{}", target.pointer);
                catalog.assign_key(target, name, DocId::ROOT, reference);
            }
        }
        catalog
    }

    /// `schema`, found in document `from`, rewritten: its refs point into `$defs`. The keys
    /// it refers to directly are added to `referenced`.
    pub(crate) fn rewrite(
        &mut self,
        resolver: &mut Resolver,
        from: DocId,
        schema: &Value,
        referenced: &mut Vec<String>,
    ) -> Result<Value, Error> {
        let Value::Object(object) = schema else { return Ok(schema.clone()) };
        let mut rewritten = Map::with_capacity(object.len());
        let mut read_only: Vec<&str> = Vec::new();
        for (keyword, value) in object {
            let value = match keyword.as_str() {
                "$ref" => match value.as_str() {
                    Some(reference) => {
                        let key = self.key_for(resolver, from, reference)?;
                        let pointer = format!("#/$defs/{key}");
                        referenced.push(key);
                        Value::String(pointer)
                    }
                    None => value.clone(),
                },
                // A property marked `readOnly` is one the server sets: OAS 3.0.4 says it
                // "SHOULD NOT be sent as part of the request", and JSON Schema gives 3.1's
                // `readOnly` the same meaning for a request. Every schema here describes a
                // request (tool inputs only), so such a property is left out, and out of
                // `required` below, which in 3.0 "will take effect on the response only".
                "properties" => match value.as_object() {
                    Some(members) => {
                        let mut out = Map::with_capacity(members.len());
                        for (name, member) in members {
                            let mut inner = Vec::new();
                            let rewritten = self.rewrite(resolver, from, member, &mut inner)?;
                            if self.is_read_only(resolver, member, &rewritten) {
                                read_only.push(name.as_str());
                                continue;
                            }
                            referenced.append(&mut inner);
                            out.insert(name.clone(), rewritten);
                        }
                        Value::Object(out)
                    }
                    None => value.clone(),
                },
                "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => match value.as_object() {
                    Some(members) => {
                        let mut out = Map::with_capacity(members.len());
                        for (name, member) in members {
                            out.insert(name.clone(), self.rewrite(resolver, from, member, referenced)?);
                        }
                        Value::Object(out)
                    }
                    None => value.clone(),
                },
                "items" | "prefixItems" | "allOf" | "anyOf" | "oneOf" => match value.as_array() {
                    Some(members) => Value::Array(
                        members
                            .iter()
                            .map(|member| self.rewrite(resolver, from, member, referenced))
                            .collect::<Result<_, _>>()?,
                    ),
                    None => self.rewrite(resolver, from, value, referenced)?,
                },
                "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "additionalItems"
                | "contentSchema" => self.rewrite(resolver, from, value, referenced)?,
                _ => value.clone(),
            };
            rewritten.insert(keyword.clone(), value);
        }
        if !read_only.is_empty()
            && let Some(Value::Array(required)) = rewritten.get_mut("required")
        {
            required.retain(|name| !name.as_str().is_some_and(|name| read_only.contains(&name)));
            if required.is_empty() {
                rewritten.remove("required");
            }
        }
        if self.version == SpecVersion::V3_0 {
            convert_from_3_0(&mut rewritten);
        }
        Ok(Value::Object(rewritten))
    }

    /// Whether a property's schema (`original`, and `rewritten`, its refs already keys) is
    /// `readOnly`: itself, through its `$ref`, or through a member of its `allOf` (a
    /// common way to give a referenced schema a description of its own).
    fn is_read_only(&mut self, resolver: &mut Resolver, original: &Value, rewritten: &Value) -> bool {
        if original.get("readOnly") == Some(&Value::Bool(true)) {
            return true;
        }
        let mut keys: Vec<&str> = Vec::new();
        keys.extend(rewritten.get("$ref").and_then(Value::as_str));
        if let Some(Value::Array(members)) = rewritten.get("allOf") {
            for member in members {
                if member.get("readOnly") == Some(&Value::Bool(true)) {
                    return true;
                }
                keys.extend(member.get("$ref").and_then(Value::as_str));
            }
        }
        keys.into_iter()
            .filter_map(|pointer| pointer.strip_prefix("#/$defs/"))
            .any(|key| self.key_is_read_only(resolver, key))
    }

    /// Whether the schema under `key` says `readOnly: true`, itself or through the refs it
    /// is made of (a chain of at most eight); remembered per key.
    fn key_is_read_only(&mut self, resolver: &mut Resolver, key: &str) -> bool {
        if let Some(&known) = self.read_only.get(key) {
            return known;
        }
        let Some((mut target, _, _)) = self.targets.get(key).cloned() else { return false };
        let mut found = false;
        for _ in 0..8 {
            let document = resolver.document(target.doc);
            let Some(schema) = document.pointer(&target.pointer) else { break };
            if schema.get("readOnly") == Some(&Value::Bool(true)) {
                found = true;
                break;
            }
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { break };
            match resolver.locate(target.doc, reference) {
                Ok(next) => target = next,
                Err(_) => break,
            }
        }
        self.read_only.insert(key.to_owned(), found);
        found
    }

    /// The `$defs` a schema that refers to `referenced` needs: those schemas and every
    /// schema they reach, rewritten. Fails when one of them cannot be resolved.
    pub(crate) fn definitions_for(
        &mut self,
        resolver: &mut Resolver,
        referenced: Vec<String>,
    ) -> Result<Map<String, Value>, Error> {
        let mut found = BTreeMap::new();
        let mut queue: VecDeque<String> = referenced.into();
        while let Some(key) = queue.pop_front() {
            if found.contains_key(&key) {
                continue;
            }
            if !self.definitions.contains_key(&key) {
                let (target, from, reference) = self.targets[&key].clone();
                // The target is read in place: `rewrite` makes the only copy.
                let document = resolver.document(target.doc);
                let schema = document.pointer(&target.pointer).ok_or_else(|| resolver.not_found(from, &reference))?;
                let mut inner = Vec::new();
                let rewritten = self.rewrite(resolver, target.doc, schema, &mut inner)?;
                self.definitions.insert(key.clone(), (rewritten, inner));
            }
            let (schema, inner) = &self.definitions[&key];
            queue.extend(inner.iter().cloned());
            found.insert(key, schema.clone());
        }
        Ok(found.into_iter().collect())
    }

    fn key_for(&mut self, resolver: &mut Resolver, from: DocId, reference: &str) -> Result<String, Error> {
        let target = resolver.locate(from, reference)?;
        if let Some(key) = self.keys.get(&target) {
            return Ok(key.clone());
        }
        let last_token = target.pointer.rsplit('/').next().map(unescape_token).unwrap_or_default();
        let name = if last_token.is_empty() { "schema".to_owned() } else { last_token };
        Ok(self.assign_key(target, &name, from, reference.to_owned()))
    }

    fn assign_key(&mut self, target: RefTarget, name: &str, from: DocId, reference: String) -> String {
        let base: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' })
            .collect();
        let mut key = base.clone();
        let mut n = 2;
        while self.used_keys.contains(&key) {
            key = format!("{base}_{n}");
            n += 1;
        }
        self.used_keys.insert(key.clone());
        self.keys.insert(target.clone(), key.clone());
        self.targets.insert(key.clone(), (target, from, reference));
        key
    }
}

/// Escapes a JSON Pointer token (`~` as `~0`, `/` as `~1`).
pub(crate) fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// The OpenAPI 3.0 keywords that JSON Schema 2020-12 reads differently.
fn convert_from_3_0(schema: &mut Map<String, Value>) {
    if schema.get("nullable") == Some(&Value::Bool(true)) && !schema.contains_key("$ref") {
        match schema.get_mut("type") {
            Some(Value::String(single)) => {
                let single = std::mem::take(single);
                schema.insert("type".into(), Value::Array(vec![Value::String(single), "null".into()]));
            }
            Some(Value::Array(types)) if !types.iter().any(|kind| kind == "null") => types.push("null".into()),
            _ => {}
        }
        if let Some(Value::Array(values)) = schema.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
    }
    for (exclusive, inclusive) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        match schema.get(exclusive) {
            Some(Value::Bool(true)) => match schema.remove(inclusive) {
                Some(bound) => {
                    schema.insert(exclusive.into(), bound);
                }
                None => {
                    schema.remove(exclusive);
                }
            },
            Some(Value::Bool(false)) => {
                schema.remove(exclusive);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Document;

    fn rewrite(version: &str, schema: Value, components: Value) -> Value {
        let folder = tempfile::tempdir().unwrap();
        let root = json!({"openapi": version, "components": {"schemas": components}});
        let document = Document::from_value(folder.path().join("spec.json"), root).unwrap();
        let mut resolver = Resolver::new(&document);
        let mut catalog = SchemaCatalog::new(document.version(), &resolver);
        let mut referenced = Vec::new();
        let mut schema = catalog.rewrite(&mut resolver, DocId::ROOT, &schema, &mut referenced).unwrap();
        let definitions = catalog.definitions_for(&mut resolver, referenced).unwrap();
        if !definitions.is_empty() {
            schema["$defs"] = Value::Object(definitions);
        }
        schema
    }

    #[test]
    fn recursive_schemas_stay_refs_into_defs() {
        let components = json!({
            "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}, "owner": {"$ref": "#/components/schemas/User"}}},
            "User": {"type": "object", "properties": {"best_friend": {"$ref": "#/components/schemas/User"}}},
            "Unused": {"type": "string"}
        });
        let schema = rewrite("3.1.0", json!({"$ref": "#/components/schemas/Node"}), components);
        assert_eq!(
            schema,
            json!({
                "$ref": "#/$defs/Node",
                "$defs": {
                    "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}, "owner": {"$ref": "#/$defs/User"}}},
                    "User": {"type": "object", "properties": {"best_friend": {"$ref": "#/$defs/User"}}}
                }
            })
        );
        jsonschema::validator_for(&schema).unwrap();
    }

    #[test]
    fn other_targets_get_unique_keys_and_examples_are_left_alone() {
        let components = json!({
            "name": {"type": "string"},
            "Pet": {"type": "object", "properties": {"name": {"$ref": "#/components/schemas/Pet/properties/tag/items"}, "tag": {"type": "array", "items": {"type": "string"}}}, "example": {"$ref": "not a ref"}}
        });
        let schema = rewrite("3.1.0", json!({"$ref": "#/components/schemas/Pet"}), components);
        assert_eq!(schema["$defs"]["Pet"]["properties"]["name"], json!({"$ref": "#/$defs/items"}));
        assert_eq!(schema["$defs"]["Pet"]["example"], json!({"$ref": "not a ref"}));
        assert_eq!(schema["$defs"]["items"], json!({"type": "string"}));
        assert!(schema["$defs"].get("name").is_none());
    }

    #[test]
    fn read_only_properties_are_left_out_of_requests() {
        // apideck's file-storage `Drive`: `id` is `readOnly` through its `$ref`, and required.
        let components = json!({
            "Id": {"type": "string", "readOnly": true},
            "IdAlias": {"$ref": "#/components/schemas/Id"},
            "Drive": {
                "type": "object",
                "additionalProperties": false,
                "required": ["id", "name", "created_at"],
                "properties": {
                    "id": {"$ref": "#/components/schemas/Id"},
                    "alias": {"$ref": "#/components/schemas/IdAlias"},
                    "created_at": {"type": "string", "readOnly": true},
                    "described": {"allOf": [{"$ref": "#/components/schemas/Id"}], "description": "the id again"},
                    "name": {"type": "string"},
                    "secret": {"type": "string", "writeOnly": true}
                }
            }
        });
        for version in ["3.0.3", "3.1.0"] {
            let schema = rewrite(version, json!({"$ref": "#/components/schemas/Drive"}), components.clone());
            assert_eq!(
                schema["$defs"]["Drive"],
                json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "secret": {"type": "string", "writeOnly": true}}
                }),
                "{version}"
            );
            // The schemas only the left-out properties reached are not carried.
            assert!(schema["$defs"].get("Id").is_none(), "{schema}");
        }
        // A schema whose required properties are all read-only requires nothing.
        let schema = rewrite(
            "3.1.0",
            json!({"type": "object", "required": ["id"], "properties": {"id": {"readOnly": true}}}),
            json!({}),
        );
        assert_eq!(schema, json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn openapi_3_0_keywords_are_converted() {
        let check = |schema: Value, expect: Value| assert_eq!(rewrite("3.0.3", schema, json!({})), expect);
        check(json!({"type": "string", "nullable": true}), json!({"type": ["string", "null"], "nullable": true}));
        check(
            json!({"type": "string", "nullable": true, "enum": ["a"]}),
            json!({"type": ["string", "null"], "nullable": true, "enum": ["a", null]}),
        );
        check(json!({"minimum": 1, "exclusiveMinimum": true}), json!({"exclusiveMinimum": 1}));
        check(json!({"maximum": 1, "exclusiveMaximum": false}), json!({"maximum": 1}));
        // 3.1 schemas are JSON Schema already.
        assert_eq!(
            rewrite("3.1.0", json!({"nullable": true, "type": "string"}), json!({})),
            json!({"nullable": true, "type": "string"})
        );
    }
}
