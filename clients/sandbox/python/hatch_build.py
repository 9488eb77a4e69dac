"""Two hatchling hooks of the licensing-sandbox wheel.

``PlatformWheel`` marks the wheel as one platform's: it carries native binaries, so it is
not pure Python, and it is tagged ``py3-none-linux_x86_64`` (any Python 3, no ABI of its
own), which ``auditwheel repair --plat auto`` then narrows to the manylinux tag the
binaries' symbol versions allow. ``LICENSING_WHEEL_PLATFORM`` names another platform
(``macosx_11_0_arm64``, ``win_amd64``) for a build on such a machine.

``ClientAtThisVersion`` makes the one dependency ``licensing-client`` of exactly this
package's version: its ``licensing_sandbox_admin`` is the admin API's generated client,
built from the same ``sim/spec/sandbox.yaml`` as the simulator in the wheel."""

import os

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.metadata.plugin.interface import MetadataHookInterface


class PlatformWheel(BuildHookInterface):
    def initialize(self, version, build_data):
        build_data["pure_python"] = False
        build_data["tag"] = "py3-none-" + os.environ.get("LICENSING_WHEEL_PLATFORM", "linux_x86_64")


class ClientAtThisVersion(MetadataHookInterface):
    def update(self, metadata):
        metadata["dependencies"] = [f"licensing-client=={metadata['version']}"]
