"""Starts bin/action-server as swerex-remote, as SWE-agent starts its server
in a sandbox, for swe-rex's own client to drive.

The binary is reached through a link named swerex-remote in a private
directory, so it takes SWE-ReX's command line. SWEREX_BINARY overrides the
binary (default: bin/action-server of this checkout).
"""

import asyncio
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from swerex.runtime.remote import RemoteRuntime

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "compat-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One swerex-remote process on loopback."""

    def __init__(self, tmp: Path):
        binary = Path(os.environ.get("SWEREX_BINARY", ROOT / "bin" / "action-server")).resolve()
        if not binary.exists():
            pytest.fail(f"{binary} is missing: run make build first")
        link = tmp / "bin" / "swerex-remote"
        link.parent.mkdir()
        link.symlink_to(binary)
        self.port = free_port()
        self.workdir = tmp / "work"
        self.workdir.mkdir()
        self.log = open(tmp / "server.log", "wb")
        self.proc = subprocess.Popen(
            [str(link), "--auth-token", TOKEN, "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=self.workdir,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.runtime = RemoteRuntime(host="http://127.0.0.1", port=self.port, auth_token=TOKEN)
        deadline = time.monotonic() + 30
        while not asyncio.run(self.runtime.is_alive(timeout=1)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"swerex-remote did not come up; log: {(tmp / 'server.log').read_text()}")
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("swerex"))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "swerex-remote exits cleanly on SIGTERM"


@pytest.fixture
def rt(server) -> RemoteRuntime:
    return server.runtime


def run(coro):
    """Runs one client call, as the synchronous callers (mini-swe-agent) do."""
    return asyncio.run(coro)
