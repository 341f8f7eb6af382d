//! HTTP methods, and the operations of a Path Item Object: its fixed method fields (`get`
//! to `trace`, and OpenAPI 3.2's `query`), then OpenAPI 3.2's `additionalOperations`, a map
//! from any other method, as sent, to its operation.

use std::fmt;

use serde_json::{Map, Value};

/// An HTTP method an operation can have.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `GET`.
    Get,
    /// `PUT`.
    Put,
    /// `POST`.
    Post,
    /// `DELETE`.
    Delete,
    /// `OPTIONS`.
    Options,
    /// `HEAD`.
    Head,
    /// `PATCH`.
    Patch,
    /// `TRACE`.
    Trace,
    /// `QUERY` (OpenAPI 3.2's `query` field): a safe, idempotent request that carries its
    /// query in the body (draft-ietf-httpbis-safe-method-w-body).
    Query,
    /// Any other method, a key of OpenAPI 3.2's `additionalOperations`, sent as written
    /// (methods are case-sensitive): `COPY`, `PURGE`, `LINK`.
    Other(String),
}

impl Method {
    /// The methods of the Path Item Object's fixed fields, in the spec's order.
    pub(crate) const FIXED: [Method; 9] = [
        Method::Get,
        Method::Put,
        Method::Post,
        Method::Delete,
        Method::Options,
        Method::Head,
        Method::Patch,
        Method::Trace,
        Method::Query,
    ];

    /// The method as sent: uppercase for the fixed ones (`"GET"`), as written for others.
    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Head => "HEAD",
            Method::Patch => "PATCH",
            Method::Trace => "TRACE",
            Method::Query => "QUERY",
            Method::Other(name) => name,
        }
    }

    /// The key of the operation in a Path Item Object (`"get"`), or for another method its
    /// key in `additionalOperations`.
    pub fn path_item_key(&self) -> &str {
        match self {
            Method::Get => "get",
            Method::Put => "put",
            Method::Post => "post",
            Method::Delete => "delete",
            Method::Options => "options",
            Method::Head => "head",
            Method::Patch => "patch",
            Method::Trace => "trace",
            Method::Query => "query",
            Method::Other(name) => name,
        }
    }

    /// Whether the method only reads (RFC 9110 §9.2.1 safe methods, and QUERY): `false`
    /// for methods this crate does not know.
    pub fn is_safe(&self) -> bool {
        matches!(self, Method::Get | Method::Head | Method::Options | Method::Trace | Method::Query)
    }

    /// Whether repeating a request has the effect of sending it once (RFC 9110 §9.2.2):
    /// the safe methods, PUT and DELETE; `false` for methods this crate does not know.
    pub fn is_idempotent(&self) -> bool {
        self.is_safe() || matches!(self, Method::Put | Method::Delete)
    }

    /// The method an `additionalOperations` key names: a fixed one when it is one of those
    /// whatever its case (the spec says such keys belong in the fixed fields; a document
    /// that puts `QUERY` here means the QUERY method), else the key as written.
    fn from_additional_key(key: &str) -> Method {
        Method::FIXED
            .into_iter()
            .find(|method| method.as_str().eq_ignore_ascii_case(key))
            .unwrap_or_else(|| Method::Other(key.to_owned()))
    }
}

