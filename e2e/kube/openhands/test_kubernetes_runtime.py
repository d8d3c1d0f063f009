"""Actions through KubernetesRuntime: the pod, its Service and volume
claim made by the host, reached by the Service's cluster name."""

import time

from kubernetes.client.rest import ApiException

from openhands.events.action import (
    CmdRunAction,
    FileReadAction,
    FileWriteAction,
    IPythonRunCellAction,
)
from openhands.events.observation import (
    CmdOutputObservation,
    FileReadObservation,
    FileWriteObservation,
    IPythonRunCellObservation,
)

from conftest import NAMESPACE, WORKSPACE


def sh(runtime, command, timeout=60):
    action = CmdRunAction(command=command)
    action.set_hard_timeout(timeout)
    obs = runtime.run_action(action)
    assert isinstance(obs, CmdOutputObservation), obs
    assert obs.exit_code == 0, obs.content
    return obs.content


def test_the_host_made_a_pod_a_service_and_a_claim(runtime, core):
    assert runtime.api_url.endswith(f'-svc.{NAMESPACE}.svc.cluster.local:8080')
    pod = core.read_namespaced_pod(runtime.pod_name, NAMESPACE)
    assert pod.status.phase == 'Running'
    assert pod.spec.containers[0].image == runtime.config.sandbox.runtime_container_image
    claim = core.read_namespaced_persistent_volume_claim(f'{runtime.pod_name}-pvc', NAMESPACE)
    assert claim.status.phase == 'Bound'
    runtime.check_if_alive()


def test_run(runtime):
    # The host starts the server as root in this runtime.
    assert sh(runtime, 'echo hello; whoami; pwd') == f'hello\nroot\n{WORKSPACE}'
    obs = runtime.run_action(CmdRunAction(command='false'))
    assert obs.exit_code == 1
    # The pod's environment, as the host set it, reaches the shell.
    assert sh(runtime, 'echo $PYTHONUNBUFFERED') == '1'


def test_files_on_the_claimed_volume(runtime):
    obs = runtime.run_action(FileWriteAction(path=f'{WORKSPACE}/k8s.txt', content='on the claim\n'))
    assert isinstance(obs, FileWriteObservation), obs
    obs = runtime.run_action(FileReadAction(path=f'{WORKSPACE}/k8s.txt'))
    assert isinstance(obs, FileReadObservation), obs
    assert 'on the claim' in obs.content
    # The workspace is the volume the claim bound, not the image's layer.
    assert sh(runtime, f"awk '$2 == \"{WORKSPACE}\" {{print $2}}' /proc/mounts") == WORKSPACE


def test_ipython(runtime):
    obs = runtime.run_action(IPythonRunCellAction(code='import os\nprint(os.getcwd(), 6 * 7)'))
    assert isinstance(obs, IPythonRunCellObservation), obs
    assert f'{WORKSPACE} 42' in obs.content


def test_close_removes_the_pod_and_services(runtime, core):
    name = runtime.pod_name
    runtime.close()
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            core.read_namespaced_pod(name, NAMESPACE)
        except ApiException as e:
            assert e.status == 404
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f'pod {name} still there a minute after close()')
    services = core.list_namespaced_service(NAMESPACE).items
    assert not [s.metadata.name for s in services if s.metadata.name.startswith(name)]
