//! Signing a request as an AAuth agent: HTTP Message Signatures (RFC 9421) under the
//! AAuth profile (draft-hardt-oauth-aauth-protocol, "HTTP Message Signatures Profile"),
//! with the key conveyed in `Signature-Key` (draft-hardt-httpbis-signature-key-08).
//!
//! `httpsig` builds the signature base and serializes `Signature-Input`; the base is
//! signed with [`AgentKey::sign`], deterministic Ed25519, so that the same request,
//! key and `created` give the same signature (`httpsig`'s own Ed25519 signing adds
//! randomness).

use std::sync::LazyLock;

use httpsig::prelude::message_component::{
    DerivedComponentName, HttpMessageComponent, HttpMessageComponentId, HttpMessageComponentName,
};
use httpsig::prelude::{AlgorithmName, HttpSigError, HttpSigResult, HttpSignatureBase, HttpSignatureParams};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Request, Url};
use sfv::{DictSerializer, StringRef, key_ref, string_ref, token_ref};
use skill_core::{ExposeSecret as _, SecretString};

use crate::error::url_for_errors;
use crate::{AgentKey, Error, content_digest};

/// The signature label: `Signature-Input: sig=(…)`, `Signature: sig=:…:`, `Signature-Key: sig=…`.
pub const SIGNATURE_LABEL: &str = "sig";

const SIGNATURE_KEY: HeaderName = HeaderName::from_static("signature-key");
const SIGNATURE_INPUT: HeaderName = HeaderName::from_static("signature-input");
const SIGNATURE: HeaderName = HeaderName::from_static("signature");
const CONTENT_DIGEST: HeaderName = HeaderName::from_static("content-digest");

/// The covered components, in the order the AAuth profile's examples list them: without
/// a body, with a body, without a body but with `Authorization`, with both.
static COVERED: LazyLock<[Vec<HttpMessageComponentId>; 4]> = LazyLock::new(|| {
    let ids = |names: &[&str]| -> Vec<HttpMessageComponentId> {
        names.iter().map(|name| HttpMessageComponentId::try_from(*name).expect("a valid component name")).collect()
    };
    [
        ids(&["@method", "@authority", "@path", "signature-key"]),
        ids(&["@method", "@authority", "@path", "content-type", "content-digest", "signature-key"]),
        ids(&["@method", "@authority", "@path", "authorization", "signature-key"]),
        ids(&["@method", "@authority", "@path", "content-type", "content-digest", "authorization", "signature-key"]),
    ]
});

/// How the verifier gets our public key: the `Signature-Key` scheme.
#[derive(Clone, Debug)]
pub enum SignatureKey {
    /// The key itself, inline (`hwk`): `sig=hwk;alg="Ed25519";kty="OKP";crv="Ed25519";x="…"`
    /// (`alg` present and no `kid`, as in Signature-Key -08). AAuth uses it only towards
    /// the agent provider, to enroll and refresh.
    Hwk,
    /// A token whose `cnf.jwk` is our key (`jwt`): `sig=jwt;jwt="…"`, with the agent,
    /// person or auth token. `Debug` does not show it.
    Jwt(SecretString),
    /// A self-issued delegation JWT (`jkt-jwt`, Signature-Key -09): `sig=jkt-jwt;jwt="…"`,
    /// signed by the key whose RFC 7638 thumbprint is its `iss` (`urn:jkt:sha-256:…`) and
    /// naming in `cnf.jwk` the key that signs the request. AAuth uses it only to refresh
    /// the agent token at the agent provider (bootstrap -02). `Debug` does not show it.
    JktJwt(SecretString),
}

