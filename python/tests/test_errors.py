"""The exception for an error answer: by its code, else by its status."""

from __future__ import annotations

import json
from typing import Optional

import pytest

from actionserver import (
    ActionServerError,
    AuthError,
    BadRequestError,
    BusyError,
    ConflictError,
    ExistsError,
    FilePermissionError,
    NoSpaceError,
    NotFoundError,
    NotReadyError,
    ServerError,
)
from actionserver._errors import error_from_response


@pytest.mark.parametrize(
    ("status", "code", "want"),
    [
        # Without a code (an OpenHands route, an older server): the status.
        (400, None, BadRequestError),
        (403, None, AuthError),
        (404, None, NotFoundError),
        (409, None, BusyError),
        (429, None, ConflictError),
        (503, None, NotReadyError),
        (507, None, NoSpaceError),
        (500, None, ServerError),
        # With a code: the code, whatever the status.
        (409, "busy", BusyError),
        (409, "exists", ExistsError),
        (409, "conflict", ConflictError),
        (429, "limit", ConflictError),
        (403, "unauthorized", AuthError),
        (403, "permission_denied", FilePermissionError),
        (400, "path_escapes", BadRequestError),
        (422, "invalid", BadRequestError),
        (404, "not_found", NotFoundError),
        (503, "unavailable", NotReadyError),
        (507, "no_space", NoSpaceError),
        (500, "internal", ServerError),
    ],
)
def test_the_code_decides_else_the_status(status: int, code: Optional[str], want: type) -> None:
    body = {"detail": "why"}
    if code is not None:
        body["code"] = code
    err = error_from_response(status, json.dumps(body).encode(), "GET /x")
    assert type(err) is want
    assert (err.status, err.code, err.detail) == (status, code, "why")


def test_busy_and_exists_are_conflicts_but_not_each_other() -> None:
    busy = error_from_response(409, b'{"detail": "busy", "code": "busy"}', "POST /x")
    exists = error_from_response(409, b'{"detail": "exists", "code": "exists"}', "POST /x")
    assert isinstance(busy, ConflictError) and isinstance(exists, ConflictError)
    assert not isinstance(busy, ExistsError) and not isinstance(exists, BusyError)
    assert isinstance(busy, ActionServerError)
