//! Every row of the OAS 3.1.1 style table (§4.8.12.4), then percent-encoding,
//! `allowReserved`, `deepObject`, headers, cookies and each error.

use serde_json::{Value, json};

use super::{Location, ParameterSpec, SerializedParameter, Style};
use crate::Error;

/// Renders what a parameter serializes to the way the style table writes it: query pairs
/// joined by `&` after a `?`, cookie pairs joined by `; `, and an error as `n/a` with its
/// variant (the table's _n/a_ cells) followed by its message.
fn render(spec: &ParameterSpec, value: &Value) -> String {
    match spec.serialize(value) {
        Ok(SerializedParameter::Path(text) | SerializedParameter::Header(text)) => text,
        Ok(SerializedParameter::Query(pairs)) => format!("?{}", pairs.join("&")),
        Ok(SerializedParameter::Cookie(pairs)) => pairs.join("; "),
        Err(error) => {
            let variant = match &error {
                Error::StyleNotAllowed { .. } => "StyleNotAllowed",
                Error::UndefinedCombination { .. } => "UndefinedCombination",
                Error::UnsupportedValue { .. } => "UnsupportedValue",
                Error::NestedValue { .. } => "NestedValue",
                Error::FormBodyNotObject { .. } => "FormBodyNotObject",
                // The other variants are about loading documents, which serializing never does.
                other => panic!("serialization returned a loading error: {other:?}"),
            };
            format!("n/a {variant}: {error}")
        }
    }
}

fn check(spec: ParameterSpec, value: Value, expect: &str) {
    assert_eq!(render(&spec, &value), expect, "{spec:?} with {value}");
}

/// Checks only the `n/a <variant>` part of an error, for the table's _n/a_ cells; the
/// messages are checked once each in `errors_name_the_parameter`.
fn check_na(spec: ParameterSpec, value: Value, variant: &str) {
    let rendered = render(&spec, &value);
    let expect = format!("n/a {variant}: ");
    assert!(rendered.starts_with(&expect), "{spec:?} with {value}: expected {expect:?}..., got {rendered:?}");
}

fn param(name: &str, location: Location, style: Style, explode: bool) -> ParameterSpec {
    ParameterSpec { style: Some(style), explode: Some(explode), ..ParameterSpec::new(name, location) }
}

fn path(style: Style, explode: bool) -> ParameterSpec {
    param("color", Location::Path, style, explode)
}

fn query(style: Style, explode: bool) -> ParameterSpec {
    param("color", Location::Query, style, explode)
}

fn header(explode: bool) -> ParameterSpec {
    param("color", Location::Header, Style::Simple, explode)
}

fn cookie(explode: bool) -> ParameterSpec {
    param("color", Location::Cookie, Style::Form, explode)
}

// The table's values, and its rows verbatim. The object is the table's
// `{"R": 100, "G": 200, "B": 150}`, whose members are serialized in that order, not their
// names' order.
fn undefined() -> Value {
    Value::Null
}
fn string() -> Value {
    json!("blue")
}
fn array() -> Value {
    json!(["blue", "black", "brown"])
}
fn object() -> Value {
    json!({"R": 100, "G": 200, "B": 150})
}

#[test]
fn style_table_matrix() {
    use Style::Matrix;
    check(path(Matrix, false), undefined(), ";color");
    check(path(Matrix, false), string(), ";color=blue");
    check(path(Matrix, false), array(), ";color=blue,black,brown");
    check(path(Matrix, false), object(), ";color=R,100,G,200,B,150");
    check(path(Matrix, true), undefined(), ";color");
    check(path(Matrix, true), string(), ";color=blue");
    check(path(Matrix, true), array(), ";color=blue;color=black;color=brown");
    check(path(Matrix, true), object(), ";R=100;G=200;B=150");
}

