"""``pip install ./sdk/python`` works with no package index (the in-tree
PEP 517 backend needs nothing but the standard library), and the installed
package works from outside the source tree."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import SDK


def test_pip_install_offline(tmp_path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    # An index URL that refuses connections: any download attempt fails the install.
    env = dict(os.environ, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([py, "-m", "pip", "install", SDK], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    code = ("import cowboy, cowboy.keccak as k; "
            "assert k.keccak256(b'').hex().startswith('c5d2460186f7'); "
            "assert cowboy.Transaction(1, 0, None).encode()[:1] == b'\\x8d'; print(cowboy.__file__)")
    out = subprocess.run([py, "-c", code], env=env, cwd=str(tmp_path), capture_output=True, text=True, check=True).stdout
    assert str(venv) in out  # imported from the install, not the source tree


def test_backend_metadata_matches_pyproject() -> None:
    sys.path.insert(0, os.path.join(SDK, "_build"))
    import backend  # type: ignore

    with open(os.path.join(SDK, "pyproject.toml")) as f:
        text = f.read()
    assert re.search(r'^version = "([^"]+)"', text, re.M).group(1) == backend.VERSION  # type: ignore[union-attr]
    assert re.search(r'^name = "([^"]+)"', text, re.M).group(1) == backend.NAME  # type: ignore[union-attr]
    import cowboy

    assert cowboy.__version__ == backend.VERSION
