"""Where the server is and which key it takes, as actionctl finds them."""

from __future__ import annotations

import os
import time
from typing import Optional, Tuple

URL_ENV = "ACTION_SERVER_URL"
KEY_ENV = "SESSION_API_KEY"
DEFAULT_URL = "http://127.0.0.1:8000"
API_KEY_HEADER = "X-Session-API-Key"
DEFAULT_SESSION = "default"


def resolve(base_url: Optional[str], api_key: Optional[str]) -> Tuple[str, Optional[str]]:
    """Arguments first, then ACTION_SERVER_URL and SESSION_API_KEY."""
    url = base_url or os.environ.get(URL_ENV) or DEFAULT_URL
    key = api_key if api_key is not None else (os.environ.get(KEY_ENV) or None)
    return url.rstrip("/"), key


async def async_sleep(seconds: float) -> None:
    """Sleeps without blocking the event loop."""
    import asyncio

    await asyncio.sleep(seconds)


def sync_sleep(seconds: float) -> None:
    """Sleeps."""
    time.sleep(seconds)
