"""mini-swe-agent 2.4.6's SWE-ReX environment runs commands on swerex-remote.

Its SwerexDockerEnvironment starts a container in its constructor; here the
deployment is SWE-ReX's RemoteDeployment, pointed at the server the suite
started, and the environment's own execute() does the rest. No language
model is involved.
"""

import asyncio
import os
import tempfile

# mini-swe-agent makes its global config directory when imported; keep it
# out of the machine's home.
_config = tempfile.TemporaryDirectory(prefix="mswea-config-")
os.environ["MSWEA_GLOBAL_CONFIG_DIR"] = _config.name
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")

import pytest
from minisweagent.environments.extra.swerex_docker import SwerexDockerEnvironment, SwerexDockerEnvironmentConfig
from minisweagent.exceptions import Submitted
from swerex.deployment.remote import RemoteDeployment

from conftest import TOKEN


@pytest.fixture
def env(server):
    e = SwerexDockerEnvironment.__new__(SwerexDockerEnvironment)
    e.config = SwerexDockerEnvironmentConfig(image="unused", cwd=str(server.workdir), timeout=5)
    e.deployment = RemoteDeployment(host="http://127.0.0.1", port=server.port, auth_token=TOKEN)
    asyncio.run(e.deployment.start())
    return e


def test_execute_returns_output_and_code(env):
    out = env.execute({"command": "echo hi; echo err >&2; exit 2"})
    assert out == {"output": "hi\nerr\n", "returncode": 2, "exception_info": ""}


def test_execute_in_a_directory(env, tmp_path):
    assert env.execute({"command": "pwd"}, cwd=str(tmp_path))["output"] == f"{tmp_path}\n"


def test_execute_timeout_is_reported(env):
    out = env.execute({"command": "sleep 60"}, timeout=1)
    assert out["returncode"] == -1
    assert "Timeout" in out["exception_info"]


def test_submission_ends_the_task(env):
    with pytest.raises(Submitted) as e:
        env.execute({"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo the patch"})
    assert e.value.messages[0]["content"] == "the patch\n"