impl fmt::Display for Method {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// An `additionalOperations` entry that cannot be an operation, and why, in words that
/// follow "`additionalOperations` key `KEY`".
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RefusedMethod {
    /// The key as written.
    pub(crate) key: String,
    /// The method it would be, when it names one.
    pub(crate) method: Option<Method>,
    pub(crate) reason: String,
}

/// The operations of `path_item`, in order: the fixed fields, then `additionalOperations`
/// in document order; and the entries of `additionalOperations` that are refused: a key
/// that is no HTTP method token (RFC 9110 §5.6.2), one that names a method the path item
/// already has in its fixed field, or a value that is not an object.
pub(crate) fn path_item_operations(path_item: &Map<String, Value>) -> (Vec<(Method, &Value)>, Vec<RefusedMethod>) {
    let mut operations: Vec<(Method, &Value)> = Method::FIXED
        .into_iter()
        .filter_map(|method| path_item.get(method.path_item_key()).map(|operation| (method, operation)))
        .collect();
    let mut refused = Vec::new();
    let Some(additional) = path_item.get("additionalOperations") else { return (operations, refused) };
    let Some(additional) = additional.as_object() else {
        refused.push(RefusedMethod {
            key: String::new(),
            method: None,
            reason: "`additionalOperations` is not an object".to_owned(),
        });
        return (operations, refused);
    };
    for (key, operation) in additional {
        if key.starts_with("x-") {
            continue;
        }
        let refuse = |method: Option<Method>, reason: String| RefusedMethod { key: key.clone(), method, reason };
        if key.is_empty() || !key.bytes().all(is_token_byte) {
            refused.push(refuse(None, format!("`additionalOperations` key `{key}` is not an HTTP method")));
            continue;
        }
        let method = Method::from_additional_key(key);
        if operations.iter().any(|(taken, _)| *taken == method) {
            let reason = format!(
                "`additionalOperations` key `{key}` repeats the method of the path item's `{}` field",
                method.path_item_key()
            );
            refused.push(refuse(Some(method), reason));
            continue;
        }
        if !operation.is_object() {
            refused
                .push(refuse(Some(method), format!("`additionalOperations` key `{key}` is not an Operation Object")));
            continue;
        }
        operations.push((method, operation));
    }
    (operations, refused)
}

/// RFC 9110 §5.6.2 `tchar`: what a method name is made of.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn collect(path_item: Value) -> (Vec<String>, Vec<String>) {
        let path_item = path_item.as_object().unwrap().clone();
        let (operations, refused) = path_item_operations(&path_item);
        (
            operations.iter().map(|(method, _)| method.to_string()).collect(),
            refused.iter().map(|refused| refused.reason.clone()).collect(),
        )
    }

    #[test]
    fn fixed_fields_then_additional_operations_in_document_order() {
        let (methods, refused) = collect(json!({
            "summary": "items",
            "additionalOperations": {"COPY": {}, "x-internal": {}, "purge": {}, "Query": {}},
            "post": {},
            "get": {},
            "parameters": []
        }));
        assert_eq!(methods, ["GET", "POST", "COPY", "purge", "QUERY"]);
        assert!(refused.is_empty(), "{refused:?}");
        let (methods, _) = collect(json!({"query": {}, "trace": {}}));
        assert_eq!(methods, ["TRACE", "QUERY"]);
    }

    #[test]
    fn additional_operations_that_cannot_be_operations_are_refused() {
        let (methods, refused) = collect(json!({
            "query": {},
            "additionalOperations": {"QUERY": {}, "MY METHOD": {}, "": {}, "LINK": [], "UNLINK": {}}
        }));
        assert_eq!(methods, ["QUERY", "UNLINK"]);
        assert_eq!(
            refused,
            [
                "`additionalOperations` key `QUERY` repeats the method of the path item's `query` field",
                "`additionalOperations` key `MY METHOD` is not an HTTP method",
                "`additionalOperations` key `` is not an HTTP method",
                "`additionalOperations` key `LINK` is not an Operation Object",
            ]
        );
        let (methods, refused) = collect(json!({"get": {}, "additionalOperations": "COPY"}));
        assert_eq!(
            (methods, refused),
            (vec!["GET".to_owned()], vec!["`additionalOperations` is not an object".to_owned()])
        );
    }

    #[test]
    fn query_is_safe_and_idempotent_and_other_methods_are_neither() {
        let hints = |method: Method| (method.is_safe(), method.is_idempotent());
        assert_eq!(hints(Method::Query), (true, true));
        assert_eq!(hints(Method::Get), (true, true));
        assert_eq!(hints(Method::Put), (false, true));
        assert_eq!(hints(Method::Post), (false, false));
        assert_eq!(hints(Method::Other("COPY".into())), (false, false));
        assert_eq!(Method::Other("COPY".into()).path_item_key(), "COPY");
    }
}
