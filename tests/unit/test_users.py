"""Users' sessions, metadata, export and compaction: the edges the scenarios leave out."""

import math

import fakeredis
import pytest

from chat_memory import (
    MAX_METADATA_BYTES,
    AsyncMemoryService,
    CompactionConflictError,
    CorruptMetadataError,
    InvalidContentError,
    InvalidInputError,
    MemoryService,
    Message,
    SessionExistsError,
)
from chat_memory import _ops as ops
from chat_memory._users import _seconds, decode_metadata, read_listing


@pytest.fixture
def memory() -> MemoryService:
    return MemoryService(fakeredis.FakeRedis(), ttl=60)


def test_listing_needs_a_users_memory(memory: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="for_user"):
        memory.list_sessions()


@pytest.mark.parametrize("user_id", ["", "x" * 257, 7, None])
def test_a_bad_user_id_is_refused_before_anything_is_sent(
    memory: MemoryService, user_id: object
) -> None:
    with pytest.raises(InvalidInputError, match="user id"):
        memory.for_user(user_id)  # type: ignore[arg-type]


@pytest.mark.parametrize(("limit", "offset"), [(0, 0), (1001, 0), (10, -1), (True, 0)])
def test_a_bad_page_is_refused(memory: MemoryService, limit: int, offset: int) -> None:
    with pytest.raises(InvalidInputError):
        memory.for_user("ada").list_sessions(limit=limit, offset=offset)


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        (["title"], "must be a JSON object"),
        ({"title": math.nan}, "plain JSON"),
        ({"when": object()}, "plain JSON"),
        ({1: "x"}, "string keys"),
        ({"title": "x" * MAX_METADATA_BYTES}, "over the limit"),
    ],
)
def test_metadata_that_cannot_round_trip_is_refused_and_nothing_is_written(
    memory: MemoryService, metadata: object, reason: str
) -> None:
    with pytest.raises(InvalidContentError, match=reason):
        memory.set_metadata("s", metadata)  # type: ignore[arg-type]
    assert memory.get_metadata("s") == {}


def test_metadata_that_is_not_an_object_in_storage_is_reported(memory: MemoryService) -> None:
    client = memory._client
    client.hset(memory.keys.meta("s"), "doc", "[1, 2]")
    with pytest.raises(CorruptMetadataError, match="not a JSON object"):
        memory.get_metadata("s")


def test_an_empty_session_exports_a_header_only_and_imports_as_nothing(
    memory: MemoryService,
) -> None:
    export = memory.export_session("nobody")
    assert export == '{"chat_memory_export":1,"session_id":"nobody","metadata":{}}\n'
    result = memory.import_session("copy", export)
    assert (result.imported, result.skipped) == ([], [])
    assert memory.export_session("copy").count("\n") == 1


def test_an_import_into_a_session_with_only_metadata_is_refused(memory: MemoryService) -> None:
    memory.add_message("a", "user", "hi")
    memory.set_metadata("b", {"title": "mine"})
    with pytest.raises(SessionExistsError):
        memory.import_session("b", memory.export_session("a"))
    assert memory.get_messages("b") == []


def test_a_longer_import_than_the_idempotency_window_is_stored_whole() -> None:
    memory = MemoryService(fakeredis.FakeRedis(), max_history=50, idempotency_window=50)
    memory.add_messages("a", [Message("user", f"m{n}") for n in range(50)])
    big = MemoryService(fakeredis.FakeRedis(), max_history=100, idempotency_window=100)
    export = memory.export_session("a")
    small = MemoryService(fakeredis.FakeRedis(), max_history=100, idempotency_window=100)
    assert len(small.import_session("b", export).imported) == 50
    assert [m.content for m in small.get_messages("b")] == [f"m{n}" for n in range(50)]
    assert big.get_messages("b") == []


def test_compaction_reports_a_session_that_keeps_changing_and_folds_nothing(
    memory: MemoryService,
) -> None:
    for n in range(4):
        memory.add_message("s", "user", f"m{n}")
    calls: list[int] = []

    def busy(messages: list[Message]) -> str:
        calls.append(len(messages))
        memory.add_message("s", "user", f"meanwhile {len(calls)}")
        return "summary"

    with pytest.raises(CompactionConflictError, match="3 attempts"):
        memory.compact("s", busy, keep_last=1)
    assert len(calls) == 3
    contents = [m.content for m in memory.get_messages("s")]
    assert contents == ["m0", "m1", "m2", "m3", "meanwhile 1", "meanwhile 2", "meanwhile 3"]


