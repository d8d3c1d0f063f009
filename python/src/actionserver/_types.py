"""The wire types of the native API, written by hand (see the README for
why); ``tests/test_spec.py`` fails when they drift from ``/openapi.json``."""

from __future__ import annotations

import base64
import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Union

_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


def parse_time(v: Optional[str]) -> Optional[datetime]:
    """Reads an RFC 3339 time as the server writes it (nanoseconds, Z)."""
    if not v:
        return None
    m = _TIME.match(v)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {v!r}")
    base, frac, zone = m.groups()
    t = datetime.strptime(base, "%Y-%m-%dT%H:%M:%S")
    if frac:
        t = t.replace(microsecond=int(frac[:6].ljust(6, "0")))
    if zone == "Z":
        return t.replace(tzinfo=timezone.utc)
    sign = 1 if zone[0] == "+" else -1
    return t.replace(tzinfo=timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))))


def _json(name: str) -> Any:
    """Field metadata: the field's name on the wire, when it differs."""
    return {"json": name}


def wire_names(cls: type) -> List[str]:
    """The wire names of a dataclass's fields (for the drift test)."""
    return [f.metadata.get("json", f.name) for f in dataclasses.fields(cls)]


@dataclass
class CommandBrief:
    """The command a session runs now."""

    __schema__ = "CommandBrief"
    id: int
    command: str
    started: Optional[datetime]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "CommandBrief":
        return cls(id=d["id"], command=d["command"], started=parse_time(d.get("started")))


@dataclass
class Session:
    """A shell session: one bash on a pseudo-terminal."""

    __schema__ = "Session"
    id: str
    cwd: str
    started: Optional[datetime]
    pid: int
    running_command: Optional[CommandBrief]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Session":
        rc = d.get("running_command")
        return cls(id=d["id"], cwd=d.get("cwd", ""), started=parse_time(d.get("started")), pid=d.get("pid", 0),
                   running_command=CommandBrief.from_json(rc) if rc else None)


@dataclass
class CommandMeta:
    """What the prompt reported after a command."""

    __schema__ = None  # the description leaves it an open object
    exit_code: int
    pid: int
    username: str
    hostname: str
    working_dir: str
    py_interpreter_path: str

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "CommandMeta":
        return cls(exit_code=d.get("exit_code", -1), pid=d.get("pid", -1), username=d.get("username", ""),
                   hostname=d.get("hostname", ""), working_dir=d.get("working_dir", ""),
                   py_interpreter_path=d.get("py_interpreter_path", ""))


@dataclass
class OutputRange:
    """The byte offsets of a command's output still kept."""

    __schema__ = "Command.output"
    start: int
    end: int


@dataclass
class Command:
    """A command started in a session: running, or finished with its code."""

    __schema__ = "Command"
    id: int
    session: str
    command: str
    running: bool
    exit_code: Optional[int]
    shell_died: bool
    started: Optional[datetime]
    finished: Optional[datetime]
    metadata: Optional[CommandMeta]
    output: OutputRange

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Command":
        out = d.get("output") or {}
        meta = d.get("metadata")
        return cls(id=d["id"], session=d.get("session", ""), command=d.get("command", ""),
                   running=bool(d.get("running")), exit_code=d.get("exit_code"),
                   shell_died=bool(d.get("shell_died")), started=parse_time(d.get("started")),
                   finished=parse_time(d.get("finished")),
                   metadata=CommandMeta.from_json(meta) if meta else None,
                   output=OutputRange(start=out.get("start", 0), end=out.get("end", 0)))


@dataclass
class OutputChunk:
    """A read of a command's output from an offset."""

    __schema__ = "OutputChunk"
    offset: int
    next_offset: int
    lost: int
    data: str
    tail: str
    done: bool
    exit_code: Optional[int]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "OutputChunk":
        return cls(offset=d["offset"], next_offset=d["next_offset"], lost=d.get("lost", 0), data=d.get("data", ""),
                   tail=d.get("tail", ""), done=bool(d.get("done")), exit_code=d.get("exit_code"))


@dataclass
class PluginStatus:
    """A plugin's state."""

    name: str
    state: str
    error: str = ""
    port: int = 0


@dataclass
class ShellStatus:
    """The default shell's state: ``starting``, ``ready`` or ``failed``
    (then ``error`` says why, e.g. start-up files that hang)."""

    __schema__ = "ServerInfo.shell"
    state: str
    error: str = ""


