import pytest
from hypothesis import given
from hypothesis import strategies as st

from chat_memory import InvalidInputError, InvalidSessionIdError, KeyLayout
from chat_memory._keys import decode_session_id, encode_session_id

session_ids = st.text(min_size=1, max_size=256).filter(
    lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)
)


def test_default_layout_names_the_history_key_with_a_hash_tag() -> None:
    keys = KeyLayout()
    assert keys.history("alice") == "chat:session:{alice}:history"
    assert keys.ids("alice") == "chat:session:{alice}:ids"


def test_characters_that_could_break_the_key_are_percent_encoded() -> None:
    assert KeyLayout().history("a:{b} *%") == "chat:session:{a%3A%7Bb%7D%20%2A%25}:history"


@given(session_ids, session_ids)
def test_no_two_ids_share_a_key(first: str, second: str) -> None:
    if first != second:
        assert encode_session_id(first) != encode_session_id(second)


@given(session_ids)
def test_an_id_never_leaves_its_hash_tag_or_namespace(session_id: str) -> None:
    encoded = encode_session_id(session_id)
    assert not set(encoded) & set("{}:*?[] \n\r\t")
    assert KeyLayout("ns").history(session_id) == f"ns:session:{{{encoded}}}:history"


@pytest.mark.parametrize("bad", ["", "x" * 257, 42, None, "\ud800"])
def test_bad_session_ids_are_refused(bad: object) -> None:
    with pytest.raises(InvalidSessionIdError):
        encode_session_id(bad)  # type: ignore[arg-type]


# A glob character would make the SCAN patterns reach other namespaces' keys.
@pytest.mark.parametrize("bad", ["", "a b", "a{b}", "x" * 65, 3, "a*", "a?", "a[b]", "a\\b"])
def test_bad_namespaces_are_refused(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="namespace"):
        KeyLayout(bad)  # type: ignore[arg-type]


def test_the_scan_pattern_matches_only_the_namespace() -> None:
    assert KeyLayout("chat-test_1").pattern() == "chat-test_1:session:*"


def test_an_encoding_that_is_not_utf8_is_never_read_as_another_id() -> None:
    assert decode_session_id("ada%40example.com%2Fx") == "ada@example.com/x"
    with pytest.raises(UnicodeDecodeError):
        decode_session_id("ada%FF")  # not "ada\ufffd": that would be someone else's session
