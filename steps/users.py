"""Steps about users and their sessions: listing, titles, metadata and erasure.

Usage::

    Given user "ada" said "Plan my Paris trip" in session "paris"
    Given user "ada" gave session "paris" the title "Paris trip"
    When the sessions of user "ada" are listed
    Then the sessions listed are:
      | session | title      | messages | created             | last active         |
      | paris   | Paris trip | 1        | 2026-12-01 09:00:00 | 2026-12-01 09:00:00 |
    When user "ada" is forgotten
    Then user "ada" has nothing stored
    When user "ada" tries to clear session "paris"

A user's sessions live apart from sessions without a user: session "paris" of
user "ada" is not the session "paris" the other steps talk in.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import unquote

import pytest
import redis
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    CorruptMetadataError,
    ForgetResult,
    InvalidInputError,
    MemoryService,
    SessionInfo,
)
from chat_memory_suite.adapter import requires
from chat_memory_suite.backends import ClientRecipe, RedisClient, scenario_keys
from chat_memory_suite.compare import expect_messages, expect_text
from chat_memory_suite.tables import MESSAGE_COLUMNS, messages, reads_json, reads_table, rows

from .conversation import Attempt
from .sessions import MemorySettings

REQUIRES = ("users",)
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""

LISTING_COLUMNS = ("session", "title", "messages", "created", "last active")


@dataclass
class Users:
    """What the scenario's steps saw of users' sessions."""

    listing: list[SessionInfo] = field(default_factory=list)
    listed: bool = False
    forgotten: list[ForgetResult] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)
    erased: list[str] = field(default_factory=list)
    keys_before: list[int | None] = field(default_factory=list)


@pytest.fixture
def users() -> Users:
    """The scenario's listings and erasures."""
    return Users()


def _names(quoted: str) -> list[str]:
    return quoted.strip('"').replace('" and "', '", "').split('", "')


