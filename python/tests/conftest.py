"""Starts the real action-server binary once for the test session.

The binary is $ACTION_SERVER_BIN, else ../bin/action-server (make build),
else it is built here with go. It listens on loopback, with an API key, the
browser when Chromium is there and the jupyter plugin when Jupyter is."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Iterator

import pytest

import actionserver

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
API_KEY = "sdk-test-key"


@dataclass
class Server:
    url: str
    api_key: str
    workspace: pathlib.Path
    browser: bool
    jupyter: bool


def _binary(tmp: pathlib.Path) -> str:
    env = os.environ.get("ACTION_SERVER_BIN")
    if env:
        return env
    built = ROOT / "bin" / "action-server"
    if built.exists():
        return str(built)
    out = tmp / "action-server"
    subprocess.run(["go", "build", "-tags", "nomsgpack", "-o", str(out), "./cmd/action-server"], cwd=ROOT, check=True,
                   env={**os.environ, "CGO_ENABLED": "0"})
    return str(out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="sdk-test-"))
    ws = tmp / "workspace"
    ws.mkdir()
    home = tmp / "home"
    home.mkdir()
    port = _free_port()
    browser = shutil.which("chromium") is not None or shutil.which("chromium-browser") is not None
    jupyter = os.path.exists("/usr/bin/jupyter-server")
    args = [_binary(tmp), str(port), "--host", "127.0.0.1", "--working-dir", str(ws)]
    if not browser:
        args.append("--no-enable-browser")
    if jupyter:
        args += ["--plugins", "jupyter"]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8", "SESSION_API_KEY": API_KEY}
    log = open(tmp / "server.log", "wb")
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    s = Server(url=f"http://127.0.0.1:{port}", api_key=API_KEY, workspace=ws, browser=browser, jupyter=jupyter)
    try:
        with actionserver.Client(s.url, API_KEY) as c:
            c.wait_until_ready(timeout=60)
        yield s
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def client(server: Server) -> Iterator[actionserver.Client]:
    with actionserver.Client(server.url, server.api_key, timeout=60) as c:
        yield c


@pytest.fixture
async def aclient(server: Server):
    async with actionserver.AsyncClient(server.url, server.api_key, timeout=60) as c:
        yield c


def wait_for(cond, timeout: float = 10.0) -> None:
    """Polls cond until it is true (for state the server changes later)."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)
