"""An on-disk cache of compiled artifacts, safe to share between processes.

Contract:

* `from_env()` returns the cache selected by `PYFRONT_CACHE_DIR`, or None when
  caching is off. Unset means `$XDG_CACHE_HOME/pyfront`, else
  `~/.cache/pyfront`. The values `off`, `0`, `false`, `none` (any case) and
  the empty string turn caching off; anything else is the directory to use.
  The variable is read on every call so that a process (or a test) can change
  it at run time.
* `make_key(*parts)` hashes its parts (str or bytes) into a hex SHA-256 key.
  Parts are length-prefixed, so ("ab", "c") and ("a", "bc") differ.
* `DiskCache.get(key)` returns the stored bytes, or None for a missing,
  truncated or corrupted entry: every entry carries a header with the
  payload's length and SHA-256, and an entry that does not match it is never
  returned. The caller then recompiles and `put`s a fresh entry over it.
* `DiskCache.put(key, payload)` writes a temporary file in the cache
  directory and renames it over the entry with `os.replace`, which is atomic,
  so a concurrent reader sees either the old entry, the new one or none.
* Neither method raises for an OS error (read-only or missing directory, full
  disk, permissions): the cache degrades to not caching, reported only at
  DEBUG level on the `pyfront.runtime` logger.

No eviction: entries stay until the directory is removed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
from pathlib import Path

_log = logging.getLogger("pyfront.runtime")

ENV_VAR = "PYFRONT_CACHE_DIR"
_DISABLED_VALUES = frozenset({"", "0", "off", "false", "none"})

# Entry layout: magic, payload length (u64 LE), SHA-256 of the payload, payload.
# The magic carries the layout version: a new layout gets a new magic.
_MAGIC = b"PYFRNT01"
_HEADER = struct.Struct("<8sQ32s")


def default_directory() -> Path:
    """Where the cache lives when `PYFRONT_CACHE_DIR` is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyfront"


def from_env() -> DiskCache | None:
    """The cache `PYFRONT_CACHE_DIR` selects, or None when caching is off."""
    value = os.environ.get(ENV_VAR)
    if value is None:
        return DiskCache(default_directory())
    if value.strip().lower() in _DISABLED_VALUES:
        return None
    return DiskCache(Path(value).expanduser())


def make_key(*parts: str | bytes) -> str:
    """A hex SHA-256 over length-prefixed parts."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else bytes(part)
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    return h.hexdigest()


def encode_entry(payload: bytes) -> bytes:
    """Header + payload, as stored on disk."""
    return _HEADER.pack(_MAGIC, len(payload), hashlib.sha256(payload).digest()) + payload


def decode_entry(data: bytes) -> bytes | None:
    """The payload of a stored entry, or None if the entry is not intact."""
    if len(data) < _HEADER.size:
        return None
    magic, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if magic != _MAGIC or length != len(payload):
        return None
    if hashlib.sha256(payload).digest() != digest:
        return None
    return payload


class DiskCache:
    """Byte payloads stored under hex keys in one directory."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def __repr__(self) -> str:
        return f"DiskCache({str(self.directory)!r})"

    def path_for(self, key: str) -> Path:
        if not key or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"cache keys are lowercase hex strings, got {key!r}")
        return self.directory / f"{key}.bin"

    def get(self, key: str) -> bytes | None:
        path = self.path_for(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            _log.debug("pyfront cache: cannot read %s: %s", path, e)
            return None
        payload = decode_entry(data)
        if payload is None:
            _log.debug("pyfront cache: ignoring corrupted entry %s", path)
        return payload

    def put(self, key: str, payload: bytes) -> bool:
        """Store `payload`; True if it was written, False if caching failed."""
        path = self.path_for(key)
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # The temporary file sits in the same directory so that the
            # rename stays on one file system and is therefore atomic.
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{key[:16]}.", suffix=".tmp")
            # No fsync: after a crash the entry may be short or garbled, and
            # the checksum makes get() ignore it, which costs one recompile.
            with os.fdopen(fd, "wb") as f:
                f.write(encode_entry(payload))
            os.replace(tmp, path)
            return True
        except OSError as e:
            _log.debug("pyfront cache: cannot write %s: %s", path, e)
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            return False
