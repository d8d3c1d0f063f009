"""Server-Sent Events, parsed line by line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass
class SSE:
    """One event: its name (``"message"`` by default), data and id."""

    event: str
    data: str
    id: Optional[str]


class SSEDecoder:
    """Feeds on lines (without their ends) and returns each event once its
    blank line arrives; comments (keep-alives) are dropped."""

    def __init__(self) -> None:
        self._event = ""
        self._data: List[str] = []
        self._id: Optional[str] = None

    def feed(self, line: str) -> Optional[SSE]:
        if line == "":
            if not self._data and not self._event:
                return None
            ev = SSE(event=self._event or "message", data="\n".join(self._data), id=self._id)
            self._event, self._data, self._id = "", [], None
            return ev
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            self._id = value
        return None
