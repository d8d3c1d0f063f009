"""Fixtures: the OpenHands host (a pinned openhands-ai) driving bin/action-server.

COMPAT_USER selects the sandbox user the host asks for: `root` (the
host's run_as_openhands=False) or `sandbox` (run_as_openhands=True, uid
1000, or the user and uid run.sh names in RUNTIME_USERNAME / RUNTIME_UID;
the server, running as root, creates the user). run.sh runs the
suite once for each, in separate processes, because the host reads its
user settings (RUNTIME_USERNAME) once, at import.
"""

from __future__ import annotations

import http.server
import logging
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

from openhands.core.config import OpenHandsConfig
from openhands.core.logger import openhands_logger
from openhands.events import EventStream
from openhands.llm.llm_registry import LLMRegistry
from openhands.runtime.plugins import AgentSkillsRequirement, JupyterRequirement
from openhands.storage import get_file_store
from openhands.utils.async_utils import call_async_from_sync

from process_runtime import ProcessRuntime

ROOT = Path(__file__).resolve().parents[2]
SERVER_BIN = os.environ.get('ACTION_SERVER_BIN', str(ROOT / 'bin' / 'action-server'))
USER = os.environ.get('COMPAT_USER', 'root')
API_KEY = 'compat-' + uuid.uuid4().hex
NO_CHANGE_TIMEOUT = 2


class Records(logging.Handler):
    """Keeps every record of WARNING or above the host logs."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def take(self) -> list[str]:
        out = [f'{r.levelname}: {r.getMessage()}' for r in self.records]
        self.records.clear()
        return out


HOST_LOG = Records()
openhands_logger.addHandler(HOST_LOG)


@pytest.fixture(autouse=True)
def host_logs_nothing_bad(request):
    """The host must log no warning or error while a test drives it."""
    HOST_LOG.take()
    yield HOST_LOG
    bad = HOST_LOG.take()
    if 'allow_host_warnings' not in request.keywords:
        assert bad == [], 'the host logged warnings or errors'


def pytest_configure(config):
    config.addinivalue_line('markers', 'allow_host_warnings: the test expects the host to complain')


def sandbox_uid() -> int:
    """The uid the host asks the server to run the shell and files as."""
    if os.environ.get('RUNTIME_UID'):
        return int(os.environ['RUNTIME_UID'])  # run.sh has the host ask for this user
    if os.getuid() != 0:
        return os.getuid()
    return 0 if USER == 'root' else 1000


def make_config(workspace: str, *, browser: bool) -> OpenHandsConfig:
    config = OpenHandsConfig()
    config.workspace_mount_path_in_sandbox = workspace
    config.enable_browser = browser
    config.run_as_openhands = USER != 'root'
    config.sandbox.timeout = 120
    # The host's own knob for the server's environment: a short soft
    # timeout keeps the timeout tests quick.
    config.sandbox.runtime_startup_env_vars = {'NO_CHANGE_TIMEOUT_SECONDS': str(NO_CHANGE_TIMEOUT)}
    return config


def new_workspace() -> str:
    # Directly in the temporary directory: the sandbox user must be able to
    # reach it (pytest's own tmp_path is under a 0700 directory of root's).
    ws = tempfile.mkdtemp(prefix='compat-ws-')
    os.chmod(ws, 0o755)
    return ws


def start_runtime(tmp_dir: Path, *, plugins, headless: bool, browser: bool,
                  api_key: str | None, extra_env: dict[str, str] | None = None) -> ProcessRuntime:
    workspace = new_workspace()
    config = make_config(workspace, browser=browser)
    sid = 'compat-' + uuid.uuid4().hex[:8]
    file_store = get_file_store('memory')
    event_stream = EventStream(sid, file_store)
    runtime = ProcessRuntime(
        config, event_stream, LLMRegistry(config), sid=sid, plugins=plugins,
        headless_mode=headless, server_bin=SERVER_BIN, session_api_key=api_key,
        log_path=str(tmp_dir / f'{sid}.log'), extra_env=extra_env)
    runtime.workspace = workspace
    try:
        call_async_from_sync(runtime.connect)
    except BaseException:
        runtime.close()
        print(Path(runtime.log_path).read_text(errors='replace'))
        raise
    return runtime


@pytest.fixture(scope='session')
def runtime(tmp_path_factory):
    """The full set-up CodeActAgent gets in the web UI: agent_skills and
    jupyter, the browser on, VS Code (not headless), and an API key."""
    if not os.path.exists(SERVER_BIN):
        pytest.fail(f'{SERVER_BIN} is missing: run make build first')
    rt = start_runtime(tmp_path_factory.mktemp('logs'),
                       plugins=[AgentSkillsRequirement(), JupyterRequirement()],
                       headless=False, browser=True, api_key=API_KEY)
    yield rt
    rt.close()
    log = Path(rt.log_path).read_text(errors='replace')
    shutil.rmtree(rt.workspace, ignore_errors=True)
    print(log[-4000:])


@pytest.fixture(scope='session')
def web():
    """A page served on 127.0.0.1 for the browser."""
    root = tempfile.mkdtemp(prefix='compat-web-')
    Path(root, 'index.html').write_text(
        '<html><head><title>Compat page</title></head><body>'
        '<h1>Hello from the compat suite</h1>'
        '<input id="name" type="text" aria-label="name">'
        '<button id="go" onclick="document.getElementById(\'out\').textContent='
        '\'clicked \' + document.getElementById(\'name\').value">Go</button>'
        '<p id="out">not clicked</p></body></html>')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=root, **k)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Quiet)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f'http://127.0.0.1:{srv.server_address[1]}'
    srv.shutdown()
    shutil.rmtree(root, ignore_errors=True)