#[test]
fn style_table_label() {
    use Style::Label;
    // The 3.1.1 row; 3.0.3 had `.blue.black.brown` and `.R.100.G.200.B.150` here.
    check(path(Label, false), undefined(), ".");
    check(path(Label, false), string(), ".blue");
    check(path(Label, false), array(), ".blue,black,brown");
    check(path(Label, false), object(), ".R,100,G,200,B,150");
    check(path(Label, true), undefined(), ".");
    check(path(Label, true), string(), ".blue");
    check(path(Label, true), array(), ".blue.black.brown");
    check(path(Label, true), object(), ".R=100.G=200.B=150");
}

#[test]
fn style_table_simple_in_path_and_header() {
    use Style::Simple;
    for spec in [path(Simple, false), header(false)] {
        check(spec.clone(), undefined(), "");
        check(spec.clone(), string(), "blue");
        check(spec.clone(), array(), "blue,black,brown");
        check(spec, object(), "R,100,G,200,B,150");
    }
    for spec in [path(Simple, true), header(true)] {
        check(spec.clone(), undefined(), "");
        check(spec.clone(), string(), "blue");
        check(spec.clone(), array(), "blue,black,brown");
        check(spec, object(), "R=100,G=200,B=150");
    }
}

#[test]
fn style_table_form() {
    use Style::Form;
    check(query(Form, false), undefined(), "?color=");
    check(query(Form, false), string(), "?color=blue");
    check(query(Form, false), array(), "?color=blue,black,brown");
    check(query(Form, false), object(), "?color=R,100,G,200,B,150");
    check(query(Form, true), undefined(), "?color=");
    check(query(Form, true), string(), "?color=blue");
    check(query(Form, true), array(), "?color=blue&color=black&color=brown");
    check(query(Form, true), object(), "?R=100&G=200&B=150");
}

#[test]
fn style_table_space_delimited() {
    use Style::SpaceDelimited;
    check_na(query(SpaceDelimited, false), undefined(), "UnsupportedValue");
    check_na(query(SpaceDelimited, false), string(), "UnsupportedValue");
    check(query(SpaceDelimited, false), array(), "?color=blue%20black%20brown");
    check(query(SpaceDelimited, false), object(), "?color=R%20100%20G%20200%20B%20150");
    check_na(query(SpaceDelimited, true), undefined(), "UndefinedCombination");
    check_na(query(SpaceDelimited, true), string(), "UndefinedCombination");
    check_na(query(SpaceDelimited, true), array(), "UndefinedCombination");
    check_na(query(SpaceDelimited, true), object(), "UndefinedCombination");
}

#[test]
fn style_table_pipe_delimited() {
    use Style::PipeDelimited;
    check_na(query(PipeDelimited, false), undefined(), "UnsupportedValue");
    check_na(query(PipeDelimited, false), string(), "UnsupportedValue");
    check(query(PipeDelimited, false), array(), "?color=blue%7Cblack%7Cbrown");
    check(query(PipeDelimited, false), object(), "?color=R%7C100%7CG%7C200%7CB%7C150");
    check_na(query(PipeDelimited, true), undefined(), "UndefinedCombination");
    check_na(query(PipeDelimited, true), string(), "UndefinedCombination");
    check_na(query(PipeDelimited, true), array(), "UndefinedCombination");
    check_na(query(PipeDelimited, true), object(), "UndefinedCombination");
}

#[test]
fn style_table_deep_object() {
    use Style::DeepObject;
    check_na(query(DeepObject, false), undefined(), "UndefinedCombination");
    check_na(query(DeepObject, false), string(), "UndefinedCombination");
    check_na(query(DeepObject, false), array(), "UndefinedCombination");
    check_na(query(DeepObject, false), object(), "UndefinedCombination");
    // The table's n/a cells follow the bracket convention (`deep_object_beyond_the_table`):
    // nothing for an undefined value, the bare pair for a string, and `color[]` per item.
    check(query(DeepObject, true), undefined(), "?");
    check(query(DeepObject, true), string(), "?color=blue");
    check(query(DeepObject, true), array(), "?color%5B%5D=blue&color%5B%5D=black&color%5B%5D=brown");
    check(query(DeepObject, true), object(), "?color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150");
}