@dataclass
class ServerInfo:
    """Uptime, idle time, resources, plugins, MCP servers and the default
    shell's state."""

    __schema__ = "ServerInfo"
    uptime: float
    idle_time: float
    resources: Dict[str, Any]
    plugins: List[PluginStatus]
    mcp_servers: List[Dict[str, Any]]
    runtime: Dict[str, Any]
    shell: Optional[ShellStatus] = None

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ServerInfo":
        return cls(uptime=d.get("uptime", 0.0), idle_time=d.get("idle_time", 0.0), resources=d.get("resources") or {},
                   plugins=[PluginStatus(name=p["name"], state=p["state"], error=p.get("error", ""), port=p.get("port", 0))
                            for p in d.get("plugins") or []],
                   mcp_servers=list(d.get("mcp_servers") or []), runtime=d.get("runtime") or {},
                   shell=ShellStatus(state=d["shell"]["state"], error=d["shell"].get("error", ""))
                   if d.get("shell") else None)


@dataclass
class FileInfo:
    """One file-system entry. ``mode`` is octal text such as ``"0644"``."""

    __schema__ = "FileInfo"
    name: str
    path: str
    type: str
    size: int
    mode: str
    modified: Optional[datetime]
    uid: int
    gid: int
    target: str = ""

    @property
    def is_dir(self) -> bool:
        return self.type == "dir"

    @property
    def is_file(self) -> bool:
        return self.type == "file"

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "FileInfo":
        return cls(name=d["name"], path=d["path"], type=d["type"], size=d["size"], mode=d["mode"],
                   modified=parse_time(d.get("modified")), uid=d.get("uid", 0), gid=d.get("gid", 0),
                   target=d.get("target", ""))


@dataclass
class FileList:
    """The entries of a directory, by name."""

    __schema__ = "FileList"
    path: str
    entries: List[FileInfo]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "FileList":
        return cls(path=d["path"], entries=[FileInfo.from_json(e) for e in d.get("entries") or []])


@dataclass
class FileWritten:
    """What a write did: bytes written, and the file's size after."""

    __schema__ = "FileWritten"
    path: str
    bytes: int
    size: int

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "FileWritten":
        return cls(path=d["path"], bytes=d["bytes"], size=d["size"])


@dataclass
class WatchEvent:
    """A file-system change under a watched directory."""

    __schema__ = "WatchEvent"
    path: str
    op: str
    is_dir: bool
    time: Optional[datetime]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "WatchEvent":
        return cls(path=d["path"], op=d["op"], is_dir=bool(d.get("is_dir")), time=parse_time(d.get("time")))


# The events of following a command's output.


@dataclass
class OutputEvent:
    """Output of a command: ``data`` (bytes, or text when following with
    ``text=True``) spans ``offset`` to ``next_offset`` in the output."""

    data: Union[bytes, str]
    offset: int
    next_offset: int

    @property
    def text(self) -> str:
        """The data as text (bytes decoded as UTF-8)."""
        return self.data if isinstance(self.data, str) else self.data.decode("utf-8", "replace")


@dataclass
class LostEvent:
    """Output the server's buffer dropped before it was read: the bytes from
    ``from_offset`` to ``to_offset``. Never skipped silently."""

    from_offset: int = field(metadata=_json("from"))
    to_offset: int = field(metadata=_json("to"))
    bytes: int


@dataclass
class TailEvent:
    """The line still changing after ``offset`` (a prompt, a progress bar)."""

    offset: int
    tail: str


@dataclass
class ExitEvent:
    """The command finished; the last event."""

    command: Command


StreamEvent = Union[OutputEvent, LostEvent, TailEvent, ExitEvent]


@dataclass
class CommandResult:
    """A command run to its end: its state and its whole output."""

    command: Command
    output: str
    lost: int = 0

    @property
    def exit_code(self) -> Optional[int]:
        return self.command.exit_code


@dataclass
class Observation:
    """An OpenHands observation, as ``/execute_action`` returns it."""

    observation: str
    content: str
    extras: Dict[str, Any]
    message: str = ""
    success: Optional[bool] = None

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Observation":
        return cls(observation=d.get("observation", ""), content=d.get("content", ""), extras=d.get("extras") or {},
                   message=d.get("message", ""), success=d.get("success"))


@dataclass
class BrowseResult:
    """A page the server's browser shows: its text, and a PNG screenshot."""

    url: str
    content: str
    screenshot: Optional[bytes]
    error: bool
    error_message: str
    observation: Observation

    @classmethod
    def from_observation(cls, obs: Observation) -> "BrowseResult":
        x = obs.extras
        shot = x.get("screenshot") or ""
        png = base64.b64decode(shot.split(";base64,", 1)[1]) if ";base64," in shot else None
        return cls(url=x.get("url", ""), content=obs.content, screenshot=png, error=bool(x.get("error")),
                   error_message=x.get("last_browser_action_error", ""), observation=obs)


@dataclass
class McpTool:
    """A tool behind the server's MCP endpoint."""

    name: str
    description: str
    input_schema: Dict[str, Any]


@dataclass
class McpResult:
    """The result of an MCP tool call."""

    content: List[Dict[str, Any]]
    is_error: bool
    raw: Dict[str, Any]

    @property
    def text(self) -> str:
        """The text parts of the result, joined."""
        return "\n".join(c.get("text", "") for c in self.content if c.get("type") == "text")
