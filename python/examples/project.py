"""End to end: write a small project into the sandbox, run its tests on a
pipe while streaming their output, and download the result file.

    ACTION_SERVER_URL=http://127.0.0.1:8000 SESSION_API_KEY=... python examples/project.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

from actionserver import Client, ExitEvent, LostEvent, OutputEvent

FILES = {
    "calc/calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "calc/test_calc.py": (
        "import unittest\n\nfrom calc import add, mul\n\n\n"
        "class CalcTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_mul(self):\n        self.assertEqual(mul(4, 5), 20)\n"
    ),
    "calc/run_tests.py": (
        "import sys, unittest\n\n"
        "result = unittest.main(module=None, argv=['t', 'discover', '-v'], exit=False).result\n"
        "with open('result.txt', 'w') as f:\n"
        "    f.write(f'ran={result.testsRun} failures={len(result.failures)} errors={len(result.errors)}\\n')\n"
        "sys.exit(0 if result.wasSuccessful() else 1)\n"
    ),
}


def main(sb: Client, dest_dir: Path, out: TextIO = sys.stdout) -> int:
    """Runs the example against a sandbox; returns the tests' exit code."""
    for path, text in FILES.items():
        sb.write_text("example/" + path, text)
    # A fresh session starts in the workspace, where relative paths are.
    session = sb.create_session()
    try:
        cmd = sb.start_command("cd example/calc && python3 run_tests.py", session=session.id, pipe=True)
        code = None
        for ev in sb.follow(cmd.id, session=session.id, text=True):
            if isinstance(ev, OutputEvent):
                out.write(ev.text)
            elif isinstance(ev, LostEvent):
                out.write(f"\n[{ev.bytes} bytes of output were dropped]\n")
            elif isinstance(ev, ExitEvent):
                code = ev.command.exit_code
    finally:
        sb.delete_session(session.id)
    sb.download("example/calc/result.txt", dest_dir / "result.txt")
    out.write((dest_dir / "result.txt").read_text())
    return code if code is not None else 1


if __name__ == "__main__":
    with Client() as client:
        client.wait_until_ready()
        sys.exit(main(client, Path(tempfile.mkdtemp())))
