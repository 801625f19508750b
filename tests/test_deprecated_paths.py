"""Old module paths keep working for this release, with a DeprecationWarning naming the new one."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("name", ["oracle", "metrics", "views"])
def test_the_old_module_path_warns_and_is_the_core_module(name):
    code = (
        "import warnings, importlib\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        f"from craft_env import {name} as public\n"  # the public attribute: no warning
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        f"    old = importlib.import_module('craft_env.{name}')\n"
        f"assert old is importlib.import_module('craft_env.core.{name}') is public\n"
        "assert [w.category for w in caught] == [DeprecationWarning], caught\n"
        f"assert 'craft_env.core.{name}' in str(caught[0].message)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
