"""The asynchronous client against the real server. It is the source of
the synchronous one, so these tests exercise the await paths: streams,
uploads from async bodies, the watch and MCP over SSE."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from actionserver import AsyncClient, ConflictError, ExitEvent, NotFoundError, OutputEvent

from .conftest import Server


async def test_async_server_and_sessions(aclient: AsyncClient) -> None:
    assert await aclient.alive()
    await aclient.wait_until_ready(timeout=5)
    assert (await aclient.info()).uptime > 0
    assert "/sessions" in (await aclient.openapi())["paths"]
    s = await aclient.create_session("sdk-async")
    try:
        assert (await aclient.get_session("sdk-async")).id == "sdk-async"
        assert "sdk-async" in [x.id for x in await aclient.list_sessions()]
        await aclient.resize(30, 100, session="sdk-async")
        cmd = await aclient.start_command("read x; echo got $x", session="sdk-async")
        with pytest.raises(ConflictError):
            await aclient.start_command("true", session="sdk-async")
        await aclient.send_input("it", session="sdk-async")
        events = [e async for e in aclient.follow(cmd.id, session="sdk-async", text=True)]
        assert "got it" in "".join(e.data for e in events if isinstance(e, OutputEvent))  # type: ignore[misc]
        assert isinstance(events[-1], ExitEvent)
        sleeper = await aclient.start_command("echo started; sleep 60", session="sdk-async")
        for _ in range(500):
            if "started" in (await aclient.read_output(sleeper.id, session="sdk-async", wait=0.1)).data:
                break
        await aclient.send_key("C-c", session="sdk-async")
        for _ in range(500):
            if not (await aclient.get_command(sleeper.id, session="sdk-async")).running:
                break
            await asyncio.sleep(0.02)
        assert not (await aclient.get_command(sleeper.id, session="sdk-async")).running
        piped = await aclient.start_command("sleep 60", session="sdk-async", pipe=True)
        await aclient.signal("SIGKILL", session="sdk-async", command_id=piped.id)
        chunk = await aclient.read_output(piped.id, session="sdk-async", wait=5.0)
        assert chunk.done
    finally:
        await aclient.delete_session(s.id)
    with pytest.raises(NotFoundError):
        await aclient.get_session("sdk-async")


async def test_async_run_streams_output(aclient: AsyncClient) -> None:
    seen = []
    r = await aclient.run("echo a; echo b >&2; exit 4", on_output=seen.append)
    assert r.exit_code == 4 and "a\n" in r.output and "b\n" in r.output
    assert "".join(seen) == r.output


async def test_async_files(aclient: AsyncClient, tmp_path: Path) -> None:
    data = os.urandom(1 << 20)
    src = tmp_path / "s.bin"
    src.write_bytes(data)
    progress = []
    w = await aclient.upload("sdk-async-f/s.bin", src, progress=lambda d, t: progress.append(d))
    assert w.size == len(data) and progress[-1] == len(data)
    assert await aclient.read_bytes("sdk-async-f/s.bin", offset=10, length=5) == data[10:15]
    await aclient.write_text("sdk-async-f/t.txt", "text")
    assert await aclient.read_text("sdk-async-f/t.txt") == "text"
    await aclient.write_bytes("sdk-async-f/b", b"b")
    assert (await aclient.stat("sdk-async-f/b")).size == 1
    await aclient.mkdir("sdk-async-f/d/e", parents=True)
    await aclient.move("sdk-async-f/b", "sdk-async-f/d/b")
    await aclient.chmod("sdk-async-f/d/b", "700")
    assert [e.name for e in (await aclient.list_dir("sdk-async-f/d")).entries] == ["b", "e"]
    async with await aclient.open_file("sdk-async-f/s.bin") as r:
        assert b"".join([c async for c in r]) == data
    dst = tmp_path / "d.bin"
    assert await aclient.download("sdk-async-f/s.bin", dst) == len(data)
    assert dst.read_bytes() == data
    await aclient.remove("sdk-async-f", recursive=True)


async def test_async_watch(aclient: AsyncClient, server: Server) -> None:
    await aclient.mkdir("sdk-async-w", parents=True)
    async with aclient.watch("sdk-async-w", recursive=True) as events:
        (server.workspace / "sdk-async-w" / "f").write_text("x")
        async for ev in events:
            if ev.path.endswith("/f"):
                break


async def test_async_actions_and_mcp(aclient: AsyncClient, server: Server) -> None:
    obs = await aclient.execute_action({"action": "run", "args": {"command": "echo ok"}})
    assert "ok" in obs["content"]
    script = os.path.join(os.path.dirname(__file__), "mcp_echo.py")
    await aclient.mcp_set_servers([{"name": "echo", "command": sys.executable, "args": [script]}])
    tools = await aclient.mcp_tools()
    name = next(t.name for t in tools if t.name.endswith("echo"))
    assert (await aclient.mcp_call(name, {"message": "async"})).text == "echo: async"
    if server.browser:
        page = server.workspace / "apage.html"
        page.write_text("<h1>async page</h1>")
        assert "async page" in (await aclient.browse("file://" + str(page))).content
        assert (await aclient.screenshot("file://" + str(page))).startswith(b"\x89PNG")
        assert "async page" in (await aclient.browse_interactive(f"goto('file://{page}')")).content
    if server.jupyter:
        for _ in range(300):
            if any(p.name == "jupyter" and p.state == "ready" for p in (await aclient.info()).plugins):
                break
            await asyncio.sleep(0.2)
        assert "7" in (await aclient.run_ipython("print(3 + 4)")).content
