"""Write a set of files into a folder all at once, or not at all.

Everything is written into a temporary folder first (beside DIR when DIR does not exist yet, inside
it otherwise: the same file system either way, so the final moves are atomic renames). Only when
every file is complete is the folder renamed to DIR, or, when DIR already exists (and may hold other
files), each file moved over its target with os.replace. Any failure before that leaves DIR as it
was and removes the temporary folder.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path
from typing import Mapping

from packager.errors import PackagerError


class OutputError(PackagerError):
    """The output folder cannot be written (not a folder, no permission, a folder in the way...)."""


def _check_target(out_dir: Path, names: list[str]) -> Path:
    """The folder the temporary folder goes in; OutputError if DIR cannot take the files."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir}: exists and is not a folder")
    if out_dir.is_dir():
        if not os.access(out_dir, os.W_OK | os.X_OK):
            raise OutputError(f"{out_dir}: folder is not writable")
        for name in names:
            target = out_dir / name
            if target.is_dir() and not target.is_symlink():
                raise OutputError(f"{target}: a folder is in the way of the file to write")
        return out_dir
    parent = out_dir.parent
    while not parent.exists():  # created below; only the first existing ancestor must be writable
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{out_dir}: cannot create it ({parent} is not a writable folder)")
    return out_dir.parent


def write_all(out_dir: str | Path, files: Mapping[str, bytes]) -> list[Path]:
    """Write `files` (name -> bytes) into out_dir atomically; return the written paths."""
    out_dir = Path(out_dir)
    names = sorted(files)
    staging_parent = _check_target(out_dir, names)
    try:
        staging_parent.mkdir(parents=True, exist_ok=True)
        # Not mkdtemp: its 0700 mode would become DIR's; os.mkdir follows the umask like mkdir(1).
        staging = staging_parent / f".{out_dir.name}.tflpack-{os.getpid()}-{secrets.token_hex(4)}"
        staging.mkdir()
    except OSError as e:
        raise OutputError(f"{out_dir}: cannot write there ({e.strerror or e})") from None
    try:
        for name in names:
            (staging / name).write_bytes(files[name])
        if staging_parent == out_dir:
            for name in names:
                os.replace(staging / name, out_dir / name)
        else:
            os.rename(staging, out_dir)
            staging = out_dir  # nothing left to clean up
    except OSError as e:
        raise OutputError(f"{out_dir}: writing failed ({e.strerror or e})") from None
    finally:
        if staging != out_dir:
            shutil.rmtree(staging, ignore_errors=True)
    return [out_dir / name for name in names]
