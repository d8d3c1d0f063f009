"""Browsing (browser on) and Python cells (agent_skills + jupyter) through run_action."""

import re

from openhands.events.action import (
    BrowseInteractiveAction,
    BrowseURLAction,
    FileWriteAction,
    IPythonRunCellAction,
)
from openhands.events.observation import BrowserOutputObservation, IPythonRunCellObservation


def test_browse_url(runtime, web):
    obs = runtime.run_action(BrowseURLAction(url=web + '/index.html'))
    assert isinstance(obs, BrowserOutputObservation)
    assert obs.error is False
    assert obs.url == web + '/index.html'
    assert 'Hello from the compat suite' in obs.content
    assert obs.screenshot.startswith('data:image/png;base64,')


def bid_of(axtree_text: str, role: str, name: str) -> str:
    m = re.search(rf"\[(\w+)\] {role} '{name}'", axtree_text)
    assert m, f'no {role} {name!r} in:\n{axtree_text}'
    return m.group(1)


def test_browse_interactive_fill_and_click(runtime, web):
    obs = runtime.run_action(BrowseInteractiveAction(
        browser_actions=f'goto("{web}/index.html")', return_axtree=True))
    assert isinstance(obs, BrowserOutputObservation)
    assert obs.error is False, obs.last_browser_action_error
    text = obs.content
    box, button = bid_of(text, 'textbox', 'name'), bid_of(text, 'button', 'Go')

    obs = runtime.run_action(BrowseInteractiveAction(
        browser_actions=f'fill("{box}", "compat")\nclick("{button}")', return_axtree=True))
    assert obs.error is False, obs.last_browser_action_error
    assert 'clicked compat' in obs.content
    assert obs.last_browser_action.startswith('fill(')


def test_browse_interactive_reports_a_bad_action(runtime, web):
    obs = runtime.run_action(BrowseInteractiveAction(browser_actions='click("no-such-bid")'))
    assert isinstance(obs, BrowserOutputObservation)
    assert obs.error is True
    assert obs.last_browser_action_error != ''


def cell(runtime, code):
    obs = runtime.run_action(IPythonRunCellAction(code=code))
    assert isinstance(obs, IPythonRunCellObservation)
    return obs


def test_ipython_runs_in_the_workspace_with_agent_skills(runtime):
    obs = cell(runtime, 'import os\nprint(os.getcwd())')
    assert runtime.workspace in obs.content
    # agent_skills is imported into the kernel at start-up.
    path = f'{runtime.workspace}/skills.txt'
    runtime.run_action(FileWriteAction(path=path, content='alpha\nbeta'))
    obs = cell(runtime, f'open_file({path!r})')
    assert f'[File: {path} (2 lines total)]' in obs.content
    assert '1|alpha' in obs.content
    obs = cell(runtime, f'search_file("beta", {path!r})')
    assert '[Found 1 matches for "beta" in' in obs.content


def test_ipython_keeps_state_and_reports_errors(runtime):
    cell(runtime, 'x = 41')
    assert '42' in cell(runtime, 'print(x + 1)').content
    obs = cell(runtime, '1/0')
    assert 'ZeroDivisionError' in obs.content


def test_ipython_sees_the_env_the_host_sets(runtime):
    # setup_initial_env ran add_env_vars through a cell at connect.
    runtime.add_env_vars({'compat_marker': 'yes'})
    assert 'yes' in cell(runtime, 'import os; print(os.environ["COMPAT_MARKER"])').content
