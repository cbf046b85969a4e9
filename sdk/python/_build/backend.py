"""A minimal PEP 517 build backend (standard library only) for cowboy-py.

It builds a pure-Python wheel of the ``cowboy`` package and an sdist, with
metadata from the constants below (kept in step with pyproject.toml by
tests/test_packaging.py). Why not setuptools: pip's build isolation installs
the backend's requirements from an index, and these machines cannot reach
PyPI; an in-tree backend with ``requires = []`` builds offline.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile
from typing import Dict, List, Optional

NAME = "cowboy"
VERSION = "0.1.0"
SUMMARY = "cowboy-py: the Python client SDK of the Cowboy chain"
REQUIRES_PYTHON = ">=3.9"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, NAME)
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
TAG = "py3-none-any"


def _metadata() -> str:
    readme = ""
    p = os.path.join(ROOT, "README.md")
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {VERSION}\nSummary: {SUMMARY}\n"
        f"Requires-Python: {REQUIRES_PYTHON}\nLicense: Apache-2.0\n"
        "Description-Content-Type: text/markdown\n\n" + readme
    )


def _package_files() -> List[str]:
    out = []
    for d, dirs, files in os.walk(PKG):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for fn in sorted(files):
            if fn.endswith((".py", ".typed")):
                out.append(os.path.relpath(os.path.join(d, fn), ROOT))
    return out


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: Dict[str, bytes]) -> str:
    name = f"{NAME}-{VERSION}-{TAG}.whl"
    files[f"{DIST_INFO}/METADATA"] = _metadata().encode()
    files[f"{DIST_INFO}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: cowboy-inline-backend\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    ).encode()
    record = [_record_line(p, b) for p, b in files.items()]
    record.append(f"{DIST_INFO}/RECORD,,")
    files[f"{DIST_INFO}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = os.path.join(wheel_directory, name)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for p, b in files.items():
            zi = zipfile.ZipInfo(p, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, b)
    os.replace(tmp, path)
    return name


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    d = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return DIST_INFO


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    files = {}
    for rel in _package_files():
        with open(os.path.join(ROOT, rel), "rb") as f:
            files[rel.replace(os.sep, "/")] = f.read()
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    # A .pth file pointing at the source tree (PEP 660's simplest form).
    return _write_wheel(wheel_directory, {f"__editable__.{NAME}.pth": (ROOT + "\n").encode()})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    base = f"{NAME}-{VERSION}"
    path = os.path.join(sdist_directory, base + ".tar.gz")
    members = _package_files() + ["pyproject.toml", os.path.join("_build", "backend.py")]
    if os.path.exists(os.path.join(ROOT, "README.md")):
        members.append("README.md")
    with tarfile.open(path, "w:gz") as t:
        for rel in members:
            t.add(os.path.join(ROOT, rel), arcname=f"{base}/{rel}")
        pkg_info = _metadata().encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    return os.path.basename(path)
