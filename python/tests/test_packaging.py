"""The package builds into a wheel and an sdist, and installs into a fresh
virtual environment (from PyPI's httpx and setuptools, or pip's cache)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tarfile
import venv
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_build_gives_a_typed_wheel_and_an_sdist(tmp_path: pathlib.Path) -> None:
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)], check=True,
                   capture_output=True)
    wheels = list(tmp_path.glob("actionserver-*.whl"))
    sdists = list(tmp_path.glob("actionserver-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "actionserver/py.typed" in names and "actionserver/_sync_client.py" in names
    assert not [n for n in names if "tests/" in n or ".venv" in n]
    with tarfile.open(sdists[0]) as t:
        members = t.getnames()
    assert any(m.endswith("src/actionserver/py.typed") for m in members)
    assert not [m for m in members if "/.venv/" in m]


def test_pip_install_in_a_fresh_virtual_environment(tmp_path: pathlib.Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(ROOT)], check=True,
                   capture_output=True, cwd=tmp_path)
    out = subprocess.run([str(py), "-c", "import actionserver, sys; print(actionserver.__version__, actionserver.__file__)"],
                         check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    assert out.startswith("0.1.0 ") and str(env_dir) in out