impl SignatureKey {
    /// The `Signature-Key` field value for `key`; `None` when the token cannot be a
    /// structured-field string.
    fn field_value(&self, key: &AgentKey) -> Option<String> {
        let mut dictionary = DictSerializer::new();
        match self {
            SignatureKey::Hwk => {
                // base64url has only characters a structured-field string allows.
                let x = StringRef::from_str(key.public_x()).expect("base64url is a valid sf-string");
                let (kty, crv) = match key.public_y() {
                    None => ("OKP", "Ed25519"),
                    Some(_) => ("EC", "P-256"),
                };
                let item = dictionary
                    .bare_item(key_ref(SIGNATURE_LABEL), token_ref("hwk"))
                    .parameter(key_ref("alg"), string_ref(key.alg()))
                    .parameter(key_ref("kty"), string_ref(kty))
                    .parameter(key_ref("crv"), string_ref(crv))
                    .parameter(key_ref("x"), x);
                if let Some(y) = key.public_y() {
                    _ = item.parameter(key_ref("y"), StringRef::from_str(y).expect("base64url is a valid sf-string"));
                }
            }
            SignatureKey::Jwt(token) | SignatureKey::JktJwt(token) => {
                let scheme = if matches!(self, SignatureKey::Jwt(_)) { "jwt" } else { "jkt-jwt" };
                let token = StringRef::from_str(token.expose_secret()).ok()?;
                _ = dictionary.bare_item(key_ref(SIGNATURE_LABEL), token_ref(scheme)).parameter(key_ref("jwt"), token);
            }
        }
        dictionary.finish()
    }
}

/// Signs `request` as `key`, created at `created` (Unix seconds), under the AAuth profile.
///
/// Sets `Signature-Key` (from `signature_key`); `Content-Digest` (`sha-256`, RFC 9530)
/// when the request has a body; and `Signature-Input` / `Signature` with the label `sig`,
/// covering `@method`, `@authority`, `@path`, then `content-type` and `content-digest`
/// with a body, `authorization` when the request carries one, and `signature-key`; the
/// only parameter is `created` (no `alg`, no `keyid`). Earlier values of these headers
/// are replaced, so a request can be signed again before a retry.
///
/// A request has a body when its body is non-empty or it has a `Content-Type`. The body
/// must be in memory ([`Error::StreamingBody`] otherwise) and come with a `Content-Type`
/// ([`Error::BodyWithoutContentType`]). `@authority` is taken from the URL (host, and
/// the port unless it is the scheme's default), as the request will be sent.
///
/// On error the request may already carry some of the new headers; it must not be sent.
pub fn sign_request(
    key: &AgentKey,
    request: &mut Request,
    signature_key: &SignatureKey,
    created: u64,
) -> Result<(), Error> {
    let digest = match request.body() {
        None => None,
        Some(body) => match body.as_bytes() {
            None => {
                return Err(Error::StreamingBody {
                    method: request.method().to_string(),
                    url: url_for_errors(request.url()),
                });
            }
            Some(bytes) if bytes.is_empty() && !request.headers().contains_key(CONTENT_TYPE) => None,
            Some(bytes) => Some(content_digest(bytes)),
        },
    };
    let has_body = digest.is_some();
    if has_body && !request.headers().contains_key(CONTENT_TYPE) {
        return Err(Error::BodyWithoutContentType {
            method: request.method().to_string(),
            url: url_for_errors(request.url()),
        });
    }
    let signature_key_value =
        signature_key.field_value(key).and_then(|value| HeaderValue::try_from(value).ok()).ok_or_else(|| {
            Error::InvalidToken { method: request.method().to_string(), url: url_for_errors(request.url()) }
        })?;
    let headers = request.headers_mut();
    headers.insert(SIGNATURE_KEY, sensitive(signature_key_value, !matches!(signature_key, SignatureKey::Hwk)));
    if let Some(digest) = digest {
        headers.insert(CONTENT_DIGEST, HeaderValue::try_from(digest).expect("a digest is visible ASCII"));
    }

    let covered = &COVERED[usize::from(has_body) + 2 * usize::from(headers.contains_key(AUTHORIZATION))];
    let mut params = HttpSignatureParams::try_new(covered).map_err(|error| base_error(request, &error))?;
    params.set_created(created);
    let base = build_base(request, &params)?;
    let signature = base
        .build_signature_headers(&Ed25519Signer(key), Some(SIGNATURE_LABEL))
        .map_err(|error| base_error(request, &error))?;
    let headers = request.headers_mut();
    headers.insert(SIGNATURE_INPUT, ascii_value(signature.signature_input_header_value()));
    headers.insert(SIGNATURE, ascii_value(signature.signature_header_value()));
    Ok(())
}

