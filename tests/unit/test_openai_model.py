"""The OpenAI adapter, against the loopback chat-completions stub."""

import fakeredis
import pytest

from chat_memory import ChatService, MemoryService
from tests.llm_stub import answer, running_stub

openai = pytest.importorskip("openai", reason="the openai extra is not installed")

from chat_memory.openai_model import OpenAIChatModel  # noqa: E402 - needs openai first


def test_the_adapter_sends_the_whole_remembered_session() -> None:
    memory = MemoryService(fakeredis.FakeRedis(server=fakeredis.FakeServer()))
    with running_stub() as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        chat = ChatService(memory, OpenAIChatModel(client, "stub-model", temperature=0))
        chat.reply("ada", "Hi, my name is Ada Lovelace.")
        assert chat.reply("ada", "What is my name?") == "Your name is Ada Lovelace."
    assert stub.requests[-1]["model"] == "stub-model"
    assert stub.requests[-1]["temperature"] == 0
    assert [m["content"] for m in stub.requests[-1]["messages"]] == [
        "Hi, my name is Ada Lovelace.",
        "Noted.",
        "What is my name?",
    ]


def test_the_stub_only_knows_what_the_prompt_told_it() -> None:
    assert answer([{"role": "user", "content": "What is my name?"}]) == "I don't know your name."


async def test_the_async_adapter_sends_the_whole_remembered_session() -> None:
    from chat_memory import AsyncChatService, AsyncMemoryService
    from chat_memory.openai_model import AsyncOpenAIChatModel

    memory = AsyncMemoryService(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer()))
    with running_stub() as stub:
        client = openai.AsyncOpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        chat = AsyncChatService(memory, AsyncOpenAIChatModel(client, "stub-model"))
        await chat.reply("ada", "Hi, my name is Ada Lovelace.")
        assert await chat.reply("ada", "What is my name?") == "Your name is Ada Lovelace."
        await client.close()


def _chunk(text: str | None) -> object:
    from types import SimpleNamespace

    return SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=text))])


def test_the_adapters_stream_the_reply_text() -> None:
    from types import SimpleNamespace

    from chat_memory.openai_model import OpenAIChatModel

    sent: list[dict[str, object]] = []

    def create(**request: object) -> object:
        sent.append(request)
        return iter([_chunk("Hello "), _chunk(None), _chunk("Ada.")])

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    model = OpenAIChatModel(client, "m")  # type: ignore[arg-type]
    assert list(model.stream([{"role": "user", "content": "hi"}])) == ["Hello ", "", "Ada."]
    assert sent[0]["stream"] is True


def test_answers_and_chunks_map_exactly() -> None:
    # openai_model.py answer_of and _text_of, on the shapes the SDK returns: a text answer,
    # an answer without text, a tool-call answer with and without text, and a streamed
    # chunk without choices (the usage chunk at the end of a stream).
    from types import SimpleNamespace as Obj

    from chat_memory import Message, ToolCall
    from chat_memory.openai_model import _text_of, answer_of

    def response(content: str | None, calls: list[Obj] | None = None) -> Obj:
        return Obj(choices=[Obj(message=Obj(content=content, tool_calls=calls))])

    call = Obj(id="c-1", function=Obj(name="weather", arguments='{"city": "Paris"}'))
    assert answer_of(response("Hello.")) == "Hello."
    assert answer_of(response(None)) == ""
    assert answer_of(response(None, [call])) == Message(
        "assistant", None, tool_calls=(ToolCall("c-1", "weather", '{"city": "Paris"}'),)
    )
    with_text = answer_of(response("Let me look.", [call]))
    assert isinstance(with_text, Message)
    assert with_text.content == "Let me look."
    assert answer_of(Obj(choices=[Obj(message=Obj(content="no calls field"))])) == "no calls field"
    assert _text_of(Obj(choices=[], usage=Obj(total_tokens=3))) == ""
    assert _text_of(Obj(choices=[Obj(delta=Obj(content=None))])) == ""
    assert _text_of(Obj(choices=[Obj(delta=Obj(content="Hel"))])) == "Hel"
