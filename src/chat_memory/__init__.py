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
from ._keys import DEFAULT_NAMESPACE, MAX_SESSION_ID_CHARS, KeyLayout
from ._message import ROLES, Message, Role, ToolCall
from ._service import MemoryService
from ._users import MAX_METADATA_BYTES, ForgetResult, SessionInfo
from .exceptions import (
    ChatMemoryError,
    CorruptEntryError,
    CorruptMetadataError,
    InvalidContentError,
    InvalidInputError,
    InvalidRoleError,
    InvalidSessionIdError,
    MessageIdConflictError,
    MessageTooLargeError,
    PermissionDeniedError,
    PromptTooLargeError,
    ReplyNotStoredError,
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
    "FORMAT_VERSION",
    "MAX_METADATA_BYTES",
    "MAX_SESSION_ID_CHARS",
    "MAX_TTL",
    "ROLES",
    "AppendResult",
    "AsyncChatModel",
    "AsyncChatService",
    "AsyncMemoryService",
    "AsyncStreamingChatModel",
    "ChatMemoryError",
    "ChatModel",
    "ChatService",
    "CorruptEntryError",
    "CorruptMetadataError",
    "ForgetResult",
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
    "PermissionDeniedError",
    "PromptTooLargeError",
    "ReplyNotStoredError",
    "Role",
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
