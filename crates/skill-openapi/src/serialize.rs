//! Request serialization: parameter values and form-urlencoded bodies, exactly as OpenAPI
//! 3.1.1 specifies them.
//!
//! The oracle is the style table of OAS 3.1.1 §4.8.12.4 (Style Examples), with the Style
//! Values of §4.8.12.3 and the appendices on RFC 6570 (C), headers and cookies (D) and
//! percent-encoding (E). Where OAS 3.0.3 says otherwise, 3.1.1 is followed, since it
//! corrects 3.0.3 rather than changing the format:
//!
//! - `label` with explode false joins with `,` (`.blue,black,brown`), as RFC 6570's `{.x}`
//!   does; 3.0.3's `.blue.black.brown` is an erratum.
//! - `simple` with an undefined value is the empty string (3.0.3: _n/a_).
//! - The delimiters of `pipeDelimited` and `deepObject` are percent-encoded (`%7C`, `%5B`,
//!   `%5D`); 3.0.3's table shows them raw, which RFC 3986 does not allow.
//! - `simple`, `spaceDelimited` and `pipeDelimited` take objects, and `simple` primitives
//!   (3.0.3's Style Values list arrays only).
//! - `allowReserved` is RFC 6570 reserved expansion: reserved characters and existing
//!   `%XX` triples pass through, but `[`, `]`, `#`, `&`, `=` and `+` are still encoded,
//!   because a query does not allow the first three and form-urlencoding gives the others
//!   a meaning (§4.8.12.2.2, Appendix C). 3.0.3 let every reserved character through.
//!
//! Further readings, each where the spec leaves a choice:
//!
//! - _Undefined_ values (`null`, `[]`, `{}`, or only `null` members) give the table's
//!   `undefined` column: `;color`, `.`, the empty string, `color=`; the styles whose cell is
//!   _n/a_ there refuse them. `null` members of arrays and objects are dropped (RFC 6570
//!   §2.3).
//! - Nested arrays and objects are refused, except by `deepObject`: RFC 6570 defines one
//!   level. The table's `deepObject` cell is an object of scalars (`color[R]=100`); every
//!   other value it takes (an array, nested objects, arrays of objects, an empty object)
//!   follows the bracket convention of Rails, PHP and the npm `qs` parser, which Stripe
//!   documents: `expand[]=a`, `a[b][c]=v`, `items[0][price]=p`, nothing for `{}`, and
//!   `a=v` for a primitive.
//! - Object members come in the order the caller gave them (the workspace builds
//!   serde_json with `preserve_order`), as the style table and RFC 6570 keep them:
//!   `{"R": 100, "G": 200, "B": 150}` as `form` is `color=R,100,G,200,B,150`.
//! - Headers are RFC 6570 simple expansions, percent-encoding included: 3.1.1 Appendix C
//!   lists the Parameter Object with `schema` among the RFC 6570 serializations, and
//!   Appendix D warns that this percent-encoding does not suit every header (a document
//!   that needs raw header text describes it with `content` instead). OAS 3.2.0 changes
//!   this to pass header values through; 3.1.1 is followed here.
//! - Cookies: see [`SerializedParameter::Cookie`].
//! - OpenAPI 3.2's `in: querystring` parameters, the whole query string, are serialized by
//!   their media type: [`serialize_query_string`].

mod expansion;
mod form_body;
mod parameter;
mod percent;
mod query_string;
#[cfg(test)]
mod tests;

use serde_json::Value;

pub use self::expansion::ValueKind;
pub use self::form_body::{PropertyEncoding, encode_form_urlencoded};
pub use self::parameter::{Location, ParameterSpec, Style};
pub use self::query_string::serialize_query_string;

use self::expansion::{Expansion, expand};
use self::percent::Escape;
use crate::Error;

/// A serialized parameter, ready for the request: what goes where depends on its location.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SerializedParameter {
    /// The text that replaces `{name}` in the path template, percent-encoded, with the
    /// style's prefix (`.blue`, `;color=blue`); reserved characters such as `/` are always
    /// encoded, since `allowReserved` applies to query parameters only.
    Path(String),
    /// `name=value` pairs, percent-encoded; join every query parameter's pairs with `&`
    /// and put one `?` before them all.
    Query(Vec<String>),
    /// The header's value (style `simple`), percent-encoded as RFC 6570 does.
    Header(String),
    /// `name=value` pairs; join them (and other cookies) with `; ` in the `Cookie` header.
    ///
    /// OAS 3.1.1 Appendix D: `form` is RFC 6570 form expansion, whose `?` is no part of
    /// cookie syntax; whether it is kept is implementation-defined, and it is not kept here,
    /// as in the style examples. For several values, `form`'s `&` "is always incorrect" since
    /// cookie pairs are delimited by `; `, so an exploded array or object gives one pair per
    /// member (`color=blue; color=black`), the delimiter OAS 3.2.0's `cookie` style uses.
    /// Values are percent-encoded as RFC 6570 form expansion does (everything but
    /// unreserved characters), which always gives cookie-safe octets (RFC 6265 §4.1.1), and
    /// which OAS 3.2.0 Appendix D confirms is what `form` does for cookies; `allowReserved`
    /// is ignored, as 3.1.1 applies it to query parameters only. The one character outside
    /// RFC 6265's cookie-octets left is the `,` that joins a non-exploded array or object,
    /// as the table shows it. A cookie value that is already encoded, and must not be
    /// encoded again, needs the parameter's `content` form instead (Appendix D).
    Cookie(Vec<String>),
}

impl ParameterSpec {
    /// Serializes `value` for this parameter (OAS 3.1.1 §4.8.12.4).
    ///
    /// Fails when the style is not allowed in the location or undefined with this explode
    /// ([`ParameterSpec::validate`]), when the table has no serialization for this kind of
    /// value, or when the value nests arrays or objects.
    pub fn serialize(&self, value: &Value) -> Result<SerializedParameter, Error> {
        let expansion = self.expand(value)?;
        Ok(match self.location {
            Location::Path => SerializedParameter::Path(expansion.into_text()),
            // A querystring parameter never gets here: no style is allowed for it (`validate`).
            Location::Query | Location::QueryString => SerializedParameter::Query(expansion.members),
            Location::Header => SerializedParameter::Header(expansion.into_text()),
            Location::Cookie => SerializedParameter::Cookie(expansion.members),
        })
    }

    fn expand(&self, value: &Value) -> Result<Expansion, Error> {
        self.validate()?;
        let escape = if self.location == Location::Query && self.allow_reserved {
            Escape::AllowReserved
        } else {
            Escape::Unreserved
        };
        expand(&self.name, self.effective_style(), self.effective_explode(), escape, value)
    }
}
