"""What chat-memory takes from redis-py beyond its documented API still holds.

If one of these fails after a redis-py upgrade, ``chat_memory/_compat.py`` and
the error mapping in ``chat_memory/_errors.py`` need a look.
"""

import inspect

import fakeredis
import pytest
import redis
import redis.exceptions

from chat_memory import (
    ChatMemoryError,
    Message,
    PermissionDeniedError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
)
from chat_memory._compat import NEVER_DECODE, RAW, REDIS_EXCEPTIONS
from chat_memory._errors import Op, script_error, storage_error


def redis_exception_classes() -> list[type[BaseException]]:
    return sorted(
        (
            cls
            for _, cls in inspect.getmembers(redis.exceptions, inspect.isclass)
            if issubclass(cls, BaseException)
        ),
        key=lambda cls: cls.__name__,
    )


def test_never_decode_gives_raw_bytes_to_a_decoding_client() -> None:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=True)
    client.rpush("k", b"\xff")
    assert NEVER_DECODE == "NEVER_DECODE"
    assert client.execute_command("LRANGE", "k", 0, -1, **RAW) == [b"\xff"]  # type: ignore[no-untyped-call]


def test_redis_py_still_has_exception_classes_to_walk() -> None:
    names = {cls.__name__ for cls in redis_exception_classes()}
    assert {"RedisError", "ConnectionError", "ResponseError", "RedisClusterException"} <= names


@pytest.mark.parametrize("cls", redis_exception_classes(), ids=lambda cls: cls.__name__)
def test_every_redis_py_exception_is_caught_and_mapped(cls: type[Exception]) -> None:
    assert issubclass(cls, REDIS_EXCEPTIONS), f"{cls.__name__} would escape the error tree"
    # Redirections parse their message: "<slot> <host:port>".
    exc = cls("1234 boom:6379") if issubclass(cls, redis.exceptions.AskError) else cls("boom")
    for op in Op:
        error = storage_error(exc, op=op)
        assert isinstance(error, ChatMemoryError)
        assert "boom" in str(error)
    assert isinstance(script_error(exc, keys=("h", "i", "s"), messages=()), ChatMemoryError)


def test_a_connection_error_on_a_write_may_have_written() -> None:
    messages = [Message("user", "hi", id="m-1")]
    error = storage_error(redis.ConnectionError("reset"), op=Op.SCRIPT, messages=messages)
    assert isinstance(error, WriteOutcomeUnknownError)
    assert error.may_have_written
    assert error.messages == messages
    assert not storage_error(redis.TimeoutError("slow"), op=Op.READ).may_have_written


@pytest.mark.parametrize(
    "exc",
    [
        redis.exceptions.OutOfMemoryError(
            "OOM command not allowed when used memory > 'maxmemory'."
        ),
        redis.exceptions.NoPermissionError(
            "NOPERM User app has no permissions to run the 'evalsha' command"
        ),
    ],
)
def test_refusals_before_the_scripts_first_write_wrote_nothing(exc: Exception) -> None:
    error = script_error(exc, keys=("h", "i", "s"), messages=())
    assert isinstance(error, StorageUnavailableError)
    assert not error.may_have_written


def test_a_read_only_replica_after_a_failover_may_hide_an_earlier_write() -> None:
    exc = redis.exceptions.ReadOnlyError("READONLY You can't write against a read only replica.")
    error = script_error(exc, keys=("h", "i", "s"), messages=())
    assert isinstance(error, WriteOutcomeUnknownError)


@pytest.mark.parametrize(
    "exc",
    [
        redis.exceptions.ReadOnlyError("READONLY You can't write against a read only replica."),
        redis.exceptions.ClusterDownError("CLUSTERDOWN The cluster is down"),
    ],
)
def test_a_write_refused_as_after_a_failover_hands_its_messages_back(exc: Exception) -> None:
    # As every write of unknown outcome does, for the caller to resend (today's one caller,
    # clear, has none; a write with messages must not lose them).
    messages = [Message("user", "hi", id="m-1")]
    error = storage_error(exc, op=Op.WRITE, messages=messages)
    assert isinstance(error, WriteOutcomeUnknownError)
    assert error.messages == messages


def test_a_permission_error_inside_a_script_may_follow_a_write() -> None:
    exc = redis.exceptions.NoPermissionError(
        "NOPERM User app has no permissions to run the 'ltrim' command"
        " script: abc, on @user_script:1."
    )
    error = script_error(exc, keys=("h", "i", "s"), messages=())
    assert isinstance(error, WriteOutcomeUnknownError)
    assert not isinstance(error, PermissionDeniedError)


def test_any_other_script_failure_may_have_written() -> None:
    exc = redis.exceptions.ResponseError("ERR Error running script: something")
    error = script_error(exc, keys=("h", "i", "s"), messages=())
    assert isinstance(error, WriteOutcomeUnknownError)


