//! The agent's key, Ed25519 or ES256 (P-256; protocol -11 wants both supported):
//! generated, or loaded from a JWK file kept private to its owner, with its RFC 7638
//! thumbprint.

use std::fmt;
use std::io::ErrorKind;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer as _, SigningKey};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use zeroize::{Zeroize as _, Zeroizing};

use crate::Error;
use crate::private_file::{self, Contents, Placement, Purpose};

/// The `alg` of our Ed25519 keys: fully specified, as AAuth requires (`EdDSA` is not
/// allowed).
const ALG: &str = "Ed25519";
/// The `alg` of our P-256 keys.
const ES256: &str = "ES256";

/// The kind of key an agent creates; `ed25519` or `es256` in a config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum KeyType {
    /// Ed25519 (`alg` `Ed25519`), which every AAuth party must support.
    #[default]
    Ed25519,
    /// ECDSA on P-256 with SHA-256 (`alg` `ES256`), signatures deterministic (RFC 6979).
    Es256,
}

/// The private half of a key.
#[derive(Clone)]
enum Secret {
    Ed25519(SigningKey),
    P256(p256::ecdsa::SigningKey),
}

/// The agent's signing key, Ed25519 or ES256.
///
/// The private half zeroizes itself when dropped and never leaves the process except
/// into the key file [`load_or_generate`](Self::load_or_generate) writes. `Debug` shows
/// the RFC 7638 thumbprint only.
#[derive(Clone)]
pub struct AgentKey {
    signing: Secret,
    /// The public key, base64url without padding: the JWK `x`.
    x: String,
    /// The JWK `y` of a P-256 key.
    y: Option<String>,
    thumbprint: String,
}

impl AgentKey {
    /// A new key from the operating system's random number generator.
    ///
    /// # Panics
    ///
    /// When the operating system cannot supply random bytes, which on the supported
    /// platforms does not happen once the system has booted.
    pub fn generate() -> AgentKey {
        let mut secret = Zeroizing::new([0u8; 32]);
        getrandom::fill(secret.as_mut()).expect("the operating system's random number generator failed");
        AgentKey::from_signing_key(SigningKey::from_bytes(&secret))
    }

    /// A new key of `key_type` from the operating system's random number generator.
    ///
    /// # Panics
    ///
    /// As [`generate`](Self::generate).
    pub fn generate_of(key_type: KeyType) -> AgentKey {
        match key_type {
            KeyType::Ed25519 => AgentKey::generate(),
            KeyType::Es256 => loop {
                let mut secret = Zeroizing::new([0u8; 32]);
                getrandom::fill(secret.as_mut()).expect("the operating system's random number generator failed");
                // A scalar out of range (about 2^-32 of draws) is drawn again.
                if let Ok(signing) = p256::ecdsa::SigningKey::from_slice(secret.as_ref()) {
                    return AgentKey::from_p256(signing);
                }
            },
        }
    }

