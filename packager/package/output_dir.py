"""Write a set of files into a folder all at once, or not at all.

Files go in one at a time (`staged_folder`: each is written as soon as it is built, so the run
never holds them all in memory), or as a set (`write_all`). Everything is written into a temporary
folder first (beside DIR when DIR does not exist yet, inside it otherwise: the same file system
either way, so the final moves are atomic renames). Only when
every file is complete is the folder renamed to DIR, or, when DIR already exists (and may hold other
files), each file moved over its target with os.replace. Any failure before that leaves DIR as it
was and removes the temporary folder.

Files the caller names as stale (an earlier run's files of ours that the new run does not write:
packager/package/owned_files.py decides which) are moved out in the same step.

SIGINT, SIGTERM and SIGHUP while writing become KeyboardInterrupt (the temporary folder is removed
on the way out); during the final moves they wait until the moves are done.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from packager.errors import PackagerError
from packager.stop_signals import STOP_SIGNALS, install, note


class OutputError(PackagerError):
    """The output folder cannot be written (not a folder, no permission, a folder in the way...)."""


def stop_signals_interrupt() -> None:
    """Handle SIGTERM and SIGHUP like SIGINT (KeyboardInterrupt), so `finally` blocks clean up
    whichever way the run is stopped (packager/stop_signals.py)."""
    install(include_sigint=False)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP until the block ends, then act on the first one received."""
    received: list[int] = []
    try:
        previous = {s: signal.signal(s, lambda n, f: received.append(n)) for s in STOP_SIGNALS}
    except ValueError:  # not the main thread: nothing to defer
        yield
        return
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if received:
            note(received[0])
            raise KeyboardInterrupt(signal.Signals(received[0]).name)


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


def write_all(out_dir: str | Path, files: Mapping[str, bytes], remove: Iterable[str] = ()) -> list[Path]:
    """Write `files` (name -> bytes) into out_dir atomically, and take the names in `remove` out
    of it in the same step; return the written paths."""
    _check_target(Path(out_dir), sorted(files))
    with staged_folder(out_dir) as folder:
        for name in sorted(files):
            folder.add(name, files[name])
        return folder.commit(remove)


class StagedFolder:
    """The temporary folder of one run: files are added one at a time (each written at once, so
    a caller need not hold them all in memory), and only `commit` makes them DIR's files."""

    def __init__(self, out_dir: Path, staging_parent: Path, staging: Path) -> None:
        self.out_dir, self._parent, self._staging = out_dir, staging_parent, staging
        self.sizes: dict[str, int] = {}  # name -> bytes written, in the order added
        self.sha256: dict[str, str] = {}  # name -> sha256 of the bytes written
        self.committed = False

    def add(self, name: str, data: bytes | bytearray | Iterable[bytes | memoryview]) -> Path:
        """Write one file into the temporary folder (its bytes, or its chunks in order, each
        written as it comes); OutputError if it cannot be."""
        if self.committed:
            raise ValueError("the folder is already committed")
        if name in self.sizes:
            raise ValueError(f"{name} is added twice")
        target = self.out_dir / name
        if self._parent == self.out_dir and target.is_dir() and not target.is_symlink():
            raise OutputError(f"{target}: a folder is in the way of the file to write")
        try:
            if isinstance(data, (bytes, bytearray)):
                (self._staging / name).write_bytes(data)
                size, digest = len(data), hashlib.sha256(data)
            else:
                size, digest = _write_chunks(self._staging / name, data)
        except OSError as e:
            raise OutputError(f"{self.out_dir}: writing failed ({e.strerror or e})") from None
        self.sizes[name], self.sha256[name] = size, digest.hexdigest()
        return target

    def read(self, name: str) -> bytes:
        """A file added and not yet committed, as written."""
        return (self._staging / name).read_bytes()

    def read_pieces(self, name: str, size: int = 1 << 20) -> Iterator[bytes]:
        """read(name)'s bytes, `size` at a time: a large file checked as written, never held whole."""
        try:
            with open(self._staging / name, "rb") as f:
                while piece := f.read(size):
                    yield piece
        except OSError as e:
            raise OutputError(f"{self.out_dir}: reading {name} back failed ({e.strerror or e})") from None

    def commit(self, remove: Iterable[str] = ()) -> list[Path]:
        """Make the added files DIR's, taking the names in `remove` out of it in the same step;
        the written paths, sorted by name."""
        names = sorted(self.sizes)
        remove = sorted(set(remove) - set(names))
        try:
            with signals_deferred():
                if self._parent == self.out_dir:
                    _commit_into(self.out_dir, self._staging, names, remove)
                else:
                    os.rename(self._staging, self.out_dir)
                self.committed = True
        except OSError as e:
            if self._parent != self.out_dir and self.out_dir.is_dir():
                # DIR did not exist when this run began: another run made it meanwhile.
                raise OutputError(f"{self.out_dir}: another run wrote this folder while this one was "
                                  f"writing; nothing of this run was written, run it again") from None
            raise OutputError(f"{self.out_dir}: writing failed ({e.strerror or e})") from None
        return [self.out_dir / name for name in names]

    def _discard(self) -> None:
        if not (self.committed and self._parent != self.out_dir):  # else the staging folder is DIR
            shutil.rmtree(self._staging, ignore_errors=True)


