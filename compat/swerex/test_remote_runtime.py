"""swe-rex 1.4.0's RemoteRuntime drives swerex-remote through every method."""

import asyncio
import os
import sys
from pathlib import Path

import pytest
from swerex.exceptions import (
    BashIncorrectSyntaxError,
    CommandTimeoutError,
    NoExitCodeError,
    NonZeroExitCodeError,
    SessionDoesNotExistError,
    SessionExistsError,
    SwerexException,
)
from swerex.runtime.abstract import (
    BashAction,
    BashInterruptAction,
    CloseBashSessionRequest,
    Command,
    CreateBashSessionRequest,
    ReadFileRequest,
    UploadRequest,
    WriteFileRequest,
)
from swerex.runtime.remote import RemoteRuntime

from conftest import TOKEN, run


def session(rt, name, **kw):
    return run(rt.create_session(CreateBashSessionRequest(session=name, **kw)))


def test_is_alive_and_a_wrong_token(server, rt):
    assert run(rt.is_alive())
    wrong = RemoteRuntime(host="http://127.0.0.1", port=server.port, auth_token="not-" + TOKEN)
    r = run(wrong.is_alive())
    assert not r.is_alive
    assert "401" in r.message and "Invalid API Key" in r.message


def test_create_session_sources_startup_files(server, rt, tmp_path):
    rc = tmp_path / "env.sh"
    rc.write_text("export GREETING=hello\nPS1='mine$ '\necho from-rc\n")
    r = session(rt, "startup", startup_source=[str(rc)], startup_timeout=10)
    assert r.output == "from-rc\n"
    obs = run(rt.run_in_session(BashAction(session="startup", command="echo $GREETING")))
    assert obs.output == "hello\n" and obs.exit_code == 0
    with pytest.raises(SessionExistsError):
        session(rt, "startup")


@pytest.mark.parametrize(
    "command,check,exit_code,output",
    [
        ("echo ok", "raise", 0, "ok\n"),
        ("echo out; (exit 7)", "silent", 7, "out\n"),
        ("false", "ignore", None, ""),
        ("printf '\\033[1;32mgreen\\033[0m\\r\\n'", "raise", 0, "green\n"),
    ],
)
def test_run_in_session_check_modes(rt, command, check, exit_code, output):
    session(rt, f"check-{check}-{abs(hash(command))}")
    obs = run(rt.run_in_session(BashAction(session=f"check-{check}-{abs(hash(command))}", command=command, check=check)))
    assert obs.exit_code == exit_code
    assert obs.output == output


def test_run_in_session_raise_and_syntax_error(rt):
    session(rt, "errors")
    with pytest.raises(NonZeroExitCodeError) as e:
        run(rt.run_in_session(BashAction(session="errors", command="ls /nonexistent", error_msg="listing")))
    assert str(e.value).startswith("listing: Command 'ls /nonexistent' failed with exit code 2")
    with pytest.raises(BashIncorrectSyntaxError) as e:
        run(rt.run_in_session(BashAction(session="errors", command="if true; then echo")))
    assert "syntax error" in e.value.extra_info["bash_stderr"] or "unexpected" in e.value.extra_info["bash_stderr"]
    obs = run(rt.run_in_session(BashAction(session="errors", command="echo fine")))
    assert obs.output == "fine\n"


