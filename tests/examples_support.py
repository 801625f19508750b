"""Running the scripts of ``examples/`` in tests: imported as modules, or run with some packages hidden."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# Run an example with packages hidden (argv[1] = comma-separated names): a meta path finder refuses them,
# as on a machine without them.
HIDDEN = """
import sys
HIDDEN = set(sys.argv[1].split(","))
class _Hidden:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Hidden())
sys.argv = sys.argv[2:]
import runpy
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def load_example(name: str) -> ModuleType:
    """``examples/<name>.py`` imported as a module (its ``main`` callable with an argv list)."""
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_without(hidden: tuple[str, ...], name: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``examples/<name>.py args`` in a fresh interpreter that cannot import the ``hidden`` packages."""
    return subprocess.run(
        [sys.executable, "-c", HIDDEN, ",".join(hidden), str(EXAMPLES / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
