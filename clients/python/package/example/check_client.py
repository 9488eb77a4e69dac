"""licensing-client in a partner's venv, beside licensing-sandbox: the clients' scenario
(``clients/python/tests/scenario.py``, copied beside this file by ``cargo xtask dist
--check``) against a simulator this starts, then the documents the distribution carries
and its version."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
import os
import subprocess
import sys

import licensing
import licensing_sandbox_admin
from licensing_sandbox import Sandbox

# The scenario loads the demo seed itself, through the generated admin client, which it
# calls without a token.
with Sandbox.start(admin_token=None) as sandbox:
    env = {**os.environ, "LICENSING_SIM_URL": sandbox.url}
    subprocess.run([sys.executable, "scenario.py"], env=env, check=True, timeout=300)

spec = importlib.resources.files("licensing_order").joinpath("openapi.yaml").read_text()
assert "operationId: batchOrder" in spec, "licensing_order/openapi.yaml"
admin = importlib.resources.files("licensing_sandbox_admin").joinpath("openapi.yaml").read_text()
assert "operationId: advanceClock" in admin, "licensing_sandbox_admin/openapi.yaml"
schema = json.loads(importlib.resources.files("licensing_member").joinpath("schemas/MemberPage.json").read_text())
assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", schema.get("$schema")
assert callable(licensing.order_client) and hasattr(licensing_sandbox_admin, "Client")
versions = {name: importlib.metadata.version(name) for name in ("licensing-client", "licensing-sandbox")}
assert len(set(versions.values())) == 1, versions
print(f"ok: licensing-client {versions['licensing-client']}: the scenario, the documents, the version")