/// The RFC 9421 signature base of `request` for the covered `components` (such as
/// `"@method"`, `"content-type"` or `"\"@query-param\";name=\"id\""`) and the single
/// parameter `created`: what [`sign_request`] signs, for tests and debugging.
///
/// The header fields are read from the request as it is (a signed request carries its
/// `Signature-Key` and `Content-Digest`); a covered field that is missing is an error.
pub fn signature_base(request: &Request, components: &[&str], created: u64) -> Result<String, Error> {
    let ids = components
        .iter()
        .map(|name| HttpMessageComponentId::try_from(*name))
        .collect::<HttpSigResult<Vec<_>>>()
        .map_err(|error| base_error(request, &error))?;
    let mut params = HttpSignatureParams::try_new(&ids).map_err(|error| base_error(request, &error))?;
    params.set_created(created);
    Ok(build_base(request, &params)?.to_string())
}

/// The RFC 9421 signature base of `request` for serialized signature parameters, the
/// inner list of a `Signature-Input` member, such as
/// `("@method" "@authority" "@path" "signature-key");created=1730217600`.
///
/// This is how a verifier rebuilds the base of a received signature. Parameters must be
/// in the order `httpsig` writes them (`created`, `expires`, `nonce`, `alg`, `keyid`,
/// `tag`, as RFC 9421's examples and [`sign_request`] do) and be known ones; otherwise
/// the base could not be rebuilt byte for byte and this is an error.
pub fn signature_base_with_params(request: &Request, signature_params: &str) -> Result<String, Error> {
    let params = HttpSignatureParams::try_from(signature_params).map_err(|error| base_error(request, &error))?;
    if params.to_string() != signature_params.trim() {
        return Err(Error::SignatureBase {
            method: request.method().to_string(),
            url: url_for_errors(request.url()),
            reason: format!(
                "the signature parameters `{signature_params}` are not in the order created, expires, nonce, alg, \
                 keyid, tag, or hold unknown parameters: the base would not match the signed one"
            ),
        });
    }
    Ok(build_base(request, &params)?.to_string())
}

/// Signs with the agent key for `httpsig`: deterministic Ed25519, or ES256 with RFC 6979
/// nonces.
struct Ed25519Signer<'a>(&'a AgentKey);

impl httpsig::prelude::SigningKey for Ed25519Signer<'_> {
    fn sign(&self, data: &[u8]) -> HttpSigResult<Vec<u8>> {
        Ok(self.0.sign(data).to_vec())
    }

    /// Never sent: AAuth signatures carry no `keyid` (the key is in `Signature-Key`).
    fn key_id(&self) -> String {
        self.0.thumbprint()
    }

    fn alg(&self) -> AlgorithmName {
        match self.0.public_y() {
            None => AlgorithmName::Ed25519,
            Some(_) => AlgorithmName::EcdsaP256Sha256,
        }
    }
}

fn build_base(request: &Request, params: &HttpSignatureParams) -> Result<HttpSignatureBase, Error> {
    let lines = params
        .covered_components
        .iter()
        .map(|id| component_line(request, id))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|reason| Error::SignatureBase {
            method: request.method().to_string(),
            url: url_for_errors(request.url()),
            reason,
        })?;
    HttpSignatureBase::try_new(&lines, params).map_err(|error| base_error(request, &error))
}

