"""The end-to-end example, run against the real server."""

from __future__ import annotations

import importlib.util
import io
import pathlib

from actionserver import Client

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "project.py"


def test_example_writes_a_project_runs_its_tests_and_downloads_the_result(client: Client, tmp_path: pathlib.Path) -> None:
    spec = importlib.util.spec_from_file_location("example_project", EXAMPLE)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = io.StringIO()
    code = mod.main(client, tmp_path, out)
    assert code == 0, out.getvalue()
    assert "test_add" in out.getvalue() and "OK" in out.getvalue(), "the tests' output was streamed"
    assert (tmp_path / "result.txt").read_text() == "ran=2 failures=0 errors=0\n"


def test_readme_quick_start_runs(server, tmp_path: pathlib.Path, monkeypatch, capsys) -> None:
    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 11, "the quick start stays short"
    code = code.replace('"http://127.0.0.1:8000"', repr(server.url)).replace('"KEY"', repr(server.api_key))
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.count("hello from the sandbox") == 1 and "out.txt" in out
    assert (tmp_path / "out.txt").read_text() == "hello from the sandbox\n"