#[test]
fn cookies_are_form_pairs_joined_by_semicolon_space() {
    // OAS 3.1.1 Appendix D: no `?`, and one pair per member when exploded, to be joined by
    // `; ` (OAS 3.2.0's `cookie` style row gives the same text for these values).
    check(cookie(false), undefined(), "color=");
    check(cookie(false), string(), "color=blue");
    check(cookie(false), array(), "color=blue,black,brown");
    check(cookie(false), object(), "color=R,100,G,200,B,150");
    check(cookie(true), undefined(), "color=");
    check(cookie(true), string(), "color=blue");
    check(cookie(true), array(), "color=blue; color=black; color=brown");
    check(cookie(true), object(), "R=100; G=200; B=150");
    // RFC 6570 percent-encoding keeps `;`, `,`, space and `"` out of the cookie (the
    // example of OAS 3.2.0 §4.8.12.5 for `form` cookies), and `allowReserved` does not apply.
    check(ParameterSpec::new("greeting", Location::Cookie), json!("Hello, world!"), "greeting=Hello%2C%20world%21");
    check(
        ParameterSpec { allow_reserved: true, ..ParameterSpec::new("c", Location::Cookie) },
        json!("a;b=\"c\""),
        "c=a%3Bb%3D%22c%22",
    );
}

#[test]
fn defaults_follow_the_location() {
    check(ParameterSpec::new("color", Location::Path), array(), "blue,black,brown");
    check(ParameterSpec::new("color", Location::Header), object(), "R,100,G,200,B,150");
    check(ParameterSpec::new("color", Location::Query), array(), "?color=blue&color=black&color=brown");
    check(ParameterSpec::new("color", Location::Cookie), object(), "R=100; G=200; B=150");
    // A `deepObject` without `explode` serializes the only defined way.
    let deep = ParameterSpec { style: Some(Style::DeepObject), ..ParameterSpec::new("color", Location::Query) };
    check(deep, json!({"R": 100}), "?color%5BR%5D=100");
    // `spaceDelimited` and `pipeDelimited` default to explode false, so they work alone.
    let piped = ParameterSpec { style: Some(Style::PipeDelimited), ..ParameterSpec::new("color", Location::Query) };
    check(piped, array(), "?color=blue%7Cblack%7Cbrown");
    let label = ParameterSpec { style: Some(Style::Label), ..ParameterSpec::new("color", Location::Path) };
    check(label, array(), ".blue,black,brown");
}

#[test]
fn effective_style_and_explode() {
    let cases = [
        (Location::Path, None, None, Style::Simple, false),
        (Location::Header, None, None, Style::Simple, false),
        (Location::Query, None, None, Style::Form, true),
        (Location::Cookie, None, None, Style::Form, true),
        (Location::Query, None, Some(false), Style::Form, false),
        (Location::Path, Some(Style::Matrix), None, Style::Matrix, false),
        (Location::Path, Some(Style::Label), Some(true), Style::Label, true),
        (Location::Query, Some(Style::SpaceDelimited), None, Style::SpaceDelimited, false),
        (Location::Query, Some(Style::PipeDelimited), None, Style::PipeDelimited, false),
        (Location::Query, Some(Style::DeepObject), None, Style::DeepObject, true),
        (Location::Query, Some(Style::DeepObject), Some(false), Style::DeepObject, false),
    ];
    for (location, style, explode, expect_style, expect_explode) in cases {
        let spec = ParameterSpec { style, explode, ..ParameterSpec::new("p", location) };
        assert_eq!((spec.effective_style(), spec.effective_explode()), (expect_style, expect_explode), "{spec:?}");
    }
}