/// One line of the signature base: the component's value in `request` (RFC 9421 §2.1, §2.2).
fn component_line(request: &Request, id: &HttpMessageComponentId) -> Result<HttpMessageComponent, String> {
    let url = request.url();
    let values = match &id.name {
        HttpMessageComponentName::Derived(derived) => match derived {
            DerivedComponentName::Method => vec![request.method().as_str().to_owned()],
            DerivedComponentName::Authority => vec![authority(url)?],
            DerivedComponentName::Scheme => vec![url.scheme().to_owned()],
            DerivedComponentName::Path => vec![path(url).to_owned()],
            DerivedComponentName::Query => vec![format!("?{}", url.query().unwrap_or(""))],
            DerivedComponentName::RequestTarget => vec![request_target(url)],
            DerivedComponentName::TargetUri => {
                vec![format!("{}://{}{}", url.scheme(), authority(url)?, request_target(url))]
            }
            DerivedComponentName::QueryParam => url.query().unwrap_or("").split('&').map(str::to_owned).collect(),
            DerivedComponentName::Status | DerivedComponentName::SignatureParams => {
                return Err(format!("`{derived}` cannot be covered in a request signature"));
            }
        },
        HttpMessageComponentName::HttpField(name) => {
            if name.bytes().any(|byte| byte.is_ascii_uppercase()) {
                return Err(format!("component `{name}`: header names are covered in lowercase"));
            }
            let values = request
                .headers()
                .get_all(name.as_str())
                .iter()
                .map(|value| value.to_str().map(|value| value.trim().to_owned()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| format!("covered header `{name}` is not visible ASCII"))?;
            if values.is_empty() {
                return Err(format!("covered header `{name}` is missing"));
            }
            values
        }
    };
    HttpMessageComponent::try_from((id, values.as_slice())).map_err(|error| format!("component `{id}`: {error}"))
}

/// `@authority`: the host, with the port unless it is the scheme's default (RFC 9421 §2.2.3).
fn authority(url: &Url) -> Result<String, String> {
    let host = url.host_str().ok_or("the URL has no host")?;
    Ok(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// `@path`: the absolute path, `/` when empty (RFC 9421 §2.2.6).
fn path(url: &Url) -> &str {
    match url.path() {
        "" => "/",
        path => path,
    }
}

/// `@request-target` in origin form: the path and the query (RFC 9421 §2.2.5).
fn request_target(url: &Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", path(url)),
        None => path(url).to_owned(),
    }
}

fn base_error(request: &Request, error: &HttpSigError) -> Error {
    Error::SignatureBase {
        method: request.method().to_string(),
        url: url_for_errors(request.url()),
        reason: error.to_string(),
    }
}

fn ascii_value(value: String) -> HeaderValue {
    HeaderValue::try_from(value).expect("signature headers are visible ASCII")
}

/// Marks a value carrying a token as sensitive, so HTTP libraries leave it out of logs.
fn sensitive(mut value: HeaderValue, is_sensitive: bool) -> HeaderValue {
    value.set_sensitive(is_sensitive);
    value
}

#[cfg(test)]
mod tests {
    use reqwest::{Body, Method};

    use super::*;

    fn key() -> AgentKey {
        AgentKey::from_jwk(&serde_json::json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "d": "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU",
        }))
        .unwrap()
    }

    fn new_request(method: Method, url: &str) -> Request {
        Request::new(method, url.parse().unwrap())
    }

    fn with_body(mut request: Request, content_type: Option<&str>, body: Body) -> Request {
        if let Some(content_type) = content_type {
            request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
        }
        *request.body_mut() = Some(body);
        request
    }

    fn header<'a>(request: &'a Request, name: &str) -> &'a str {
        request.headers().get(name).unwrap_or_else(|| panic!("no {name}")).to_str().unwrap()
    }

    fn jwt(token: &str) -> SignatureKey {
        SignatureKey::Jwt(SecretString::from(token))
    }

    const TOKEN: &str = "eyJhbGciOiJFZDI1NTE5In0.e30.sig";

    /// The research note's GET vector: the RFC test key, deterministic Ed25519.
    #[test]
    fn get_without_body_matches_the_known_signature() {
        let mut request = new_request(Method::GET, "https://resource.example/api/documents");
        sign_request(&key(), &mut request, &jwt(TOKEN), 1_730_217_600).unwrap();
        assert_eq!(header(&request, "signature-key"), format!("sig=jwt;jwt=\"{TOKEN}\""));
        assert_eq!(
            header(&request, "signature-input"),
            r#"sig=("@method" "@authority" "@path" "signature-key");created=1730217600"#
        );
        assert_eq!(
            header(&request, "signature"),
            "sig=:lmSg1Sirnd0969k0VBYwwYXArt6N6sNj8nDVUqF1rdCc4OK+bLHu6Es0Rnxg2qsfGRhqwUcsReqPX2Mac/pUAw==:"
        );
        assert!(request.headers().get("content-digest").is_none());
        assert!(request.headers()["signature-key"].is_sensitive());
    }

    /// The research note's POST vector: body, Content-Type and Content-Digest covered.
    #[test]
    fn post_with_body_matches_the_known_signature() {
        let request = new_request(Method::POST, "https://ps.example/token");
        let mut request = with_body(request, Some("application/json"), Body::from(r#"{"resource_token":"x"}"#));
        sign_request(&key(), &mut request, &jwt(TOKEN), 1_730_217_600).unwrap();
        assert_eq!(header(&request, "content-digest"), "sha-256=:ybC6GsvdO/cjY2Rd5x9Ud8/pb3tqRjxfwwUqf9W21uA=:");
        assert_eq!(
            header(&request, "signature-input"),
            r#"sig=("@method" "@authority" "@path" "content-type" "content-digest" "signature-key");created=1730217600"#
        );
        assert_eq!(
            header(&request, "signature"),
            "sig=:9X5jOtCRC9TzeoHU6hWxtM6MIlD/QzUBfTvT4mT4fcEKPYdOAIcX2z5xAWS6khTAmpNGnpeb0UwiN641vZsOCQ==:"
        );
    }

    #[test]
    fn authorization_is_covered_when_present() {
        let mut request = new_request(Method::GET, "https://resource.example/api/documents");
        request.headers_mut().insert(AUTHORIZATION, HeaderValue::from_static("AAuth session-token"));
        sign_request(&key(), &mut request, &jwt(TOKEN), 1_730_217_600).unwrap();
        assert_eq!(
            header(&request, "signature-input"),
            r#"sig=("@method" "@authority" "@path" "authorization" "signature-key");created=1730217600"#
        );
        let base =
            signature_base(&request, &["@method", "@authority", "@path", "authorization", "signature-key"], 1).unwrap();
        assert!(base.contains("\n\"authorization\": AAuth session-token\n"), "{base}");
    }

    #[test]
    fn hwk_carries_alg_and_no_kid() {
        let request = new_request(Method::POST, "https://agents.example/bootstrap");
        let mut request = with_body(request, Some("application/json"), Body::from("{}"));
        sign_request(&key(), &mut request, &SignatureKey::Hwk, 1_730_217_600).unwrap();
        assert_eq!(
            header(&request, "signature-key"),
            r#"sig=hwk;alg="Ed25519";kty="OKP";crv="Ed25519";x="JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs""#
        );
        assert!(!request.headers()["signature-key"].is_sensitive());
    }

    #[test]
    fn signing_is_deterministic_and_replaces_earlier_headers() {
        let make = || with_body(new_request(Method::PUT, "https://r.example/a"), Some("text/plain"), Body::from("one"));
        let mut first = make();
        sign_request(&key(), &mut first, &jwt(TOKEN), 100).unwrap();
        let mut again = make();
        sign_request(&key(), &mut again, &jwt(TOKEN), 100).unwrap();
        assert_eq!(header(&first, "signature"), header(&again, "signature"));

        // Signing again (a retry with another token and time) leaves one value of each.
        sign_request(&key(), &mut again, &jwt("other.token.here"), 200).unwrap();
        for name in ["signature", "signature-input", "signature-key", "content-digest"] {
            assert_eq!(again.headers().get_all(name).iter().count(), 1, "{name}");
        }
        assert!(header(&again, "signature-input").ends_with(";created=200"));
        assert_ne!(header(&first, "signature"), header(&again, "signature"));
    }

    #[test]
    fn authority_keeps_non_default_ports_and_drops_default_ones() {
        let cases = [
            ("https://Example.COM:443/x", "example.com"),
            ("http://example.com:80/x", "example.com"),
            ("https://example.com:8443/x", "example.com:8443"),
            ("http://127.0.0.1:3000/x", "127.0.0.1:3000"),
            ("http://[::1]:3000/x", "[::1]:3000"),
        ];
        for (url, expected) in cases {
            let mut request = new_request(Method::GET, url);
            sign_request(&key(), &mut request, &jwt(TOKEN), 1).unwrap();
            let base = signature_base(&request, &["@authority"], 1).unwrap();
            assert_eq!(base.lines().next().unwrap(), format!("\"@authority\": {expected}"), "{url}");
        }
    }

    #[test]
    fn path_excludes_the_query() {
        let request = new_request(Method::GET, "https://example.com/foo/bar?param=Value&Pet=dog");
        let base = signature_base(
            &request,
            &["@path", "@query", "@request-target", "@target-uri", "@scheme", r#""@query-param";name="Pet""#],
            1,
        )
        .unwrap();
        let lines: Vec<_> = base.lines().collect();
        assert_eq!(
            lines[..6],
            [
                "\"@path\": /foo/bar",
                "\"@query\": ?param=Value&Pet=dog",
                "\"@request-target\": /foo/bar?param=Value&Pet=dog",
                "\"@target-uri\": https://example.com/foo/bar?param=Value&Pet=dog",
                "\"@scheme\": https",
                "\"@query-param\";name=\"Pet\": dog",
            ]
        );
    }

    #[test]
    fn empty_body_without_content_type_is_no_body() {
        let mut request = with_body(new_request(Method::POST, "https://r.example/a"), None, Body::from(""));
        sign_request(&key(), &mut request, &jwt(TOKEN), 1).unwrap();
        assert_eq!(
            header(&request, "signature-input"),
            r#"sig=("@method" "@authority" "@path" "signature-key");created=1"#
        );
        assert!(request.headers().get("content-digest").is_none());

        // With a Content-Type, an empty body is still a body, and its digest is covered.
        let mut request =
            with_body(new_request(Method::POST, "https://r.example/a"), Some("application/json"), Body::from(""));
        sign_request(&key(), &mut request, &jwt(TOKEN), 1).unwrap();
        assert_eq!(header(&request, "content-digest"), "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:");
    }

    #[test]
    fn refusals_are_typed_and_name_the_request_without_its_query() {
        let url = "https://user:pw@r.example/upload?api_key=SECRET#frag";
        let streaming =
            with_body(new_request(Method::POST, url), Some("text/plain"), Body::wrap(String::from("streamed")));
        let no_type = with_body(new_request(Method::POST, url), None, Body::from("text"));
        let bad_token = new_request(Method::GET, url);
        let cases = [
            (streaming, jwt(TOKEN), "body is a stream"),
            (no_type, jwt(TOKEN), "no Content-Type"),
            (bad_token, jwt("not\u{7f}a token"), "not a valid structured-field string"),
        ];
        for (mut request, signature_key, expected) in cases {
            let error = sign_request(&key(), &mut request, &signature_key, 1).unwrap_err();
            let message = error.to_string();
            assert!(message.contains(expected), "{message}");
            assert!(message.contains("https://r.example/upload"), "{message}");
            for secret in ["SECRET", "pw", "frag", "not\u{7f}a"] {
                assert!(!message.contains(secret), "{message}");
            }
        }
        let mut streaming =
            with_body(new_request(Method::POST, url), Some("text/plain"), Body::wrap(String::from("s")));
        assert!(matches!(
            sign_request(&key(), &mut streaming, &jwt(TOKEN), 1),
            Err(Error::StreamingBody { method, .. }) if method == "POST"
        ));
    }

    #[test]
    fn signature_key_debug_hides_the_token() {
        let debug = format!("{:?}", jwt(TOKEN));
        assert!(!debug.contains("eyJ"), "{debug}");
    }

    #[test]
    fn signature_base_errors_name_the_component() {
        let request = new_request(Method::GET, "https://r.example/a");
        let cases: [(&[&str], &str); 4] = [
            (&["date"], "covered header `date` is missing"),
            (&["@status"], "`@status` cannot be covered"),
            (&["@method", "@method"], "duplicate"),
            (&["Date"], "lowercase"),
        ];
        for (components, expected) in cases {
            let message = signature_base(&request, components, 1).unwrap_err().to_string();
            assert!(message.contains(expected), "{components:?}: {message}");
        }
    }

    #[test]
    fn signature_base_with_params_refuses_what_it_cannot_rebuild() {
        let request = new_request(Method::GET, "https://r.example/a");
        let base = signature_base_with_params(&request, r#"("@method");created=1;keyid="k""#).unwrap();
        assert_eq!(base, "\"@method\": GET\n\"@signature-params\": (\"@method\");created=1;keyid=\"k\"");
        for params in [r#"("@method");keyid="k";created=1"#, r#"("@method");created=1;foo="bar""#] {
            let message = signature_base_with_params(&request, params).unwrap_err().to_string();
            assert!(message.contains("not in the order"), "{message}");
        }
    }
}