    /// The key's fully specified algorithm: `Ed25519` or `ES256`.
    pub fn alg(&self) -> &'static str {
        match self.signing {
            Secret::Ed25519(_) => ALG,
            Secret::P256(_) => ES256,
        }
    }

    /// The JWK `y` of a P-256 key; none for Ed25519.
    pub(crate) fn public_y(&self) -> Option<&str> {
        self.y.as_deref()
    }

    fn from_p256(signing: p256::ecdsa::SigningKey) -> AgentKey {
        let point = signing.verifying_key().to_sec1_point(false);
        let bytes = point.as_bytes();
        let x = URL_SAFE_NO_PAD.encode(&bytes[1..33]);
        let y = URL_SAFE_NO_PAD.encode(&bytes[33..65]);
        // RFC 7638 §3.2: crv, kty, x, y, in lexicographic order, no whitespace.
        let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let thumbprint = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        AgentKey { signing: Secret::P256(signing), x, y: Some(y), thumbprint }
    }

    /// The key of a private P-256 JWK (`kty` `EC`, `crv` `P-256`, `d`; `x` and `y`, when
    /// present, must be the public key of `d`).
    fn from_ec_jwk(jwk: &Value) -> Result<AgentKey, Error> {
        let invalid = |reason: &str| Error::InvalidJwk { reason: reason.to_owned() };
        let member = |name: &str| jwk.get(name).and_then(Value::as_str);
        if member("crv") != Some("P-256") {
            return Err(invalid("`crv` is not \"P-256\""));
        }
        if let Some(alg) = jwk.get("alg")
            && alg.as_str() != Some(ES256)
        {
            return Err(invalid("`alg` is not \"ES256\""));
        }
        let d = member("d").ok_or_else(|| invalid("it has no private key `d`"))?;
        let d = Zeroizing::new(URL_SAFE_NO_PAD.decode(d).map_err(|_| invalid("`d` is not base64url without padding"))?);
        if d.len() != 32 {
            return Err(invalid("`d` is not 32 bytes"));
        }
        let signing = p256::ecdsa::SigningKey::from_slice(&d).map_err(|_| invalid("`d` is not a P-256 scalar"))?;
        let key = AgentKey::from_p256(signing);
        for (name, ours) in [("x", Some(key.x.as_str())), ("y", key.y.as_deref())] {
            if jwk.get(name).is_some_and(|theirs| theirs.as_str() != ours) {
                return Err(invalid(&format!("`{name}` is not the public key of `d`")));
            }
        }
        Ok(key)
    }

    /// The key of a private JWK: `kty` `OKP`, `crv` `Ed25519`, `d` (base64url, 32 bytes);
    /// `x`, when present, must be the public key of `d`, and `alg`, when present, must be
    /// `Ed25519` (or the older `EdDSA`). Other members (`kid`, `use`, …) are ignored.
    pub fn from_jwk(jwk: &Value) -> Result<AgentKey, Error> {
        let invalid = |reason: &str| Error::InvalidJwk { reason: reason.to_owned() };
        let member = |name: &str| jwk.get(name).and_then(Value::as_str);
        if !jwk.is_object() {
            return Err(invalid("it is not a JSON object"));
        }
        if member("kty") == Some("EC") {
            return AgentKey::from_ec_jwk(jwk);
        }
        if member("kty") != Some("OKP") {
            return Err(invalid("`kty` is not \"OKP\""));
        }
        if member("crv") != Some("Ed25519") {
            return Err(invalid("`crv` is not \"Ed25519\""));
        }
        if let Some(alg) = jwk.get("alg")
            && !matches!(alg.as_str(), Some(ALG | "EdDSA"))
        {
            return Err(invalid("`alg` is neither \"Ed25519\" nor \"EdDSA\""));
        }
        let d = member("d").ok_or_else(|| invalid("it has no private key `d`"))?;
        let d = Zeroizing::new(URL_SAFE_NO_PAD.decode(d).map_err(|_| invalid("`d` is not base64url without padding"))?);
        let secret: &[u8; 32] = d.as_slice().try_into().map_err(|_| invalid("`d` is not 32 bytes"))?;
        let key = AgentKey::from_signing_key(SigningKey::from_bytes(secret));
        match jwk.get("x") {
            None => Ok(key),
            Some(x) if x.as_str() == Some(key.x.as_str()) => Ok(key),
            Some(_) => Err(invalid("`x` is not the public key of `d`")),
        }
    }

    /// The key in the JWK file at `path`, or a new key written there when the file does
    /// not exist.
    ///
    /// On Unix, a new file is created with mode 0600, and missing folders with 0700. An
    /// existing file that its group or others can read is refused
    /// ([`Error::KeyFilePermissions`]) rather than used: the key may have leaked; so is a
    /// folder its group or others can write ([`Error::FolderPermissions`]): the key in it
    /// could be replaced. Two processes starting at once end up with the same key: the
    /// file is written in full under a new temporary name and linked into place only if no
    /// other key got there first.
    pub fn load_or_generate(path: &Path) -> Result<AgentKey, Error> {
        if let Some(key) = AgentKey::load(path)? {
            return Ok(key);
        }
        let key = AgentKey::generate();
        if private_file::write(Purpose::AgentKey, path, key.private_jwk().as_bytes(), Placement::IfAbsent)? {
            return Ok(key);
        }
        // Another process wrote its key first: use that one, as it does.
        read_key_file(path)?.ok_or_else(|| Error::KeyFileIo {
            path: path.to_owned(),
            action: "read",
            error: std::io::Error::new(ErrorKind::NotFound, "the key file disappeared after it was written"),
        })
    }

    /// The key in the JWK file at `path`, or a new key of `key_type` written there when the
    /// file does not exist (an existing key is used whatever its type), as
    /// [`load_or_generate`](Self::load_or_generate) does.
    pub fn load_or_generate_as(path: &Path, key_type: KeyType) -> Result<AgentKey, Error> {
        if let Some(key) = AgentKey::load(path)? {
            return Ok(key);
        }
        let key = AgentKey::generate_of(key_type);
        if private_file::write(Purpose::AgentKey, path, key.private_jwk().as_bytes(), Placement::IfAbsent)? {
            return Ok(key);
        }
        AgentKey::load_or_generate(path)
    }

    /// The key in the JWK file at `path`, or none when there is no file. Nothing is ever
    /// written, not even a missing folder: this is how to look at a key without creating
    /// it (a check of the config, say). The file and its folder are refused as
    /// [`load_or_generate`](Self::load_or_generate) refuses them
    /// ([`Error::KeyFilePermissions`], [`Error::FolderPermissions`]).
    pub fn load(path: &Path) -> Result<Option<AgentKey>, Error> {
        read_key_file(path)
    }

    /// The public JWK: `{"kty":"OKP","crv":"Ed25519","x":"…","alg":"Ed25519"}`, or for
    /// ES256 `{"kty":"EC","crv":"P-256","x":"…","y":"…","alg":"ES256"}`.
    ///
    /// `alg` is there because AAuth requires every key it conveys (`cnf.jwk` in tokens)
    /// to name a fully specified algorithm; it is not part of the thumbprint.
    pub fn public_jwk(&self) -> Value {
        match &self.y {
            None => json!({"kty": "OKP", "crv": "Ed25519", "x": self.x, "alg": ALG}),
            Some(y) => json!({"kty": "EC", "crv": "P-256", "x": self.x, "y": y, "alg": ES256}),
        }
    }

    /// The JWK thumbprint (RFC 7638) with SHA-256, base64url without padding: the hash of
    /// `{"crv":"Ed25519","kty":"OKP","x":"…"}`.
    pub fn thumbprint(&self) -> String {
        self.thumbprint.clone()
    }

    /// The signature of `message`: Ed25519 (RFC 8032), or ES256 as `r || s` (RFC 7518
    /// §3.4) with a deterministic nonce (RFC 6979); either way the same bytes every time.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        match &self.signing {
            Secret::Ed25519(signing) => signing.sign(message).to_bytes(),
            Secret::P256(signing) => {
                let signature: p256::ecdsa::Signature = p256::ecdsa::signature::Signer::sign(signing, message);
                let mut bytes = [0u8; 64];
                bytes.copy_from_slice(&signature.to_bytes());
                bytes
            }
        }
    }

    /// The public key, base64url without padding (the JWK `x`).
    pub(crate) fn public_x(&self) -> &str {
        &self.x
    }

    fn from_signing_key(signing: SigningKey) -> AgentKey {
        let x = URL_SAFE_NO_PAD.encode(signing.verifying_key().as_bytes());
        // RFC 7638 §3.2: the required members only, in lexicographic order, no whitespace.
        let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
        let thumbprint = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        AgentKey { signing: Secret::Ed25519(signing), x, y: None, thumbprint }
    }

    /// The private JWK as the key file holds it.
    fn private_jwk(&self) -> Zeroizing<String> {
        match &self.signing {
            Secret::Ed25519(signing) => {
                let d = Zeroizing::new(URL_SAFE_NO_PAD.encode(signing.as_bytes()));
                Zeroizing::new(format!(
                    "{{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"alg\":\"{ALG}\",\"x\":\"{}\",\"d\":\"{}\"}}\n",
                    self.x,
                    d.as_str()
                ))
            }
            Secret::P256(signing) => {
                let scalar = Zeroizing::new(signing.to_bytes());
                let d = Zeroizing::new(URL_SAFE_NO_PAD.encode(scalar.as_slice()));
                Zeroizing::new(format!(
                    "{{\"kty\":\"EC\",\"crv\":\"P-256\",\"alg\":\"{ES256}\",\"x\":\"{}\",\"y\":\"{}\",\"d\":\"{}\"}}\n",
                    self.x,
                    self.y.as_deref().unwrap_or_default(),
                    d.as_str()
                ))
            }
        }
    }
}

