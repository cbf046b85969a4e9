"""Server-Sent Events parsing for ``GET /v1/stream`` (sans-IO, shared by
both clients). Blocks arrive as ``event: block`` / ``id: <height>`` /
``data: <block JSON>``; ``:`` lines are keep-alive comments."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

__all__ = ["SSEParser", "Event", "INITIAL_BACKOFF", "MAX_BACKOFF"]

INITIAL_BACKOFF = 0.1
MAX_BACKOFF = 5.0


@dataclass(frozen=True)
class Event:
    event: str
    id: str
    data: str

    def json(self) -> Dict[str, Any]:
        v = json.loads(self.data)
        if not isinstance(v, dict):
            raise ValueError(f"{self.event} event data is not a JSON object")
        return v


class SSEParser:
    """Feed lines (without the newline); a blank line completes an event."""

    def __init__(self) -> None:
        self._event = ""
        self._id = ""
        self._data: List[str] = []

    def feed(self, line: str) -> Optional[Event]:
        line = line.rstrip("\r\n")
        if line == "":
            if not self._data and not self._event:
                return None
            ev = Event(self._event or "message", self._id, "\n".join(self._data))
            self._event, self._data = "", []
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