#[test]
fn undefined_values_are_null_empty_or_all_null() {
    // RFC 6570 §2.3: empty lists and maps, and maps of undefined values, are undefined.
    for value in [json!(null), json!([]), json!({}), json!([null]), json!({"R": null})] {
        check(path(Style::Matrix, true), value.clone(), ";color");
        check(path(Style::Label, false), value.clone(), ".");
        check(header(true), value.clone(), "");
        check(query(Style::Form, true), value.clone(), "?color=");
        check_na(query(Style::PipeDelimited, false), value.clone(), "UnsupportedValue");
        // Nothing at all, as the bracket convention sends an empty object.
        check(query(Style::DeepObject, true), value, "?");
    }
    // The empty string is defined, and gives the same text for a primitive.
    check(path(Style::Matrix, false), json!(""), ";color");
    check(query(Style::Form, true), json!(""), "?color=");
    // `null` members are dropped; empty ones are kept.
    check(path(Style::Simple, false), json!(["a", null, "b"]), "a,b");
    check(path(Style::Simple, false), json!(["", "b"]), ",b");
    check(path(Style::Matrix, true), json!(["", "b"]), ";color;color=b");
    check(query(Style::Form, true), json!(["", "b"]), "?color=&color=b");
    check(path(Style::Matrix, true), json!({"R": "", "G": null}), ";R");
    check(query(Style::Form, true), json!({"R": ""}), "?R=");
    check(path(Style::Simple, true), json!({"R": ""}), "R=");
    check(query(Style::DeepObject, true), json!({"G": null, "R": ""}), "?color%5BR%5D=");
}

#[test]
fn primitives_become_text() {
    check(path(Style::Simple, false), json!(100), "100");
    check(path(Style::Simple, false), json!(-1.5), "-1.5");
    check(path(Style::Simple, false), json!(true), "true");
    check(query(Style::Form, false), json!([1, false, "x"]), "?color=1,false,x");
}

#[test]
fn percent_encoding_in_every_location() {
    let reserved = ":/?#[]@!$&'()*+,;=";
    let encoded = "%3A%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D";
    check(path(Style::Simple, false), json!(reserved), encoded);
    check(path(Style::Label, false), json!(reserved), &format!(".{encoded}"));
    check(path(Style::Matrix, false), json!(reserved), &format!(";color={encoded}"));
    check(header(false), json!(reserved), encoded);
    check(query(Style::Form, true), json!(reserved), &format!("?color={encoded}"));
    check(cookie(true), json!(reserved), &format!("color={encoded}"));
    // Unreserved characters stay; space, `%`, controls and non-ASCII (as UTF-8) are encoded.
    check(path(Style::Simple, false), json!("AZaz09-._~"), "AZaz09-._~");
    check(path(Style::Simple, false), json!("a b%c\r\n"), "a%20b%25c%0D%0A");
    check(query(Style::Form, true), json!("crème brûlée"), "?color=cr%C3%A8me%20br%C3%BBl%C3%A9e");
    check(header(false), json!("日本"), "%E6%97%A5%E6%9C%AC");
    // Delimiters inside values are encoded, so the joining `,` stays unambiguous.
    check(path(Style::Simple, false), json!(["a,b", "c"]), "a%2Cb,c");
    check(query(Style::Form, true), json!({"k&=": "v&="}), "?k%26%3D=v%26%3D");
    check(query(Style::SpaceDelimited, false), json!(["a b", "c|d"]), "?color=a%20b%20c%7Cd");
    // Object keys and names are encoded too.
    check(path(Style::Simple, true), json!({"a b": "c"}), "a%20b=c");
    check(query(Style::DeepObject, true), json!({"[x]": "y"}), "?color%5B%5Bx%5D%5D=y");
    check(param("a b[]", Location::Query, Style::Form, true), json!("x"), "?a%20b%5B%5D=x");
    check(param("x-id", Location::Query, Style::Form, true), json!("1"), "?x-id=1");
    // OAS 3.1.1 Appendix C, "Illegal Variable Names as Parameter Names".
    check(param("❤️", Location::Query, Style::Form, true), json!("love!"), "?%E2%9D%A4%EF%B8%8F=love%21");
}

