"""Marks the wheel as one platform's: it carries native binaries, so it is not pure Python,
and it is tagged ``py3-none-linux_x86_64`` (any Python 3, no ABI of its own), which
``auditwheel repair --plat auto`` then narrows to the manylinux tag the binaries' symbol
versions allow. ``LICENSING_WHEEL_PLATFORM`` names another platform (``macosx_11_0_arm64``,
``win_amd64``) for a build on such a machine."""

import os

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class PlatformWheel(BuildHookInterface):
    def initialize(self, version, build_data):
        build_data["pure_python"] = False
        build_data["tag"] = "py3-none-" + os.environ.get("LICENSING_WHEEL_PLATFORM", "linux_x86_64")
