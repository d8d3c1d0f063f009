"""The asynchronous client. It is the source of the synchronous one:
``scripts/unasync.py`` writes ``_sync_client.py`` from this file, so both
have one design and the same methods (a test checks the copy is current)."""

from __future__ import annotations

import json
import os
import time
from types import TracebackType
from typing import IO, Any, AsyncIterator, Callable, Dict, List, Optional, Tuple, Type, Union, cast

import httpx

from . import _config
from ._config import async_sleep as _sleep
from ._errors import ActionServerError, ConnectionLostError, TimeoutError, error_from_response
from ._sse import SSEDecoder
from ._types import (
    BrowseResult,
    Command,
    CommandResult,
    ExitEvent,
    FileInfo,
    FileList,
    FileWritten,
    LostEvent,
    McpResult,
    McpTool,
    Observation,
    OutputChunk,
    OutputEvent,
    ServerInfo,
    Session,
    StreamEvent,
    TailEvent,
    WatchEvent,
)

Progress = Callable[[int, Optional[int]], None]
"""Called with the bytes moved so far and the total (None when unknown)."""

Source = Union[str, "os.PathLike[str]", bytes, IO[bytes]]
Dest = Union[str, "os.PathLike[str]", IO[bytes]]

_CHUNK = 256 * 1024
_UNSET: Any = object()


