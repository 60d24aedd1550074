"""Where a lesson's current step is kept, so that a class can follow its teacher, without Streamlit.

A teacher presents a sequence of views; each student's phone shows the step the teacher is on.
The teacher's session publishes that step under an id, and the students' sessions read it. Those
sessions are not in one place: with one server they are threads of one process, and an in-process
store (MemoryStore, the default) is enough; with replicas behind a proxy (deploy/, compose.yaml) the
teacher and the students sit on different processes, and only a store they all reach can carry the
step: Redis, when PE_REDIS_URL names one (RedisStore).

Two values keep a class from taking over the lesson. The teacher holds a secret (it publishes);
the class gets the follow id derived from it one way (it only reads). A follow link, shown on a
projector or passed around, therefore never gives the power to move the class.

A store is reached on every page run of every follower: a dead or stalled Redis must cost a run a
quarter of a second and a StoreUnavailable the page can show, never a hang. Both stores bound what
they hold, since anyone who opens the app can start a lesson.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import math
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Protocol
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

#: A lesson lasts a school day at most; a step nobody republishes for that long is an abandoned lesson.
FOLLOW_TTL_S = 12 * 60 * 60.0
#: The longest a caller may ask for: a finite time, so that no step outlives its lesson for good.
MAX_TTL_S = 24 * 60 * 60.0
#: Ids held at once by one process's MemoryStore; the oldest published goes first.
MAX_ENTRIES = 10_000
#: A step is a view's query string and a few fields: a few hundred bytes. 16 KiB leaves room and
#: keeps one publish from filling memory.
MAX_PAYLOAD_BYTES = 16 * 1024
#: MAX_ENTRIES full-size payloads would be 160 MiB in a replica given 1 GiB (deploy/kubernetes):
#: the MemoryStore's payloads also stay under this total, as st.cache_data stays under 16 MB.
MAX_TOTAL_BYTES = 16 * 1024 * 1024
#: The environment variable that switches the store to Redis.
REDIS_URL_VARIABLE = "PE_REDIS_URL"
REDIS_URL_SCHEMES = ("redis", "rediss", "unix")
REDIS_URL_EXAMPLE = "redis://redis:6379/0"
#: A page run waits at most about this long on Redis per call (connect, then the answer).
REDIS_TIMEOUT_S = 0.25
REDIS_KEY_PREFIX = "pe:follow:"

#: Length of a follow id: 22 base64url characters are 132 bits of the hash, beyond guessing.
FOLLOW_ID_LENGTH = 22
_FOLLOW_ID_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: Keeps the follow ids of this app apart from any other hash of the same secret.
_FOLLOW_ID_DOMAIN = b"pe-follow:"


class StoreUnavailable(RuntimeError):  # noqa: N818  (the lessons' UI imports this name)
    """The shared store (Redis) cannot be reached or did not answer in time.

    The message names the store's host and port (or socket path), never its password; the
    page shows it and goes on without the lesson's step.
    """


class FollowStore(Protocol):
    """What the UI needs of a store: MemoryStore and RedisStore both are one."""

    def publish(self, follow_id: str, payload: str, ttl_s: float = FOLLOW_TTL_S) -> None: ...

    def read(self, follow_id: str) -> str | None: ...


def new_teacher_secret() -> str:
    """A fresh secret for a teacher's lesson: 18 random bytes, 24 URL-safe characters."""
    return secrets.token_urlsafe(18)


def follow_id(secret: str) -> str:
    """The id a class follows, derived one way from the teacher's ``secret``.

    A hash, so that the follow link cannot be turned back into the secret that publishes.
    Any non-empty string is a secret (an empty one would give every teacher the same id).
    """
    if not isinstance(secret, str) or not secret:
        raise ValueError("a teacher's secret is a non-empty string (new_teacher_secret() makes one)")
    # surrogatepass: every Python string has an encoding, and distinct strings distinct ones.
    digest = hashlib.sha256(_FOLLOW_ID_DOMAIN + secret.encode("utf-8", "surrogatepass")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")[:FOLLOW_ID_LENGTH]


def is_follow_id(text: object) -> bool:
    """Whether ``text`` (read from a URL, say) has the form of a follow id: 22 base64url characters."""
    return isinstance(text, str) and len(text) == FOLLOW_ID_LENGTH and set(text) <= _FOLLOW_ID_ALPHABET


def _check_follow_id(follow_id: object) -> str:
    if not is_follow_id(follow_id):
        raise ValueError(
            f"not a follow id: expected {FOLLOW_ID_LENGTH} characters of A-Z a-z 0-9 - _ "
            "(follow_id(secret) makes one)"
        )
    return follow_id  # type: ignore[return-value]  # is_follow_id checked it is a str


def _encode_payload(payload: object) -> bytes:
    if not isinstance(payload, str):
        raise ValueError(f"a payload is a str, not {type(payload).__name__}")
    try:
        data = payload.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"a payload must be encodable as UTF-8 (a lone surrogate at {error.start})") from None
    if len(data) > MAX_PAYLOAD_BYTES:
        raise ValueError(
            f"a payload is at most {MAX_PAYLOAD_BYTES} bytes in UTF-8, this one is {len(data)}: publish the "
            "view's settings (its query string), not what the view computes"
        )
    return data


