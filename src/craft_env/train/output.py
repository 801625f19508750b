"""The folder ``craft-env export --format sft|dpo`` writes: checked before the replay, replaced whole.

``check_output(out, names)`` runs before any game is replayed. ``OUT``
may be missing, empty, or hold a previous export (only regular files
named in ``names`` and their temporaries): that export is replaced.
Anything else in it (a file export does not write, a link, a folder), or
``OUT`` being a file, is refused (``ValueError`` naming the path), as
``merge`` refuses a non-empty output: export never writes beside files it
did not write, nor through a link planted there.

``write_output(out, files, manifest)`` writes every file to a temporary
beside it first. A refused write (a full disk) removes the temporaries and
leaves the previous export as it was (``LogWriteError`` naming the file).
Then the manifest goes, the files are renamed into place, a file of the
previous export that this one does not write (a ``valid.jsonl`` of an
earlier split) is removed, and the manifest comes last: a folder whose
manifest is present holds one whole export, the one the manifest describes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from craft_env.eval.logs.outputs import output_dir
from craft_env.models.jsonl import LogWriteError, open_no_follow

TEMPORARY = ".tmp"


def _listing(out: Path) -> list[str]:
    return sorted(entry.name for entry in out.iterdir())


def check_output(out: str | os.PathLike, names: tuple[str, ...], argument: str = "output") -> Path:
    """``out`` as the folder to export into (see the module docstring); ``ValueError`` when refused."""
    out = output_dir(out, argument)
    if not out.exists():
        return out
    known = {*names, *(name + TEMPORARY for name in names)}
    foreign = []
    for name in _listing(out):
        if name not in known:
            foreign.append(name)
        elif not stat.S_ISREG(os.lstat(out / name).st_mode):
            foreign.append(f"{name} (not a regular file)")
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise ValueError(
            f"{argument}: {os.fspath(out)!r} holds what export does not write ({shown}); "
            "export into a new or empty directory"
        )
    return out


#: Bytes gathered before one ``os.write``.
CHUNK = 1 << 20


def _write_temporary(path: Path, lines: Iterable[str]) -> Path:
    """``path``'s temporary holding ``lines``, written in chunks with ``os.write`` (never through a link)."""
    temporary = path.with_name(path.name + TEMPORARY)
    temporary.unlink(missing_ok=True)
    fd = open_no_follow(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        chunk: list[bytes] = []
        size = 0
        for line in lines:
            data = line.encode("utf-8")
            chunk.append(data)
            size += len(data)
            if size >= CHUNK:
                _write_all(fd, b"".join(chunk))
                chunk, size = [], 0
        _write_all(fd, b"".join(chunk))
    finally:
        os.close(fd)
    return temporary


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_output(
    out: Path, files: dict[str, Iterable[str]], manifest: tuple[str, str], names: tuple[str, ...]
) -> None:
    """Write ``files`` (name -> lines) and ``manifest`` (name, text) into ``out`` whole (module docstring).

    ``names`` are every name an export may write: those of them not in
    ``files`` are removed (a previous export's).
    """
    out.mkdir(parents=True, exist_ok=True)
    manifest_name, manifest_text = manifest
    written: list[Path] = []
    current = None
    try:
        for name, lines in (*files.items(), (manifest_name, (manifest_text,))):
            current = out / name
            written.append(_write_temporary(current, lines))
        (out / manifest_name).unlink(missing_ok=True)
        for temporary in written[:-1]:
            os.replace(temporary, temporary.with_name(temporary.name.removesuffix(TEMPORARY)))
        for name in names:
            if name not in files and name != manifest_name:
                (out / name).unlink(missing_ok=True)
        os.replace(written[-1], out / manifest_name)
    except OSError as error:
        for temporary in written:
            temporary.unlink(missing_ok=True)
        if current is not None:
            current.with_name(current.name + TEMPORARY).unlink(missing_ok=True)
        refused = LogWriteError(f"cannot write {os.fspath(current)}: {error.strerror or error}")
        refused.errno = error.errno
        raise refused from None
