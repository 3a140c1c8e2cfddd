"""chat-memory: the conversation memory of an LLM chat product, stored in Redis.

>>> import fakeredis
>>> from chat_memory import MemoryService
>>> memory = MemoryService(fakeredis.FakeRedis(), max_history=10)
>>> _ = memory.add_message("alice", "user", "我叫张三")
>>> memory.get_context("alice")
[{'role': 'user', 'content': '我叫张三'}]
"""

from ._acl import ACL_COMMANDS, acl_rules
from ._async import AsyncChatModel, AsyncChatService, AsyncMemoryService, AsyncStreamingChatModel
from ._budget import TokenCounter, approximate_tokens
from ._chat import ChatModel, ChatService, StreamingChatModel
from ._codec import FORMAT_VERSION
from ._core import (
    DEFAULT_IDEMPOTENCY_WINDOW,
    DEFAULT_MAX_MESSAGE_BYTES,
    MAX_TTL,
    AppendResult,
    MessageInput,
)
from ._durability import Durability
from ._keys import DEFAULT_NAMESPACE, MAX_SESSION_ID_CHARS, KeyLayout
from ._message import ROLES, Message, Role, ToolCall
from ._service import MemoryService
from ._users import (
    EXPORT_FORMAT,
    MAX_METADATA_BYTES,
    SUMMARY_NAME,
    CompactResult,
    ForgetResult,
    ImportResult,
    SessionInfo,
)
from .exceptions import (
    ChatMemoryError,
    CompactionConflictError,
    CorruptEntryError,
    CorruptMetadataError,
    InvalidContentError,
    InvalidInputError,
    InvalidRoleError,
    InvalidSessionIdError,
    MessageIdConflictError,
    MessageTooLargeError,
    NotReplicatedError,
    PartialWriteError,
    PermissionDeniedError,
    PromptTooLargeError,
    ReplyNotStoredError,
    ScriptingUnavailableError,
    SessionChangedError,
    SessionExistsError,
    StorageError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
    WrongKeyTypeError,
)

__all__ = [
    "ACL_COMMANDS",
    "DEFAULT_IDEMPOTENCY_WINDOW",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_NAMESPACE",
    "EXPORT_FORMAT",
    "FORMAT_VERSION",
    "MAX_METADATA_BYTES",
    "MAX_SESSION_ID_CHARS",
    "MAX_TTL",
    "ROLES",
    "SUMMARY_NAME",
    "AppendResult",
    "AsyncChatModel",
    "AsyncChatService",
    "AsyncMemoryService",
    "AsyncStreamingChatModel",
    "ChatMemoryError",
    "ChatModel",
    "ChatService",
    "CompactResult",
    "CompactionConflictError",
    "CorruptEntryError",
    "CorruptMetadataError",
    "Durability",
    "ForgetResult",
    "ImportResult",
    "InvalidContentError",
    "InvalidInputError",
    "InvalidRoleError",
    "InvalidSessionIdError",
    "KeyLayout",
    "MemoryService",
    "Message",
    "MessageIdConflictError",
    "MessageInput",
    "MessageTooLargeError",
    "NotReplicatedError",
    "PartialWriteError",
    "PermissionDeniedError",
    "PromptTooLargeError",
    "ReplyNotStoredError",
    "Role",
    "ScriptingUnavailableError",
    "SessionChangedError",
    "SessionExistsError",
    "SessionInfo",
    "StorageError",
    "StorageUnavailableError",
    "StreamingChatModel",
    "TokenCounter",
    "ToolCall",
    "WriteOutcomeUnknownError",
    "WrongKeyTypeError",
    "acl_rules",
    "approximate_tokens",
]