def _check_ttl(ttl_s: float) -> float:
    # The comparison is False for NaN, and infinity is out of range.
    if not isinstance(ttl_s, (int, float)) or not 0 < ttl_s <= MAX_TTL_S:
        raise ValueError(f"ttl_s is a number of seconds in (0, {MAX_TTL_S:g}], not {ttl_s!r}")
    return float(ttl_s)


class MemoryStore:
    """The steps of this process's lessons, in memory: enough when teacher and class share one server.

    Safe to use from every session's thread at once. Holds at most MAX_ENTRIES ids and
    MAX_TOTAL_BYTES of payload; past either, the id published longest ago is dropped first.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        # A monotonic clock: a change of the wall clock must not expire or revive a lesson.
        self._clock = clock
        self._lock = threading.Lock()
        # follow id -> (expiry on self._clock, payload, its UTF-8 size), oldest published first.
        self._entries: OrderedDict[str, tuple[float, str, int]] = OrderedDict()
        self._total_bytes = 0

    def publish(self, follow_id: str, payload: str, ttl_s: float = FOLLOW_TTL_S) -> None:
        """Keep ``payload`` as ``follow_id``'s step for ``ttl_s`` seconds, replacing the one before."""
        _check_follow_id(follow_id)
        size = len(_encode_payload(payload))
        ttl_s = _check_ttl(ttl_s)
        with self._lock:
            now = self._clock()
            self._drop(follow_id)
            # Republishing makes an id the newest: an active lesson is the last to be evicted.
            self._entries[follow_id] = (now + ttl_s, payload, size)
            self._total_bytes += size
            while len(self._entries) > MAX_ENTRIES or self._total_bytes > MAX_TOTAL_BYTES:
                self._drop(next(iter(self._entries)))
            # Expired entries at the old end go now, so an idle server does not keep them until eviction.
            while self._entries:
                oldest = next(iter(self._entries))
                if self._entries[oldest][0] > now:
                    break
                self._drop(oldest)

    def read(self, follow_id: str) -> str | None:
        """``follow_id``'s step, or None when nothing was published under it or it has expired."""
        _check_follow_id(follow_id)
        with self._lock:
            entry = self._entries.get(follow_id)
            if entry is None:
                return None
            if entry[0] <= self._clock():
                self._drop(follow_id)
                return None
            return entry[1]

    def __len__(self) -> int:
        """Ids held, expired ones not yet dropped included."""
        with self._lock:
            return len(self._entries)

    def _drop(self, follow_id: str) -> None:
        # Called with the lock held.
        entry = self._entries.pop(follow_id, None)
        if entry is not None:
            self._total_bytes -= entry[2]


