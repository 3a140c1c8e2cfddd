"""A server that cannot run scripts says so: nothing was written, and what to do instead.

Plain ``fakeredis`` (without its ``lua`` extra) answers ``EVALSHA`` with
"unknown command", as does a proxy that does not pass scripts through. Before
this, that was reported as WriteOutcomeUnknownError ("may or may not have
happened") though an unknown command runs nothing.
"""

import subprocess
import sys
import textwrap

import pytest
import redis

from chat_memory import ScriptingUnavailableError, StorageUnavailableError
from chat_memory._errors import Op, storage_error

_PLAIN_FAKEREDIS = textwrap.dedent(
    """
    import asyncio, sys
    sys.modules["lupa"] = None  # fakeredis as installed without its [lua] extra
    import fakeredis
    import fakeredis.aioredis
    from chat_memory import AsyncMemoryService, MemoryService, ScriptingUnavailableError

    server = fakeredis.FakeServer()
    memory = MemoryService(fakeredis.FakeRedis(server=server))
    try:
        memory.add_message("s", "user", "hi")
    except ScriptingUnavailableError as exc:
        assert exc.may_have_written is False, exc
        print("sync:", exc)
    else:
        sys.exit("the sync append did not fail")

    async def main() -> None:
        memory = AsyncMemoryService(fakeredis.aioredis.FakeRedis(server=server))
        try:
            await memory.add_message("s", "user", "hi")
        except ScriptingUnavailableError as exc:
            assert exc.may_have_written is False, exc
            print("async:", exc)
        else:
            sys.exit("the async append did not fail")

    asyncio.run(main())
    assert fakeredis.FakeRedis(server=server).keys() == [], "something was written"
    """
)


def test_plain_fakeredis_says_the_server_cannot_run_scripts_on_both_apis() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PLAIN_FAKEREDIS], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for api in ("sync", "async"):
        line = next(line for line in done.stdout.splitlines() if line.startswith(api))
        assert "cannot run scripts" in line
        assert "nothing was written" in line
        assert "fakeredis[lua]" in line


@pytest.mark.parametrize(
    "reply",
    [
        "unknown command 'evalsha', with args beginning with: ",  # fakeredis, Redis 6
        "ERR unknown command 'EVALSHA', with args beginning with: 'abc' '1'",  # Redis 7
        "unknown command `evalsha`, with args beginning with: ",  # backquoted
        "ERR unknown command 'script', with args beginning with: 'load'",
        "ERR unsupported command 'evalsha'",  # a proxy
    ],
)
@pytest.mark.parametrize("op", list(Op))
def test_an_unknown_script_command_is_scripting_unavailable(reply: str, op: Op) -> None:
    error = storage_error(redis.ResponseError(reply), op=op)
    assert isinstance(error, ScriptingUnavailableError)
    assert isinstance(error, StorageUnavailableError)
    assert error.may_have_written is False


def test_another_unknown_command_is_not_taken_for_scripting() -> None:
    error = storage_error(
        redis.ResponseError("ERR unknown command 'lpos', with args beginning with: "), op=Op.WRITE
    )
    assert not isinstance(error, ScriptingUnavailableError)
