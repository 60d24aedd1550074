"""explorer/follow_store.py: where a lesson's step is kept, in one process and across replicas.

The memory store with an injected clock (expiry, the bounds, bad ids and payloads, threads at
once); the ids (a fixed one-way derivation, a strict format); and the Redis store against a
real redis-server on loopback (tests/support/redis_harness.py): keys and TTLs as Redis holds
them, a Redis stopped, restarted or frozen mid-way, a password kept out of every message.
Without redis-server the Redis tests skip, unless PE_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import ast
import base64
import contextlib
import hashlib
import math
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.redis_harness import RedisServer, require_redis_server
from support.st_client import free_port

from explorer import follow_store as fs
from explorer.follow_store import (
    FOLLOW_TTL_S,
    MAX_ENTRIES,
    MAX_PAYLOAD_BYTES,
    MAX_TOTAL_BYTES,
    MemoryStore,
    RedisStore,
    StoreUnavailable,
    follow_id,
    is_follow_id,
    new_teacher_secret,
    shared_store,
    store_from_environment,
)

MODULE = Path(fs.__file__)
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
BAD_IDS = [
    "", "a", "A" * 21, "A" * 23, "A" * 21 + "=", "A" * 21 + "+", "A" * 21 + "/", "A" * 21 + " ", "A" * 21 + "\n",
    "é" * 22, "٣" * 22, "A" * 21 + "\x00", None, b"A" * 22, 22,
]
#: Text whose UTF-8 encoding fits a payload: any characters UTF-8 can encode (no lone surrogates),
#: short, or long and of 3- and 4-byte characters, up to 12,000 bytes.
PAYLOADS = (st.text(alphabet=st.characters(codec="utf-8"), max_size=300)
            | st.text(alphabet=st.characters(min_codepoint=0x800, codec="utf-8"), max_size=3000))
PASSWORD = "s3cret-Pa55word-not-for-messages"


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def an_id() -> str:
    return follow_id(new_teacher_secret())


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


# --- the module -----------------------------------------------------------------------------


def test_the_module_imports_no_streamlit() -> None:
    tree = ast.parse(MODULE.read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 and node.module}
    assert "redis" in imported and not imported & {"streamlit", "plotly", "pandas"}, imported


# --- ids --------------------------------------------------------------------------------------


def test_a_follow_id_is_the_documented_hash_of_the_secret() -> None:
    """Pinned: replicas of different versions, and the UI, must agree on a secret's id."""
    secret = "teacher-secret"
    expected = base64.urlsafe_b64encode(hashlib.sha256(b"pe-follow:" + secret.encode()).digest()).decode()[:22]
    assert follow_id(secret) == expected
    assert secret not in follow_id(secret)


def test_a_teacher_secret_is_fresh_url_safe_text() -> None:
    secrets = {new_teacher_secret() for _ in range(200)}
    assert len(secrets) == 200
    for secret in secrets:
        assert len(secret) == 24 and set(secret) <= set(ALPHABET), secret
        assert follow_id(secret) != secret[:22]


@pytest.mark.parametrize("secret", ["", None, b"bytes"])
def test_a_secret_is_a_non_empty_string(secret: object) -> None:
    with pytest.raises(ValueError, match="secret"):
        follow_id(secret)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", BAD_IDS, ids=repr)
def test_is_follow_id_refuses_anything_but_22_base64url_characters(text: object) -> None:
    assert not is_follow_id(text)


def test_is_follow_id_accepts_every_character_of_the_alphabet() -> None:
    for start in range(0, len(ALPHABET), 22):
        chunk = (ALPHABET[start:] + ALPHABET)[:22]
        assert is_follow_id(chunk), chunk


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1))
def test_every_secret_gives_a_valid_id_and_always_the_same(secret: str) -> None:
    made = follow_id(secret)
    assert is_follow_id(made), (secret, made)
    assert follow_id(secret) == made


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=2, max_size=50, unique=True))
def test_distinct_secrets_give_distinct_ids(secrets: list[str]) -> None:
    assert len({follow_id(secret) for secret in secrets}) == len(secrets)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_a_wrong_length_or_character_is_never_an_id(text: str) -> None:
    if len(text) != 22 or not set(text) <= set(ALPHABET):
        assert not is_follow_id(text), text


