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
  truncated, corrupted or misfiled entry: every entry carries a header with
  its own key and the payload's length and SHA-256, and an entry that does
  not match them (an entry of another key copied or renamed onto this one's
  file included) is never returned. The caller then recompiles and `put`s a
  fresh entry over it.
* `get` reads regular files only: an entry path that is (or links to) a
  FIFO, a device such as /dev/zero, or a directory is ignored without
  blocking or reading it, and an entry larger than its header says is not
  read past that size plus one byte.
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
import stat
import struct
import tempfile
from pathlib import Path

_log = logging.getLogger("pyfront.runtime")

ENV_VAR = "PYFRONT_CACHE_DIR"
_DISABLED_VALUES = frozenset({"", "0", "off", "false", "none"})

# Entry layout: magic, key length (u16 LE), payload length (u64 LE), SHA-256
# of the payload, the key (ASCII hex), payload. The magic carries the layout
# version: a new layout gets a new magic (entries of older layouts are
# ignored and recompiled).
_MAGIC = b"PYFRNT02"
_HEADER = struct.Struct("<8sHQ32s")


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


def encode_entry(key: str, payload: bytes) -> bytes:
    """Header + key + payload, as stored on disk."""
    k = key.encode("ascii")
    return _HEADER.pack(_MAGIC, len(k), len(payload), hashlib.sha256(payload).digest()) + k + payload


def decode_entry(key: str, data: bytes) -> bytes | None:
    """The payload of a stored entry of `key`, or None if the entry is not intact or not `key`'s."""
    if len(data) < _HEADER.size:
        return None
    magic, key_length, length, digest = _HEADER.unpack_from(data)
    stored_key = data[_HEADER.size : _HEADER.size + key_length]
    payload = data[_HEADER.size + key_length :]
    if magic != _MAGIC or stored_key != key.encode("ascii") or length != len(payload):
        return None
    if hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def _read_regular_file(path: Path) -> bytes | None:
    """The bytes of `path` if it is a regular file (after symlinks), else None; never blocks.

    O_NONBLOCK makes opening a FIFO return at once instead of waiting for a
    writer; fstat on the open descriptor then tells what was opened, so a
    path swapped between a check and the open cannot slip through. The read
    is bounded by the file's size and the header's sizes, so a file that
    grows while it is read, or a header of another layout (an older
    pyfront's entry) read as lengths, cannot exhaust memory.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _log.debug("pyfront cache: ignoring %s (not a regular file)", path)
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            header = f.read(_HEADER.size)
            if len(header) < _HEADER.size or header[: len(_MAGIC)] != _MAGIC:
                return header  # not an entry of this layout: decode_entry refuses it
            _, key_length, length, _ = _HEADER.unpack(header)
            # Never more than the file held when opened, nor than the header
            # declares; one byte past the declared end shows an entry with
            # extra bytes.
            return header + f.read(min(key_length + length, info.st_size - _HEADER.size) + 1)
    finally:
        os.close(fd)


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
            data = _read_regular_file(path)
        except FileNotFoundError:
            return None
        except OSError as e:
            _log.debug("pyfront cache: cannot read %s: %s", path, e)
            return None
        if data is None:
            return None
        payload = decode_entry(key, data)
        if payload is None:
            _log.debug("pyfront cache: ignoring corrupted or misfiled entry %s", path)
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
                f.write(encode_entry(key, payload))
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
