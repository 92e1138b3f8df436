"""Bearer tokens of the HTTP mode: each stands for one episode, until it expires or is revoked.

``clinseek mcp token`` mints a random token, prints it once and stores only its SHA-256 with the
episode it stands for (an :class:`~clinseek.mcpserver.EpisodeSpec`), its expiry and a note, in a token
file (JSON, mode 0600). The server reads that file (again whenever it changes, so a new token works and
a revoked one stops at once) and finds a request's episode from the token alone: no header, argument
or claim the client writes can choose another. A token that is unknown, revoked or expired gets nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ClinseekError
from ..store import redact_url
from ._spec import EpisodeSpec

TOKEN_PREFIX = "csk_"
"""Every token starts with this (it helps secret scanners); 43 random URL-safe characters follow."""


def utc_now() -> datetime:
    """The current time, UTC (the token file's clock)."""
    return datetime.now(UTC)


def token_digest(token: str) -> str:
    """The SHA-256 (hex) a token is stored and looked up by."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenRecord(BaseModel):
    """One minted token: never the token itself, only its digest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """``tk_`` and the digest's first 12 hex digits: names the token in listings, logs and rate limits."""
    sha256: str
    """SHA-256 of the token."""
    spec: EpisodeSpec
    """The episode the token opens."""
    created_at: datetime
    """When it was minted (UTC)."""
    expires_at: datetime | None = None
    """When it stops working (UTC); ``None``: never (until revoked)."""
    note: str = ""
    """Who or what it is for (free text)."""

    def expired(self, now: datetime) -> bool:
        """True from ``expires_at`` on."""
        return self.expires_at is not None and now >= self.expires_at


class TokenFile(BaseModel):
    """The token file's content."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    tokens: list[TokenRecord] = Field(default_factory=list)


MAX_EXPIRY_DAYS = 3_650
"""The longest expiry a token may be given (ten years; ``never`` for none)."""


def parse_duration(text: str) -> timedelta | None:
    """``30m``, ``8h``, ``7d``, ``90s`` (a positive number and a unit) as a duration; ``never`` as ``None``.

    Raises:
        ClinseekError: anything else.
    """
    if text.strip().lower() == "never":
        return None
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text.lower())
    if not found or float(found.group(1)) <= 0:
        raise ClinseekError(f"expiry {text!r}: expected a positive number with s, m, h or d (8h, 7d), or 'never'")
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[found.group(2)]
    try:
        duration = timedelta(**{unit: float(found.group(1))})
        utc_now() + duration  # an expiry past the calendar's end raises here, not when minting
    except OverflowError:
        raise ClinseekError(f"expiry {text!r}: too far in the future (at most {MAX_EXPIRY_DAYS:,} days), or 'never'") from None
    if duration > timedelta(days=MAX_EXPIRY_DAYS):
        raise ClinseekError(f"expiry {text!r}: too far in the future (at most {MAX_EXPIRY_DAYS:,} days), or 'never'")
    return duration


def read_token_file(path: Path) -> TokenFile:
    """The tokens in ``path`` (none when the file does not exist yet).

    Raises:
        ClinseekError: the file cannot be read or is not a token file (names the file and the field).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return TokenFile()
    except (OSError, UnicodeDecodeError) as err:
        raise ClinseekError(f"{path}: cannot read the token file: {err}") from None
    try:
        return TokenFile.model_validate_json(text)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise ClinseekError(f"{path}: not a clinseek token file: {where}: {first['msg']}") from None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialise read-modify-write of the token file between processes (POSIX ``flock``; none elsewhere)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock = path.with_name(f".{path.name}.lock")
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write(path: Path, tokens: TokenFile) -> None:
    """Write the token file whole (a reader sees the old or the new one), readable by its owner only."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(tokens.model_dump_json(indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def mint_token(path: Path, spec: EpisodeSpec, *, expires_in: timedelta | None = timedelta(hours=8), note: str = "",
               now: datetime | None = None) -> tuple[str, TokenRecord]:
    """Mint a token for ``spec`` and add its record to the token file ``path`` (created if needed).

    The record keeps ``spec`` with its paths made absolute (:meth:`EpisodeSpec.resolved`): the server may
    run in another folder. The episode is not opened here (``clinseek mcp token`` checks it first with
    :func:`~clinseek.mcpserver.check_spec`).

    Returns:
        ``(token, record)``: the token is shown once here and stored nowhere.

    Raises:
        ClinseekError: the token file cannot be read or written.
    """
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    digest = token_digest(token)
    created = now or utc_now()
    record = TokenRecord(id=f"tk_{digest[:12]}", sha256=digest, spec=spec.resolved(), created_at=created,
                         expires_at=created + expires_in if expires_in is not None else None, note=note)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            tokens = read_token_file(path)
            tokens.tokens.append(record)
            _write(path, tokens)
    except OSError as err:
        raise ClinseekError(f"{path}: cannot write the token file: {err}") from None
    return token, record


def revoke_token(path: Path, token_id: str) -> TokenRecord:
    """Remove token ``token_id`` (``tk_...``) from the token file; the server refuses it from its next request.

    Raises:
        ClinseekError: no such token in the file, or the file cannot be read or written.
    """
    try:
        with _locked(path):
            tokens = read_token_file(path)
            found = [r for r in tokens.tokens if r.id == token_id]
            if not found:
                known = ", ".join(r.id for r in tokens.tokens) or "none"
                raise ClinseekError(f"{path}: no token {token_id!r} (tokens: {known})")
            tokens.tokens = [r for r in tokens.tokens if r.id != token_id]
            _write(path, tokens)
    except OSError as err:
        raise ClinseekError(f"{path}: cannot write the token file: {err}") from None
    return found[0]


class TokenStore:
    """The server's view of a token file: the record a token stands for, read again when the file changes.

    Args:
        path: the token file.
        clock: the current UTC time (tests pass a fixed one).
    """

    def __init__(self, path: Path, *, clock: Callable[[], datetime] = utc_now) -> None:
        self.path = path
        self.clock = clock
        self._seen: tuple[int, int, int] | None = None
        self._by_digest: dict[str, TokenRecord] = {}
        self._reload()

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _reload(self) -> None:
        stamp = self._stamp()
        if stamp == self._seen and stamp is not None:
            return
        tokens = read_token_file(self.path)
        self._by_digest = {r.sha256: r for r in tokens.tokens}
        self._seen = stamp

    def lookup(self, token: str) -> TokenRecord | None:
        """The record of ``token``; ``None`` when it is unknown, revoked or expired.

        Raises:
            ClinseekError: the token file changed into something that is not a token file.
        """
        self._reload()
        record = self._by_digest.get(token_digest(token))
        return None if record is None or record.expired(self.clock()) else record

    def valid_ids(self) -> set[str]:
        """Ids of the tokens neither revoked nor expired now."""
        self._reload()
        now = self.clock()
        return {r.id for r in self._by_digest.values() if not r.expired(now)}

    def records(self) -> list[TokenRecord]:
        """Every record in the file (expired ones too), oldest first."""
        self._reload()
        return sorted(self._by_digest.values(), key=lambda r: r.created_at)


def describe_record(record: TokenRecord, now: datetime) -> dict[str, object]:
    """What ``clinseek mcp tokens`` lists of a token (never the token, nor its digest)."""
    state = "expired" if record.expired(now) else "valid"
    return {"id": record.id, "episode": record.spec.describe(), "store": redact_url(str(record.spec.store)),
            "created_at": record.created_at.isoformat(timespec="seconds"),
            "expires_at": record.expires_at.isoformat(timespec="seconds") if record.expires_at else "never",
            "state": state, "note": record.note}


def dump_records(records: list[TokenRecord], now: datetime) -> str:
    """The records as JSON lines (one per token)."""
    return "\n".join(json.dumps(describe_record(r, now)) for r in records)
