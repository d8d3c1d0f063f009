"""The package is typed (py.typed): mypy --strict finds nothing in it or in
the example that uses it."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_mypy_strict_passes() -> None:
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "src/actionserver", "examples/project.py"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