#[test]
fn allow_reserved_in_query() {
    let reserved_query = |style, explode| ParameterSpec { allow_reserved: true, ..query(style, explode) };
    // Reserved characters that a form-urlencoded query allows pass; `[]#` (not allowed in a
    // query) and `&=+` (form-urlencoding delimiters) are still encoded; triples pass as is.
    check(reserved_query(Style::Form, true), json!(":/?@!$'()*,;"), "?color=:/?@!$'()*,;");
    check(reserved_query(Style::Form, true), json!("[]#&=+"), "?color=%5B%5D%23%26%3D%2B");
    check(reserved_query(Style::Form, true), json!("x%2By 100%"), "?color=x%2By%20100%25");
    check(reserved_query(Style::Form, false), json!(["a/b", "c d"]), "?color=a/b,c%20d");
    check(reserved_query(Style::PipeDelimited, false), json!(["a/b", "c"]), "?color=a/b%7Cc");
    check(reserved_query(Style::DeepObject, true), json!({"p/q": "r/s"}), "?color%5Bp/q%5D=r/s");
    // The name is never reserved-expanded.
    check(
        ParameterSpec { allow_reserved: true, ..param("a/b", Location::Query, Style::Form, true) },
        json!("c/d"),
        "?a%2Fb=c/d",
    );
    // `allowReserved` applies to query parameters only (OAS 3.1.1 §4.8.12.2.2).
    check(ParameterSpec { allow_reserved: true, ..path(Style::Simple, false) }, json!("a/b"), "a%2Fb");
    check(ParameterSpec { allow_reserved: true, ..header(false) }, json!("a/b"), "a%2Fb");
}

#[test]
fn appendix_c_examples() {
    // OAS 3.1.1 Appendix C, "RFC6570-Equivalent Expansion": `{?formulas*,words}`.
    let formulas = json!({"a": "x+y", "b": "x/y", "c": "x^y"});
    let words = json!(["math", "is", "fun"]);
    let mut pairs = Vec::new();
    for (spec, value) in [
        (ParameterSpec { explode: Some(true), ..ParameterSpec::new("formulas", Location::Query) }, &formulas),
        (ParameterSpec { explode: Some(false), ..ParameterSpec::new("words", Location::Query) }, &words),
    ] {
        let Ok(SerializedParameter::Query(more)) = spec.serialize(value) else { panic!("{spec:?} is a query") };
        pairs.extend(more);
    }
    assert_eq!(format!("?{}", pairs.join("&")), "?a=x%2By&b=x%2Fy&c=x%5Ey&words=math,is,fun");

    // "Expansion with Non-RFC6570-Supported Options": allowReserved and spaceDelimited.
    let mut pairs = Vec::new();
    for (spec, value) in [
        (
            ParameterSpec {
                explode: Some(true),
                allow_reserved: true,
                ..ParameterSpec::new("formulas", Location::Query)
            },
            &formulas,
        ),
        (param("words", Location::Query, Style::SpaceDelimited, false), &words),
    ] {
        let Ok(SerializedParameter::Query(more)) = spec.serialize(value) else { panic!("{spec:?} is a query") };
        pairs.extend(more);
    }
    assert_eq!(format!("?{}", pairs.join("&")), "?a=x%2By&b=x/y&c=x%5Ey&words=math%20is%20fun");
}

