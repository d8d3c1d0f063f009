"""The unmodified OpenHands KubernetesRuntime (a pinned openhands-ai from
the compat environments) running the runtime image on e2e/kube's cluster.
e2e/kube's Go test runs this suite in a mount namespace of its own, where
the host finds what it would find in a pod of the cluster: the
in-cluster service-account files, and a resolv.conf naming the cluster's
DNS, through which it reaches `<service>.<namespace>.svc.cluster.local`.
It sets:

  RUNTIME_IMAGE       the image `actionctl build` made
  KUBE_NAMESPACE      the namespace to run in (made by the Go test)
  KUBE_STORAGE_CLASS  the class of the volume the Go test provides
  KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT  the API server

Nothing of the host is patched: this only sets its documented options.
"""

from __future__ import annotations

import os
import uuid

import pytest
from kubernetes import client, config as kube_config

from openhands.core.config import OpenHandsConfig
from openhands.core.config.kubernetes_config import KubernetesConfig
from openhands.events import EventStream
from openhands.llm.llm_registry import LLMRegistry
from openhands.runtime.impl.kubernetes.kubernetes_runtime import KubernetesRuntime
from openhands.runtime.plugins import AgentSkillsRequirement, JupyterRequirement
from openhands.storage import get_file_store
from openhands.utils.async_utils import call_async_from_sync

WORKSPACE = '/workspace'
NAMESPACE = os.environ['KUBE_NAMESPACE']


@pytest.fixture(scope='session')
def core():
    kube_config.load_incluster_config()
    return client.CoreV1Api()


@pytest.fixture(scope='session')
def runtime():
    config = OpenHandsConfig()
    config.sandbox.runtime_container_image = os.environ['RUNTIME_IMAGE']
    config.sandbox.timeout = 120
    config.workspace_mount_path_in_sandbox = WORKSPACE
    config.enable_browser = True
    config.kubernetes = KubernetesConfig(
        namespace=NAMESPACE,
        pvc_storage_class=os.environ['KUBE_STORAGE_CLASS'],
        pvc_storage_size='1Gi',
        resource_cpu_request='250m',
        resource_memory_request='256Mi',
    )
    sid = 'e2e' + uuid.uuid4().hex[:8]
    event_stream = EventStream(sid, get_file_store('memory'))
    rt = KubernetesRuntime(config, event_stream, LLMRegistry(config), sid=sid,
                           plugins=[AgentSkillsRequirement(), JupyterRequirement()],
                           headless_mode=True)
    try:
        call_async_from_sync(rt.connect)
        yield rt
    finally:
        rt.close()
