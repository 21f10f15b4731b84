"""Generated JWTs for property tests of token verification: headers and claims of every JSON type
and size, names given twice, `alg: none`, `crit`, key ids that are not text, nesting thousands
deep, huge numbers and numbers written as text. `tokens(alg)` draws the header and payload JSON
(the key id as the placeholder `"<kid>"`) and how to sign it; `assemble` signs it."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from hypothesis import strategies as st

from jwks_issuer import AUDIENCE, ISSUER

KEEP, DROP = object(), object()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**15, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.from_regex(r"\A-?[0-9]{1,12}(\.[0-9]{1,3})?\Z"),  # numbers written as text
    st.just("x" * 5_000),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
deep = st.integers(min_value=50, max_value=3_000).map(lambda n: "[" * n + "]" * n)  # nested arrays


def json_object(pairs: list[tuple[str, Any]]) -> str:
    """A JSON object written pair by pair: a name may repeat (what a dict cannot hold)."""
    return (
        "{"
        + ",".join(f"{json.dumps(k)}:{v if isinstance(v, RawJson) else json.dumps(v)}" for k, v in pairs)
        + "}"
    )


class RawJson(str):
    """JSON text written as it is (deep nesting that `json.dumps` would refuse to produce)."""


def overridden(base: dict[str, Any], name: str, choice: Any) -> list[tuple[str, Any]]:
    if choice is KEEP:
        return [(name, base[name])] if name in base else []
    if choice is DROP:
        return []
    return [(name, choice)]


@st.composite
def tokens(draw: st.DrawFn, alg: str) -> tuple[str, str, dict[str, Any]]:
    """(header JSON, payload JSON, the fields drawn) for a token meant for `alg`."""
    now = int(time.time())
    base_claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "agent-7",
        "tenant_id": "acme",
        "roles": ["agent"],
        "iat": now,
        "exp": now + 600,
    }
    # Most claims kept as issued, so that one odd claim meets a token otherwise sound
    choice = st.integers(0, 19).flatmap(
        lambda i: (
            st.just(KEEP)
            if i < 16
            else st.just(DROP)
            if i == 16
            else deep.map(RawJson)
            if i == 17
            else values
        )
    )
    claims: list[tuple[str, Any]] = []
    for name in [*base_claims, "nbf", "clearance", "subjects", "jti"]:
        claims += overridden(base_claims, name, draw(choice))
    claims += draw(st.lists(st.tuples(st.text(max_size=10), values), max_size=3))
    if draw(st.booleans()) and claims:  # a name given twice
        claims.append((draw(st.sampled_from(claims))[0], draw(values)))
    header_base = {"alg": alg, "typ": "JWT"}
    header: list[tuple[str, Any]] = []
    header += overridden(
        header_base,
        "alg",
        draw(st.one_of(st.just(KEEP), st.sampled_from(["none", "HS256", "RS256", "ES256", ""]), values)),
    )
    header += overridden(header_base, "typ", draw(st.one_of(st.just(KEEP), st.just(DROP), values)))
    kid = draw(st.one_of(st.just(KEEP), st.just(DROP), values))
    header += [] if kid is DROP else [("kid", "<kid>" if kid is KEEP else kid)]
    crit = draw(st.one_of(st.just(DROP), st.just(DROP), values, st.just(["b64"]), st.just(["exp"])))
    header += [] if crit is DROP else [("crit", crit)]
    if draw(st.booleans()):
        header += draw(
            st.lists(
                st.tuples(st.sampled_from(["b64", "jku", "x5u", "jwk", "zip", "extra"]), values), max_size=3
            )
        )
    if draw(st.booleans()) and header:
        header.append((draw(st.sampled_from(header))[0], draw(values)))
    return (
        json_object(header),
        json_object(claims),
        {"signing": draw(st.sampled_from(["none", "trusted", "trusted", "trusted", "other"]))},
    )


def assemble(header: str, payload: str, sign: Any) -> str:
    signing_input = f"{b64(header.encode())}.{b64(payload.encode())}"
    return f"{signing_input}.{b64(sign(signing_input.encode()))}"
