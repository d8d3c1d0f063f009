"""Python SDK of action-server: a synchronous and an asynchronous client
of its native API (sessions, commands, files, watch, browser, IPython,
MCP) and of the OpenHands ``/execute_action`` passthrough."""

from ._async_client import AsyncClient, AsyncFileReader, AsyncWatch
from ._errors import (
    ActionServerError,
    AuthError,
    BadRequestError,
    BusyError,
    ConflictError,
    ConnectionLostError,
    ExistsError,
    FilePermissionError,
    NoSpaceError,
    NotFoundError,
    NotReadyError,
    ServerError,
    TimeoutError,
)
from ._sync_client import Client, FileReader, Watch
from ._types import (
    BrowseResult,
    Command,
    CommandBrief,
    CommandMeta,
    CommandResult,
    ExitEvent,
    FileInfo,
    FileList,
    FileWritten,
    LostEvent,
    McpResult,
    McpTool,
    Observation,
    OutputChunk,
    OutputEvent,
    OutputRange,
    PluginStatus,
    ShellStatus,
    ServerInfo,
    Session,
    StreamEvent,
    TailEvent,
    WatchEvent,
)

__version__ = "0.1.0"

__all__ = [
    "ActionServerError", "AsyncClient", "AsyncFileReader", "AsyncWatch", "AuthError", "BadRequestError",
    "BrowseResult", "BusyError", "Client", "Command", "CommandBrief", "CommandMeta", "CommandResult",
    "ConflictError", "ConnectionLostError", "ExistsError", "ExitEvent", "FileInfo", "FileList", "FilePermissionError",
    "FileReader", "FileWritten", "LostEvent", "McpResult", "McpTool", "NoSpaceError", "NotFoundError",
    "NotReadyError", "Observation", "OutputChunk", "OutputEvent", "OutputRange", "PluginStatus", "ShellStatus",
    "ServerError", "ServerInfo", "Session", "StreamEvent", "TailEvent", "TimeoutError", "Watch",
    "WatchEvent", "__version__",
]
