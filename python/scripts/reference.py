"""Writes the reference section of README.md from the code's docstrings.

    python scripts/reference.py          rewrite the section
    python scripts/reference.py --check  exit 1 when it is not current
"""

from __future__ import annotations

import inspect
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import actionserver  # noqa: E402

README = ROOT / "README.md"
START, END = "<!-- reference:start -->", "<!-- reference:end -->"


def signature(fn) -> str:
    sig = str(inspect.signature(fn)).replace("(self, ", "(").replace("(self)", "()")
    return re.sub(r"actionserver\._\w+\.", "", sig.replace("'", ""))


def doc(obj) -> str:
    return " ".join((inspect.getdoc(obj) or "").split())


def render() -> str:
    out = ["## Reference", "",
           "Generated from the docstrings by `scripts/reference.py`; a test fails when it is stale. "
           "`AsyncClient` has the same methods as `Client`, as coroutines, but for `follow` (an async iterator) "
           "and `watch` (an async context manager); `open_file` gives an `AsyncFileReader`.", ""]
    c = actionserver.Client
    out += ["### Client", "", doc(c), ""]
    out += [f"- `Client{signature(c.__init__).replace('-> None', '').strip()}`", ""]
    for name, fn in inspect.getmembers(c, inspect.isfunction):
        if name.startswith("_"):
            continue
        out.append(f"- `{name}{signature(fn)}`  ")
        out.append(f"  {doc(fn)}")
    for cls in (actionserver.FileReader, actionserver.Watch):
        out += ["", f"### {cls.__name__}", "", doc(cls), ""]
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_") and doc(fn):
                out.append(f"- `{name}{signature(fn)}`: {doc(fn)}")
    out += ["", "### Errors", ""]
    for cls in (actionserver.ActionServerError, actionserver.AuthError, actionserver.NotFoundError,
                actionserver.ConflictError, actionserver.BusyError, actionserver.ExistsError,
                actionserver.BadRequestError, actionserver.FilePermissionError,
                actionserver.TimeoutError, actionserver.ServerError, actionserver.NotReadyError,
                actionserver.NoSpaceError, actionserver.ConnectionLostError):
        base = cls.__bases__[0].__name__
        out.append(f"- `{cls.__name__}` ({base}): {doc(cls)}")
    out += ["", "### Types", ""]
    for name in sorted(actionserver.__all__):
        obj = getattr(actionserver, name)
        if inspect.isclass(obj) and hasattr(obj, "__dataclass_fields__"):
            fields = ", ".join(obj.__dataclass_fields__)
            out.append(f"- `{name}({fields})`: {doc(obj)}")
    return "\n".join(out) + "\n"


def main() -> int:
    text = README.read_text()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = head + START + "\n" + render() + END + tail
    if "--check" in sys.argv:
        if new != text:
            print("README.md's reference is stale: run python scripts/reference.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
