"""Clients of the licensing platform's two services (and the simulator's sandbox admin API)
on top of the packages openapi-python-client generates from spec/*.yaml:
``licensing_order``, ``licensing_member`` and ``licensing_sandbox_admin``.

What this module adds is what the Rust SDK's runtime adds to every request:

* a fresh ``g_nonce`` query parameter on every request (24 random bytes, URL-safe base64).
  The generated functions still take a ``g_nonce`` argument, because the specs declare it;
  pass ``NONCE``: the client replaces it with a fresh value each time;
* the service's credentials: ``Authorization: Bearer <app token>`` and
  ``Content-Type: application/json`` (on every request, bodiless ones too) for the order
  service; ``Authorization: Bearer <client token>``, ``clientToken`` and ``userToken`` for
  the member center;
* the reply envelope read as a result: ``check`` returns the envelope of a success and
  raises ``BusinessError`` for a business exception (HTTP 299, or a non-zero ``code``),
  whose ``reply`` is the decoded envelope (``60027`` on ``add_members`` carries both
  lists in ``reply.data``).

Example::

    from licensing import NONCE, check, order_client
    from licensing_order.api.assets import allocate_shell_nums
    from licensing_order.models import AllocateShellNumsRequest

    order = order_client("http://127.0.0.1:8080", "APP_ACCESS_TOKEN")
    reply = check(allocate_shell_nums.sync_detailed(
        client=order, body=AllocateShellNumsRequest(size=3), g_nonce=NONCE))
    print(reply.data)  # ['8000000001', '8000000002', '8000000003']
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Generator
from typing import Any, Generic, Protocol, TypeVar

import httpx
import licensing_member
import licensing_order
import licensing_sandbox_admin

__all__ = [
    "NONCE",
    "BusinessError",
    "MemberAuth",
    "OrderAuth",
    "UnexpectedReply",
    "check",
    "member_client",
    "nonce",
    "order_client",
    "sandbox_client",
]

NONCE: str = ""
"""The ``g_nonce`` argument to pass to a generated function: the clients below replace it with
a fresh nonce on every request. Sent as it is (without these clients), it is refused."""


def nonce() -> str:
    """192 bits from the operating system's CSPRNG, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(secrets.token_bytes(24)).rstrip(b"=").decode("ascii")


class _Credentials(httpx.Auth):
    """Sets the headers and a fresh ``g_nonce`` on each request. An ``httpx.Auth`` runs for
    the synchronous and the asynchronous client alike, and for every request either sends."""

    def __init__(self, headers: dict[str, str]) -> None:
        self._headers = headers

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        # Set after the caller's headers, as the Rust runtime does: a stale value cannot win.
        for name, value in self._headers.items():
            request.headers[name] = value
        request.url = request.url.copy_set_param("g_nonce", nonce())
        yield request


class OrderAuth(_Credentials):
    """The order service's credentials: an application access token."""

    def __init__(self, app_token: str) -> None:
        # The order document requires the content type on every endpoint, bodiless ones too.
        super().__init__({"Authorization": f"Bearer {app_token}", "Content-Type": "application/json"})


class MemberAuth(_Credentials):
    """The member center's credentials: the client token (sent twice, as the bearer token
    and as ``clientToken``) and the user token."""

    def __init__(self, client_token: str, user_token: str) -> None:
        super().__init__(
            {"Authorization": f"Bearer {client_token}", "clientToken": client_token, "userToken": user_token}
        )


def order_client(base_url: str, app_token: str, **options: Any) -> licensing_order.Client:
    """A client of the order service at ``base_url`` (the platform's base address).

    ``options`` go to the generated ``Client`` (``timeout``, ``verify_ssl``, ``httpx_args``).
    A status the spec does not document raises ``licensing_order.errors.UnexpectedStatus``.
    """
    options.setdefault("raise_on_unexpected_status", True)
    return licensing_order.Client(
        base_url=base_url,
        httpx_args={**options.pop("httpx_args", {}), "auth": OrderAuth(app_token)},
        **options,
    )


def member_client(base_url: str, client_token: str, user_token: str, **options: Any) -> licensing_member.Client:
    """A client of the member center at ``base_url``; see ``order_client``."""
    options.setdefault("raise_on_unexpected_status", True)
    return licensing_member.Client(
        base_url=base_url,
        httpx_args={**options.pop("httpx_args", {}), "auth": MemberAuth(client_token, user_token)},
        **options,
    )


def sandbox_client(base_url: str, admin_token: str | None = None, **options: Any) -> licensing_sandbox_admin.Client:
    """A client of the simulator's sandbox admin API (``licensing-sim``): plain HTTP statuses,
    no ``g_nonce``; ``admin_token`` when the simulator runs with ``--admin-token``."""
    headers = {} if admin_token is None else {"Authorization": f"Bearer {admin_token}"}
    options.setdefault("raise_on_unexpected_status", True)
    return licensing_sandbox_admin.Client(
        base_url=base_url,
        headers={**options.pop("headers", {}), **headers},
        **options,
    )


class Envelope(Protocol):
    """What every reply of both services has (``<Operation>Reply``, HTTP 200 and 299)."""

    @property
    def code(self) -> int | str: ...

    @property
    def message(self) -> str: ...

    @property
    def cause(self) -> object:
        """A string on error replies; the generated packages' ``UNSET`` otherwise."""


R = TypeVar("R", bound=Envelope)
R_co = TypeVar("R_co", bound=Envelope, covariant=True)


class Detailed(Protocol[R_co]):
    """What a generated ``sync_detailed`` (or ``asyncio_detailed``) returns: its package's
    ``types.Response``."""

    @property
    def status_code(self) -> int: ...

    @property
    def content(self) -> bytes: ...

    @property
    def parsed(self) -> R_co | None: ...


class BusinessError(Exception, Generic[R]):
    """A business exception: HTTP 299 (or HTTP 200 with a non-zero ``code``).

    ``code`` is the business code as a string (``"13004"``, ``"60027"``); ``reply`` the
    whole envelope, decoded as the operation's 299 response.
    """

    def __init__(self, reply: R, status: int) -> None:
        self.reply = reply
        self.status = status
        self.code = str(reply.code)
        self.message = reply.message
        # Each generated package has its own `UNSET`; a string is the one thing a cause can be.
        self.cause = reply.cause if isinstance(reply.cause, str) else None
        detail = f" ({self.cause})" if self.cause else ""
        super().__init__(f"{self.code}: {self.message}{detail}")


class UnexpectedReply(Exception):
    """An answer that is not a reply envelope of the operation."""

    def __init__(self, status: int, content: bytes) -> None:
        self.status = status
        self.content = content
        super().__init__(f"unexpected HTTP {status}: {content[:200]!r}")


def check(response: Detailed[R]) -> R:
    """The envelope of a successful reply (``code`` 0); ``BusinessError`` for a business
    exception, ``UnexpectedReply`` for anything else."""
    reply = response.parsed
    if response.status_code not in (200, 299) or reply is None:
        raise UnexpectedReply(int(response.status_code), response.content)
    if response.status_code == 299 or reply.code != 0:
        raise BusinessError(reply, int(response.status_code))
    return reply
