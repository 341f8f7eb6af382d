//! The crate's error type.

use crate::serialize::{Location, Style, ValueKind};

/// Why a parameter or a request body could not be serialized.
///
/// Every variant that concerns one parameter (or one form-body property) names it, so the
/// message can go back to the model unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The style is not one the location allows (OAS 3.1.1 §4.8.12.3, Style Values): path
    /// takes `simple`, `label` and `matrix`; query takes `form`, `spaceDelimited`,
    /// `pipeDelimited` and `deepObject`; header takes `simple`; cookie takes `form`.
    #[error("parameter `{parameter}`: style `{style}` is not allowed in {location}")]
    StyleNotAllowed {
        /// The parameter's name.
        parameter: String,
        /// Where the parameter goes.
        location: Location,
        /// The style that was asked for.
        style: Style,
    },
    /// The style with this `explode` value is undefined for every value: a whole row of
    /// _n/a_ in the style table (`spaceDelimited` or `pipeDelimited` with explode true,
    /// `deepObject` with explode false).
    #[error("parameter `{parameter}`: style `{style}` with explode {explode} is undefined")]
    UndefinedCombination {
        /// The parameter's name.
        parameter: String,
        /// The effective style.
        style: Style,
        /// The effective explode.
        explode: bool,
    },
    /// The style has no serialization for this kind of value: an _n/a_ cell of the style
    /// table, such as a primitive with `pipeDelimited` or an array with `deepObject`.
    #[error("parameter `{parameter}`: style `{style}` cannot serialize {kind} value")]
    UnsupportedValue {
        /// The parameter's name.
        parameter: String,
        /// The effective style.
        style: Style,
        /// What the value was.
        kind: ValueKind,
    },
    /// An array or object inside an array or object: RFC 6570 defines one level only, and
    /// `deepObject` defines scalar properties only (OAS 3.1.1 Appendix C, §4.8.12.3).
    #[error("parameter `{parameter}`: style `{style}` does not define {inner} inside {outer}")]
    NestedValue {
        /// The parameter's name.
        parameter: String,
        /// The effective style.
        style: Style,
        /// The value's kind (array or object).
        outer: ValueKind,
        /// The kind of the member that is nested in it.
        inner: ValueKind,
    },
    /// An `application/x-www-form-urlencoded` body must be a JSON object, one property per
    /// form field.
    #[error("a form-urlencoded body must be a JSON object, not {kind} value")]
    FormBodyNotObject {
        /// What the body was.
        kind: ValueKind,
    },
}