# --- the memory store -------------------------------------------------------------------------


def test_memory_store_round_trip_and_overwrite() -> None:
    store, one, other = MemoryStore(), an_id(), an_id()
    assert store.read(one) is None
    store.publish(one, "page=waves&d=64")
    assert store.read(one) == "page=waves&d=64" and store.read(other) is None
    store.publish(one, "page=similarity")
    assert store.read(one) == "page=similarity" and len(store) == 1
    store.publish(other, "")
    assert store.read(other) == "" and store.read(one) == "page=similarity"


def test_memory_store_entries_expire_on_its_clock() -> None:
    clock = FakeClock()
    store, short, default = MemoryStore(clock=clock), an_id(), an_id()
    store.publish(short, "one", ttl_s=10)
    store.publish(default, "two")
    clock.now += 9.999
    assert store.read(short) == "one"
    clock.now += 0.001
    assert store.read(short) is None and store.read(default) == "two"
    clock.now += FOLLOW_TTL_S - 10 - 1
    assert store.read(default) == "two"
    store.publish(default, "three")  # republishing gives a full TTL again
    clock.now += FOLLOW_TTL_S - 1
    assert store.read(default) == "three"
    clock.now += 1
    assert store.read(default) is None
    assert len(store) == 0, "an expired entry read is dropped"


def test_memory_store_drops_expired_entries_when_one_publishes() -> None:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    for _ in range(5):
        store.publish(an_id(), "old", ttl_s=1)
    clock.now += 2
    fresh = an_id()
    store.publish(fresh, "new")
    assert len(store) == 1 and store.read(fresh) == "new"


def test_memory_store_holds_at_most_max_entries_dropping_the_oldest_published() -> None:
    store = MemoryStore()
    ids = [follow_id(f"secret {number}") for number in range(MAX_ENTRIES + 5)]
    for number, id_ in enumerate(ids[:MAX_ENTRIES]):
        store.publish(id_, str(number))
    store.publish(ids[0], "republished")  # the oldest becomes the newest
    for number, id_ in enumerate(ids[MAX_ENTRIES:], start=MAX_ENTRIES):
        store.publish(id_, str(number))
    assert len(store) == MAX_ENTRIES
    assert store.read(ids[0]) == "republished"
    assert all(store.read(id_) is None for id_ in ids[1:6])
    assert store.read(ids[6]) == "6" and store.read(ids[-1]) == str(len(ids) - 1)


def test_memory_store_holds_at_most_max_total_bytes_of_payload() -> None:
    store, full = MemoryStore(), "x" * MAX_PAYLOAD_BYTES
    fit = MAX_TOTAL_BYTES // MAX_PAYLOAD_BYTES
    ids = [an_id() for _ in range(fit + 2)]
    for id_ in ids:
        store.publish(id_, full)
    assert len(store) == fit
    assert store.read(ids[0]) is None and store.read(ids[1]) is None and store.read(ids[2]) == full
    # A small payload in place of a large one frees the difference, to the byte.
    store.publish(ids[-1], "small")
    store.publish(an_id(), "x" * (MAX_PAYLOAD_BYTES - len("small")))
    assert len(store) == fit + 1 and store.read(ids[2]) == full
    store.publish(an_id(), "x")
    assert len(store) == fit + 1 and store.read(ids[2]) is None


@pytest.mark.parametrize("make", [MemoryStore, lambda: RedisStore(f"redis://127.0.0.1:{free_port()}/0")],
                         ids=["memory", "redis-not-reached"])
