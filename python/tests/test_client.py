"""The synchronous client against the real server: every public method."""

from __future__ import annotations

import builtins
import io
import os
import sys
import threading
from pathlib import Path

import pytest

import actionserver
from actionserver import (
    AuthError,
    BadRequestError,
    BusyError,
    Client,
    ConflictError,
    ExistsError,
    ExitEvent,
    LostEvent,
    NotFoundError,
    OutputEvent,
    TailEvent,
)

from .conftest import Server, wait_for


def test_server_alive_info_and_openapi(client: Client) -> None:
    assert client.alive()
    client.wait_until_ready(timeout=5)
    info = client.info()
    assert info.uptime > 0
    assert "memory" in info.resources
    assert "/files/content" in client.openapi()["paths"]


def test_url_and_key_come_from_the_environment(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACTION_SERVER_URL", server.url)
    monkeypatch.setenv("SESSION_API_KEY", server.api_key)
    with Client() as c:
        assert c.base_url == server.url
        assert c.list_sessions()
    with Client(api_key="wrong") as c:
        with pytest.raises(AuthError) as e:
            c.list_sessions()
        assert e.value.status == 403


def test_not_ready_server_times_out() -> None:
    with Client("http://127.0.0.1:9") as c:  # nothing listens there
        assert not c.alive()
        with pytest.raises(actionserver.TimeoutError):
            c.wait_until_ready(timeout=0.2)


def test_sessions_create_list_get_delete(client: Client, server: Server) -> None:
    s = client.create_session("sdk-sess", cwd=str(server.workspace), env={"SDK_VAR": "42"})
    try:
        assert s.id == "sdk-sess"
        assert s.cwd == str(server.workspace)
        assert s.pid > 0
        assert "sdk-sess" in [x.id for x in client.list_sessions()]
        assert client.get_session("sdk-sess").id == "sdk-sess"
        with pytest.raises(ExistsError) as exists:
            client.create_session("sdk-sess")
        assert exists.value.code == "exists" and not isinstance(exists.value, BusyError)
        r = client.run("echo $SDK_VAR", session="sdk-sess", pipe=False)
        assert "42" in r.output
    finally:
        client.delete_session("sdk-sess")
    with pytest.raises(NotFoundError):
        client.get_session("sdk-sess")
    auto = client.create_session()
    assert auto.id
    client.delete_session(auto.id)


def test_pipe_command_state_output_by_offset(client: Client) -> None:
    cmd = client.start_command("printf 'one\\ntwo\\n'; exit 3", pipe=True)
    assert cmd.id > 0
    wait_for(lambda: not client.get_command(cmd.id).running)
    done = client.get_command(cmd.id)
    assert done.exit_code == 3
    chunk = client.read_output(cmd.id, offset=0, wait=1.0)
    assert chunk.data == "one\ntwo\n"
    assert chunk.done and chunk.exit_code == 3
    part = client.read_output(cmd.id, offset=4, max_bytes=2)
    assert (part.offset, part.data, part.next_offset) == (4, "tw", 6)


def test_follow_yields_bytes_or_text_and_the_exit(client: Client) -> None:
    cmd = client.start_command("for i in 1 2 3; do echo line$i; sleep 0.05; done", pipe=True)
    events = list(client.follow(cmd.id))
    data = b"".join(e.data for e in events if isinstance(e, OutputEvent))  # type: ignore[misc]
    assert data == b"line1\nline2\nline3\n"
    assert isinstance(events[-1], ExitEvent) and events[-1].command.exit_code == 0
    text = [e.data for e in client.follow(cmd.id, offset=6, text=True) if isinstance(e, OutputEvent)]
    assert "".join(text) == "line2\nline3\n"  # type: ignore[arg-type]


def test_follow_resumes_after_a_broken_connection(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = client.start_command("for i in $(seq 1 20); do echo n$i; sleep 0.02; done", pipe=True)
    real = client._open_stream
    calls = []

    def flaky(method, path, **kw):  # the first stream breaks after two lines
        resp = real(method, path, **kw)
        calls.append(kw.get("headers", {}).get("Last-Event-ID"))
        if len(calls) == 1:
            lines = resp.iter_lines()

            def broken():
                for i, line in enumerate(lines):
                    if i == 6:
                        import httpx
                        raise httpx.ReadError("cut")
                    yield line
            resp.iter_lines = broken  # type: ignore[method-assign]
        return resp

    monkeypatch.setattr(client, "_open_stream", flaky)
    out = b"".join(e.data for e in client.follow(cmd.id) if isinstance(e, OutputEvent))  # type: ignore[misc]
    assert out == b"".join(b"n%d\n" % i for i in range(1, 21)), "nothing lost, nothing repeated"
    assert len(calls) >= 2 and calls[1] not in (None, "0"), "it resumed from the last event id"


def test_follow_surfaces_dropped_output_as_an_event(server: Server) -> None:
    # A server with a tiny output budget drops what nobody read in time.
    import subprocess, signal, tempfile
    from .conftest import _binary, _free_port
    tmp = Path(tempfile.mkdtemp())
    port = _free_port()
    proc = subprocess.Popen([_binary(tmp), str(port), "--host", "127.0.0.1", "--working-dir", str(tmp), "--no-enable-browser",
                             "--output-buffer", "65536"],
                            env={"PATH": os.environ["PATH"], "HOME": str(tmp)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        with Client(f"http://127.0.0.1:{port}") as c:
            c.wait_until_ready(timeout=30)
            cmd = c.start_command("seq 1 2000000", pipe=True)
            wait_for(lambda: not c.get_command(cmd.id).running, timeout=60)
            events = list(c.follow(cmd.id))
            lost = [e for e in events if isinstance(e, LostEvent)]
            assert lost, "the dropped output is an event"
            assert lost[0].from_offset == 0 and lost[0].bytes == lost[0].to_offset > 0
            first = next(e for e in events if isinstance(e, OutputEvent))
            assert first.offset == lost[0].to_offset, "output resumes exactly where the loss ends"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)


def test_terminal_input_keys_signal_resize(client: Client) -> None:
    s = client.create_session("sdk-term")
    try:
        client.resize(40, 120, session="sdk-term")
        cmd = client.start_command("read -p 'name? ' x; echo hello $x; stty size", session="sdk-term")
        wait_for(lambda: "name?" in client.read_output(cmd.id, session="sdk-term").tail)
        client.send_input("sdk", session="sdk-term")
        events = list(client.follow(cmd.id, session="sdk-term", text=True))
        out = "".join(e.data for e in events if isinstance(e, OutputEvent))  # type: ignore[misc]
        assert "hello sdk" in out and "40 120" in out
        assert any(isinstance(e, TailEvent) for e in events) or "name?" in out

        def started(cid: int) -> None:  # the shell has reached the sleep
            wait_for(lambda: "started" in client.read_output(cid, session="sdk-term").data)

        sleeper = client.start_command("echo started; sleep 60", session="sdk-term")
        with pytest.raises(BusyError) as busy:
            client.start_command("echo busy", session="sdk-term")
        assert busy.value.code == "busy" and not isinstance(busy.value, ExistsError)
        started(sleeper.id)
        client.send_key("C-c", session="sdk-term")
        wait_for(lambda: not client.get_command(sleeper.id, session="sdk-term").running)
        sleeper = client.start_command("echo started; sleep 60", session="sdk-term")
        started(sleeper.id)
        client.signal("SIGTERM", session="sdk-term")
        wait_for(lambda: not client.get_command(sleeper.id, session="sdk-term").running)
        piped = client.start_command("sleep 60", session="sdk-term", pipe=True)
        client.signal("KILL", session="sdk-term", command_id=piped.id)
        wait_for(lambda: not client.get_command(piped.id, session="sdk-term").running)
        with pytest.raises(BadRequestError):
            client.send_key("not-a-key", session="sdk-term")
    finally:
        client.delete_session(s.id)


def test_files_bytes_text_stat_list_mkdir_move_chmod_remove(client: Client, server: Server) -> None:
    w = client.write_bytes("sdk/a/b.bin", b"\x00\x01binary", mode="600")
    assert (w.bytes, w.size) == (8, 8)
    assert (server.workspace / "sdk/a/b.bin").read_bytes() == b"\x00\x01binary"
    assert client.read_bytes("sdk/a/b.bin") == b"\x00\x01binary"
    assert client.read_bytes("sdk/a/b.bin", offset=2, length=3) == b"bin"
    assert client.read_bytes(str(server.workspace / "sdk/a/b.bin"), offset=2) == b"binary"
    client.write_text("sdk/t.txt", "héllo\n")
    assert client.read_text("sdk/t.txt") == "héllo\n"

    info = client.stat("sdk/a/b.bin")
    assert (info.type, info.size, info.mode, info.is_file) == ("file", 8, "0600", True)
    client.mkdir("sdk/x/y", parents=True, mode="750")
    client.mkdir("sdk/x/y", parents=True)
    with pytest.raises(ExistsError) as e:
        client.mkdir("sdk/x/y")
    assert e.value.code == "exists"
    client.move("sdk/t.txt", "sdk/x/t.txt")
    with pytest.raises(ConflictError):
        client.move("sdk/a/b.bin", "sdk/x/t.txt")
    client.move("sdk/a/b.bin", "sdk/x/t.txt", overwrite=True)
    client.chmod("sdk/x/t.txt", "640")
    listing = client.list_dir("sdk/x")
    assert [(e.name, e.type, e.mode) for e in listing.entries] == [("t.txt", "file", "0640"), ("y", "dir", "0750")]
    assert "sdk" in [e.name for e in client.list_dir().entries]
    with pytest.raises(ConflictError):
        client.remove("sdk/x")
    client.remove("sdk/x", recursive=True)
    with pytest.raises(NotFoundError) as nf:
        client.stat("sdk/x")
    assert nf.value.code == "not_found"


def test_files_bad_paths_are_clear_errors(client: Client) -> None:
    with pytest.raises(BadRequestError) as e:
        client.read_bytes("../../etc/passwd")
    assert e.value.code == "path_escapes"
    with pytest.raises(BadRequestError):
        client.stat("a\x00b")
    with pytest.raises(BadRequestError):
        client.read_bytes("/")  # a directory


def test_upload_download_stream_with_progress_and_resume(client: Client, tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024 + 5)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    seen = []
    w = client.upload("sdk-big/data.bin", src, progress=lambda done, total: seen.append((done, total)))
    assert w.size == len(data)
    assert seen[-1] == (len(data), len(data))

    dst = tmp_path / "dst.bin"
    got = []
    n = client.download("sdk-big/data.bin", dst, progress=lambda d, t: got.append((d, t)))
    assert n == len(data) and dst.read_bytes() == data and got[-1] == (len(data), len(data))

    # A download that stopped midway continues from its part.
    part = tmp_path / "resumed.bin.part"
    part.write_bytes(data[:1000000])
    client.download("sdk-big/data.bin", tmp_path / "resumed.bin", resume=True)
    assert (tmp_path / "resumed.bin").read_bytes() == data and not part.exists()
    # A part as long as the file or longer (a stale one) starts over.
    part.write_bytes(data + b"stale")
    client.download("sdk-big/data.bin", tmp_path / "resumed.bin", resume=True)
    assert (tmp_path / "resumed.bin").read_bytes() == data
    with pytest.raises(BadRequestError) as e:
        client.open_file("sdk-big/data.bin", offset=len(data) + 1)
    assert (e.value.status, e.value.code) == (416, "range_not_satisfiable")

    # An upload resumed from an offset, from a file object.
    client.write_bytes("sdk-big/up.bin", data[:2000000])
    with open(src, "rb") as f:
        w = client.upload("sdk-big/up.bin", f, offset=2000000)
    assert (w.bytes, w.size) == (len(data) - 2000000, len(data))
    assert client.read_bytes("sdk-big/up.bin") == data

    # Compressed on the way up; file-like streaming down.
    client.upload("sdk-big/z.txt", b"z" * 100000, gzip=True)
    with client.open_file("sdk-big/z.txt", offset=99990) as r:
        assert (r.offset, r.size) == (99990, 100000)
        assert r.read(4) == b"zzzz" and r.read() == b"z" * 6 and r.read() == b""
    buf = io.BytesIO()
    assert client.download("sdk-big/z.txt", buf) == 100000
    buf = io.BytesIO()
    assert client.download("sdk-big/z.txt", buf, gzip=True) == 100000 and buf.getvalue() == b"z" * 100000
    with client.open_file("sdk-big/z.txt", gzip=True) as r:
        assert r.size is None and r.read() == b"z" * 100000
    with client.open_file("sdk-big/data.bin") as r:
        assert b"".join(r) == data
    client.remove("sdk-big", recursive=True)


def test_watch_sees_a_new_file(client: Client, server: Server) -> None:
    client.mkdir("sdk-watch", parents=True)
    with client.watch("sdk-watch") as events:
        threading.Timer(0.2, lambda: (server.workspace / "sdk-watch" / "new.txt").write_text("x")).start()
        for ev in events:
            if ev.path.endswith("new.txt"):
                assert ev.op in ("create", "write") and not ev.is_dir and ev.time is not None
                break
    with pytest.raises(NotFoundError):
        with client.watch("no-such-dir") as events:
            next(iter(events))


def test_execute_action_passthrough(client: Client) -> None:
    obs = client.execute_action({"action": "run", "args": {"command": "echo passthrough"}})
    assert obs["observation"] == "run" and "passthrough" in obs["content"]


def test_browse_and_screenshot(client: Client, server: Server) -> None:
    if not server.browser:
        pytest.skip("no Chromium on this machine")
    page = server.workspace / "page.html"
    page.write_text("<html><body><h1>SDK page</h1></body></html>")
    res = client.browse("file://" + str(page))
    assert not res.error, res.error_message
    assert "SDK page" in res.content
    assert res.screenshot is not None and res.screenshot.startswith(b"\x89PNG")
    assert client.screenshot("file://" + str(page)).startswith(b"\x89PNG")
    res = client.browse_interactive(f"goto('file://{page}')")
    assert "SDK page" in res.content


def test_ipython(client: Client, server: Server) -> None:
    if not server.jupyter:
        pytest.skip("no Jupyter on this machine")
    wait_for(lambda: any(p.name == "jupyter" and p.state == "ready" for p in client.info().plugins), timeout=60)
    obs = client.run_ipython("print(6 * 7)")
    assert obs.observation == "run_ipython" and "42" in obs.content


def test_mcp_tools_list_and_call(client: Client) -> None:
    script = os.path.join(os.path.dirname(__file__), "mcp_echo.py")
    res = client.mcp_set_servers([{"name": "echo", "command": sys.executable, "args": [script]}])
    assert res["router_error_log"] == ""
    tools = client.mcp_tools()
    echo = next(t for t in tools if t.name.endswith("echo"))
    assert echo.input_schema["required"] == ["message"]
    out = client.mcp_call(echo.name, {"message": "hi"})
    assert not out.is_error and out.text == "echo: hi"


def test_a_request_past_its_timeout_is_a_timeout_error(server: Server, client: Client) -> None:
    with Client(server.url, server.api_key, timeout=0.3) as c:
        with pytest.raises(actionserver.TimeoutError) as e:
            c.execute_action({"action": "run", "args": {"command": "sleep 1", "blocking": True}})
        assert isinstance(e.value, builtins.TimeoutError) and isinstance(e.value, actionserver.ActionServerError)
    # The default shell finishes the command; later tests find it idle.
    wait_for(lambda: client.get_session("default").running_command is None)
