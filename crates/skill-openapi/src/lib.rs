//! OpenAPI skills: any OpenAPI 3.0 or 3.1 document becomes tools, one per operation.
//!
//! # What is here now
//!
//! Request serialization, exactly per the style tables of OpenAPI 3.1.1 (module
//! [`serialize`]): a [`ParameterSpec`] (a Parameter Object's `name`, `in`, `style`,
//! `explode` and `allowReserved`) serializes a JSON value into what goes on the wire for
//! its location ([`SerializedParameter`]), with every `style`/`explode` combination the
//! spec defines and a typed [`Error`] for those it leaves undefined; and
//! [`encode_form_urlencoded`] encodes an `application/x-www-form-urlencoded` body with the
//! Encoding Object's per-property `style`, `explode`, `allowReserved` and `contentType`.
//!
//! # Still to come
//!
//! The document loader (files and http(s) URLs, `$ref` resolution with the fetch rules of
//! `DESIGN.md`), the operation-to-tool mapping, parameters given by `content`, the other
//! body media types (`application/json`, `multipart/form-data`, `text/plain`,
//! `application/octet-stream`), responses, authentication, and the HTTP call through any
//! `reqwest_middleware::ClientWithMiddleware`, so that an AAuth signing client can be
//! plugged in.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use serde_json::json;
//! use skill_openapi::{
//!     Error, Location, ParameterSpec, PropertyEncoding, SerializedParameter, Style, encode_form_urlencoded,
//! };
//!
//! // A path parameter in matrix style, exploded.
//! let color = ParameterSpec { style: Some(Style::Matrix), explode: Some(true), ..ParameterSpec::new("color", Location::Path) };
//! let path = color.serialize(&json!(["blue", "black"]))?;
//! assert_eq!(path, SerializedParameter::Path(";color=blue;color=black".into()));
//!
//! // A deepObject query parameter: one percent-encoded pair per property.
//! let filter = ParameterSpec { style: Some(Style::DeepObject), ..ParameterSpec::new("filter", Location::Query) };
//! let query = filter.serialize(&json!({"label": "good first issue", "state": "open"}))?;
//! assert_eq!(
//!     query,
//!     SerializedParameter::Query(vec![
//!         "filter%5Blabel%5D=good%20first%20issue".into(),
//!         "filter%5Bstate%5D=open".into(),
//!     ])
//! );
//!
//! // The spec leaves `deepObject` with `explode: false` undefined: a typed error naming the parameter.
//! let undefined = ParameterSpec { explode: Some(false), ..filter };
//! assert!(matches!(undefined.validate(), Err(Error::UndefinedCombination { parameter, .. }) if parameter == "filter"));
//!
//! // A form body: `card` style-based (deepObject), `note` content-based (RFC 1866, space as `+`).
//! let encodings = BTreeMap::from([(
//!     "card".to_string(),
//!     PropertyEncoding { style: Some(Style::DeepObject), ..PropertyEncoding::default() },
//! )]);
//! let body = encode_form_urlencoded(&json!({"card": {"cvc": "314"}, "note": "thank you"}), &encodings)?;
//! assert_eq!(body, "card%5Bcvc%5D=314&note=thank+you");
//! # Ok::<(), Error>(())
//! ```

#![deny(missing_docs)]

mod error;
pub mod serialize;

pub use error::Error;
pub use serialize::{
    Location, ParameterSpec, PropertyEncoding, SerializedParameter, Style, ValueKind, encode_form_urlencoded,
};
