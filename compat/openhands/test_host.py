"""The host's other methods: API key, VS Code, git, microagents, MCP."""

import os
import shutil
import textwrap
import zipfile
from pathlib import Path

import httpx
import pytest

from openhands.core.config.mcp_config import MCPStdioServerConfig
from openhands.events.action import CmdRunAction, FileReadAction, FileWriteAction
from openhands.events.action.mcp import MCPAction
from openhands.events.observation import MCPObservation
from openhands.runtime.utils.request import RequestHTTPError
from openhands.utils.async_utils import call_async_from_sync


def sh(runtime, command):
    action = CmdRunAction(command=command)
    action.set_hard_timeout(60)
    obs = runtime.run_action(action)
    assert obs.exit_code == 0, obs.content
    return obs.content


def test_check_if_alive_with_the_key(runtime):
    assert runtime.session.headers['X-Session-API-Key'] == runtime.session_api_key
    runtime.check_if_alive()


def test_calls_without_the_key_are_refused(runtime, tmp_path):
    key = runtime.session.headers.pop('X-Session-API-Key')
    try:
        # /alive stays open, as upstream's: orchestrators probe it without the key.
        runtime.check_if_alive()
        src = tmp_path / 'f.txt'
        src.write_text('x')
        for call in (
            lambda: runtime.list_files(),
            lambda: runtime.run_action(FileReadAction(path=f'{runtime.workspace}/x')),
            lambda: runtime.copy_to(str(src), runtime.workspace),
        ):
            with pytest.raises(RequestHTTPError) as err:
                call()
            assert err.value.response.status_code == 403
        # copy_from streams without checking the status: what it saves is
        # the refusal, not a zip.
        saved = runtime.copy_from(runtime.workspace)
        try:
            assert not zipfile.is_zipfile(saved)
        finally:
            saved.unlink()
    finally:
        runtime.session.headers['X-Session-API-Key'] = key
    assert runtime.list_files() is not None


def test_vscode_token_and_url(runtime):
    token = runtime.get_vscode_token()
    assert token
    url = runtime.vscode_url
    assert url == (f'http://localhost:{runtime._vscode_port}/?tkn={token}'
                   f'&folder={runtime.config.workspace_mount_path_in_sandbox}')
    # The editor itself answers there with that token (and refuses without).
    base = f'http://127.0.0.1:{runtime._vscode_port}'
    r = httpx.get(f'{base}/?tkn={token}', follow_redirects=True, timeout=30)
    assert r.status_code == 200, (r.history, r.headers, r.text[:500])
    assert httpx.get(f'{base}/', timeout=30).status_code == 403


def test_git_changes_and_diff_through_the_hosts_own_scripts(runtime):
    # A clone, so that changes are counted against its origin as on a real
    # checkout (the origin is a bare repository outside the workspace's view).
    repo = f'{runtime.workspace}/repo'
    origin = f'{runtime.workspace}/.origin.git'
    sh(runtime, f'git init -q --bare -b main {origin} && git clone -q {origin} {repo} && cd {repo} && '
                'printf "one\\n" > a.txt && printf "keep\\n" > b.txt && git add . && '
                'git commit -q -m initial && git push -q origin main && cd -')
    sh(runtime, f'cd {repo} && printf "two\\n" > a.txt && printf "new\\n" > c.txt && git rm -q b.txt && cd -')

    changes = runtime.get_git_changes(repo)
    assert sorted(changes, key=lambda c: c['path']) == [
        {'status': 'M', 'path': 'a.txt'},
        {'status': 'D', 'path': 'b.txt'},
        {'status': 'A', 'path': 'c.txt'},
    ]
    diff = runtime.get_git_diff('a.txt', repo)
    assert diff == {'original': 'one', 'modified': 'two'}
    # The first calls found no script in the sandbox and uploaded the host's.
    assert runtime.git_handler.git_changes_cmd.startswith('python3 /')
    assert 'openhands/code' not in runtime.git_handler.git_changes_cmd


def test_microagents_from_the_workspace_repository(runtime):
    base = f'{runtime.workspace}/.openhands/microagents'
    runtime.run_action(FileWriteAction(path=f'{base}/repo.md', content='Always run make test.'))
    runtime.run_action(FileWriteAction(path=f'{base}/compat-knowledge.md', content=textwrap.dedent('''\
        ---
        name: compat-knowledge
        type: knowledge
        triggers:
        - compatword
        ---
        Knowledge for the compat suite.''')))
    runtime.run_action(FileWriteAction(path=f'{runtime.workspace}/.openhands_instructions',
                                       content='Legacy instructions.'))
    agents = runtime.get_microagents_from_selected_repo(None)
    by_name = {a.name: a for a in agents}
    assert set(by_name) == {'repo_legacy', 'repo', 'compat-knowledge'}
    assert by_name['compat-knowledge'].triggers == ['compatword']
    assert 'Always run make test.' in by_name['repo'].content
    assert 'Legacy instructions.' in by_name['repo_legacy'].content


def everything_server() -> MCPStdioServerConfig:
    """The reference MCP server scripts/deps.sh installs (as the Go tests use):
    started by the action server as the sandbox user, so it must be
    runnable by that user (node and the checkout are)."""
    root = Path(__file__).resolve().parents[2]
    script = root / '.deps/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js'
    node = shutil.which('node')
    if node is None or not script.exists():
        why = 'the MCP everything server is not installed (scripts/deps.sh)'
        if os.environ.get('CI'):
            pytest.fail(why + '; CI is set, so this fails rather than skips')
        pytest.skip(why)
    return MCPStdioServerConfig(name='everything', command=node, args=[str(script), 'stdio'])


def test_mcp_config_and_tool_call(runtime):
    config = runtime.get_mcp_config(extra_stdio_servers=[everything_server()])
    assert [s.url for s in config.sse_servers] == [runtime.api_url + '/mcp/sse']
    assert config.sse_servers[0].api_key == runtime.session_api_key
    obs = call_async_from_sync(runtime.call_tool_mcp, 60, MCPAction(name='echo', arguments={'message': 'compat'}))
    assert isinstance(obs, MCPObservation)
    assert 'compat' in obs.content
