"""Write a file so that an interrupted run never leaves half of it behind."""

from __future__ import annotations

import os
from pathlib import Path

from packager.errors import PackagerError


def write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename it over `path`. (A plain open, not
    mkstemp, so the file gets the usual permissions from the umask.) An unwritable place is the
    user's to fix: it raises PackagerError, which the CLI prints as one line."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise PackagerError(f"cannot write {path}: {e.strerror or e}") from e
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