def test_timeout_then_interrupt(rt, tmp_path):
    session(rt, "slow")
    marker = tmp_path / "child.pid"
    with pytest.raises(CommandTimeoutError) as e:
        run(rt.run_in_session(BashAction(
            session="slow", command=f"sleep 600 & echo $! > {marker}; echo begun; sleep 601", timeout=1)))
    assert "timeout after 1.0 seconds" in str(e.value)
    assert "begun" in e.value.extra_info["output"], "the output before the deadline is kept"
    obs = run(rt.run_in_session(BashInterruptAction(session="slow")))
    assert obs.exit_code == 0
    pid = int(marker.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z":
                break
        except (ProcessLookupError, FileNotFoundError):
            break
        asyncio.run(asyncio.sleep(0.05))
    else:
        pytest.fail("the command's background child outlived the interrupt")
    obs = run(rt.run_in_session(BashAction(session="slow", command="echo back")))
    assert obs.output.startswith("back\n")


def test_interactive_program_with_expect(rt):
    session(rt, "repl")
    obs = run(rt.run_in_session(BashAction(
        session="repl", command=f"{sys.executable} -q", is_interactive_command=True, expect=[">>> "], timeout=30)))
    assert obs.expect_string == ">>> "
    obs = run(rt.run_in_session(BashAction(
        session="repl", command="print(6 * 7)", is_interactive_command=True, expect=[">>> "], timeout=30)))
    assert obs.output == "42"
    assert obs.expect_string == ">>> "
    obs = run(rt.run_in_session(BashAction(session="repl", command="exit()", is_interactive_quit=True, timeout=30)))
    assert obs.exit_code == 0
    obs = run(rt.run_in_session(BashAction(session="repl", command="echo shell again")))
    assert obs.output == "shell again\n"


def test_expect_before_the_end_has_no_exit_code(rt):
    session(rt, "noexit")
    with pytest.raises(NoExitCodeError):
        run(rt.run_in_session(BashAction(session="noexit", command="echo waiting; sleep 600", expect=["waiting"], timeout=10)))
    run(rt.run_in_session(BashInterruptAction(session="noexit")))


def test_close_session(rt):
    session(rt, "closing")
    run(rt.close_session(CloseBashSessionRequest(session="closing")))
    with pytest.raises(SessionDoesNotExistError):
        run(rt.run_in_session(BashAction(session="closing", command="true")))
    with pytest.raises(SessionDoesNotExistError):
        run(rt.close_session(CloseBashSessionRequest(session="closing")))


def test_execute(rt, tmp_path):
    r = run(rt.execute(Command(command="echo $0; echo err >&2; exit 3", shell=True)))
    assert (r.stdout, r.stderr, r.exit_code) == ("/bin/sh\n", "err\n", 3)
    r = run(rt.execute(Command(command=["/usr/bin/env"], env={"ONLY": "1"})))
    assert r.stdout == "ONLY=1\n"
    r = run(rt.execute(Command(command=["pwd"], cwd=str(tmp_path))))
    assert r.stdout == f"{tmp_path}\n"
    r = run(rt.execute(Command(command="echo a; echo b >&2; echo c", shell=True, merge_output_streams=True)))
    assert (r.stdout, r.stderr) == ("a\nb\nc\n", "")
    r = run(rt.execute(Command(command=["printf", "\\377\\376 ok"])))
    assert r.stdout == "\\xff\\xfe ok"
    with pytest.raises(CommandTimeoutError) as e:
        run(rt.execute(Command(command="echo early; sleep 600", shell=True, timeout=0.5)))
    assert e.value.extra_info["stdout"] == "early\n"
    with pytest.raises(NonZeroExitCodeError):
        run(rt.execute(Command(command=["false"], check=True)))
    with pytest.raises(FileNotFoundError):
        run(rt.execute(Command(command=["/no/such/program"])))


def test_read_and_write_file(rt, tmp_path):
    path = tmp_path / "new" / "dirs" / "f.txt"
    run(rt.write_file(WriteFileRequest(path=str(path), content="é\nline\n")))
    assert path.read_text() == "é\nline\n"
    assert run(rt.read_file(ReadFileRequest(path=str(path)))).content == "é\nline\n"
    path.write_bytes(b"bad \xff")
    # UnicodeDecodeError, which the client cannot rebuild from a message
    # alone: it raises SwerexException, for upstream's server too.
    with pytest.raises(SwerexException, match="can't decode byte 0xff in position 4"):
        run(rt.read_file(ReadFileRequest(path=str(path))))
    assert run(rt.read_file(ReadFileRequest(path=str(path), errors="replace"))).content == "bad \ufffd"
    with pytest.raises(FileNotFoundError):
        run(rt.read_file(ReadFileRequest(path=str(tmp_path / "absent"))))


def test_upload_a_file_and_a_directory(rt, tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "top.txt").write_text("top")
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    dest = tmp_path / "remote" / "tree"
    run(rt.upload(UploadRequest(source_path=str(src), target_path=str(dest))))
    assert (dest / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (dest / "top.txt").read_text() == "top"
    one = tmp_path / "remote" / "single" / "copy.txt"
    run(rt.upload(UploadRequest(source_path=str(src / "top.txt"), target_path=str(one))))
    assert one.read_text() == "top"


def test_is_alive_answers_while_every_session_runs(rt):
    """The client's own is_alive timeout (0.15 s) holds while commands run."""
    names = [f"busy-{i}" for i in range(3)]
    for n in names:
        session(rt, n)

    async def scenario():
        runs = [asyncio.create_task(rt.run_in_session(BashAction(session=n, command="sleep 2; echo done"))) for n in names]
        await asyncio.sleep(0.5)  # the commands have started
        answers = []
        for _ in range(5):
            answers.append(await rt.is_alive())
        assert not any(t.done() for t in runs), "the commands still run"
        results = await asyncio.gather(*runs)
        return answers, results

    answers, results = run(scenario())
    assert all(a.is_alive for a in answers), [a.message for a in answers if not a.is_alive]
    assert [r.output for r in results] == ["done\n"] * 3


def test_close_ends_the_sessions(rt):
    session(rt, "last")
    run(rt.close())
    with pytest.raises(SessionDoesNotExistError):
        run(rt.run_in_session(BashAction(session="last", command="true")))
    assert run(rt.is_alive())
