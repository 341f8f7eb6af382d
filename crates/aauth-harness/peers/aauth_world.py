"""An AAuth world built of independent -11 implementations from PyPI, for the interop
test: a person server and an access server from `introspection-aauth` (unmodified),
and an agent provider and a resource built on `aauth` 0.5.0's building blocks.

Each server listens on port 443 of its own loopback address (127.0.0.N agent
provider, N+1 person server, N+2 access server, N+3 resource; N is 2 unless given), as
-11 servers take only `https` identifiers with no port, under certificates of a test
CA made by `trustme`, which every server here trusts and which is written to
`{folder}/ca.pem` for the agent. A control server on 127.0.0.1 (plain http) lets the
test play the person through the person server's own API: `GET /approvals` lists
what waits for a decision, `POST /decide {"id": ...}` approves it
(`PersonServer.decide`).

Usage: python aauth_world.py FOLDER [N [self-hosted]]. Tests that run at once use different N. Prints one line, `READY {json}`, with the
servers' identifiers, the control URL and the CA file, then serves until its stdin
closes.
"""

import asyncio
import base64
import json
import socket
import ssl
import sys
import threading
import time
import urllib.request

import aauth
import httpx2 as httpx
import trustme
import uvicorn
from aauth_signing.verifier import verify_signature
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from introspection_aauth.access_server import AccessServer
from introspection_aauth.access_server.models import Verdict
from introspection_aauth.fastapi import access_server_router, person_server_router
from introspection_aauth.person_server import ApprovalStatus, MemoryStore, PersonServer
from introspection_aauth.protocol import SigningKey

FIRST = int(sys.argv[2]) if len(sys.argv) > 2 else 2
# With `self-hosted`, a fifth server, on 127.0.0.{N+4}, is the domain of a self-hosted
# agent: it serves the metadata and JWKS the test publishes there (through the control
# server), and the person and access servers accept it as an agent provider.
SELF_HOSTED = len(sys.argv) > 3 and sys.argv[3] == "self-hosted"
HOSTS = [f"127.0.0.{FIRST + n}" for n in range(5 if SELF_HOSTED else 4)]
AP, PS, AS, RS = (f"https://{host}" for host in HOSTS[:4])
SELF = f"https://{HOSTS[4]}" if SELF_HOSTED else None
PROVIDERS = [AP] + ([SELF] if SELF else [])
AGENT_ID = f"aauth:OmniAgent@{HOSTS[0]}"
AGENT_TOKEN_LIFETIME = 3600

folder = sys.argv[1]
ca = trustme.CA()
ca_file = f"{folder}/ca.pem"
ca.cert_pem.write_to_path(ca_file)
server_cert = ca.issue_cert(*HOSTS)
cert_file, key_file = f"{folder}/server.pem", f"{folder}/server.key"
server_cert.cert_chain_pems[0].write_to_path(cert_file)
for pem in server_cert.cert_chain_pems[1:]:
    pem.write_to_path(cert_file, append=True)
server_cert.private_key_pem.write_to_path(key_file)
client_tls = ssl.create_default_context()
ca.configure_trust(client_tls)


def fetch_jwks(iss, dwk=None, kid=None):
    """The keys of `iss`: `{iss}/.well-known/{dwk}`, then its `jwks_uri`."""

    def get(url):
        with urllib.request.urlopen(url, context=client_tls, timeout=10) as answer:
            return json.load(answer)

    return get(get(f"{iss}/.well-known/{dwk or 'aauth-agent.json'}")["jwks_uri"])


def verified(method, url, headers, body, fetcher=None):
    """Verifies a signed request with `aauth-signing`'s verifier.

    `aauth-signing` 0.2.0 reads the `Signature` value as unpadded base64url, against
    RFC 9421 4.2 and RFC 8941 3.3.5 (a Byte Sequence is standard base64, padded): it
    refuses every standard signature. The value is rewritten to the form it reads, the
    same bytes, before it verifies; the agent's encoding is not changed for it.
    """
    label, _, value = headers["signature"].partition("=:")
    raw = base64.b64decode(value.rstrip(":"))
    rewritten = f"{label}=:{base64.urlsafe_b64encode(raw).decode().rstrip('=')}:"
    return verify_signature(
        method,
        url,
        headers,
        body,
        headers["signature-input"],
        rewritten,
        headers["signature-key"],
        jwks_fetcher=fetcher,
    )


