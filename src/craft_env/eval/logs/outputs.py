"""The paths a command writes to, checked before anything is written (docs/robustness.md, "Arguments").

``output_file(path, argument)``: a file to (over)write, in a folder that
exists; ``output_dir(path, argument)``: a folder that exists or can be made
(not a file). Each raises ``ValueError`` naming ``argument`` (the command
line's flag, or the setting's field) and the path, instead of the
``FileNotFoundError``, ``IsADirectoryError`` or ``FileExistsError`` that the
first write would raise after work was done.
"""

from __future__ import annotations

import os
from pathlib import Path


def output_file(path: str | os.PathLike, argument: str) -> Path:
    """``path`` as a file to write: refused when it is a directory or its folder does not exist."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{argument}: {os.fspath(path)!r} is a directory; expected a file name")
    folder = target.parent
    if not folder.is_dir():
        raise ValueError(f"{argument}: the folder of {os.fspath(path)!r} does not exist")
    return target


def output_dir(path: str | os.PathLike, argument: str) -> Path:
    """``path`` as a folder to write into: refused when it, or a folder above it, is a file."""
    target = Path(path)
    for folder in (target, *target.parents):
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{argument}: {os.fspath(folder)!r} is a file; expected a directory")
    return target
