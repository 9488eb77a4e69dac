"""A tenant of a sandbox (``sim/README.md``, "Tenants"): a sandbox of its own — state, ids,
clock, fault rules, journal, tokens — served under the prefix ``/t/{id}`` of a simulator
others may share, created and deleted through the simulator's own admin API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import licensing_sandbox_admin
from licensing_sandbox_admin.api.tenants import create_tenant, delete_tenant
from licensing_sandbox_admin.models import TenantSpec

from . import _admin as admin
from ._admin import SandboxError
from ._api import AdminApi

#: Characters of a test's id kept in a tenant's name (the simulator takes at most 100).
NAME_LIMIT = 100


def create(parent: licensing_sandbox_admin.Client, limit: int, **spec: Any) -> "Tenant":
    """Creates a tenant through ``parent``, the simulator's own admin client (``name``,
    ``seed``: a built-in seed's name, ``region``, ``ttl`` in seconds; ``None``: the
    simulator's default)."""
    chosen = {key: value for key, value in spec.items() if value is not None}
    body = admin.model(TenantSpec.from_dict, chosen, "tenant")
    reply = admin.call("create tenant", lambda: create_tenant.sync_detailed(client=parent, body=body))
    if not isinstance(reply, dict) or not isinstance(reply.get("tokens"), dict):
        raise SandboxError("create tenant: a reply without the tenant's tokens")
    tenant = Tenant(reply, admin.client(reply["url"], reply["tokens"]["admin"], limit), parent)
    try:
        tenant.checkpoint()
    except BaseException:
        tenant.delete()
        raise
    return tenant


class Tenant(AdminApi):
    """One tenant: ``url`` is the base address to give every client (both services and
    its admin API are under it), the tokens are its own and work under its prefix only,
    and the admin methods (``reset``, ``seed``, ``state``, ``journal``, ``faults``,
    ``clock``, ``coverage``, …) act on it alone. ``delete()`` (or leaving a ``with``
    block) removes it with everything it holds; its prefix then answers 404."""

    def __init__(self, reply: dict[str, Any], client: licensing_sandbox_admin.Client, parent: licensing_sandbox_admin.Client) -> None:
        tokens = reply["tokens"]
        self.id: str = reply["id"]
        self.name: Optional[str] = reply.get("name")
        self.url: str = reply["url"]
        self.app_token: str = tokens["app"]
        self.client_token: str = tokens["client"]
        self.user_token: str = tokens["user"]
        self.admin_token: str = tokens["admin"]
        #: The ids the tenant's seed gave what it named (``None`` without a seed).
        self.seeded: Optional[dict[str, Any]] = reply.get("seeded")
        self._admin = client
        self._delete: Optional[Callable[[], Any]] = lambda: delete_tenant.sync_detailed(self.id, client=parent)

    def __repr__(self) -> str:
        # The tokens stay out of reprs, logs and tracebacks.
        return f"Tenant(id={self.id!r}, url={self.url!r})"

    def __enter__(self) -> "Tenant":
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()

    def delete(self) -> None:
        """Removes the tenant (safe to call twice; one the simulator already removed, its
        time to live past, is not an error)."""
        send, self._delete = self._delete, None
        if send is None:
            return
        try:
            admin.call(f"delete tenant {self.id}", send)
        except SandboxError as error:
            if error.status != 404:
                raise
        finally:
            self._admin.get_httpx_client().close()
