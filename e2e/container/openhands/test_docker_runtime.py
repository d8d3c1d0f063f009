"""Every action kind and the host's other methods (files, git, microagents,
MCP), through DockerRuntime. VS Code is left out: the image has no VS Code
server (it needs a Node.js 20 base)."""

import zipfile

from openhands.events.action import (
    BrowseInteractiveAction,
    BrowseURLAction,
    CmdRunAction,
    FileEditAction,
    FileReadAction,
    FileWriteAction,
    IPythonRunCellAction,
)
from openhands.events.observation import (
    BrowserOutputObservation,
    CmdOutputObservation,
    FileEditObservation,
    FileReadObservation,
    FileWriteObservation,
    IPythonRunCellObservation,
)

from conftest import WORKSPACE


def sh(runtime, command, timeout=60):
    action = CmdRunAction(command=command)
    action.set_hard_timeout(timeout)
    obs = runtime.run_action(action)
    assert isinstance(obs, CmdOutputObservation), obs
    assert obs.exit_code == 0, obs.content
    return obs.content


def test_the_container_runs_the_image_on_loopback(runtime):
    runtime.check_if_alive()
    runtime.container.reload()
    assert runtime.container.image.tags[0].startswith(runtime.config.sandbox.runtime_container_image.split(':')[0])
    bindings = runtime.container.attrs['HostConfig']['PortBindings']
    assert bindings, 'ports are published'
    for binding in bindings.values():
        assert binding[0]['HostIp'] == '127.0.0.1'


def test_run(runtime):
    assert sh(runtime, 'echo hello; whoami; pwd') == f'hello\nopenhands\n{WORKSPACE}'
    obs = runtime.run_action(CmdRunAction(command='false'))
    assert obs.exit_code == 1
    # The host's setup_initial_env ran: its environment is in the shell.
    assert sh(runtime, 'echo $OPENHANDS_SESSION_ID') == runtime.sid


def test_ipython(runtime):
    obs = runtime.run_action(IPythonRunCellAction(code='import os\nprint(os.getcwd(), 6 * 7)'))
    assert isinstance(obs, IPythonRunCellObservation), obs
    assert f'{WORKSPACE} 42' in obs.content


def test_write_read_edit(runtime):
    path = f'{WORKSPACE}/app.py'
    obs = runtime.run_action(FileWriteAction(path=path, content='def f():\n    return 1'))
    assert isinstance(obs, FileWriteObservation), obs
    obs = runtime.run_action(FileReadAction(path=path))
    assert isinstance(obs, FileReadObservation), obs
    assert obs.content == 'def f():\n    return 1\n'
    obs = runtime.run_action(FileEditAction(path=path, command='str_replace', old_str='return 1', new_str='return 2'))
    assert isinstance(obs, FileEditObservation), obs
    assert obs.content.startswith(f'The file {path} has been edited.')
    assert sh(runtime, f'python3 -c "import sys; sys.path.insert(0, \'{WORKSPACE}\'); import app; print(app.f())"') == '2'
    assert sh(runtime, f'stat -c %U {path}') == 'openhands'


def test_browse_and_browse_interactive(runtime):
    sh(runtime, 'mkdir -p /tmp/site && echo "<html><title>T</title><body><h1>from the container</h1>'
                '<button id=b onclick=\\"this.textContent=\'clicked\'\\">press</button></body></html>" > /tmp/site/index.html && '
                '(python3 -m http.server 8123 --bind 127.0.0.1 --directory /tmp/site >/dev/null 2>&1 &) && sleep 1')
    action = BrowseURLAction(url='http://127.0.0.1:8123/')
    action.set_hard_timeout(60)
    obs = runtime.run_action(action)
    assert isinstance(obs, BrowserOutputObservation), obs
    assert not obs.error, obs.last_browser_action_error
    assert 'from the container' in obs.content
    action = BrowseInteractiveAction(browser_actions='goto("http://127.0.0.1:8123/")')
    action.set_hard_timeout(60)
    obs = runtime.run_action(action)
    assert isinstance(obs, BrowserOutputObservation), obs
    assert not obs.error, obs.last_browser_action_error


def test_copy_to_list_files_copy_from(runtime, tmp_path):
    src = tmp_path / 'up'
    src.mkdir()
    (src / 'a.txt').write_text('alpha')
    runtime.copy_to(str(src / 'a.txt'), f'{WORKSPACE}/in')
    runtime.copy_to(str(src), f'{WORKSPACE}/tree', recursive=True)
    assert 'a.txt' in runtime.list_files(f'{WORKSPACE}/in')
    # The directory itself is copied into the destination, as upstream does.
    assert sh(runtime, f'cat {WORKSPACE}/in/a.txt {WORKSPACE}/tree/up/a.txt') == 'alphaalpha'
    saved = runtime.copy_from(f'{WORKSPACE}/in')
    try:
        with zipfile.ZipFile(saved) as z:
            assert z.read('a.txt') == b'alpha'
    finally:
        saved.unlink()


def test_git_changes_through_the_hosts_own_scripts(runtime):
    repo = f'{WORKSPACE}/repo'
    origin = f'{WORKSPACE}/.origin.git'
    sh(runtime, f'git init -q --bare -b main {origin} && git clone -q {origin} {repo} && cd {repo} && '
                'printf "one\\n" > a.txt && git add . && git -c user.name=t -c user.email=t@t commit -q -m initial && '
                'git push -q origin main && printf "two\\n" > a.txt && cd -')
    assert runtime.get_git_changes(repo) == [{'status': 'M', 'path': 'a.txt'}]
    assert runtime.get_git_diff('a.txt', repo) == {'original': 'one', 'modified': 'two'}


def test_microagents_from_the_workspace(runtime):
    base = f'{WORKSPACE}/.openhands/microagents'
    runtime.run_action(FileWriteAction(path=f'{base}/repo.md', content='Always run make test.'))
    runtime.run_action(FileWriteAction(path=f'{base}/e2e-knowledge.md', content=(
        '---\nname: e2e-knowledge\ntype: knowledge\ntriggers:\n- e2eword\n---\nKnowledge for the e2e suite.')))
    by_name = {a.name: a for a in runtime.get_microagents_from_selected_repo(None)}
    assert {'repo', 'e2e-knowledge'} <= set(by_name)
    assert by_name['e2e-knowledge'].triggers == ['e2eword']
    assert 'Always run make test.' in by_name['repo'].content


# A stdio MCP server in the image's own Python, with one tool: echo.
ECHO_SERVER = '''import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2024-11-05"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Echoes its message",
                             "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "echo: " + params["arguments"]["message"]}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
'''


def test_mcp_config_and_tool_call(runtime):
    from openhands.core.config.mcp_config import MCPStdioServerConfig
    from openhands.events.action.mcp import MCPAction
    from openhands.events.observation import MCPObservation
    from openhands.utils.async_utils import call_async_from_sync

    runtime.run_action(FileWriteAction(path='/tmp/echo_mcp.py', content=ECHO_SERVER))
    server = MCPStdioServerConfig(name='echo', command='python3', args=['/tmp/echo_mcp.py'])
    config = runtime.get_mcp_config(extra_stdio_servers=[server])
    assert [s.url for s in config.sse_servers] == [runtime.api_url + '/mcp/sse']
    obs = call_async_from_sync(runtime.call_tool_mcp, 60, MCPAction(name='echo', arguments={'message': 'from the host'}))
    assert isinstance(obs, MCPObservation), obs
    assert 'echo: from the host' in obs.content