#[test]
fn deep_object_beyond_the_table() {
    check(
        query(Style::DeepObject, true),
        json!({"city": "Paris", "zip": 75001, "active": true}),
        // In the caller's order.
        "?color%5Bcity%5D=Paris&color%5Bzip%5D=75001&color%5Bactive%5D=true",
    );
    // What the table leaves undefined (§4.8.12.3) follows the bracket convention of the npm
    // `qs` parser and Stripe: arrays of primitives as `[]`, nested objects to any depth,
    // arrays of objects or arrays by index, `null` and empty values as nothing.
    let deep =
        |name: &str| ParameterSpec { style: Some(Style::DeepObject), ..ParameterSpec::new(name, Location::Query) };
    check(
        deep("expand"),
        json!(["customer", "invoice.subscription"]),
        "?expand%5B%5D=customer&expand%5B%5D=invoice.subscription",
    );
    check(
        deep("billing"),
        json!({"address": {"line1": "1 Rue", "city": "Paris", "geo": {"lat": 48.8}}, "tags": ["a", null, "b"]}),
        "?billing%5Baddress%5D%5Bline1%5D=1%20Rue&billing%5Baddress%5D%5Bcity%5D=Paris\
         &billing%5Baddress%5D%5Bgeo%5D%5Blat%5D=48.8&billing%5Btags%5D%5B%5D=a&billing%5Btags%5D%5B%5D=b",
    );
    check(
        deep("items"),
        json!([{"price": "p_1", "quantity": 2}, null, {"price": "p_2", "tax_rates": ["t"]}]),
        "?items%5B0%5D%5Bprice%5D=p_1&items%5B0%5D%5Bquantity%5D=2&items%5B1%5D%5Bprice%5D=p_2\
         &items%5B1%5D%5Btax_rates%5D%5B%5D=t",
    );
    check(deep("grid"), json!([[1, 2], ["x"]]), "?grid%5B0%5D%5B%5D=1&grid%5B0%5D%5B%5D=2&grid%5B1%5D%5B%5D=x");
    check(deep("metadata"), json!({"keep": "1", "gone": {}, "none": [], "nil": null}), "?metadata%5Bkeep%5D=1");
    check(deep("metadata"), json!({}), "?");
    // Names and values are encoded as in the table; so are brackets in a property's name.
    check(deep("a b"), json!({"c&d": {"e[f]": "g=h"}}), "?a%20b%5Bc%26d%5D%5Be%5Bf%5D%5D=g%3Dh");
    check(
        ParameterSpec { allow_reserved: true, ..deep("color") },
        json!({"p/q": ["r/s"]}),
        "?color%5Bp/q%5D%5B%5D=r/s",
    );
    // A primitive is the bare pair, as `qs` reads it (Stripe's fields that may be a string
    // or an object).
    check(
        deep("default_return_url"),
        json!("https://example.com/a b"),
        "?default_return_url=https%3A%2F%2Fexample.com%2Fa%20b",
    );
}

#[test]
fn nested_values_are_refused() {
    check_na(path(Style::Simple, false), json!([["a"]]), "NestedValue");
    check_na(path(Style::Label, true), json!({"a": {"b": "c"}}), "NestedValue");
    check_na(query(Style::Form, true), json!([{"a": 1}]), "NestedValue");
    check_na(query(Style::SpaceDelimited, false), json!([[1]]), "NestedValue");
    check_na(cookie(false), json!({"a": []}), "NestedValue");
    // An undefined nested member is dropped before anything is nested.
    check(path(Style::Simple, false), json!(["a", null]), "a");
}

#[test]
fn styles_are_checked_against_the_location() {
    let allowed = [
        (Location::Path, [Style::Simple, Style::Label, Style::Matrix].as_slice()),
        (Location::Query, &[Style::Form, Style::SpaceDelimited, Style::PipeDelimited, Style::DeepObject]),
        (Location::Header, &[Style::Simple]),
        (Location::Cookie, &[Style::Form]),
    ];
    let all = Style::ALL;
    for (location, styles) in allowed {
        for style in all {
            let spec = ParameterSpec { style: Some(style), ..ParameterSpec::new("color", location) };
            let refused = matches!(spec.validate(), Err(Error::StyleNotAllowed { .. }));
            assert_eq!(refused, !styles.contains(&style), "{style} in {location}");
            assert_eq!(style.is_allowed_in(location), styles.contains(&style), "{style} in {location}");
        }
    }
}