def test_a_refused_tls_certificate_sent_nothing() -> None:
    import ssl

    try:
        try:
            raise ssl.SSLCertVerificationError("certificate verify failed")
        except ssl.SSLError as tls:
            raise redis.ConnectionError("Error 1 connecting to localhost:6380.") from tls
    except redis.ConnectionError as exc:
        error = storage_error(exc, op=Op.SCRIPT)
    assert isinstance(error, StorageUnavailableError)
    assert not error.may_have_written
    wrong_password = redis.exceptions.AuthenticationError("invalid username-password pair")
    assert not storage_error(wrong_password, op=Op.SCRIPT).may_have_written


def test_a_refused_tls_certificate_is_found_through_an_implicit_chain_too() -> None:
    # _errors.py _tls_refused: an error raised inside "except" without "from" has no
    # __cause__, only __context__ ("__cause__ and __context__" stopped there).
    import ssl

    try:
        try:
            raise ssl.SSLCertVerificationError("certificate verify failed")
        except ssl.SSLError:
            raise redis.ConnectionError("Error 1 connecting to localhost:6380.")  # noqa: B904
    except redis.ConnectionError as exc:
        error = storage_error(exc, op=Op.SCRIPT)
    assert isinstance(error, StorageUnavailableError)
    assert not error.may_have_written


def test_a_failure_inside_redis_py_code_is_a_broken_connection() -> None:
    from chat_memory._compat import internal_failure

    namespace: dict[str, object] = {"__name__": "redis.asyncio.connection"}
    exec("def send(writer):\n    writer.writelines([b'x'])\n", namespace)
    try:
        namespace["send"](None)  # type: ignore[operator]
    except AttributeError as exc:
        error = internal_failure(exc)
    assert isinstance(error, redis.ConnectionError)
    assert isinstance(error.__cause__, AttributeError)
    ours = AttributeError("ours")
    try:
        raise ours
    except AttributeError:
        pass
    assert internal_failure(ours) is None


def test_a_pool_with_no_free_connection_sent_nothing() -> None:
    exhausted = redis.exceptions.MaxConnectionsError("Too many connections")
    error = script_error(exhausted, keys=("h", "i", "s"), messages=())
    assert isinstance(error, StorageUnavailableError)
    assert not error.may_have_written
    assert "BlockingConnectionPool" in str(error)


def test_a_blocking_pool_that_waited_in_vain_sent_nothing() -> None:
    waited = redis.ConnectionError("No connection available.")
    error = script_error(waited, keys=("h", "i", "s"), messages=())
    assert isinstance(error, StorageUnavailableError)
    assert not error.may_have_written
    reset = redis.ConnectionError("Connection closed by server.")
    assert script_error(reset, keys=("h", "i", "s"), messages=()).may_have_written  # type: ignore[attr-defined]


def test_an_exception_never_raised_is_ours_and_one_from_the_redis_package_itself_is_redis_pys() -> (
    None
):
    # _compat.py internal_failure: with no traceback there is no frame ("frame = ''" or
    # "frame is not None or True" crashed); a frame of the module "redis" itself (not only
    # "redis.*") is redis-py's ("XXredisXX", "REDIS").
    from chat_memory._compat import internal_failure

    assert internal_failure(AttributeError("built, never raised")) is None
    namespace: dict[str, object] = {"__name__": "redis"}
    exec("def fail():\n    raise TypeError('from redis/__init__.py')\n", namespace)
    try:
        namespace["fail"]()  # type: ignore[operator]
    except TypeError as exc:
        error = internal_failure(exc)
    assert isinstance(error, redis.ConnectionError)


def test_redis_py_cluster_gives_up_with_ttl_exhausted_only_after_redirections() -> None:
    # "TTL exhausted." is raised after the retry loop, which every other error leaves by
    # raising: so the loop saw only MOVED, ASK or TRYAGAIN, none of which ran the command
    # (redis-py's outer loop may have resent it after a timeout, so a write may have run).
    import redis.asyncio.cluster
    import redis.cluster

    for client in (redis.cluster.RedisCluster, redis.asyncio.cluster.RedisCluster):
        source = inspect.getsource(client)
        assert 'ClusterError("TTL exhausted.")' in source, client
        assert "except TryAgainError" in source, client


def test_a_read_the_cluster_kept_answering_tryagain_is_unavailable() -> None:
    # A slot being migrated answers TRYAGAIN to a script whose keys are split or missing;
    # redis-py retries for about 0.4 s, then gives up with "TTL exhausted.".
    error = storage_error(redis.exceptions.ClusterError("TTL exhausted."), op=Op.READ)
    assert isinstance(error, StorageUnavailableError)
    assert "migrated" in str(error)


@pytest.mark.parametrize("op", [Op.WRITE, Op.SCRIPT])
def test_a_write_the_cluster_kept_answering_tryagain_may_have_happened(op: Op) -> None:
    # None of the TRYAGAIN attempts ran it, but redis-py's outer loop resends a call that
    # timed out, and that earlier attempt may have been applied (review of issue 24).
    messages = [Message("user", "hi", id="m-1")]
    error = storage_error(redis.exceptions.ClusterError("TTL exhausted."), op=op, messages=messages)
    assert isinstance(error, WriteOutcomeUnknownError)
    assert error.may_have_written is True
    assert error.messages == messages
    assert "migrated" in str(error)