def jwt_parts(token):
    header, claims, _ = token.split(".")
    decode = lambda part: json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return decode(header), decode(claims)


# The agent provider, on `aauth`: agent tokens at `POST /ap/token` for a request signed
# with the bare key (`hwk`), and at `POST /ap/refresh` for one signed under `jkt-jwt` by an
# enrolled key (bootstrap -02's two-key refresh: the enrollment is the naming JWT's key,
# the new token is bound to the key it delegates to), both answered
# `{agent_token, expires_in}`. The lifetime of its tokens can be changed through the
# control server, which also counts the calls.
ap_key, _ = aauth.generate_ed25519_keypair()
ap_jwk = aauth.public_key_to_jwk(ap_key.public_key(), kid="ap-1")
ap = FastAPI()
enrolled = set()
ap_settings = {"lifetime": AGENT_TOKEN_LIFETIME}
ap_calls = {"token": 0, "refresh": 0}


def agent_token_answer(jwk):
    lifetime = ap_settings["lifetime"]
    token = aauth.create_agent_token(AP, AGENT_ID, jwk, ap_key, "ap-1", exp=int(time.time()) + lifetime, ps=PS)
    return {"agent_token": token, "expires_in": lifetime}


@ap.get("/.well-known/aauth-agent.json")
def ap_metadata():
    return {"issuer": AP, "jwks_uri": f"{AP}/jwks.json"}


@ap.get("/jwks.json")
def ap_jwks():
    return aauth.generate_jwks([ap_jwk])


@ap.post("/ap/token")
async def ap_token(request: Request):
    body = await request.body()
    headers = dict(request.headers)
    if not verified("POST", f"{AP}/ap/token", headers, body):
        return JSONResponse({"error": "invalid_signature"}, 401)
    key = aauth.parse_signature_key(headers["signature-key"])
    if key["scheme"] != "hwk":
        return JSONResponse({"error": "invalid_request", "detail": "sign with hwk"}, 400)
    jwk = {name: key["params"][name] for name in ("kty", "crv", "x", "y", "alg") if name in key["params"]}
    enrolled.add(aauth.calculate_jwk_thumbprint(jwk))
    ap_calls["token"] += 1
    return agent_token_answer(jwk)


@ap.post("/ap/refresh")
async def ap_refresh(request: Request):
    body = await request.body()
    headers = dict(request.headers)
    key = aauth.parse_signature_key(headers["signature-key"])
    if key["scheme"] != "jkt-jwt":
        return JSONResponse({"error": "invalid_request", "detail": "sign with jkt-jwt"}, 400)
    # `aauth-signing` verifies the naming JWT (its key, `iss`, signature) and the request
    # with the key it delegates to.
    if not verified("POST", f"{AP}/ap/refresh", headers, body):
        return JSONResponse({"error": "invalid_signature"}, 401)
    header, claims = jwt_parts(key["params"]["jwt"])
    if aauth.calculate_jwk_thumbprint(header["jwk"]) not in enrolled:
        return JSONResponse({"error": "not_enrolled"}, 403)
    ap_calls["refresh"] += 1
    return agent_token_answer(claims["cnf"]["jwk"])


# The resource, on `aauth`: an agent token gets `requirement=person-token`; a person
# token a resource token for the access server (`requirement=auth-token`); an auth
# token the data.
rs_key, _ = aauth.generate_ed25519_keypair()
rs_jwk = aauth.public_key_to_jwk(rs_key.public_key(), kid="rs-1")
rs = FastAPI()


@rs.get("/.well-known/aauth-resource.json")
def rs_metadata():
    return {"issuer": RS, "jwks_uri": f"{RS}/jwks.json"}


@rs.get("/jwks.json")
def rs_jwks():
    return aauth.generate_jwks([rs_jwk])


def requirement(value):
    return Response(status_code=401, headers={"AAuth-Requirement": value})