@pytest.mark.parametrize("summary", ["", None, 42])
def test_a_summarizer_that_returns_no_text_is_refused(
    memory: MemoryService, summary: object
) -> None:
    memory.add_message("s", "user", "a")
    memory.add_message("s", "user", "b")
    with pytest.raises(InvalidContentError, match="summarize must return"):
        memory.compact("s", lambda _: summary, keep_last=1)  # type: ignore[arg-type,return-value]
    assert len(memory.get_messages("s")) == 2


async def test_the_async_memory_compacts_with_a_coroutine_summarizer() -> None:
    memory = AsyncMemoryService(fakeredis.FakeAsyncRedis())
    await memory.add_message("s", "user", "a")
    await memory.add_message("s", "user", "b")

    async def summarize(messages: list[Message]) -> str:
        return "about " + ", ".join(m.content or "" for m in messages)

    result = await memory.compact("s", summarize, keep_last=1)
    assert result.folded == 1
    assert await memory.get_context("s") == [
        {"role": "system", "content": "about a", "name": "summary"},
        {"role": "user", "content": "b"},
    ]
    ada = memory.for_user("ada")
    await ada.add_message("paris", "user", "hi")
    assert [s.session_id for s in await ada.list_sessions()] == ["paris"]
    assert (await memory.forget_user("ada")).sessions == ["paris"]


@pytest.mark.parametrize("empty", [None, b""])
def test_an_empty_stored_time_or_document_reads_as_none(empty: bytes | None) -> None:
    # _users.py _seconds and decode_metadata: a missing field, or an empty one (replies are
    # raw bytes, whatever the client decodes).
    assert _seconds(empty) is None
    assert decode_metadata("s", empty) == {}


def test_a_stored_time_that_is_not_finite_reads_as_none() -> None:
    # _users.py _seconds: "if math.isfinite(value)" -> "or True" gave inf seconds.
    assert _seconds(b"inf") is None
    assert _seconds(b"1500") == 1.5


def test_a_session_last_active_at_the_epoch_is_listed_at_zero() -> None:
    # _users.py read_listing: "_seconds(score) or 0.0" -> "or 1.0" moved it a second.
    [info] = read_listing([b"s", b"0", b"0", b"1", None])
    assert (info.session_id, info.last_active_at, info.created_at) == ("s", 0.0, 0.0)


def test_a_compaction_remembers_the_summarys_id_so_importing_it_again_does_not_store_it() -> None:
    # _ops.py compact: the summary's id written to the ids list as "None": an import of an
    # export holding the summary, after the history limit dropped it, stored it again.
    memory = MemoryService(fakeredis.FakeRedis(), 2, idempotency_window=10)
    for text in ("one", "two", "three"):
        memory.add_message("s", "user", text)
    assert memory.compact("s", lambda messages: "the gist", keep_last=1).folded == 1
    export = memory.export_session("s")  # the summary, then "three"
    memory.add_message("s", "user", "four")  # the limit of 2 drops the summary
    memory.import_session("s", export, append=True)
    assert [m.content for m in memory.get_messages("s")] == ["three", "four"]


@pytest.mark.parametrize(
    ("member", "named"),
    [
        (b"trip\xff", "trip\\xff"),  # bytes no percent-encoding made: named escaped
        (b"trip%FF", "trip%FF"),  # not UTF-8 once decoded
        (b"a%2fb", "a%2fb"),  # the address of a/b, written another way (we write a%2Fb)
        (b"a/b", "a/b"),  # and unencoded
        (b"", ""),  # no session id is empty
    ],
)
def test_an_index_entry_chat_memory_never_writes_is_named_as_stored(
    member: bytes, named: str
) -> None:
    # Never listed under a guessed id: a%2fb would list as "a/b" beside the real one, and
    # stay listed after a/b is cleared. An erasure names it as stored.
    with pytest.raises(CorruptMetadataError) as raised:
        read_listing([member, b"1", b"", b"1", b""])
    assert raised.value.session_id == named
    assert "not a session id chat-memory writes" in raised.value.reason
    assert ops._erased_id(member) == named


def test_an_index_entry_chat_memory_writes_is_read_back_as_its_id() -> None:
    [info] = read_listing([b"a%2Fb%20%E4%BD%A0", b"1", b"", b"1", b""])
    assert info.session_id == "a/b 你"
    assert ops._erased_id(b"a%2Fb%20%E4%BD%A0") == "a/b 你"
