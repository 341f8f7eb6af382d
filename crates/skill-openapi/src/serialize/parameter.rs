//! What a Parameter Object says about serialization: its location, style, explode and
//! allowReserved, with the spec's defaults and the combinations it leaves undefined.

use std::fmt;

use crate::Error;

/// Where a parameter goes in the request (the Parameter Object's `in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Location {
    /// A template expression in the path, `/items/{id}`.
    Path,
    /// A query-string parameter.
    Query,
    /// A request header.
    Header,
    /// A cookie in the `Cookie` header.
    Cookie,
    /// OpenAPI 3.2's `querystring`: the whole query string is this one parameter's value,
    /// serialized by its `content` media type ([`serialize_query_string`]); no style applies.
    ///
    /// [`serialize_query_string`]: crate::serialize::serialize_query_string
    QueryString,
}

impl Location {
    /// The name the spec uses for this location (`"path"`, `"query"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
            Location::QueryString => "querystring",
        }
    }

    /// The location the spec calls `name`, if it is one of the five.
    pub fn from_name(name: &str) -> Option<Self> {
        [Location::Path, Location::Query, Location::Header, Location::Cookie, Location::QueryString]
            .into_iter()
            .find(|location| location.as_str() == name)
    }

    /// The style a parameter here has when its `style` is absent: `form` for query and
    /// cookie, `simple` for path and header (OAS 3.1.1 §4.8.12.2.2, `style`). A querystring
    /// parameter has no style: `form` is given for it, and no style is allowed there.
    pub fn default_style(self) -> Style {
        match self {
            Location::Path | Location::Header => Style::Simple,
            Location::Query | Location::Cookie | Location::QueryString => Style::Form,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A parameter's `style` (OAS 3.1.1 §4.8.12.3, Style Values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Style {
    /// RFC 6570 simple expansion, `{color}`: path and header.
    Simple,
    /// RFC 6570 label expansion, `{.color}`: path.
    Label,
    /// RFC 6570 path-style expansion, `{;color}`: path.
    Matrix,
    /// RFC 6570 form expansion, `{?color}`: query and cookie.
    Form,
    /// Array items or object keys and values joined by a space (`%20`): query.
    SpaceDelimited,
    /// Array items or object keys and values joined by a pipe (`%7C`): query.
    PipeDelimited,
    /// An object's properties as `color[R]=100` pairs: query.
    DeepObject,
}

impl Style {
    /// Every style, in the spec's order.
    pub(crate) const ALL: [Style; 7] = [
        Style::Simple,
        Style::Label,
        Style::Matrix,
        Style::Form,
        Style::SpaceDelimited,
        Style::PipeDelimited,
        Style::DeepObject,
    ];

    /// The name the spec uses for this style (`"simple"`, `"deepObject"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Style::Simple => "simple",
            Style::Label => "label",
            Style::Matrix => "matrix",
            Style::Form => "form",
            Style::SpaceDelimited => "spaceDelimited",
            Style::PipeDelimited => "pipeDelimited",
            Style::DeepObject => "deepObject",
        }
    }

    /// The style the spec calls `name` (case-sensitive, as in the spec), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Style::ALL.into_iter().find(|style| style.as_str() == name)
    }

    /// Whether the Style Values table (OAS 3.1.1 §4.8.12.3) allows this style in `location`.
    pub fn is_allowed_in(self, location: Location) -> bool {
        match location {
            Location::Path => matches!(self, Style::Simple | Style::Label | Style::Matrix),
            Location::Query => {
                matches!(self, Style::Form | Style::SpaceDelimited | Style::PipeDelimited | Style::DeepObject)
            }
            Location::Header => self == Style::Simple,
            Location::Cookie => self == Style::Form,
            // Serialized by its media type only (OpenAPI 3.2).
            Location::QueryString => false,
        }
    }
}

impl fmt::Display for Style {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The serialization fields of one Parameter Object that has a `schema` (the `content`
/// form is serialized by its media type instead, and is not described here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterSpec {
    /// The parameter's name, case-sensitive as in the document.
    pub name: String,
    /// Its `in`.
    pub location: Location,
    /// Its `style`, if the document gives one.
    pub style: Option<Style>,
    /// Its `explode`, if the document gives one.
    pub explode: Option<bool>,
    /// Its `allowReserved`. The spec applies it to query parameters only (OAS 3.1.1
    /// §4.8.12.2.2), so it is ignored in the other locations.
    pub allow_reserved: bool,
}

impl ParameterSpec {
    /// A parameter with no `style`, `explode` or `allowReserved`: every default applies.
    pub fn new(name: impl Into<String>, location: Location) -> Self {
        ParameterSpec { name: name.into(), location, style: None, explode: None, allow_reserved: false }
    }

    /// The style that applies: the given one, else the location's default.
    pub fn effective_style(&self) -> Style {
        self.style.unwrap_or(self.location.default_style())
    }

    /// The explode that applies: the given one, else true for `form` and false otherwise,
    /// except `deepObject`, where an absent `explode` means true.
    ///
    /// OAS 3.1.1 §4.8.12.2.2 makes false the default for `deepObject` and, in the same
    /// sentence, calls `deepObject` with false undefined; documents routinely write
    /// `style: deepObject` alone and mean the one defined serialization. OAS 3.2.0 settles
    /// it the same way ("when style is deepObject, this field has no effect"). An explicit
    /// `explode: false` is still refused by [`ParameterSpec::validate`].
    pub fn effective_explode(&self) -> bool {
        self.explode.unwrap_or(matches!(self.effective_style(), Style::Form | Style::DeepObject))
    }

    /// Whether the style and explode are defined at all, whatever the value: the style is
    /// allowed in the location, and the pair is not a whole row of _n/a_ in the style table.
    ///
    /// A loader can call this to warn about a document; serializing calls it too.
    pub fn validate(&self) -> Result<(), Error> {
        let style = self.effective_style();
        if !style.is_allowed_in(self.location) {
            return Err(Error::StyleNotAllowed { parameter: self.name.clone(), location: self.location, style });
        }
        let explode = self.effective_explode();
        let undefined = match style {
            Style::SpaceDelimited | Style::PipeDelimited => explode,
            Style::DeepObject => !explode,
            Style::Simple | Style::Label | Style::Matrix | Style::Form => false,
        };
        if undefined {
            return Err(Error::UndefinedCombination { parameter: self.name.clone(), style, explode });
        }
        Ok(())
    }
}
