"""Where the package's programs are."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

from ._admin import SandboxError


def binary(name: str) -> str:
    """The path of one of the package's programs (``licensing-sim``, ``licensing-proxy``,
    ``licensing``): ``LICENSING_SANDBOX_BIN_DIR`` when set, else the environment's scripts
    directory the wheel installed them into, else ``PATH``."""
    exe = name + (".exe" if sys.platform == "win32" else "")
    folders = [os.environ.get("LICENSING_SANDBOX_BIN_DIR"), sysconfig.get_path("scripts")]
    for folder in folders:
        if folder and os.access(os.path.join(folder, exe), os.X_OK):
            return os.path.join(folder, exe)
    found = shutil.which(exe)
    if found is None:
        raise SandboxError(f"{name} not found: install the licensing-sandbox wheel, or set LICENSING_SANDBOX_BIN_DIR")
    return found
