"""The unmodified OpenHands DockerRuntime (a pinned openhands-ai from the
compat environments) starting the runtime image through podman's Docker
API. e2e/container's Go test runs this suite with:

  DOCKER_HOST     unix://... of the podman service the Go test started
  RUNTIME_IMAGE   the image `actionctl build` made
  E2E_NAME_PREFIX the prefix the Go test removes leftovers by

Nothing of the host is patched: this only sets its documented options.
"""

from __future__ import annotations

import os
import uuid

import docker
import pytest

from openhands.core.config import OpenHandsConfig
from openhands.events import EventStream
from openhands.llm.llm_registry import LLMRegistry
from openhands.runtime.impl.docker.docker_runtime import DockerRuntime
from openhands.runtime.plugins import AgentSkillsRequirement, JupyterRequirement
from openhands.storage import get_file_store
from openhands.utils.async_utils import call_async_from_sync

WORKSPACE = '/workspace'


@pytest.fixture(scope='session')
def runtime():
    config = OpenHandsConfig()
    config.sandbox.runtime_container_image = os.environ['RUNTIME_IMAGE']
    # Published on loopback only.
    config.sandbox.runtime_binding_address = '127.0.0.1'
    config.sandbox.timeout = 120
    config.workspace_mount_path_in_sandbox = WORKSPACE
    config.enable_browser = True
    config.run_as_openhands = True
    sid = os.environ.get('E2E_NAME_PREFIX', 'as-e2e-') + uuid.uuid4().hex[:8]
    event_stream = EventStream(sid, get_file_store('memory'))
    rt = DockerRuntime(config, event_stream, LLMRegistry(config), sid=sid,
                       plugins=[AgentSkillsRequirement(), JupyterRequirement()],
                       headless_mode=True)
    try:
        call_async_from_sync(rt.connect)
        yield rt
    finally:
        rt.close()
        # close() only stops the container.
        try:
            docker.from_env().containers.get(rt.container_name).remove(force=True)
        except docker.errors.NotFound:
            pass