impl fmt::Debug for AgentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentKey").field("thumbprint", &self.thumbprint).finish_non_exhaustive()
    }
}

/// The key in the file at `path`, if there is one, after checking who else can read it.
fn read_key_file(path: &Path) -> Result<Option<AgentKey>, Error> {
    let text = match private_file::read(Purpose::AgentKey, path)? {
        Contents::Missing => return Ok(None),
        Contents::Exposed(mode) => return Err(Error::KeyFilePermissions { path: path.to_owned(), mode }),
        Contents::Private(text) => text,
    };
    let invalid = |reason: String| Error::InvalidKeyFile { path: path.to_owned(), reason };
    // Only the position of a syntax error: serde_json's messages could quote the input.
    let mut jwk: Value = serde_json::from_str(&text)
        .map_err(|error| invalid(format!("not JSON (line {}, column {})", error.line(), error.column())))?;
    let key = AgentKey::from_jwk(&jwk);
    if let Some(Value::String(d)) = jwk.get_mut("d") {
        d.zeroize();
    }
    key.map(Some).map_err(|error| match error {
        Error::InvalidJwk { reason } => invalid(format!("not an Ed25519 or P-256 private JWK: {reason}")),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9421 §B.1.4's test-key-ed25519 as a JWK (the PEM's 32-byte seed and public key).
    fn rfc_jwk() -> Value {
        json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "kid": "test-key-ed25519",
            "d": "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU",
            "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
        })
    }
    const RFC_D: &str = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU";

    #[test]
    fn rfc_test_key_has_the_expected_thumbprint_and_public_jwk() {
        let key = AgentKey::from_jwk(&rfc_jwk()).unwrap();
        assert_eq!(key.thumbprint(), "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U");
        assert_eq!(
            key.public_jwk(),
            json!({"kty": "OKP", "crv": "Ed25519", "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs", "alg": "Ed25519"})
        );
    }

    /// RFC 8037's own vectors: the private key of Appendix A.1, its public key (A.2), its
    /// RFC 7638 thumbprint (A.3), and the Ed25519 signature of A.4's JWS signing input.
    #[test]
    fn rfc_8037_key_has_the_rfcs_thumbprint_and_signature() {
        let key = AgentKey::from_jwk(&json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
        }))
        .unwrap();
        assert_eq!(key.thumbprint(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
        assert_eq!(key.public_jwk()["x"], "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
        let signature = key.sign(b"eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc");
        assert_eq!(
            URL_SAFE_NO_PAD.encode(signature),
            "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
        );
        // The same key without `x` (the public key is derived from `d`).
        let derived = AgentKey::from_jwk(&json!({
            "kty": "OKP", "crv": "Ed25519", "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
        }))
        .unwrap();
        assert_eq!(derived.thumbprint(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    }

    #[test]
    fn private_jwk_round_trips() {
        let key = AgentKey::generate();
        let jwk: Value = serde_json::from_str(&key.private_jwk()).unwrap();
        let again = AgentKey::from_jwk(&jwk).unwrap();
        assert_eq!(again.thumbprint(), key.thumbprint());
        assert_eq!(again.sign(b"m"), key.sign(b"m"));
    }

    #[test]
    fn signatures_are_deterministic_and_verify() {
        let key = AgentKey::from_jwk(&rfc_jwk()).unwrap();
        let signature = key.sign(b"hello");
        assert_eq!(signature, key.sign(b"hello"));
        let Secret::Ed25519(signing) = &key.signing else { panic!("an Ed25519 key") };
        let public = ed25519_dalek::VerifyingKey::from_bytes(&signing.verifying_key().to_bytes()).unwrap();
        public.verify_strict(b"hello", &ed25519_dalek::Signature::from_bytes(&signature)).unwrap();
        assert!(public.verify_strict(b"hellO", &ed25519_dalek::Signature::from_bytes(&signature)).is_err());
    }

    /// ES256 keys: RFC 7515 A.3's key, its public JWK and RFC 7638 members, deterministic
    /// `r || s` signatures that P-256 verifies, and the private JWK round trip.
    #[test]
    fn es256_keys_sign_deterministically_and_round_trip() {
        use p256::ecdsa::signature::Verifier as _;
        let jwk = json!({"kty": "EC", "crv": "P-256",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
            "d": "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"});
        let key = AgentKey::from_jwk(&jwk).unwrap();
        assert_eq!(key.alg(), "ES256");
        assert_eq!(
            key.public_jwk(),
            json!({"kty": "EC", "crv": "P-256", "x": jwk["x"], "y": jwk["y"], "alg": "ES256"})
        );
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        assert_eq!(key.thumbprint(), URL_SAFE_NO_PAD.encode(Sha256::digest(canonical)));
        let signature = key.sign(b"hello");
        assert_eq!(signature, key.sign(b"hello"));
        let Secret::P256(signing) = &key.signing else { panic!("a P-256 key") };
        let signature = p256::ecdsa::Signature::from_slice(&signature).unwrap();
        signing.verifying_key().verify(b"hello", &signature).unwrap();
        assert!(signing.verifying_key().verify(b"hellO", &signature).is_err());

        let generated = AgentKey::generate_of(KeyType::Es256);
        let again = AgentKey::from_jwk(&serde_json::from_str(&generated.private_jwk()).unwrap()).unwrap();
        assert_eq!((again.thumbprint(), again.sign(b"m")), (generated.thumbprint(), generated.sign(b"m")));
        let mut wrong = jwk.clone();
        wrong["y"] = jwk["x"].clone();
        assert!(AgentKey::from_jwk(&wrong).unwrap_err().to_string().contains("`y` is not the public key of `d`"));
    }

    #[test]
    fn generated_keys_differ() {
        assert_ne!(AgentKey::generate().thumbprint(), AgentKey::generate().thumbprint());
    }

    #[test]
    fn invalid_jwks_are_refused_with_their_reason() {
        let with = |name: &str, value: Value| {
            let mut jwk = rfc_jwk();
            jwk[name] = value;
            jwk
        };
        let without = |name: &str| {
            let mut jwk = rfc_jwk();
            jwk.as_object_mut().unwrap().remove(name);
            jwk
        };
        let cases = [
            (json!("not an object"), "not a JSON object"),
            (with("kty", json!("RSA")), "`kty`"),
            (with("kty", json!("EC")), "`crv` is not \"P-256\""),
            (with("crv", json!("Ed448")), "`crv`"),
            (with("alg", json!("ES256")), "`alg`"),
            (without("d"), "no private key `d`"),
            (with("d", json!("n4Ni+HpISpVObnQMW0wOhCKROaIKqKtW/2ZYb2p9KcU=")), "base64url"),
            (with("d", json!("n4Ni-HpISpVObnQ")), "32 bytes"),
            (with("x", json!("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")), "`x` is not the public key"),
        ];
        for (jwk, expected) in cases {
            let error = AgentKey::from_jwk(&jwk).unwrap_err().to_string();
            assert!(error.contains(expected), "{jwk}: {error}");
            assert!(!error.contains(RFC_D), "{error}");
        }
        // Without `x`, and with the older `alg`, the key is accepted, and it is the same key.
        for jwk in [without("x"), with("alg", json!("EdDSA")), with("alg", json!("Ed25519"))] {
            let key = AgentKey::from_jwk(&jwk).unwrap();
            assert_eq!(key.thumbprint(), "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U", "{jwk}");
            assert_eq!(key.public_x(), "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs", "{jwk}");
        }
    }

    #[test]
    fn debug_shows_the_thumbprint_only() {
        let key = AgentKey::from_jwk(&rfc_jwk()).unwrap();
        let debug = format!("{key:?} {key:#?}");
        assert!(debug.contains("poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"), "{debug}");
        assert!(!debug.contains(RFC_D), "{debug}");
        assert!(!debug.contains("JrQLj5P_89iXES9"), "{debug}");
        let seed = URL_SAFE_NO_PAD.decode(RFC_D).unwrap();
        assert!(!debug.contains(&format!("{seed:?}")), "{debug}");
    }

    #[test]
    fn load_or_generate_creates_then_loads_the_same_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home/aauth/agent.jwk");
        let created = AgentKey::load_or_generate(&path).unwrap();
        let loaded = AgentKey::load_or_generate(&path).unwrap();
        assert_eq!(loaded.thumbprint(), created.thumbprint());
        // Only the key file is left: the temporary file it was written under is gone.
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["agent.jwk"]);
        let jwk: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(jwk["x"], created.public_jwk()["x"]);
        assert_eq!(jwk["alg"], "Ed25519");
    }

    /// `load` only reads: a missing key is none, and neither it nor its folders appear.
    #[test]
    fn load_reads_a_key_and_never_creates_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home/aauth/agent.jwk");
        assert!(AgentKey::load(&path).unwrap().is_none());
        assert!(!dir.path().join("home").exists());
        let created = AgentKey::load_or_generate(&path).unwrap();
        assert_eq!(AgentKey::load(&path).unwrap().map(|key| key.thumbprint()), Some(created.thumbprint()));
    }

    #[cfg(unix)]
    #[test]
    fn key_file_is_0600_in_0700_folders() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home/aauth/agent.jwk");
        AgentKey::load_or_generate(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&dir.path().join("home")), 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn key_files_others_can_read_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.jwk");
        AgentKey::load_or_generate(&path).unwrap();
        for mode in [0o640, 0o604, 0o644, 0o660] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let error = AgentKey::load_or_generate(&path).unwrap_err();
            assert!(matches!(error, Error::KeyFilePermissions { mode: m, .. } if m == mode), "{error:?}");
            assert!(error.to_string().contains(&path.display().to_string()), "{error}");
            let error = AgentKey::load(&path).err().unwrap();
            assert!(matches!(error, Error::KeyFilePermissions { mode: m, .. } if m == mode), "{error:?}");
        }
        // Owner-only modes are accepted.
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            AgentKey::load_or_generate(&path).unwrap();
        }
    }

    #[cfg(unix)]
    #[test]
    fn keys_in_folders_others_can_write_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("shared");
        let path = folder.join("agent.jwk");
        AgentKey::load_or_generate(&path).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = AgentKey::load_or_generate(&path).unwrap_err();
        assert!(matches!(error, Error::FolderPermissions { mode: 0o777, .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!(
                "agent key folder {}: writable by group or others (mode 777); run `chmod go-w {}`",
                folder.display(),
                folder.display()
            )
        );
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(AgentKey::load_or_generate(&path), Err(Error::FolderPermissions { .. })));
        assert!(!path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn broken_key_files_name_the_file_and_never_the_key() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (format!(r#"{{"kty":"OKP","crv":"Ed25519","d":"{RFC_D}""#), "not JSON (line 1"),
            (format!(r#"{{"kty":"RSA","crv":"Ed25519","d":"{RFC_D}"}}"#), "`kty`"),
            (
                format!(
                    r#"{{"kty":"OKP","crv":"Ed25519","d":"{RFC_D}","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}}"#
                ),
                "`x` is not the public key",
            ),
        ];
        for (index, (contents, expected)) in cases.into_iter().enumerate() {
            let path = dir.path().join(format!("agent-{index}.jwk"));
            std::fs::write(&path, contents).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            let error = AgentKey::load_or_generate(&path).unwrap_err();
            let message = format!("{error} {error:?}");
            assert!(message.contains(expected), "{message}");
            assert!(message.contains(&path.display().to_string()), "{message}");
            assert!(!message.contains(RFC_D), "{message}");
        }
    }
}