def _check_redis_url(url: str) -> str:
    """Where ``url`` points (host:port, or the socket's path), for messages; ValueError if it is no Redis URL."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port that is not a number in 0..65535
    except ValueError:
        raise ValueError(f"not a valid Redis URL; for example {REDIS_URL_EXAMPLE}") from None
    if parts.scheme.lower() not in REDIS_URL_SCHEMES:
        raise ValueError(
            f"a Redis URL starts with redis://, rediss:// or unix:// (this one starts with "
            f"{parts.scheme + '://' if parts.scheme else 'no scheme'}); for example {REDIS_URL_EXAMPLE}"
        )
    if parts.scheme.lower() == "unix":
        if not parts.path:
            raise ValueError(f"a unix:// Redis URL names the socket's path (unix:///run/redis/redis.sock); "
                             f"over TCP, for example {REDIS_URL_EXAMPLE}")
        return parts.path
    if not parts.hostname:
        raise ValueError(f"a Redis URL names a host; for example {REDIS_URL_EXAMPLE}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port or 6379}"


#: redis-py turns socket failures into its ConnectionError and TimeoutError; OSError is caught as well
#: so that no failure of the network reaches a page as anything but StoreUnavailable.
_REDIS_FAILURES = (redis.RedisError, OSError)


class RedisStore:
    """The steps of every replica's lessons in one Redis, under keys ``pe:follow:<id>`` that expire.

    No call waits more than about REDIS_TIMEOUT_S to connect and as long for the answer, and none
    is retried: a class's page runs must not queue behind a dead Redis. Every Redis error is raised
    as StoreUnavailable. The connection is made on first use and made again after a failure, so
    the store works again as soon as Redis does, with no new store. Options in the URL's query
    string (``?socket_timeout=1``) override these, as redis-py has it.
    """

    def __init__(self, url: str) -> None:
        self.where = _check_redis_url(url)
        # The password is in the URL and in redis-py's connection settings only: kept for
        # scrubbing it from messages, never shown.
        self._password = urlsplit(url).password
        try:
            self._client = redis.Redis.from_url(
                url,
                socket_connect_timeout=REDIS_TIMEOUT_S,
                socket_timeout=REDIS_TIMEOUT_S,
                retry=Retry(NoBackoff(), retries=0),
            )
        except ValueError as error:  # an option of the query string redis-py cannot read (?db=x)
            raise ValueError(f"{error} For example {REDIS_URL_EXAMPLE}") from None

    def publish(self, follow_id: str, payload: str, ttl_s: float = FOLLOW_TTL_S) -> None:
        """``SET pe:follow:<id> payload EX ttl``; StoreUnavailable when Redis does not answer."""
        key = REDIS_KEY_PREFIX + _check_follow_id(follow_id)
        data = _encode_payload(payload)
        # EX takes whole seconds; rounding up never expires a step before its time.
        seconds = math.ceil(_check_ttl(ttl_s))
        try:
            self._client.set(key, data, ex=seconds)
        except _REDIS_FAILURES as error:
            raise self._unavailable(error) from error

    def read(self, follow_id: str) -> str | None:
        """``GET pe:follow:<id>`` as text; None when absent or expired; StoreUnavailable when Redis does not answer."""
        key = REDIS_KEY_PREFIX + _check_follow_id(follow_id)
        try:
            data = self._client.get(key)
        except _REDIS_FAILURES as error:
            raise self._unavailable(error) from error
        if data is None:
            return None
        # Redis is shared: a value publish() could not have written is no step (followers
        # parse a step as untrusted text anyway).
        if not isinstance(data, bytes) or len(data) > MAX_PAYLOAD_BYTES:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def close(self) -> None:
        """Close the connections (a later call opens one again)."""
        self._client.close()

    def __repr__(self) -> str:
        return f"RedisStore(<{self.where}>)"

    def _unavailable(self, error: Exception) -> StoreUnavailable:
        detail = str(error)
        if self._password:
            detail = detail.replace(self._password, "***")
        return StoreUnavailable(f"the lesson store (Redis at {self.where}) is unavailable: "
                                f"{type(error).__name__}: {detail}")


def store_from_environment(environ: Mapping[str, str] = os.environ) -> MemoryStore | RedisStore:
    """RedisStore when PE_REDIS_URL is set and not empty (replicas), else MemoryStore (one process).

    ValueError, naming the variable, when PE_REDIS_URL is not a redis://, rediss:// or unix:// URL;
    nothing is connected yet (RedisStore connects on first use).
    """
    url = environ.get(REDIS_URL_VARIABLE, "").strip()
    if not url:
        return MemoryStore()
    try:
        return RedisStore(url)
    except ValueError as error:
        # Not the URL itself in the message: it may hold a password.
        raise ValueError(f"{REDIS_URL_VARIABLE}: {error}") from None


@functools.cache
def shared_store() -> MemoryStore | RedisStore:
    """The process's one store, made from os.environ on first call.

    One per process, since a MemoryStore is only shared by the sessions that hold the same
    object, and a RedisStore's connection pool is meant to be shared by threads. The environment
    is read once: a change of PE_REDIS_URL takes a restart (``shared_store.cache_clear()`` in tests).
    """
    return store_from_environment(os.environ)
