"""Imports sit at the top of every module, except the lazy ones named here with their reason."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent / "src" / "craft_env"

#: Modules a function may import, and why not at the top.
LAZY = {
    "litellm": "only where a model is called: `import craft_env` stays light and offline",
    "matplotlib": "only when plots are drawn",
    "scipy": "only for the judges' correlations (its import alone takes a large part of a second)",
    "fcntl": "POSIX only: the run directory's lock",
    "rich": "optional at run time: without it the CLI prints plain text (tests/test_cli.py)",
}
#: Modules that need an optional extra, by the package they need: imported only where it is installed.
OPTIONAL = {
    "craft_env.wrappers.rllib": "ray",  # the rllib extra
    "craft_env.wrappers.sb3": "stable_baselines3",  # the test extra
    "craft_env.jax": "jax",  # the jax extra: the package and every module below it
}
#: Modules whose functions may import the package's own modules.
LAZY_OWN = {
    "cli.py": "each subcommand imports what it runs (the module's docstring)",
    "train/text_env.py": "train.workers imports this module: its process env is imported when workers= asks for it",
}


def _function_imports(path: Path) -> list[tuple[int, str]]:
    """The imports inside functions (a module-level ``try``/``if`` around an import keeps it at the top)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    for function in (node for node in ast.walk(tree) if isinstance(node, functions)):
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom):
                found.append((node.lineno, "." * node.level + (node.module or "")))
            elif isinstance(node, ast.Import):
                found.extend((node.lineno, alias.name) for alias in node.names)
    return sorted(set(found))


def _modules() -> list[str]:
    """Every module of the package, less those whose optional extra is not installed here."""
    names = []
    for path in sorted(SOURCE.rglob("*.py")):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        needs = next((OPTIONAL[p] for p in OPTIONAL if name == p or name.startswith(p + ".")), None)
        if needs is None or importlib.util.find_spec(needs) is not None:
            names.append(name)
    return names


def test_only_the_named_modules_are_imported_inside_functions():
    wrong = []
    for path in sorted(SOURCE.rglob("*.py")):
        own_allowed = path.relative_to(SOURCE).as_posix() in LAZY_OWN
        for line, module in _function_imports(path):
            root = module.split(".")[0]
            if root in LAZY or (own_allowed and root == "craft_env"):
                continue
            wrong.append(f"{path.relative_to(SOURCE.parent)}:{line} imports {module}")
    assert not wrong, "imports inside functions (move them to the top):\n" + "\n".join(wrong)


_IMPORT_EACH = """
import importlib, os, sys
import gymnasium, numba, numpy, pettingzoo  # preloaded: each child imports only the package's own modules
try:
    import jax, jax.numpy  # the jax extra's modules import it; preloaded once (its backend starts in the child)
except ImportError:
    pass
failed = []
for module in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
        except BaseException as error:
            sys.stderr.write(f"{module}: {error!r}\\n")
            os._exit(1)
        os._exit(0)
    failed += [module] if os.waitpid(pid, 0)[1] else []
sys.exit(1 if failed else 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_every_module_imports_on_its_own():
    """Each module imported first, in a fresh child: with imports at the top, a circle is an ImportError."""
    done = subprocess.run([sys.executable, "-c", _IMPORT_EACH, *_modules()], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]


def test_import_craft_env_does_not_import_jax():
    """The JAX game is an extra: ``import craft_env`` and its numba envs never load jax."""
    code = ("import sys, craft_env; craft_env.vector_env(2).reset(seed=0); "
            "assert 'jax' not in sys.modules and 'craft_env.jax' not in sys.modules, 'jax imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