def test_both_stores_refuse_bad_ids_and_payloads_before_any_network(make) -> None:
    """ValueError, not StoreUnavailable: the Redis store here points at a port nobody listens on."""
    store = make()
    for bad in BAD_IDS:
        with pytest.raises(ValueError, match="not a follow id"):
            store.publish(bad, "x")
        with pytest.raises(ValueError, match="not a follow id"):
            store.read(bad)
    id_ = an_id()
    for payload, words in [
        ("x" * (MAX_PAYLOAD_BYTES + 1), "at most 16384 bytes"),
        ("é" * (MAX_PAYLOAD_BYTES // 2) + "a", "this one is 16385"),  # 8193 characters, 16385 bytes
        ("a\udc80b", "UTF-8"),
        (b"bytes", "str"),
        (None, "str"),
    ]:
        with pytest.raises(ValueError, match=words):
            store.publish(id_, payload)
    for ttl in [0, -1, math.nan, math.inf, 2 * FOLLOW_TTL_S + 1, "60"]:
        with pytest.raises(ValueError, match="ttl_s"):
            store.publish(id_, "x", ttl_s=ttl)


def test_memory_store_takes_a_payload_of_exactly_the_limit() -> None:
    store, ascii_id, wide_id = MemoryStore(), an_id(), an_id()
    store.publish(ascii_id, "x" * MAX_PAYLOAD_BYTES)
    store.publish(wide_id, "é" * (MAX_PAYLOAD_BYTES // 2))
    assert utf8_size(store.read(wide_id)) == MAX_PAYLOAD_BYTES == len(store.read(ascii_id))


def test_memory_store_from_many_threads_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Teachers publishing and classes reading at once, with evictions under way: no error, the
    bound kept, each teacher's id holding its last step or nothing (evicted), and the count of
    bytes held right."""
    monkeypatch.setattr(fs, "MAX_ENTRIES", 64)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, to let races show
    store = MemoryStore()
    teachers = [an_id() for _ in range(8)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(teachers) * 2)

    def teach(id_: str) -> None:
        try:
            start.wait()
            for step in range(400):
                store.publish(id_, f"step {step}")
                store.publish(an_id(), "x" * 100)  # someone else's lesson, to keep evicting
        except BaseException as error:
            errors.append(error)

    def follow(id_: str) -> None:
        try:
            start.wait()
            for _ in range(800):
                value = store.read(id_)
                assert value is None or value.startswith(("step ", "x")), value
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(id_,)) for id_ in teachers for work in (teach, follow)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert not errors, errors
    assert len(store) <= 64
    held = [store.read(id_) for id_ in teachers]
    assert all(value in (None, "step 399") for value in held), held
    # The running byte count agrees with what is held (a lost update would leave them apart).
    assert store._total_bytes == sum(size for _, _, size in store._entries.values())


@settings(max_examples=200, deadline=None)
@given(PAYLOADS)
def test_any_text_within_the_limit_round_trips_through_the_memory_store(payload: str) -> None:
    store, id_ = MemoryStore(), an_id()
    store.publish(id_, payload)
    assert store.read(id_) == payload


# --- the Redis store, against a real redis-server ------------------------------------------


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """One server for the tests that leave it running."""
    require_redis_server()
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_to_break() -> Iterator[RedisServer]:
    """A server of its own, for a test that stops or freezes it."""
    require_redis_server()
    with RedisServer() as server:
        yield server


def raw_client(server: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(server.url)


def test_redis_store_round_trip_under_its_key(redis_server: RedisServer) -> None:
    store, id_ = RedisStore(redis_server.url), an_id()
    assert store.read(id_) is None
    store.publish(id_, "page=waves&d=64 é")
    assert store.read(id_) == "page=waves&d=64 é"
    assert raw_client(redis_server).get(f"pe:follow:{id_}") == "page=waves&d=64 é".encode()
    store.publish(id_, "page=similarity")
    assert store.read(id_) == "page=similarity"
    # A second store (another replica) reads what the first published.
    assert RedisStore(redis_server.url).read(id_) == "page=similarity"
    assert store.where == f"127.0.0.1:{redis_server.port}"


def test_redis_store_sets_the_ttl_rounded_up_to_whole_seconds(redis_server: RedisServer) -> None:
    store, client = RedisStore(redis_server.url), raw_client(redis_server)
    default, fractional = an_id(), an_id()
    store.publish(default, "x")
    store.publish(fractional, "x", ttl_s=100.01)
    # TTL counts down from the moment of SET: bounded above by what was set, and within a second of it.
    assert FOLLOW_TTL_S - 1 <= client.ttl(f"pe:follow:{default}") <= FOLLOW_TTL_S
    assert 100_010 < client.pttl(f"pe:follow:{fractional}") <= 101_000
    store.publish(fractional, "y")  # republishing resets it
    assert client.ttl(f"pe:follow:{fractional}") >= FOLLOW_TTL_S - 1


def test_redis_store_reads_a_value_it_could_not_have_written_as_nothing(redis_server: RedisServer) -> None:
    store, client = RedisStore(redis_server.url), raw_client(redis_server)
    not_utf8, too_long = an_id(), an_id()
    client.set(f"pe:follow:{not_utf8}", b"\xff\xfe step")
    client.set(f"pe:follow:{too_long}", b"x" * (MAX_PAYLOAD_BYTES + 1))
    assert store.read(not_utf8) is None and store.read(too_long) is None


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=PAYLOADS)
def test_any_text_within_the_limit_round_trips_through_redis(redis_server: RedisServer, payload: str) -> None:
    store, id_ = RedisStore(redis_server.url), an_id()
    store.publish(id_, payload)
    assert store.read(id_) == payload
    store.close()


def test_a_stopped_redis_gives_store_unavailable_and_a_restarted_one_works_again(redis_to_break) -> None:
    server = redis_to_break
    store, id_ = RedisStore(server.url), an_id()
    store.publish(id_, "before")
    server.stop()
    for call in (lambda: store.read(id_), lambda: store.publish(id_, "during")):
        with pytest.raises(StoreUnavailable, match=rf"127\.0\.0\.1:{server.port}"):
            call()
    server.start()
    # The same store, no new one: redis-py connects again by itself. Persistence is off: nothing kept.
    assert store.read(id_) is None
    store.publish(id_, "after")
    assert store.read(id_) == "after"


def test_a_restart_the_store_never_saw_costs_no_error(redis_to_break) -> None:
    """The pooled connection died with the old server; the next call gets a new one."""
    server = redis_to_break
    store, id_ = RedisStore(server.url), an_id()
    store.publish(id_, "before")
    server.stop()
    server.start()
    assert store.read(id_) is None
    store.publish(id_, "after")
    assert store.read(id_) == "after"


def test_a_frozen_redis_gives_store_unavailable_instead_of_a_hang(redis_to_break) -> None:
    """SIGSTOP: connections are accepted and nothing answers; the socket timeout ends the call."""
    server = redis_to_break
    store, id_ = RedisStore(server.url), an_id()
    store.publish(id_, "before")
    server.pause()
    try:
        with pytest.raises(StoreUnavailable, match="TimeoutError"):
            store.read(id_)
        with pytest.raises(StoreUnavailable, match="TimeoutError"):
            store.publish(id_, "during")
    finally:
        server.resume()
    assert store.read(id_) == "before"


def test_a_call_to_a_redis_that_never_answers_is_one_attempt_under_the_short_timeouts() -> None:
    """A socket that accepts and never answers: one connection, no retry (each would add a
    timeout to a page run), and the timeouts the store was given (their length is not timed here)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        store = RedisStore(f"redis://127.0.0.1:{listener.getsockname()[1]}/0")
        with pytest.raises(StoreUnavailable, match="TimeoutError"):
            store.read(an_id())
        listener.setblocking(False)
        attempts = []
        with contextlib.suppress(BlockingIOError):
            while True:
                attempts.append(listener.accept()[0])
        for connection in attempts:
            connection.close()
    assert len(attempts) == 1, attempts
    settings_used = store._client.connection_pool.connection_kwargs
    assert settings_used["socket_timeout"] == settings_used["socket_connect_timeout"] == fs.REDIS_TIMEOUT_S <= 0.5


def test_no_message_shows_the_password_of_the_url() -> None:
    require_redis_server()
    with RedisServer("--requirepass", PASSWORD) as server:
        good = RedisStore(f"redis://:{PASSWORD}@127.0.0.1:{server.port}/0")
        id_ = an_id()
        good.publish(id_, "with the password")
        assert good.read(id_) == "with the password"
        assert PASSWORD not in repr(good)

        wrong = RedisStore(f"redis://:{PASSWORD}-wrong@127.0.0.1:{server.port}/0")
        with pytest.raises(StoreUnavailable) as refused:
            wrong.read(id_)
        assert f"127.0.0.1:{server.port}" in str(refused.value) and PASSWORD not in str(refused.value)

        server.stop()
        with pytest.raises(StoreUnavailable) as unreachable:
            good.read(id_)
        assert f"127.0.0.1:{server.port}" in str(unreachable.value) and PASSWORD not in str(unreachable.value)


def test_the_scrubbing_of_a_password_from_an_error_message() -> None:
    """Should redis-py ever put the password in an error's text, the message still does not show it."""
    store = RedisStore(f"redis://user:{PASSWORD}@127.0.0.1:{free_port()}/0")
    message = str(store._unavailable(redis.ConnectionError(f"cannot log in with {PASSWORD}")))
    assert PASSWORD not in message and "***" in message and f"{store.where}" in message


# --- choosing the store -------------------------------------------------------------------------


@pytest.mark.parametrize("environ", [{}, {"PE_REDIS_URL": ""}, {"PE_REDIS_URL": "  "}, {"OTHER": "redis://x"}])
def test_without_a_redis_url_the_store_is_in_memory(environ: dict[str, str]) -> None:
    assert type(store_from_environment(environ)) is MemoryStore


@pytest.mark.parametrize(("url", "where"), [
    ("redis://redis:6379/0", "redis:6379"),
    ("redis://:pw@redis/1", "redis:6379"),
    ("rediss://user:pw@cache.example.org:6380/0", "cache.example.org:6380"),
    ("REDIS://redis:6379", "redis:6379"),
    ("redis://[::1]:6379/0", "[::1]:6379"),
    ("unix:///run/redis/redis.sock?db=0", "/run/redis/redis.sock"),
])
def test_a_redis_url_gives_the_redis_store_without_connecting(url: str, where: str) -> None:
    store = store_from_environment({"PE_REDIS_URL": url})
    assert type(store) is RedisStore and store.where == where
    assert "pw" not in repr(store)


@pytest.mark.parametrize("url", [
    "http://redis:6379", "localhost:6379", "redis:6379", "redis:///0", "redis://:pw@redis:port/0",
    "redis://redis:99999", "unix://", "memcached://cache:11211", "redis://redis:6379/0?db=notanumber",
])
def test_a_url_that_is_no_redis_url_is_refused_naming_the_variable(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        store_from_environment({"PE_REDIS_URL": url})
    message = str(refused.value)
    assert message.startswith("PE_REDIS_URL: "), message
    assert "redis://" in message and ":pw@" not in message, message


def test_an_unknown_scheme_is_named_with_an_example() -> None:
    with pytest.raises(ValueError, match=r"redis://, rediss:// or unix://.*http://.*redis://redis:6379/0"):
        store_from_environment({"PE_REDIS_URL": "http://redis:6379"})


@pytest.fixture
def fresh_shared_store() -> Iterator[None]:
    shared_store.cache_clear()
    yield
    shared_store.cache_clear()


def test_the_shared_store_is_one_per_process_from_the_environment(fresh_shared_store, monkeypatch) -> None:
    monkeypatch.delenv("PE_REDIS_URL", raising=False)
    first = shared_store()
    assert type(first) is MemoryStore and shared_store() is first
    id_ = an_id()
    first.publish(id_, "seen by every session")
    assert shared_store().read(id_) == "seen by every session"

    shared_store.cache_clear()
    monkeypatch.setenv("PE_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    assert type(shared_store()) is RedisStore and shared_store() is shared_store()
