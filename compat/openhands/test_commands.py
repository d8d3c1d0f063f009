"""CmdRunAction through the host's run_action: the shell's timeouts, input, keys, refusals."""

import pwd

from conftest import NO_CHANGE_TIMEOUT, sandbox_uid
from openhands.events.action import CmdRunAction
from openhands.events.observation import CmdOutputObservation, ErrorObservation

TIMEOUT_MESSAGE = (
    "You may wait longer to see additional output by sending empty command '', "
    'send other commands to interact with the current process, send keys ("C-c", "C-z", "C-d") '
    'to interrupt/kill the previous command before sending your new command, '
    'or use the timeout parameter in execute_bash for future commands.'
)


def run(runtime, command, *, timeout=None, blocking=False, is_input=False):
    action = CmdRunAction(command=command, is_input=is_input, blocking=blocking)
    if timeout is not None:
        action.set_hard_timeout(timeout, blocking=blocking)
    return runtime.run_action(action)


def test_blocking_command_outlives_the_soft_timeout(runtime):
    obs = run(runtime, f'sleep {NO_CHANGE_TIMEOUT + 1} && echo slept', timeout=60, blocking=True)
    assert isinstance(obs, CmdOutputObservation)
    assert obs.content == 'slept'
    assert obs.exit_code == 0
    assert obs.metadata.suffix == '\n[The command completed with exit code 0.]'
    assert obs.metadata.working_dir == runtime.workspace


def test_shell_runs_as_the_sandbox_user(runtime):
    obs = run(runtime, 'id -u', timeout=30)
    assert obs.content == str(sandbox_uid())
    assert obs.metadata.username == pwd.getpwuid(sandbox_uid()).pw_name


def test_exit_code_and_cwd_carry_over(runtime):
    obs = run(runtime, 'mkdir -p sub && cd sub && false', timeout=30)
    assert obs.exit_code == 1
    assert obs.metadata.working_dir == f'{runtime.workspace}/sub'
    obs = run(runtime, 'pwd && cd ..', timeout=30)
    assert obs.content == f'{runtime.workspace}/sub'
    assert obs.exit_code == 0


def test_soft_timeout_then_input(runtime):
    obs = run(runtime, 'read -p "name? " name && echo "hello $name"')
    assert obs.exit_code == -1
    assert 'name?' in obs.content
    assert obs.metadata.suffix == (
        f'\n[The command has no new output after {NO_CHANGE_TIMEOUT} seconds. {TIMEOUT_MESSAGE}]')
    obs = run(runtime, 'alice', is_input=True)
    assert 'hello alice' in obs.content
    assert obs.exit_code == 0


def interrupt_until_idle(runtime):
    """Leaves no command running for the next test, whatever this one did."""
    for _ in range(5):
        obs = run(runtime, 'C-c', is_input=True)
        if obs.exit_code != -1 or obs.content.startswith('ERROR: No previous running command'):
            return


def test_new_command_refused_while_one_runs_then_ctrl_c(runtime):
    try:
        obs = run(runtime, 'while true; do sleep 1; done')
        assert obs.exit_code == -1
        obs = run(runtime, 'echo never')
        assert obs.exit_code == -1
        assert 'never' not in obs.content
        assert 'is NOT executed. The previous command is still running' in obs.metadata.suffix
        obs = run(runtime, 'C-c', is_input=True)
        assert obs.exit_code == 130
        assert obs.metadata.suffix == '\n[The command completed with exit code 130. CTRL+C was sent.]'
    finally:
        interrupt_until_idle(runtime)
    assert run(runtime, 'echo after', timeout=30).content == 'after'


def test_hard_timeout_keeps_the_process(runtime):
    obs = run(runtime, 'sleep 30', timeout=1, blocking=True)
    assert obs.exit_code == -1
    assert obs.metadata.suffix == f'\n[The command timed out after 1.0 seconds. {TIMEOUT_MESSAGE}]'
    obs = run(runtime, 'C-c', is_input=True)
    assert obs.exit_code == 130


def test_multiple_commands_refused(runtime):
    obs = run(runtime, 'echo one\necho two', timeout=30)
    assert isinstance(obs, ErrorObservation)
    assert obs.content == (
        'ERROR: Cannot execute multiple commands at once.\n'
        'Please run each command separately OR chain them into a single command via && or ;\n'
        'Provided commands:\n(1) echo one\n(2) echo two')


def test_no_previous_command(runtime):
    obs = run(runtime, '', is_input=True, timeout=30)
    assert obs.content == 'ERROR: No previous running command to retrieve logs from.'
    obs = run(runtime, 'y', is_input=True, timeout=30)
    assert obs.content == 'ERROR: No previous running command to interact with.'


def test_unterminated_heredoc_waits_for_its_lines(runtime):
    try:
        obs = run(runtime, 'cat << EOF')
        assert obs.exit_code == -1
        assert obs.metadata.suffix.startswith(f'\n[The command has no new output after {NO_CHANGE_TIMEOUT} seconds.')
        for line in ('line 1', 'line 2'):
            obs = run(runtime, line, is_input=True)
            assert obs.exit_code == -1
        obs = run(runtime, 'EOF', is_input=True)
        assert 'line 1' in obs.content and 'line 2' in obs.content
        assert obs.exit_code == 0
    finally:
        # Leave no command waiting for the next test.
        run(runtime, 'C-c', is_input=True)