def serve_data(method, url, headers, body):
    if "signature-key" not in headers:
        return requirement("requirement=agent-token")
    key = aauth.parse_signature_key(headers["signature-key"])
    if key["scheme"] != "jwt":
        return requirement("requirement=agent-token")
    if not verified(method, url, headers, body, fetch_jwks):
        return Response(status_code=401, headers={"Signature-Error": "error=invalid_signature"})
    token = key["params"]["jwt"]
    header, claims = jwt_parts(token)
    if header["typ"] == "aa-agent+jwt":
        return requirement("requirement=person-token")
    if header["typ"] == "aa-person+jwt":
        resource_token = aauth.create_resource_token(
            RS,
            AS,
            aauth.calculate_jwk_thumbprint(claims["cnf"]["jwk"]),
            rs_key,
            "rs-1",
            presented_token=token,
            jwks_fetcher=fetch_jwks,
            scope="data.read",
        )
        return requirement(f'requirement=auth-token; resource-token="{resource_token}"')
    claims = aauth.verify_token(token, fetch_jwks, expected_typ="aa-auth+jwt", expected_aud=RS)
    answer = {key: claims.get(key) for key in ("iss", "sub", "scope", "mission_s256", "tenant")}
    return JSONResponse({"data": "the resource's data", **answer})


@rs.api_route("/data", methods=["GET", "POST"])
async def rs_data(request: Request):
    body = await request.body()
    # The checks fetch keys from the servers of this event loop: off it.
    return await asyncio.to_thread(serve_data, request.method, f"{RS}/data", dict(request.headers), body)


# The person server and the access server: `introspection-aauth`, as its README shows.
http = httpx.AsyncClient(verify=client_tls)
waiting = {}


async def on_approval(tenant, approval):
    waiting[approval.id] = (tenant, approval)


person_server = PersonServer(
    PS,
    SigningKey.generate(),
    MemoryStore(),
    subject_secret=b"interop-test",
    agent_providers=PROVIDERS,
    http=http,
    on_approval=on_approval,
    retry_after=1,
)
ps = FastAPI()
ps.include_router(person_server_router(person_server))
access_server = AccessServer(
    AS,
    SigningKey.generate(),
    lambda asked: Verdict.allow(),
    resources=[RS],
    person_servers=[PS],
    agent_providers=PROVIDERS,
    http=http,
    retry_after=1,
)
as_app = FastAPI()
as_app.include_router(access_server_router(access_server))

# The self-hosted agent's domain: what the test published there.
published = {}
self_host = FastAPI()


@self_host.get("/.well-known/aauth-agent.json")
def self_metadata():
    return published.get("metadata") or JSONResponse({"error": "not published"}, 404)


@self_host.get("/jwks.json")
def self_jwks():
    return published.get("jwks") or JSONResponse({"error": "not published"}, 404)


# The test's hands: the person's decisions, through the person server's own API.
control = FastAPI()


@control.post("/self-hosted")
async def publish_self_hosted(request: Request):
    published.update(await request.json())
    return {"published": sorted(published)}


@control.get("/approvals")
def approvals():
    return [
        {"id": approval.id, "tenant": tenant, "kind": approval.kind.value, "person": approval.person,
         "description": approval.description}
        for tenant, approval in waiting.values()
    ]


@control.post("/agent-token-lifetime")
async def agent_token_lifetime(request: Request):
    ap_settings["lifetime"] = (await request.json())["seconds"]
    return ap_settings


@control.get("/ap-calls")
def agent_provider_calls():
    return ap_calls


@control.post("/decide")
async def decide(request: Request):
    tenant, approval = waiting.pop((await request.json())["id"])
    await person_server.decide(tenant, approval.id, ApprovalStatus.APPROVED, decided_by=approval.person)
    return {"decided": approval.id}


def listen(host, port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


async def main():
    servers = []
    for app, host in zip((ap, ps, as_app, rs, self_host), HOSTS):
        config = uvicorn.Config(app, ssl_certfile=cert_file, ssl_keyfile=key_file, log_level="warning")
        servers.append((uvicorn.Server(config), listen(host, 443)))
    control_socket = listen("127.0.0.1", 0)
    servers.append((uvicorn.Server(uvicorn.Config(control, log_level="warning")), control_socket))
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in servers]
    while not all(server.started for server, _ in servers):
        await asyncio.sleep(0.05)
    ready = {"ap": AP, "ps": PS, "as": AS, "resource": RS, "ca": ca_file, "agent_id": AGENT_ID,
             "control": f"http://127.0.0.1:{control_socket.getsockname()[1]}"}
    if SELF:
        ready["self"] = SELF
    print("READY " + json.dumps(ready), flush=True)
    closed = asyncio.Event()
    loop = asyncio.get_running_loop()
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(closed.set)), daemon=True).start()
    await closed.wait()
    for server, _ in servers:
        server.should_exit = True
    await asyncio.gather(*tasks)


asyncio.run(main())