#[test]
fn errors_name_the_parameter() {
    check(
        ParameterSpec { style: Some(Style::Form), ..ParameterSpec::new("id", Location::Path) },
        json!(1),
        "n/a StyleNotAllowed: parameter `id`: style `form` is not allowed in path",
    );
    check(
        ParameterSpec { style: Some(Style::Label), ..ParameterSpec::new("X-Trace", Location::Header) },
        json!(1),
        "n/a StyleNotAllowed: parameter `X-Trace`: style `label` is not allowed in header",
    );
    check(
        ParameterSpec { style: Some(Style::DeepObject), ..ParameterSpec::new("session", Location::Cookie) },
        json!({"a": 1}),
        "n/a StyleNotAllowed: parameter `session`: style `deepObject` is not allowed in cookie",
    );
    check(
        ParameterSpec { style: Some(Style::Matrix), ..ParameterSpec::new("q", Location::Query) },
        json!(1),
        "n/a StyleNotAllowed: parameter `q`: style `matrix` is not allowed in query",
    );
    check(
        param("filter", Location::Query, Style::DeepObject, false),
        json!({"a": 1}),
        "n/a UndefinedCombination: parameter `filter`: style `deepObject` with explode false is undefined",
    );
    check(
        param("ids", Location::Query, Style::SpaceDelimited, true),
        json!([1]),
        "n/a UndefinedCombination: parameter `ids`: style `spaceDelimited` with explode true is undefined",
    );
    check(
        param("ids", Location::Query, Style::PipeDelimited, true),
        json!([1]),
        "n/a UndefinedCombination: parameter `ids`: style `pipeDelimited` with explode true is undefined",
    );
    check(
        param("ids", Location::Query, Style::PipeDelimited, false),
        json!(1),
        "n/a UnsupportedValue: parameter `ids`: style `pipeDelimited` cannot serialize a primitive value",
    );
    check(
        param("ids", Location::Query, Style::SpaceDelimited, false),
        json!([]),
        "n/a UnsupportedValue: parameter `ids`: style `spaceDelimited` cannot serialize an undefined (null or empty) value",
    );
    check(
        param("ids", Location::Path, Style::Simple, false),
        json!([{"a": 1}]),
        "n/a NestedValue: parameter `ids`: style `simple` does not define an object inside an array",
    );
    // The typed fields, for callers that match on them.
    let error = param("ids", Location::Query, Style::PipeDelimited, true).validate().unwrap_err();
    assert!(matches!(
        error,
        Error::UndefinedCombination { ref parameter, style: Style::PipeDelimited, explode: true } if parameter == "ids"
    ));
}

#[test]
fn names_round_trip() {
    for style in Style::ALL {
        assert_eq!(Style::from_name(style.as_str()), Some(style));
    }
    for location in [Location::Path, Location::Query, Location::Header, Location::Cookie, Location::QueryString] {
        assert_eq!(Location::from_name(location.as_str()), Some(location));
    }
    // Names are case-sensitive, as in the spec; OAS 3.2.0's `cookie` style is not a 3.1 style.
    assert_eq!(Style::from_name("deepobject"), None);
    assert_eq!(Style::from_name("cookie"), None);
    assert_eq!(Location::from_name("queryString"), None);
}

#[test]
fn a_querystring_parameter_takes_no_style() {
    // It is serialized by its media type (`serialize_query_string`), never by a style.
    for style in Style::ALL {
        assert!(!style.is_allowed_in(Location::QueryString), "{style}");
    }
    let error = ParameterSpec::new("q", Location::QueryString).serialize(&json!({"a": 1})).unwrap_err();
    assert_eq!(error.to_string(), "parameter `q`: style `form` is not allowed in querystring");
}