class AsyncFileReader:
    """A file being read from the sandbox, streamed: ``await read(n)``, or
    ``async for chunk in reader``. ``offset`` is where it starts in the
    file, ``size`` the file's whole size, ``mode`` its octal mode."""

    def __init__(self, resp: httpx.Response, offset: int, size: Optional[int], decoded: bool = False) -> None:
        self._resp = resp
        self._iter = resp.aiter_bytes(_CHUNK) if decoded else resp.aiter_raw(_CHUNK)
        self._buf = bytearray()
        self._eof = False
        self.offset = offset
        self.size = size
        self.mode = resp.headers.get("X-File-Mode", "")
        self.etag = resp.headers.get("ETag", "")

    async def read(self, n: int = -1) -> bytes:
        """Reads up to n bytes (all that is left when n < 0); b"" at the end."""
        while not self._eof and (n < 0 or len(self._buf) < n):
            try:
                self._buf += await self._iter.__anext__()
            except StopAsyncIteration:
                self._eof = True
        if n < 0 or n >= len(self._buf):
            out = bytes(self._buf)
            self._buf.clear()
        else:
            out = bytes(self._buf[:n])
            del self._buf[:n]
        return out

    def __aiter__(self) -> "AsyncFileReader":
        return self

    async def __anext__(self) -> bytes:
        chunk = await self.read(_CHUNK)
        if not chunk:
            raise StopAsyncIteration
        return chunk

    async def aclose(self) -> None:
        """Ends the transfer."""
        await self._resp.aclose()

    async def __aenter__(self) -> "AsyncFileReader":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncWatch:
    """The events of a watch, in place from the moment it is entered:
    ``async with client.watch(dir) as events: async for ev in events``."""

    def __init__(self, client: "AsyncClient", params: Dict[str, str]) -> None:
        self._client = client
        self._params = params
        self._resp: Optional[httpx.Response] = None
        self._lines: Optional[AsyncIterator[str]] = None
        self._sse = SSEDecoder()

    async def __aenter__(self) -> "AsyncWatch":
        self._resp = await self._client._open_stream("GET", "/watch", params=self._params)
        self._lines = self._resp.aiter_lines()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Ends the watch."""
        if self._resp is not None:
            await self._resp.aclose()

    def __aiter__(self) -> "AsyncWatch":
        return self

    async def __anext__(self) -> WatchEvent:
        assert self._lines is not None, "enter the watch with a with statement first"
        async for line in self._lines:
            ev = self._sse.feed(line)
            if ev is not None and ev.data:
                return WatchEvent.from_json(json.loads(ev.data))
        raise StopAsyncIteration


class AsyncClient:
    """A client of one action server, for asyncio.

    ``base_url`` and ``api_key`` default to ``$ACTION_SERVER_URL`` (else
    http://127.0.0.1:8000) and ``$SESSION_API_KEY``, as actionctl's do.
    ``timeout`` bounds each request that is not a stream (seconds).
    Use it as an async context manager, or call ``aclose()``.
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, *, timeout: float = 120.0,
                 http_client: Optional[httpx.AsyncClient] = None) -> None:
        self.base_url, self.api_key = _config.resolve(base_url, api_key)
        headers = {_config.API_KEY_HEADER: self.api_key} if self.api_key else {}
        self._own = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=10.0))
        self._headers = headers
        self._timeout = timeout

    async def aclose(self) -> None:
        """Closes the connections (unless the http_client was given)."""
        if self._own:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        await self.aclose()

    # Transport.

    async def _request(self, method: str, path: str, *, params: Optional[Dict[str, Any]] = None, json_body: Any = _UNSET,
                       content: Any = None, headers: Optional[Dict[str, str]] = None,
                       timeout: Any = _UNSET, ok: Tuple[int, ...] = (200, 201, 202)) -> httpx.Response:
        h = dict(self._headers)
        if headers:
            h.update(headers)
        body = content
        if json_body is not _UNSET:
            body = json.dumps(json_body).encode()
            h["Content-Type"] = "application/json"
        kw: Dict[str, Any] = {}
        if timeout is not _UNSET:
            kw["timeout"] = timeout
        try:
            resp = await self._http.request(method, self.base_url + path, params=params, content=body, headers=h, **kw)
        except httpx.TimeoutException as e:
            raise TimeoutError(f"{method} {path}: no answer in time ({e})") from e
        except httpx.TransportError as e:
            raise ConnectionLostError(f"{method} {path}: {e}") from e
        if resp.status_code not in ok:
            raise error_from_response(resp.status_code, resp.content, f"{method} {path}")
        return resp

    async def _open_stream(self, method: str, path: str, *, params: Optional[Dict[str, Any]] = None,
                           headers: Optional[Dict[str, str]] = None, ok: Tuple[int, ...] = (200,)) -> httpx.Response:
        h = dict(self._headers)
        if headers:
            h.update(headers)
        req = self._http.build_request(method, self.base_url + path, params=params, headers=h,
                                       timeout=httpx.Timeout(self._timeout, read=None))
        try:
            resp = await self._http.send(req, stream=True)
        except httpx.TimeoutException as e:
            raise TimeoutError(f"{method} {path}: no answer in time ({e})") from e
        except httpx.TransportError as e:
            raise ConnectionLostError(f"{method} {path}: {e}") from e
        if resp.status_code not in ok:
            body = await resp.aread()
            await resp.aclose()
            raise error_from_response(resp.status_code, body, f"{method} {path}")
        return resp

    # The server.

    async def alive(self) -> bool:
        """Whether the server is ready to take actions (GET /alive)."""
        try:
            await self._request("GET", "/alive", timeout=10.0)
        except ActionServerError:
            return False
        return True

    async def wait_until_ready(self, timeout: float = 60.0) -> None:
        """Polls /alive until the server is ready; raises TimeoutError after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        delay = 0.01
        while not await self.alive():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the server at {self.base_url} was not ready after {timeout:g} s")
            await _sleep(min(delay, left))
            delay = min(delay * 2, 1.0)

    async def info(self) -> ServerInfo:
        """Uptime, idle time, resources, plugins and MCP servers."""
        return ServerInfo.from_json((await self._request("GET", "/server_info")).json())

    async def openapi(self) -> Dict[str, Any]:
        """The server's OpenAPI description."""
        return _obj(await self._request("GET", "/openapi.json"))

    # Sessions.

    async def create_session(self, id: Optional[str] = None, *, cwd: Optional[str] = None,
                             env: Optional[Dict[str, str]] = None) -> Session:
        """Starts a shell session; the server picks the id when none is given."""
        body: Dict[str, Any] = {}
        if id:
            body["id"] = id
        if cwd:
            body["cwd"] = cwd
        if env:
            body["env"] = env
        return Session.from_json((await self._request("POST", "/sessions", json_body=body)).json())

    async def list_sessions(self) -> List[Session]:
        """The shell sessions."""
        return [Session.from_json(s) for s in (await self._request("GET", "/sessions")).json()]

    async def get_session(self, id: str) -> Session:
        """One session."""
        return Session.from_json((await self._request("GET", f"/sessions/{id}")).json())

    async def delete_session(self, id: str) -> None:
        """Ends a session and its shell."""
        await self._request("DELETE", f"/sessions/{id}")

    # Commands.

    async def start_command(self, command: str, *, session: str = _config.DEFAULT_SESSION, pipe: bool = False,
                            cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None) -> Command:
        """Starts a command without waiting: in the session's terminal, or
        with ``pipe`` outside it, output on a pipe (``cwd`` and ``env`` apply
        to piped commands only)."""
        body: Dict[str, Any] = {"command": command}
        if pipe:
            body["pipe"] = True
        if cwd:
            body["cwd"] = cwd
        if env:
            body["env"] = env
        return Command.from_json((await self._request("POST", f"/sessions/{session}/commands", json_body=body)).json())

    async def get_command(self, command_id: int, *, session: str = _config.DEFAULT_SESSION) -> Command:
        """A command's state."""
        return Command.from_json((await self._request("GET", f"/sessions/{session}/commands/{command_id}")).json())

    async def read_output(self, command_id: int, *, session: str = _config.DEFAULT_SESSION, offset: int = 0,
                          wait: float = 0.0, max_bytes: Optional[int] = None) -> OutputChunk:
        """Reads a command's output from ``offset``, waiting up to ``wait``
        seconds for some when there is none yet."""
        params: Dict[str, Any] = {"offset": offset, "wait": int(wait * 1000)}
        if max_bytes is not None:
            params["max"] = max_bytes
        resp = await self._request("GET", f"/sessions/{session}/commands/{command_id}/output", params=params,
                                   timeout=httpx.Timeout(self._timeout + wait))
        return OutputChunk.from_json(resp.json())

    async def follow(self, command_id: int, *, session: str = _config.DEFAULT_SESSION, offset: int = 0,
                     text: bool = False, retries: int = 5) -> AsyncIterator[StreamEvent]:
        """Follows a command's output from ``offset`` until it exits: yields
        OutputEvent (bytes, or str with ``text``), LostEvent when the
        server dropped output before it was read, TailEvent for the line
        still changing, and ExitEvent last. A broken connection is resumed
        where it stopped (Last-Event-ID), up to ``retries`` times in a row."""
        path = f"/sessions/{session}/commands/{command_id}/stream"
        pos, failures = offset, 0
        while True:
            headers = {"Last-Event-ID": str(pos)}
            try:
                resp = await self._open_stream("GET", path, headers=headers)
                try:
                    sse = SSEDecoder()
                    async for line in resp.aiter_lines():
                        ev = sse.feed(line)
                        if ev is None:
                            continue
                        failures = 0
                        d = json.loads(ev.data)
                        if ev.event == "output":
                            data = d["data"] if text else d["data"].encode("utf-8", "surrogateescape")
                            nxt = int(ev.id) if ev.id else d["offset"] + len(d["data"].encode("utf-8", "surrogateescape"))
                            yield OutputEvent(data=data, offset=d["offset"], next_offset=nxt)
                            pos = nxt
                        elif ev.event == "lost":
                            yield LostEvent(from_offset=d["from"], to_offset=d["to"], bytes=d["bytes"])
                            pos = d["to"]
                        elif ev.event == "tail":
                            yield TailEvent(offset=d["offset"], tail=d["tail"])
                        elif ev.event == "exit":
                            yield ExitEvent(command=Command.from_json(d))
                            return
                finally:
                    await resp.aclose()
            except (httpx.TransportError, ConnectionLostError) as e:
                failures += 1
                if failures > retries:
                    raise ConnectionLostError(f"follow command {command_id}: {e}") from e
                await _sleep(min(0.05 * 2 ** failures, 2.0))
                continue
            # The stream ended without an exit event: resume.
            failures += 1
            if failures > retries:
                raise ConnectionLostError(f"follow command {command_id}: the stream kept ending early")

    async def run(self, command: str, *, session: str = _config.DEFAULT_SESSION, pipe: bool = True,
                  cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                  on_output: Optional[Callable[[str], None]] = None) -> CommandResult:
        """Starts a command (on a pipe by default), follows it to its end and
        returns its state and output; ``on_output`` sees the text as it comes."""
        cmd = await self.start_command(command, session=session, pipe=pipe, cwd=cwd, env=env)
        parts: List[str] = []
        lost = 0
        async for ev in self.follow(cmd.id, session=session, text=True):
            if isinstance(ev, OutputEvent):
                assert isinstance(ev.data, str)
                parts.append(ev.data)
                if on_output is not None:
                    on_output(ev.data)
            elif isinstance(ev, LostEvent):
                lost += ev.bytes
            elif isinstance(ev, ExitEvent):
                cmd = ev.command
        return CommandResult(command=cmd, output="".join(parts), lost=lost)

    async def send_input(self, text: str, *, session: str = _config.DEFAULT_SESSION, enter: bool = True) -> None:
        """Types text into the session's running command (then Enter)."""
        await self._request("POST", f"/sessions/{session}/input", json_body={"text": text, "enter": enter})

    async def send_key(self, key: str, *, session: str = _config.DEFAULT_SESSION) -> None:
        """Sends a control key such as ``"C-c"`` to the session's terminal."""
        await self._request("POST", f"/sessions/{session}/input", json_body={"key": key})

    async def signal(self, signal: str, *, session: str = _config.DEFAULT_SESSION,
                     command_id: Optional[int] = None) -> None:
        """Sends SIGINT, SIGTERM or SIGKILL to the terminal's command, or to
        the piped command ``command_id``."""
        body: Dict[str, Any] = {"signal": signal}
        if command_id is not None:
            body["command"] = command_id
        await self._request("POST", f"/sessions/{session}/signal", json_body=body)

    async def resize(self, rows: int, cols: int, *, session: str = _config.DEFAULT_SESSION) -> None:
        """Resizes the session's terminal."""
        await self._request("POST", f"/sessions/{session}/resize", json_body={"rows": rows, "cols": cols})

    # Files: absolute paths, or paths relative to the workspace (which
    # never lead out of it).

    async def stat(self, path: str) -> FileInfo:
        """Describes an entry (a symlink itself, with its target)."""
        return FileInfo.from_json((await self._request("GET", "/files/stat", params={"path": path})).json())

    async def list_dir(self, path: Optional[str] = None) -> FileList:
        """The entries of a directory (the workspace by default), by name."""
        params = {"path": path} if path else None
        return FileList.from_json((await self._request("GET", "/files/list", params=params)).json())

    async def mkdir(self, path: str, *, parents: bool = False, mode: Optional[str] = None) -> None:
        """Creates a directory; with ``parents``, as ``mkdir -p``."""
        body: Dict[str, Any] = {"path": path, "parents": parents}
        if mode:
            body["mode"] = mode
        await self._request("POST", "/files/mkdir", json_body=body)

    async def move(self, source: str, destination: str, *, overwrite: bool = False) -> None:
        """Renames an entry; ``overwrite`` replaces an existing destination."""
        await self._request("POST", "/files/move", json_body={"from": source, "to": destination, "overwrite": overwrite})

    async def remove(self, path: str, *, recursive: bool = False) -> None:
        """Deletes an entry; a directory with its contents only if recursive."""
        await self._request("POST", "/files/remove", json_body={"path": path, "recursive": recursive})

    async def chmod(self, path: str, mode: str) -> None:
        """Sets an entry's mode, in octal text (``"755"``)."""
        await self._request("POST", "/files/chmod", json_body={"path": path, "mode": mode})

    async def open_file(self, path: str, *, offset: int = 0, gzip: bool = False) -> AsyncFileReader:
        """Opens a file in the sandbox for streaming from ``offset``; use the
        reader as a context manager, or close it. With ``gzip`` the bytes
        travel compressed (and the size is not known ahead)."""
        if gzip and offset:
            raise ValueError("a compressed read starts at the beginning")
        headers = {"Accept-Encoding": "gzip" if gzip else "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        params = {"path": path, "gzip": "true"} if gzip else {"path": path}
        resp = await self._open_stream("GET", "/files/content", params=params, headers=headers, ok=(200, 206))
        if gzip:
            return AsyncFileReader(resp, 0, None, decoded=True)
        size: Optional[int] = None
        start = 0
        if resp.status_code == 206:
            cr = resp.headers.get("Content-Range", "")  # bytes a-b/total
            rng, _, total = cr.partition(" ")[2].partition("/")
            start, size = int(rng.split("-")[0]), int(total)
        elif "Content-Length" in resp.headers:
            size = int(resp.headers["Content-Length"])
        return AsyncFileReader(resp, start, size)

    async def read_bytes(self, path: str, *, offset: int = 0, length: Optional[int] = None) -> bytes:
        """A file's bytes (from ``offset``, at most ``length`` of them)."""
        headers = {"Accept-Encoding": "identity"}
        if offset or length is not None:
            end = "" if length is None else str(offset + length - 1)
            headers["Range"] = f"bytes={offset}-{end}"
        if length == 0:
            return b""
        resp = await self._request("GET", "/files/content", params={"path": path}, headers=headers, ok=(200, 206))
        return resp.content

    async def read_text(self, path: str, *, encoding: str = "utf-8") -> str:
        """A file's text."""
        return (await self.read_bytes(path)).decode(encoding)

    async def write_bytes(self, path: str, data: bytes, *, mode: Optional[str] = None, parents: bool = True) -> FileWritten:
        """Replaces a file with data, atomically; missing parents are made
        unless ``parents`` is false."""
        return await self.upload(path, data, mode=mode, parents=parents)

    async def write_text(self, path: str, text: str, *, encoding: str = "utf-8", mode: Optional[str] = None,
                         parents: bool = True) -> FileWritten:
        """Replaces a file with text, atomically."""
        return await self.upload(path, text.encode(encoding), mode=mode, parents=parents)

    async def upload(self, path: str, source: Source, *, mode: Optional[str] = None, parents: bool = True,
                     offset: Optional[int] = None, progress: Optional[Progress] = None,
                     gzip: bool = False) -> FileWritten:
        """Streams ``source`` (a local path, bytes or a binary file object)
        into the file at ``path``. Without ``offset`` the file is replaced
        whole and atomically; with it, the file is cut to ``offset`` bytes
        and the rest of ``source`` from there is appended (a resumed
        upload). ``progress`` is called as bytes go; ``gzip`` compresses
        them on the way."""
        params: Dict[str, Any] = {"path": path}
        if mode:
            params["mode"] = mode
        if not parents:
            params["parents"] = "false"
        if offset is not None:
            params["offset"] = offset
        close: Optional[IO[bytes]] = None
        f: IO[bytes]
        if isinstance(source, (str, os.PathLike)):
            close = f = open(source, "rb")
        elif isinstance(source, (bytes, bytearray, memoryview)):
            import io

            f = io.BytesIO(bytes(source))
        else:
            f = source
        try:
            total: Optional[int] = None
            try:
                total = os.fstat(f.fileno()).st_size - (f.tell() if offset is None else 0)
            except (AttributeError, OSError, ValueError):
                if hasattr(f, "getbuffer"):
                    total = len(f.getbuffer()) - (f.tell() if offset is None else 0)
            if offset is not None:
                f.seek(offset)
                if total is not None:
                    total -= offset
            headers = {"Content-Type": "application/octet-stream"}
            if gzip:
                headers["Content-Encoding"] = "gzip"
            elif total is not None:
                headers["Content-Length"] = str(total)
            body = _chunks(f, progress, total, gzip)
            resp = await self._request("PUT", "/files/content", params=params, content=body, headers=headers,
                                       timeout=httpx.Timeout(self._timeout, write=None, read=None))
            return FileWritten.from_json(resp.json())
        finally:
            if close is not None:
                close.close()

    async def download(self, path: str, dest: Dest, *, resume: bool = False,
                       progress: Optional[Progress] = None, gzip: bool = False) -> int:
        """Streams the file at ``path`` to ``dest`` (a local path or a binary
        file object) and returns its size. To a path, the bytes go to
        ``dest.part`` first and are renamed once complete; with ``resume``
        an existing part is continued from its length. ``gzip`` compresses
        them on the way (a file object only)."""
        if gzip and isinstance(dest, (str, os.PathLike)):
            raise ValueError("a compressed download goes to a file object")
        if not isinstance(dest, (str, os.PathLike)):
            async with await self.open_file(path, gzip=gzip) as r:
                done = 0
                async for chunk in r:
                    dest.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, r.size)
                return done
        part = os.fspath(dest) + ".part"
        start = os.path.getsize(part) if resume and os.path.exists(part) else 0
        try:
            reader = await self.open_file(path, offset=start)
        except ActionServerError as e:
            if e.status != 416:
                raise
            start = 0
            reader = await self.open_file(path)
        async with reader as r:
            with open(part, "ab" if start else "wb") as out:
                done = start
                async for chunk in r:
                    out.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, r.size)
        if r.size is not None and done != r.size:
            raise ConnectionLostError(f"download {path}: got {done} of {r.size} bytes; resume to continue")
        os.replace(part, dest)
        return done

    def watch(self, path: str, *, recursive: bool = False) -> AsyncWatch:
        """File-system changes under a directory, from the moment the
        returned watch is entered (``async with``) until it is left."""
        return AsyncWatch(self, {"path": path, "recursive": "true" if recursive else "false"})

    # OpenHands actions, through /execute_action.

    async def execute_action(self, action: Dict[str, Any], *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Runs an OpenHands action (``{"action": "run", "args": {...}}``)
        and returns its observation as the server sends it."""
        if timeout is not None:
            action = dict(action, timeout=timeout)
        t = httpx.Timeout(self._timeout if timeout is None else timeout + 5.0, connect=10.0)
        return _obj(await self._request("POST", "/execute_action", json_body={"action": action}, timeout=t))

    async def browse(self, url: str, *, timeout: float = 60.0) -> BrowseResult:
        """Opens a URL in the server's browser: the page as text, and a PNG
        screenshot."""
        obs = await self.execute_action({"action": "browse", "args": {"url": url}}, timeout=timeout)
        return BrowseResult.from_observation(Observation.from_json(obs))

    async def browse_interactive(self, actions: str, *, timeout: float = 60.0) -> BrowseResult:
        """Runs BrowserGym actions (``goto('...')``, ``click('12')``, ...)."""
        obs = await self.execute_action({"action": "browse_interactive", "args": {"browser_actions": actions}},
                                        timeout=timeout)
        return BrowseResult.from_observation(Observation.from_json(obs))

    async def screenshot(self, url: str, *, timeout: float = 60.0) -> bytes:
        """A PNG screenshot of a URL."""
        res = await self.browse(url, timeout=timeout)
        if res.screenshot is None:
            raise ActionServerError(f"no screenshot of {url}: {res.error_message or res.content[:200]}")
        return res.screenshot

    async def run_ipython(self, code: str, *, timeout: Optional[float] = None) -> Observation:
        """Runs a cell in the server's Jupyter kernel (the jupyter plugin)."""
        return Observation.from_json(await self.execute_action({"action": "run_ipython", "args": {"code": code}},
                                                               timeout=timeout))

    # MCP: the stdio servers behind /mcp/sse.

    async def mcp_set_servers(self, servers: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Replaces the stdio MCP servers (``[{"name", "command", "args",
        "env"}]``); ``router_error_log`` names any that failed to start."""
        return _obj(await self._request("POST", "/update_mcp_server", json_body=servers))

    async def mcp_tools(self) -> List[McpTool]:
        """The tools the MCP endpoint offers."""
        res = await self._mcp("tools/list", {})
        return [McpTool(name=t["name"], description=t.get("description", ""), input_schema=t.get("inputSchema", {}))
                for t in res.get("tools", [])]

    async def mcp_call(self, name: str, arguments: Optional[Dict[str, Any]] = None, *,
                       timeout: Optional[float] = None) -> McpResult:
        """Calls an MCP tool."""
        res = await self._mcp("tools/call", {"name": name, "arguments": arguments or {}}, timeout=timeout)
        return McpResult(content=res.get("content", []), is_error=bool(res.get("isError")), raw=res)

    async def _mcp(self, method: str, params: Dict[str, Any], timeout: Optional[float] = None) -> Dict[str, Any]:
        # One MCP session per call over SSE: the endpoint event names where
        # to post, the answers come back on the stream.
        resp = await self._open_stream("GET", "/mcp/sse")
        try:
            lines = resp.aiter_lines()
            sse = SSEDecoder()

            async def next_event() -> Any:
                async for line in lines:
                    ev = sse.feed(line)
                    if ev is not None:
                        return ev
                raise ConnectionLostError("the MCP stream ended")

            ev = await next_event()
            if ev.event != "endpoint":
                raise ActionServerError(f"MCP: expected the endpoint event, got {ev.event!r}")
            endpoint = ev.data if ev.data.startswith("/") else "/" + ev.data.split("/", 3)[-1]

            async def post(msg: Dict[str, Any]) -> None:
                await self._request("POST", endpoint, json_body=msg, ok=(200, 202))

            async def answer(id: int) -> Dict[str, Any]:
                while True:
                    ev = await next_event()
                    if ev.event != "message":
                        continue
                    msg = cast(Dict[str, Any], json.loads(ev.data))
                    if msg.get("id") != id:
                        continue
                    if "error" in msg:
                        raise ActionServerError(f"MCP {method}: {msg['error'].get('message', msg['error'])}")
                    return cast(Dict[str, Any], msg.get("result", {}))

            await post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2024-11-05", "capabilities": {},
                "clientInfo": {"name": "actionserver-python", "version": "0"}}})
            await answer(1)
            await post({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await post({"jsonrpc": "2.0", "id": 2, "method": method, "params": params})
            return await answer(2)
        finally:
            await resp.aclose()


def _obj(resp: httpx.Response) -> Dict[str, Any]:
    """The JSON object a response carries."""
    return cast(Dict[str, Any], resp.json())


async def _chunks(f: IO[bytes], progress: Optional[Progress], total: Optional[int], gz: bool) -> AsyncIterator[bytes]:
    """The body of an upload, read from f in chunks, reporting progress."""
    import zlib

    z = zlib.compressobj(1, zlib.DEFLATED, 31) if gz else None
    done = 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        done += len(chunk)
        if progress is not None:
            progress(done, total)
        yield z.compress(chunk) if z is not None else chunk
    if z is not None:
        yield z.flush()
