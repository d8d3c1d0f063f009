"""The exceptions the clients raise: one base class and a few kinds."""

from __future__ import annotations

import builtins
import json
from typing import Optional


class ActionServerError(Exception):
    """Base of every error the SDK raises for a request that failed.

    ``status`` is the HTTP status (0 when no answer came), ``detail`` the
    server's message, ``code`` its machine-readable code when the route
    sends one (``"not_found"``, ``"path_escapes"``, ``"no_space"``, ...).
    """

    def __init__(self, message: str, *, status: int = 0, detail: str = "", code: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail or message
        self.code = code


class AuthError(ActionServerError):
    """The API key is missing or wrong (401, 403)."""


class NotFoundError(ActionServerError):
    """No such session, command, file or route (404)."""


class ConflictError(ActionServerError):
    """The request does not fit the current state (409, 429): the session
    runs another command, the target exists, a directory is not empty, a cap
    is reached. BusyError and ExistsError say which, when the server's code
    does."""


class BusyError(ConflictError):
    """The session runs another command (code ``busy``; also any 409
    without a code, from a server that sends none)."""


class ExistsError(ConflictError):
    """A session with this id, or a file at this path, exists (code
    ``exists``)."""


class BadRequestError(ActionServerError):
    """The server refused the request as malformed (400, 413, 416, 422), or
    a path that leads out of the workspace (code ``path_escapes``)."""


class FilePermissionError(ActionServerError):
    """The sandbox's file system refused the operation (403 with code
    ``permission_denied``)."""


class TimeoutError(ActionServerError, builtins.TimeoutError):  # noqa: A001 - the SDK's own kind
    """No answer in time: the client's timeout, or the server's (408, 504).
    It is also the built-in TimeoutError, so either name catches it."""


class ServerError(ActionServerError):
    """The server failed (5xx)."""


class NotReadyError(ServerError):
    """The server is still starting, or lacks a resource for now (503)."""


class NoSpaceError(ServerError):
    """The sandbox's disk is full (507); nothing half-written was left."""


class ConnectionLostError(ActionServerError):
    """The connection broke and could not be made again."""


# The exception for each code of the native routes' error envelope. The code
# decides; an answer without one (an OpenHands route, an older server) is
# mapped by its status.
_BY_CODE: dict[str, type[ActionServerError]] = {
    "invalid": BadRequestError,
    "path_escapes": BadRequestError,
    "too_large": BadRequestError,
    "range_not_satisfiable": BadRequestError,
    "unsupported_media_type": BadRequestError,
    "method_not_allowed": BadRequestError,
    "unauthorized": AuthError,
    "forbidden": AuthError,
    "permission_denied": FilePermissionError,
    "not_found": NotFoundError,
    "busy": BusyError,
    "exists": ExistsError,
    "conflict": ConflictError,
    "limit": ConflictError,
    "unavailable": NotReadyError,
    "no_space": NoSpaceError,
    "internal": ServerError,
}


def error_from_response(status: int, body: bytes, what: str) -> ActionServerError:
    """Builds the exception that answers an HTTP error status."""
    detail = body.decode("utf-8", "replace").strip()
    code: Optional[str] = None
    try:
        env = json.loads(body)
    except ValueError:
        env = None
    if isinstance(env, dict):
        d = env.get("detail")
        if isinstance(d, str):
            detail = d
        elif d is not None:
            detail = json.dumps(d)
        if isinstance(env.get("errors"), str):
            detail = f"{detail}: {env['errors']}"
        c = env.get("code")
        code = c if isinstance(c, str) else None
    cls: type[ActionServerError]
    if code in _BY_CODE:
        cls = _BY_CODE[code]
    elif status in (401, 403):
        cls = AuthError
    elif status == 404:
        cls = NotFoundError
    elif status == 409:
        cls = BusyError
    elif status == 429:
        cls = ConflictError
    elif status in (408, 504):
        cls = TimeoutError
    elif status == 503:
        cls = NotReadyError
    elif status == 507:
        cls = NoSpaceError
    elif status >= 500:
        cls = ServerError
    else:
        cls = BadRequestError
    return cls(f"{what}: {status} {detail}", status=status, detail=detail, code=code)
