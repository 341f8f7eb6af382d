"""Verifies AAuth-signed requests with the PyPI package http-message-signatures.

Usage: python verify_with_http_message_signatures.py CASES.json

CASES.json holds {"public_key_x": <base64url Ed25519 public key>, "requests": [{"name",
"method", "url", "headers": [[name, value], ...], "body": <base64>}, ...]}. The script
prints one JSON object: {"package_version", "verdicts": [{"name", "verified", "covered",
"error"}, ...]}, a verdict per request, in order.

Each request is checked as an AAuth resource would (draft-hardt-oauth-aauth-protocol,
HTTP Message Signatures Profile): one signature labelled `sig`; covering `@method`,
`@authority`, `@path` and `signature-key`, plus `content-type` and `content-digest` when
there is a body and `authorization` when the request has one; `created` within 60 s; no
`alg` and no `keyid`; the Content-Digest matching the body; and, for the `hwk` scheme, the
key in Signature-Key being the expected one with `alg="Ed25519"` and no `kid`. The
signature base, the digest check and the Ed25519 verification are the package's.
"""

import base64
import datetime
import importlib.metadata
import json
import sys

import http_sf
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms

# AAuth sends no `keyid` (the key travels in Signature-Key), but the package's verifier
# insists on one to look the key up. This stands in for it during the key lookup only and
# is taken out again before the signature base is built, so the base is the one signed.
KEYID_STAND_IN = "aauth-signature-key"


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class FixedKey(HTTPSignatureKeyResolver):
    def __init__(self, key):
        self.key = key

    def resolve_public_key(self, key_id):
        return self.key if key_id == KEYID_STAND_IN else None

    def resolve_private_key(self, key_id):
        raise NotImplementedError("this script only verifies")


class AAuthVerifier(HTTPMessageVerifier):
    """The package's verifier, for signatures without `keyid` (see KEYID_STAND_IN)."""

    def _verify_one(self, *, sig_input, **kwargs):
        if "keyid" in sig_input.params:
            raise ValueError("AAuth agents do not send keyid")
        sig_input.params["keyid"] = KEYID_STAND_IN
        try:
            return super()._verify_one(sig_input=sig_input, **kwargs)
        finally:
            del sig_input.params["keyid"]

    def _build_signature_base(self, message, *, covered_component_ids, signature_params, component_resolver=None):
        if signature_params.get("keyid") == KEYID_STAND_IN:
            signature_params = {name: value for name, value in signature_params.items() if name != "keyid"}
        return super()._build_signature_base(
            message,
            covered_component_ids=covered_component_ids,
            signature_params=signature_params,
            component_resolver=component_resolver,
        )


class Message:
    """What the package's component resolver reads: method, url and header field lines."""

    def __init__(self, method, url, headers):
        self.method = method
        self.url = url
        self.headers = Headers(headers)


class Headers:
    def __init__(self, lines):
        self.lines = [(name, value) for name, value in lines]

    def items(self):
        return list(self.lines)

    def __iter__(self):
        return iter(dict.fromkeys(name for name, _ in self.lines))

    def __contains__(self, name):
        return any(field.lower() == name.lower() for field, _ in self.lines)

    def get(self, name):
        values = [value for field, value in self.lines if field.lower() == name.lower()]
        return ", ".join(values) if values else None


def signature_key(request, expected_key):
    """The verification key named by Signature-Key, checked against the AAuth profile."""
    field = request.headers.get("signature-key")
    if field is None:
        raise ValueError("no Signature-Key header")
    members = http_sf.parse(field.encode(), tltype="dictionary")
    if list(members) != ["sig"]:
        raise ValueError(f"Signature-Key members {list(members)}, expected only sig")
    scheme, params = members["sig"]
    if scheme == "jwt":
        if not isinstance(params.get("jwt"), str):
            raise ValueError("Signature-Key jwt scheme without a jwt string")
        # The token is opaque here; its cnf.jwk is the key the test gives.
        return expected_key
    if scheme == "hwk":
        if "kid" in params:
            raise ValueError("Signature-Key hwk with kid")
        wanted = {"alg": "Ed25519", "kty": "OKP", "crv": "Ed25519"}
        if {name: params.get(name) for name in wanted} != wanted:
            raise ValueError(f"Signature-Key hwk parameters {params}")
        key = Ed25519PublicKey.from_public_bytes(b64url_decode(params["x"]))
        if key.public_bytes_raw() != expected_key.public_bytes_raw():
            raise ValueError("Signature-Key hwk carries another key")
        return key
    raise ValueError(f"Signature-Key scheme {scheme}")


def verify(request, body, expected_key):
    required = ["@method", "@authority", "@path", "signature-key"]
    if body or "content-type" in request.headers:
        required += ["content-type", "content-digest"]
    if "authorization" in request.headers:
        required.append("authorization")
    verifier = AAuthVerifier(
        signature_algorithm=algorithms.ED25519,
        key_resolver=FixedKey(signature_key(request, expected_key)),
    )
    # Passing the body makes the package check Content-Digest against it, and require the
    # signature to cover it whenever there is content.
    results = verifier.verify(
        request,
        max_age=datetime.timedelta(seconds=60),
        require_components=required,
        body=body,
    )
    if [result.label for result in results] != ["sig"]:
        raise ValueError(f"signature labels {[result.label for result in results]}, expected sig")
    (result,) = results
    if set(result.parameters) != {"created"}:
        raise ValueError(f"signature parameters {sorted(result.parameters)}, expected created only")
    # The package lists the `@signature-params` line of the base with the covered components.
    covered = [str(http_sf.parse(name.encode(), tltype="item")[0]) for name in result.covered_components]
    return [name for name in covered if name != "@signature-params"]


def main():
    with open(sys.argv[1], encoding="utf-8") as file:
        cases = json.load(file)
    expected_key = Ed25519PublicKey.from_public_bytes(b64url_decode(cases["public_key_x"]))
    verdicts = []
    for case in cases["requests"]:
        request = Message(case["method"], case["url"], case["headers"])
        body = base64.b64decode(case["body"])
        try:
            covered = verify(request, body, expected_key)
            verdicts.append({"name": case["name"], "verified": True, "covered": covered, "error": None})
        except Exception as error:  # every failure is a verdict, reported with its reason
            verdicts.append({"name": case["name"], "verified": False, "covered": None, "error": repr(error)})
    version = importlib.metadata.version("http-message-signatures")
    json.dump({"package_version": version, "verdicts": verdicts}, sys.stdout)


if __name__ == "__main__":
    main()
