"""Which files in an output folder are ours to replace or remove, and which are the user's.

A plan of ours (`<prefix>_plan.json`) records every other file its run wrote, with its sha256
and size. A file in DIR counts as ours only when such a record names it and it still matches
(a regular file, not a link, the same bytes); the plan JSON itself, which cannot hold its own
hash, counts as ours when it is a plan of this tool that carries that record. Everything else is
the user's: never removed, never overwritten (a run that would overwrite it is refused before it
writes anything), and the input model is never replaced, whoever wrote it.

A file of ours that the new run does not write is stale, and removed, only when its plan was made
for a model of the same file name (the same model under another --name or semantics): packaging
another model into the folder leaves the first one's files alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from packager.package.output_dir import OutputError
from packager.package.plan_json import written_files
from packager.package.sidecar import FORMAT_NAME, READABLE_VERSIONS

PLAN_JSON = "{}_plan.json"
# What a run of this tool writes for one prefix; `{}.tflite` and the op resolver only for tflm plans.
PREFIX_FILES = (PLAN_JSON, "{}_plan.tplan", "{}_plan.h", "{}_model.h", "{}_model.c",
                "{}_report.html", "{}.tflite", "{}_op_resolver.h")
_LARGEST_PLAN_FILE = 1 << 30
# What `package A B ...` writes for a shared arena (package/shared_arena.py): its record, a JSON of
# SHARED_FORMAT, names the other two with their sha256 as a plan does its files.
SHARED_FILES = ("{}_arena.json", "{}_arena.h", "{}_op_resolver.h")
SHARED_FORMAT = "tflpack-shared-arena"


class InputModelInTheWay(OutputError):
    """A file of the run would land on the input model."""


class UserFileInTheWay(OutputError):
    """A file of the run would overwrite a file this tool did not write."""


def refuse_to_replace_input(model_path: Path, out_dir: Path, names: Iterable[str]) -> None:
    """The input model is never replaced, whatever -o says (a link to it is followed)."""
    model = model_path.resolve()
    for name in names:
        if (out_dir.resolve() / name) == model:
            raise InputModelInTheWay(
                f"{model_path}: the packaged {name} would replace the input model; choose another "
                f"prefix with --name (e.g. --name {model_path.stem}_planned) or another -o folder")


@dataclass(frozen=True)
class FolderSurvey:
    """What DIR holds before a run commits: the earlier files of ours the run does not write
    again (`stale`, removed in the same step) and what each file of ours looked like (to tell
    whether it changed before the commit)."""
    stale: tuple[str, ...]
    seen: dict[str, tuple[int, int, int]]  # name -> (inode, size, mtime) of each file of ours

    def check_unchanged(self, out_dir: Path) -> None:
        for name, signature in self.seen.items():
            if _signature(out_dir / name) != signature:
                raise OutputError(f"{out_dir / name}: changed while this run was writing; nothing "
                                  f"was written, run again")


def survey(out_dir: Path, new_names: Iterable[str], model_path: Path) -> FolderSurvey:
    """Refuse (UserFileInTheWay) when a new file would overwrite a file that is not ours; else
    the earlier files of ours, made for this model, that the run leaves stale. The input model
    is never stale."""
    new = set(new_names)
    if not out_dir.is_dir():
        return FolderSurvey((), {})
    ours = files_of_ours(out_dir)
    # A folder in the way is the output folder's own error (output_dir.py).
    in_the_way = sorted(n for n in new if n not in ours and os.path.lexists(out_dir / n)
                        and not (out_dir / n).is_dir())
    if in_the_way:
        more = f" (and {len(in_the_way) - 1} more)" if len(in_the_way) > 1 else ""
        raise UserFileInTheWay(
            f"{out_dir / in_the_way[0]}{more}: in the way and not written by this tool (no plan of ours "
            f"in the folder records it as it is now), so it is not overwritten; move it, or choose "
            f"another --name or -o")
    model = model_path.resolve()
    stale = tuple(sorted(n for n, source in ours.items()
                         if source == model_path.name and n not in new and (out_dir / n).resolve() != model))
    return FolderSurvey(stale, {n: _signature(out_dir / n) for n in ours})


def files_of_ours(out_dir: Path) -> dict[str, str]:
    """Names in out_dir that count as ours (see the module's text) -> the file name of the model
    their plan was made for."""
    ours: dict[str, str] = {}
    for plan_path in out_dir.glob(PLAN_JSON.format("*")):
        prefix = plan_path.name[:-len(PLAN_JSON.format(""))]
        found = _earlier_record(plan_path) if prefix else None
        if found is None:
            continue
        source, record = found
        ours[plan_path.name] = source
        allowed = {pattern.format(prefix) for pattern in PREFIX_FILES} - {plan_path.name}
        ours.update((f.name, source) for f in record
                    if f.name in allowed and _matches(out_dir / f.name, f.sha256, f.bytes))
    for record_path in out_dir.glob(SHARED_FILES[0].format("*")):
        prefix = record_path.name[:-len(SHARED_FILES[0].format(""))]
        found = _shared_record(record_path) if prefix else None
        if found is not None:
            ours[record_path.name] = found[0]
            allowed = {pattern.format(prefix) for pattern in SHARED_FILES[1:]}
            ours.update((n, found[0]) for n, sha256, size in found[1]
                        if n in allowed and _matches(out_dir / n, sha256, size))
    return ours


def _shared_record(path: Path) -> tuple[str, list[tuple[str, str, int]]] | None:
    """(its models' file names joined by '+', the files it records) for a shared-arena record of ours."""
    if _signature(path) is None or path.stat().st_size > _LARGEST_PLAN_FILE:
        return None
    try:
        doc = json.loads(path.read_bytes())
        if not (isinstance(doc, dict) and doc.get("format") == SHARED_FORMAT):
            return None
        return ("+".join(m["file"] for m in doc["models"]),
                [(f["name"], f["sha256"], int(f["bytes"])) for f in doc["files"]])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _earlier_record(plan_path: Path) -> tuple[str, tuple] | None:
    """(its model's file name, its record of files) for the plan at `plan_path`, when it is a plan
    of ours that has a record."""
    if _signature(plan_path) is None or plan_path.stat().st_size > _LARGEST_PLAN_FILE:
        return None
    try:
        doc = json.loads(plan_path.read_bytes())
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and doc.get("format") == FORMAT_NAME
            and doc.get("format_version") in READABLE_VERSIONS and "files" in doc):
        return None
    try:
        return doc["source"]["file"], written_files(doc)
    except (KeyError, TypeError, ValueError):
        return None


def _matches(path: Path, sha256: str, size: int) -> bool:
    signature = _signature(path)
    if signature is None or signature[1] != size:
        return False
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while piece := f.read(1 << 20):
                digest.update(piece)
    except OSError:
        return False
    return digest.hexdigest() == sha256


def _signature(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of a regular file that is not a link; None for anything else."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None
