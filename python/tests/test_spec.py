"""The hand-written types and routes of the SDK against the OpenAPI
description, in the repository and as the running server serves it: a
field or route that changes on one side only fails here."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
from typing import Any, Dict

import pytest

import actionserver
from actionserver import _types

from .conftest import Server

SPEC_FILE = pathlib.Path(__file__).resolve().parent.parent.parent / "api" / "openapi.json"
CLIENT = pathlib.Path(actionserver.__file__).parent / "_async_client.py"


@pytest.fixture(params=["repository", "server"])
def spec(request: pytest.FixtureRequest, server: Server) -> Dict[str, Any]:
    if request.param == "repository":
        if not SPEC_FILE.exists():
            pytest.skip("not run from the repository")
        return json.loads(SPEC_FILE.read_text())
    with actionserver.Client(server.url, server.api_key) as c:
        return c.openapi()


def schema_types() -> list:
    return [c for _, c in vars(_types).items()
            if dataclasses.is_dataclass(c) and isinstance(c, type) and getattr(c, "__schema__", None)]


def resolve(spec: Dict[str, Any], name: str) -> Dict[str, Any]:
    base, *inner = name.split(".")
    s = spec["components"]["schemas"][base]
    for part in inner:
        s = s["properties"][part]
    return s


def test_every_schema_type_matches_its_schema(spec: Dict[str, Any]) -> None:
    types = schema_types()
    assert len(types) >= 10
    for cls in types:
        s = resolve(spec, cls.__schema__)
        assert sorted(_types.wire_names(cls)) == sorted(s["properties"]), cls.__name__


def test_every_route_the_sdk_calls_is_described(spec: Dict[str, Any]) -> None:
    src = CLIENT.read_text()
    calls = re.findall(r'_(?:request|open_stream)\("([A-Z]+)", f?"([^"?]+)"', src)
    assert len(calls) >= 25
    paths = spec["paths"]
    for method, path in calls:
        templ = re.sub(r"\{[^}]*session[^}]*\}", "{id}", path)
        templ = re.sub(r"\{command_id\}", "{cid}", templ)
        templ = re.sub(r"\{id\}", "{id}", templ)
        assert templ in paths, f"{method} {path}: no such route in the description"
        assert method.lower() in paths[templ], f"{method} {templ} is not described"
