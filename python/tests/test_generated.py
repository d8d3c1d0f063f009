"""What is generated stays current, and every public method is tested."""

from __future__ import annotations

import inspect
import pathlib
import re
import subprocess
import sys

import actionserver

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def test_sync_client_is_generated_from_the_async_one() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "unasync.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_readme_reference_is_current() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "reference.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def public_methods(cls: type) -> list:
    return [n for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)]


def test_both_clients_have_the_same_methods() -> None:
    sync = public_methods(actionserver.Client)
    asyn = ["close" if n == "aclose" else n for n in public_methods(actionserver.AsyncClient)]
    assert sorted(sync) == sorted(asyn)


def test_every_public_method_is_exercised() -> None:
    sources = {p.name: p.read_text() for p in HERE.glob("test_*.py") if p.name != "test_generated.py"}
    for cls, file in ((actionserver.Client, "test_client.py"), (actionserver.AsyncClient, "test_async.py")):
        for name in public_methods(cls):
            if name in ("close", "aclose"):
                continue  # the fixtures close every client
            assert re.search(r"\." + name + r"\(", sources[file]), f"{cls.__name__}.{name} is not exercised in {file}"
