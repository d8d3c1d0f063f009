"""A Runtime of the OpenHands host that runs action-server as a local process.

Everything that talks to the server is the host's own ActionExecutionClient:
the HTTP session, its retries, event_to_dict / observation_from_dict, the
git handler, microagent loading. This class only does what DockerRuntime
does around a container, for a process instead:

- the command line is the host's own get_action_execution_server_startup_command
  (exactly what DockerRuntime passes to the container), whose first word,
  the image's launcher path /openhands/micromamba/bin/micromamba, is mapped
  to a link to bin/action-server named micromamba (the image links that same
  path to the server);
- the environment is the one DockerRuntime gives the container (port,
  VSCODE_PORT, APP_PORT_1/2, ...), plus SESSION_API_KEY when a key is used;
- the working directory is a stand-in for the container's /openhands/code/;
- the server listens on 127.0.0.1 (--host), where a container has its own
  network namespace;
- the API key goes into the host's session header as LocalRuntime and
  RemoteRuntime put it there.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile

import tenacity

from openhands.core.exceptions import AgentRuntimeDisconnectedError
from openhands.runtime.impl.action_execution.action_execution_client import (
    ActionExecutionClient,
)
from openhands.runtime.utils.command import (
    DEFAULT_PYTHON_PREFIX,
    get_action_execution_server_startup_command,
)
from openhands.utils.async_utils import call_sync_from_async


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def launcher_command(command: list[str], launcher: str) -> list[str]:
    """Replaces the image's launcher path (the first word) with launcher."""
    assert command[0] == DEFAULT_PYTHON_PREFIX[0], command
    return [launcher, *command[1:]]


class ProcessRuntime(ActionExecutionClient):
    """Starts bin/action-server as DockerRuntime starts its container."""

    def __init__(self, *args, server_bin: str, session_api_key: str | None = None,
                 log_path: str | None = None, extra_env: dict[str, str] | None = None,
                 **kwargs):
        self.server_bin = server_bin
        self.log_path = log_path
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen | None = None
        self._container_port = free_port()
        self._vscode_port = free_port()
        self._app_ports = [free_port(), free_port()]
        self.api_url = f'http://127.0.0.1:{self._container_port}'
        self._session_api_key = session_api_key
        self._scratch = tempfile.mkdtemp(prefix='compat-launcher-')
        super().__init__(*args, **kwargs)
        if session_api_key:
            self.session.headers['X-Session-API-Key'] = session_api_key

    @property
    def action_execution_server_url(self) -> str:
        return self.api_url

    @property
    def session_api_key(self) -> str | None:
        return self._session_api_key

    @property
    def vscode_url(self) -> str | None:
        # DockerRuntime's formula: the port the host gave the sandbox.
        token = self.get_vscode_token()
        if not token:
            return None
        return (f'http://localhost:{self._vscode_port}/?tkn={token}'
                f'&folder={self.config.workspace_mount_path_in_sandbox}')

    def startup_command(self) -> list[str]:
        return get_action_execution_server_startup_command(
            server_port=self._container_port,
            plugins=self.plugins,
            app_config=self.config,
        )

    def _launcher(self) -> str:
        # The image's path, .../micromamba/bin/micromamba, under a scratch
        # directory: the server recognises the launcher by its name.
        bindir = os.path.join(self._scratch, 'micromamba', 'bin')
        os.makedirs(bindir, exist_ok=True)
        path = os.path.join(bindir, 'micromamba')
        if not os.path.exists(path):
            os.symlink(os.path.abspath(self.server_bin), path)
        return path

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.initial_env_vars)
        env.update({
            'port': str(self._container_port),
            'PYTHONUNBUFFERED': '1',
            'VSCODE_PORT': str(self._vscode_port),
            'APP_PORT_1': str(self._app_ports[0]),
            'APP_PORT_2': str(self._app_ports[1]),
            'OPENHANDS_SESSION_ID': str(self.sid),
            'PIP_BREAK_SYSTEM_PACKAGES': '1',
        })
        env.update(self.config.sandbox.runtime_startup_env_vars)
        # A container's home is the image's, thrown away with it: a scratch
        # one here, so that what the host appends to ~/.bashrc
        # (add_env_vars, setup_initial_env) never reaches the machine's.
        # A sandbox user other than the server's gets the home of its
        # passwd entry: run.sh makes that user for the run.
        env['HOME'] = os.path.join(self._scratch, 'home')
        os.makedirs(env['HOME'], exist_ok=True)
        # So is its /tmp: the host makes directories there (mktemp -d for
        # its git diff helper) and never removes them. The sandbox user
        # must reach it, as it reaches a container's /tmp.
        env['TMPDIR'] = os.path.join(self._scratch, 'tmp')
        os.makedirs(env['TMPDIR'], exist_ok=True)
        os.chmod(self._scratch, 0o711)
        os.chmod(env['TMPDIR'], 0o1777)
        env.pop('SESSION_API_KEY', None)
        if self._session_api_key:
            env['SESSION_API_KEY'] = self._session_api_key
        env.update(self.extra_env)
        return env

    def start_process(self) -> None:
        command = launcher_command(self.startup_command(), self._launcher())
        command += ['--host', '127.0.0.1']
        self.command = command
        code_dir = os.path.join(self._scratch, 'code')
        os.makedirs(code_dir, exist_ok=True)
        out = open(self.log_path, 'ab') if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(
            command, cwd=code_dir, env=self._environment(), stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True)
        if self.log_path:
            out.close()

    async def connect(self) -> None:
        # DockerRuntime.connect without the image and container steps.
        await call_sync_from_async(self.start_process)
        await call_sync_from_async(self.wait_until_alive)
        await call_sync_from_async(self.setup_initial_env)
        self._runtime_initialized = True

    @tenacity.retry(
        stop=tenacity.stop_after_delay(120),
        retry=tenacity.retry_if_not_exception_type(AgentRuntimeDisconnectedError),
        reraise=True,
        wait=tenacity.wait_fixed(0.2),
    )
    def wait_until_alive(self) -> None:
        # As DockerRuntime's: a dead container is final, anything else is
        # retried until the server answers /alive.
        if self.process is None or self.process.poll() is not None:
            raise AgentRuntimeDisconnectedError('action-server has exited')
        self.check_if_alive()

    def close(self) -> None:
        super().close()
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self._scratch, ignore_errors=True)