def _moment(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")


@given(parsers.parse('user "{user}" said "{text}" in session "{name}"'))
@when(parsers.parse('user "{user}" says "{text}" in session "{name}"'))
def user_says_in_session(memory: MemoryService, user: str, text: str, name: str) -> None:
    """A user's message in one of the user's own sessions (the session starts with it).

    Given user "ada" said "Plan my Paris trip" in session "paris"
    When user "ada@example.com" says "hello" in session "paris/1"
    """
    memory.for_user(user).add_message(name, "user", text)


@given(
    parsers.parse('user "{user}" sent message "{message_id}" saying "{text}" in session "{name}"')
)
@when(
    parsers.parse('user "{user}" sends message "{message_id}" saying "{text}" in session "{name}"')
)
def user_sends_with_id(
    memory: MemoryService, user: str, message_id: str, text: str, name: str
) -> None:
    """A user's message with the app's own id, so that sending it again is a retry.

    Given user "ada" sent message "m-1" saying "hello" in session "paris"
    When user "ada" sends message "m-1" saying "hello" in session "paris"
    """
    memory.for_user(user).add_message(name, "user", text, message_id=message_id)


@given(parsers.parse('user "{user}" gave session "{name}" the title "{title}"'))
def user_titles_session(memory: MemoryService, user: str, name: str, title: str) -> None:
    """The app stores a title in the session's metadata.

    Given user "ada" gave session "paris" the title "Paris trip"
    """
    memory.for_user(user).set_metadata(name, {"title": title})


@given(parsers.parse('user "{user}" gave session "{name}" this metadata:'))
@reads_json
def user_sets_metadata(memory: MemoryService, user: str, name: str, docstring: str) -> None:
    """The app stores this JSON object as the session's metadata.

    Given user "ada" gave session "paris" this metadata:
    """
    memory.for_user(user).set_metadata(name, json.loads(docstring))


@given(
    parsers.parse('another service stored the metadata {raw} for session "{name}" of user "{user}"')
)
def other_service_stored_metadata(
    redis_client: RedisClient, memory: MemoryService, raw: str, name: str, user: str
) -> None:
    """Another service wrote this text where the session's metadata document lives.

    Given another service stored the metadata [1, 2] for session "paris" of user "ada"
    """
    redis_client.hset(memory.for_user(user).keys.meta(name), "doc", raw.encode("utf-8"))


@given(
    parsers.parse(
        'another service stored metadata that is not UTF-8 for session "{name}" of user "{user}"'
    )
)
def other_service_stored_non_utf8_metadata(
    redis_client: RedisClient, memory: MemoryService, name: str, user: str
) -> None:
    """Another service wrote bytes that are not UTF-8 where the session's metadata lives.

    Given another service stored metadata that is not UTF-8 for session "paris" of user "ada"
    """
    redis_client.hset(memory.for_user(user).keys.meta(name), "doc", b'{"title": "\xff"}')


@given(
    parsers.parse(
        'another service listed a copy of session "{name}" of user "{user}" as "{stored}",'
        " which is not UTF-8 once decoded"
    )
)
def other_service_listed_unreadable_id(
    redis_client: RedisClient, memory: MemoryService, name: str, user: str, stored: str
) -> None:
    """Another service copied the session and its index entry under an id chat-memory never writes.

    The id is stored as given: "trip%FF" percent-decodes to the byte 0xFF, not UTF-8.

    Given another service listed a copy of session "paris" of user "ada" as "trip%FF", which is not UTF-8 once decoded
    """
    with pytest.raises(UnicodeDecodeError):  # what the step says of the id it is given
        unquote(stored, errors="strict")
    keys = memory.for_user(user).keys
    prefix = keys.session_prefix()
    member = keys.history(name).removeprefix(prefix).removesuffix(":history")  # as listed
    for key in keys.all(name):
        if redis_client.exists(key):
            redis_client.copy(key, prefix + stored + key.removeprefix(prefix + member))
    index = keys.index()
    assert index is not None
    active = redis_client.zscore(index, member)
    assert active is not None, f'session "{name}" of user "{user}" is not in the index'
    redis_client.zadd(index, {stored: active})


@then(parsers.parse('reading the metadata of session "{name}" of user "{user}" fails: "{reason}"'))
def reading_metadata_fails(memory: MemoryService, name: str, user: str, reason: str) -> None:
    """Reading the session's metadata raises CorruptMetadataError naming the session and why.

    Then reading the metadata of session "paris" of user "ada" fails: "not valid UTF-8 JSON"
    """
    with pytest.raises(CorruptMetadataError) as raised:
        memory.for_user(user).get_metadata(name)
    _names_session(raised.value, name, reason)


@then(
    parsers.parse(
        'listing the sessions of user "{user}" fails, naming session "{name}": "{reason}"'
    )
)
def listing_fails(memory: MemoryService, user: str, name: str, reason: str) -> None:
    """Listing the user's sessions raises CorruptMetadataError naming the broken session.

    Then listing the sessions of user "ada" fails, naming session "paris": "not valid UTF-8 JSON"
    """
    with pytest.raises(CorruptMetadataError) as raised:
        memory.for_user(user).list_sessions()
    _names_session(raised.value, name, reason)


@then(parsers.parse('exporting session "{name}" of user "{user}" fails: "{reason}"'))
@requires("export")
def exporting_fails(memory: MemoryService, name: str, user: str, reason: str) -> None:
    """Exporting the session raises CorruptMetadataError naming the session and why.

    Then exporting session "paris" of user "ada" fails: "not a JSON object but list"
    """
    with pytest.raises(CorruptMetadataError) as raised:
        memory.for_user(user).export_session(name)
    _names_session(raised.value, name, reason)


def _names_session(error: CorruptMetadataError, name: str, reason: str) -> None:
    assert error.session_id == name, f"the error names session {error.session_id!r}: {error}"
    assert reason in error.reason, f"the reason is {error.reason!r}, not {reason!r}"
    assert name in str(error), f"the message does not name the session: {error}"


@when(
    parsers.re(
        r'the sessions of user "(?P<user>[^"]+)" are listed with'
        r" (?P<setting>limit|offset) = (?P<value>-?\d+)"
    ),
    converters={"value": int},
)
def sessions_listed_with(
    memory: MemoryService, users: Users, attempt: Attempt, user: str, setting: str, value: int
) -> None:
    """The app lists the user's sessions with one paging setting as given (the other default).

    When the sessions of user "ada" are listed with limit = 0
    """

    def listing() -> None:
        users.listing = memory.for_user(user).list_sessions(**{setting: value})

    attempt.make(listing)


@then(parsers.parse('the listing is refused with the reason "{reason}"'))
def listing_refused(users: Users, attempt: Attempt, reason: str) -> None:
    """The listing raised InvalidInputError with this reason.

    Then the listing is refused with the reason "limit must be a whole number from 1 to 1000, not 0"
    """
    assert attempt.made, "no step listed the sessions"
    assert isinstance(attempt.error, InvalidInputError), f"not refused: {users.listing}"
    assert reason in str(attempt.error), f"refused with: {attempt.error}"


@when(parsers.parse('user "{user}" clears session "{name}"'))
def user_clears_session(memory: MemoryService, user: str, name: str) -> None:
    """The app forgets one of the user's sessions on purpose.

    When user "ada" clears session "paris"
    """
    memory.for_user(user).clear(name)


@when(parsers.parse('user "{user}" tries to say "{text}" in session "{name}"'))
def user_tries_to_say_in_session(
    memory: MemoryService, attempt: Attempt, user: str, text: str, name: str
) -> None:
    """A user's message in one of the user's sessions; a failure is kept for a Then step.

    When user "bea" tries to say "hello" in session "first"
    """
    attempt.make(lambda: memory.for_user(user).add_message(name, "user", text))


@when("the app sends a message for a user with an empty id")
@requires("users", "typed_errors")
def app_sends_for_empty_user(memory: MemoryService, attempt: Attempt) -> None:
    """The app tries to store a user's message without saying whose it is.

    When the app sends a message for a user with an empty id
    """
    attempt.make(lambda: memory.for_user("").add_message("paris", "user", "hello"))


@when(parsers.parse("the app sends a message for a user whose id is {length:d} characters long"))
@requires("users", "typed_errors")
def app_sends_for_long_user(memory: MemoryService, attempt: Attempt, length: int) -> None:
    """The app tries to store a message for a user id longer than allowed.

    When the app sends a message for a user whose id is 300 characters long
    """
    attempt.make(lambda: memory.for_user("u" * length).add_message("paris", "user", "hello"))


@when(parsers.parse('user "{user}" tries to clear session "{name}"'))
def user_tries_to_clear(memory: MemoryService, attempt: Attempt, user: str, name: str) -> None:
    """The app forgets one of the user's sessions; a failure is kept for a Then step.

    When user "ada" tries to clear session "paris"
    """
    attempt.make(lambda: memory.for_user(user).clear(name))


@given(parsers.parse('the app tried to list the sessions of user "{user}"'))
@when(parsers.parse('the app tries to list the sessions of user "{user}"'))
def app_tried_to_list(memory: MemoryService, attempt: Attempt, user: str) -> None:
    """The app lists the user's sessions; a failure is kept for a Then step.

    Given the app tried to list the sessions of user "ada"
    When the app tries to list the sessions of user "ada"
    """
    attempt.make(lambda: memory.for_user(user).list_sessions(limit=1000))


@when("the app tries to list sessions without naming a user")
def app_lists_without_user(memory: MemoryService, attempt: Attempt) -> None:
    """The app asks the memory that serves every user, not one user's, for its sessions.

    When the app tries to list sessions without naming a user
    """
    attempt.make(lambda: memory.list_sessions())


@given(parsers.parse('the app tried to forget user "{user}"'))
@when(parsers.parse('the app tries to forget user "{user}"'))
def app_tried_to_forget(memory: MemoryService, attempt: Attempt, user: str) -> None:
    """The app erases the user; a failure is kept for a Then step.

    Given the app tried to forget user "ada"
    When the app tries to forget user "ada"
    """
    attempt.make(lambda: memory.forget_user(user))


@when(parsers.parse('the sessions of user "{user}" are listed'))
def sessions_listed(memory: MemoryService, users: Users, user: str) -> None:
    """The app lists every session of the user (as many as one listing returns).

    When the sessions of user "ada" are listed
    """
    users.listing, users.listed = memory.for_user(user).list_sessions(limit=1000), True


@when(parsers.parse('the sessions of user "{user}" are listed {size:d} per page, page {page:d}'))
def sessions_page_listed(
    memory: MemoryService, users: Users, user: str, size: int, page: int
) -> None:
    """The app lists one page of the user's sessions (page 1 is the most recent).

    When the sessions of user "ada" are listed 2 per page, page 2
    """
    scoped = memory.for_user(user)
    users.listing, users.listed = scoped.list_sessions(limit=size, offset=(page - 1) * size), True


@when(
    parsers.parse(
        '{workers:d} workers each send {count:d} messages twice to a session of user "{user}"'
    )
)
def workers_write_user_sessions(
    client_recipe: ClientRecipe,
    memory_settings: MemorySettings,
    namespace: str,
    users: Users,
    workers: int,
    count: int,
    user: str,
) -> None:
    """App workers (threads, a client each) write at once, while a reader lists the sessions.

    Every message is sent twice with its id, as a retry would. The reader
    notes any listing that shows a session twice or a session losing messages.

    When 8 workers each send 10 messages twice to a session of user "ada"
    """
    settings = memory_settings.service_settings()

    def scoped() -> tuple[MemoryService, RedisClient]:
        client = client_recipe.sync()
        return MemoryService(client, namespace=namespace, **settings).for_user(user), client

    def write(worker: int) -> None:
        memory, client = scoped()
        for n in range(count):
            for _ in range(2):
                memory.add_message(f"w{worker}", "user", f"{n}", message_id=f"w{worker}-{n}")
        client.close()

    done = threading.Event()

    def read() -> None:
        memory, client = scoped()
        most: dict[str, int] = {}
        while not done.is_set():
            listing = memory.list_sessions(limit=1000)
            names = [s.session_id for s in listing]
            if len(names) != len(set(names)):
                users.anomalies.append(f"a session listed twice: {names}")
            for info in listing:
                if info.message_count < most.get(info.session_id, 0):
                    users.anomalies.append(f"{info.session_id} lost messages: {info}")
                most[info.session_id] = info.message_count
        client.close()

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()


@then(parsers.parse('user "{user}" has {workers:d} sessions listed, each with {count:d} messages'))
def user_sessions_listed_with(
    memory: MemoryService, users: Users, user: str, workers: int, count: int
) -> None:
    """The final listing holds every worker's session once, whole; no listing misbehaved.

    Then user "ada" has 8 sessions listed, each with 10 messages
    """
    listing = memory.for_user(user).list_sessions(limit=1000)
    assert sorted((s.session_id, s.message_count) for s in listing) == sorted(
        (f"w{w}", count) for w in range(workers)
    )
    assert users.anomalies == [], users.anomalies


@then("the sessions listed are:")
@reads_table(*LISTING_COLUMNS)
def sessions_listed_are(users: Users, datatable: Sequence[Sequence[str]]) -> None:
    """The listing shows exactly these sessions, most recently active first (times in UTC).

    Then the sessions listed are:
    """
    assert users.listed, "no step listed a user's sessions"
    actual = [
        {
            "session": s.session_id,
            "title": s.title or "",
            "messages": str(s.message_count),
            "created": _moment(s.created_at),
            "last active": _moment(s.last_active_at),
        }
        for s in users.listing
    ]
    expect_messages("the listing", actual, rows(datatable, LISTING_COLUMNS))


@when(parsers.parse('the first page of the sessions of user "{user}" is listed'))
def first_page_listed(memory: MemoryService, users: Users, user: str) -> None:
    """The app lists the user's sessions with the default page size.

    When the first page of the sessions of user "ada" is listed
    """
    users.listing, users.listed = memory.for_user(user).list_sessions(), True


@then(parsers.re(r"(?P<count>\d+) sessions? (?:is|are) listed"), converters={"count": int})
def count_listed(users: Users, count: int) -> None:
    """The listing holds this many sessions.

    Then 20 sessions are listed
    """
    assert users.listed, "no step listed a user's sessions"
    assert len(users.listing) == count, [s.session_id for s in users.listing]


@then(parsers.parse("the sessions listed are {names}"))
def sessions_listed_named(users: Users, names: str) -> None:
    """The listing shows exactly these sessions, in this order.

    Then the sessions listed are "rome" and "paris"
    """
    assert users.listed, "no step listed a user's sessions"
    assert [s.session_id for s in users.listing] == _names(names)


@then("no sessions are listed")
def no_sessions_listed(users: Users) -> None:
    """The listing is empty.

    Then no sessions are listed
    """
    assert users.listed, "no step listed a user's sessions"
    assert [s.session_id for s in users.listing] == []


@then(parsers.parse('session "{name}" of user "{user}" is empty'))
def users_session_is_empty(memory: MemoryService, name: str, user: str) -> None:
    """The user's session holds no message (never written, cleared, expired or erased).

    Then session "paris" of user "ada" is empty
    """
    stored = memory.for_user(user).get_messages(name)
    assert stored == [], f'session "{name}" of user "{user}" holds {len(stored)} messages'


@then(parsers.parse('the context of user "{user}"\'s session "{name}" is:'))
@reads_table(*MESSAGE_COLUMNS)
def user_context_is(
    memory: MemoryService, name: str, user: str, datatable: Sequence[Sequence[str]]
) -> None:
    """The context of one of the user's sessions is exactly these messages.

    Then the context of user "ada"'s session "paris" is:
    """
    context = memory.for_user(user).get_context(name)
    expect_messages(
        f'the context of session "{name}" of user "{user}"', context, messages(datatable)
    )


@then(parsers.parse('session "{name}" of user "{user}" has this metadata:'))
@reads_json
def user_metadata_is(memory: MemoryService, name: str, user: str, docstring: str) -> None:
    """The session's metadata reads back as exactly this JSON object.

    Then session "paris" of user "ada" has this metadata:
    """
    metadata = memory.for_user(user).get_metadata(name)
    expect_text(f'the metadata of session "{name}"', metadata, json.loads(docstring))


@then(parsers.parse('the listing shows session "{name}" with this metadata:'))
@reads_json
def listing_shows_metadata(users: Users, name: str, docstring: str) -> None:
    """The listing carries the session's whole metadata, as reading it would return it.

    Then the listing shows session "paris" with this metadata:
    """
    assert users.listed, "no step listed a user's sessions"
    found = [s for s in users.listing if s.session_id == name]
    assert found, f'session "{name}" is not listed: {[s.session_id for s in users.listing]}'
    what = f'the listed metadata of session "{name}"'
    expect_text(what, found[0].metadata, json.loads(docstring))


@when(parsers.parse('user "{user}" is forgotten'))
def user_forgotten(
    memory: MemoryService, redis_client: RedisClient, namespace: str, users: Users, user: str
) -> None:
    """The app erases everything of the user (a right-to-erasure request).

    The user's keys are counted first, for the Then steps to check the report
    (not when the scenario's client is a least-privileged user, who may not SCAN).

    When user "ada" is forgotten
    """
    try:
        before: int | None = len(_keys_of_user(memory, redis_client, namespace, user))
    except redis.exceptions.NoPermissionError:
        before = None
    users.keys_before.append(before)
    users.forgotten.append(memory.forget_user(user))
    users.erased.append(user)


def _last_erasure(users: Users) -> ForgetResult:
    """The last erasure's report, checked to name its user and count every key it deleted."""
    assert users.forgotten, "no step erased a user"
    last = users.forgotten[-1]
    assert last.user_id == users.erased[-1], f"the report names user {last.user_id!r}"
    before = users.keys_before[-1]
    assert before is None or last.keys_deleted == before, (
        f"the report counts {last.keys_deleted} keys deleted; the user had {before}"
    )
    return last


@then(parsers.parse("the erasure removed the sessions {names}"))
def erasure_removed(users: Users, names: str) -> None:
    """The last erasure reported exactly these sessions as removed.

    Then the erasure removed the sessions "paris" and "cv"
    """
    assert sorted(_last_erasure(users).sessions) == sorted(_names(names))


@then(
    parsers.parse(
        "the erasure is reported as done but confirmed by no replica,"
        " having removed the sessions {names}"
    )
)
def erasure_not_replicated(attempt: Attempt, names: str) -> None:
    """The erasure raised NotReplicatedError, handing back its report of what it removed.

    Then the erasure is reported as done but confirmed by no replica, having removed the sessions "paris" and "cv"
    """
    error, reply = attempt.not_replicated(ForgetResult)
    assert sorted(reply.sessions) == sorted(_names(names)), str(reply)
    # No message to resend: the error offers none (asking again is safe all the same).
    assert str(error).endswith("a failover now could lose it"), str(error)


@given(parsers.parse('user "{user}" has {count:d} sessions'))
def user_has_sessions(memory: MemoryService, user: str, count: int) -> None:
    """The user has this many sessions, one message each (named s1, s2, ...).

    Given user "ada" has 1200 sessions
    """
    scoped = memory.for_user(user)
    for n in range(1, count + 1):
        scoped.add_message(f"s{n}", "user", f"message {n}")


@then(parsers.parse("the erasure removed {count:d} sessions"))
def erasure_removed_count(users: Users, count: int) -> None:
    """The last erasure reported this many sessions, each once.

    Then the erasure removed 1200 sessions
    """
    removed = _last_erasure(users).sessions
    assert (len(removed), len(set(removed))) == (count, count)


@then("the erasure removed nothing")
def erasure_removed_nothing(users: Users) -> None:
    """The last erasure found nothing left to remove.

    Then the erasure removed nothing
    """
    last = _last_erasure(users)
    assert (last.sessions, last.keys_deleted) == ([], 0), str(last)


def _keys_of_user(
    memory: MemoryService, redis_client: RedisClient, namespace: str, user: str
) -> list[bytes]:
    """Every key of the user in the scenario's namespace: the sessions' and the index."""
    prefix = memory.for_user(user).keys.session_prefix().rsplit(":session:", 1)[0]
    return [k for k in scenario_keys(redis_client, namespace) if k.decode().startswith(prefix)]


@then(parsers.parse('user "{user}" has nothing stored'))
def user_has_nothing(
    memory: MemoryService, redis_client: RedisClient, namespace: str, user: str
) -> None:
    """No key of the user is left: no session, no index.

    Then user "ada" has nothing stored
    """
    assert memory.for_user(user).list_sessions() == []
    left = _keys_of_user(memory, redis_client, namespace, user)
    assert left == [], f'keys of user "{user}" are left: {left}'


@then(parsers.parse('every key of user "{user}" expires in {seconds:d} seconds'))
def user_keys_expire_in(
    memory: MemoryService, redis_client: RedisClient, namespace: str, user: str, seconds: int
) -> None:
    """Every key of the user, the index included, carries this time to live.

    Then every key of user "ada" expires in 1800 seconds
    """
    keys = _keys_of_user(memory, redis_client, namespace, user)
    # history, seen and meta, a list of ids with a retry window longer than the history
    expected = 5 if memory.core.keeps_id_list else 4
    assert len(keys) == expected, f"expected a session's {expected - 1} keys and the index: {keys}"
    remaining = [int(redis_client.pttl(key)) / 1000 for key in keys]
    assert remaining == [pytest.approx(seconds, abs=1)] * len(keys)


@then(parsers.parse('all of user "{user}"\'s keys are in one hash slot'))
def user_keys_one_slot(
    memory: MemoryService, redis_client: RedisClient, namespace: str, user: str
) -> None:
    """Every key of the user, sessions and index, is in one slot, as one script needs.

    Then all of user "ada"'s keys are in one hash slot
    """
    keys = _keys_of_user(memory, redis_client, namespace, user)
    assert len(keys) > 1, f'user "{user}" has no keys'
    slots = {int(redis_client.execute_command("CLUSTER KEYSLOT", key)) for key in keys}  # type: ignore[no-untyped-call]
    assert len(slots) == 1, f"the keys are in {len(slots)} slots"