def _write_chunks(path: Path, chunks: Iterable[bytes | memoryview]):
    """Write the chunks to `path` one after another; (the bytes written, their sha256)."""
    size, digest = 0, hashlib.sha256()
    with open(path, "wb") as f:
        for chunk in chunks:
            size += f.write(chunk)
            digest.update(chunk)
    return size, digest


@contextmanager
def staged_folder(out_dir: str | Path) -> Iterator[StagedFolder]:
    """A temporary folder for DIR's new files (see the module's text); removed on the way out,
    whatever happens, unless committed as DIR itself. Nothing reaches DIR without `commit`."""
    out_dir = Path(out_dir)
    staging_parent = _check_target(out_dir, [])
    stop_signals_interrupt()
    # Not mkdtemp: its 0700 mode would become DIR's; os.mkdir follows the umask like mkdir(1).
    staging = staging_parent / f".{out_dir.name}.tflpack-{os.getpid()}-{secrets.token_hex(4)}"
    folder = StagedFolder(out_dir, staging_parent, staging)
    try:
        with signals_deferred():  # no stop between creating the staging folder and owning its removal
            try:
                staging_parent.mkdir(parents=True, exist_ok=True)
                staging.mkdir()
            except OSError as e:
                raise OutputError(f"{out_dir}: cannot write there ({e.strerror or e})") from None
        yield folder
    finally:
        folder._discard()


def _commit_into(out_dir: Path, staging: Path, names: list[str], remove: list[str]) -> None:
    """Move stale files into the staging folder (removed with it), then the new files into DIR.
    If moving a stale file out fails, the ones already moved go back and nothing new lands."""
    trash = staging / ".stale"
    trash.mkdir()
    moved: list[str] = []
    try:
        for name in remove:
            if (out_dir / name).exists():
                os.rename(out_dir / name, trash / name)
                moved.append(name)
    except OSError:
        for name in moved:
            os.rename(trash / name, out_dir / name)
        raise
    for name in names:
        os.replace(staging / name, out_dir / name)


def write_files(files: Mapping[Path, bytes]) -> list[Path]:
    """Write files that may sit in different folders (a report page and its picture) all or none:
    every file goes to a temporary name beside its target first; only when all are complete are
    they renamed over their targets."""
    stop_signals_interrupt()
    temps: dict[Path, Path] = {}
    try:
        for path, data in files.items():
            path = Path(path)
            if path.is_dir():
                raise OutputError(f"{path}: a folder is in the way of the file to write")
            temp = path.with_name(f".{path.name}.tflpack-{os.getpid()}-{secrets.token_hex(4)}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                temps[path] = temp
                temp.write_bytes(data)
            except OSError as e:
                raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
        with signals_deferred():
            for path, temp in temps.items():
                os.replace(temp, path)
            temps.clear()
    finally:
        for temp in temps.values():
            temp.unlink(missing_ok=True)
    return [Path(p) for p in files]
