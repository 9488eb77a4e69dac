"""The sandbox admin API (``sim/spec/sandbox.yaml``) through its generated client,
``licensing_sandbox_admin`` (the ``licensing-client`` distribution): one client per sandbox,
its replies bounded, every refusal and failure raised as ``SandboxError``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Optional, TypeVar

import httpx
import licensing_sandbox_admin
from licensing_sandbox_admin.errors import UnexpectedStatus
from licensing_sandbox_admin.types import Response

#: Seconds each admin request may take.
REQUEST_TIMEOUT = 30.0
#: Bytes of an admin reply read at most (the journal keeps at most 32 MiB by default; a
#: state export is bounded by what an import may send, 128 MiB).
MAX_REPLY_BYTES = 256 * 1024 * 1024

T = TypeVar("T")


class SandboxError(Exception):
    """The simulator could not be started, or its admin API refused a request (``status``:
    the HTTP status, ``field``: the path of the offending field, when it names one)."""

    def __init__(self, message: str, status: Optional[int] = None, field: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field


class _BoundedStream(httpx.SyncByteStream):
    """A reply's body that fails once it passes ``limit`` bytes, however it is framed
    (a ``Content-Length`` that lies, or chunks without end)."""

    def __init__(self, inner: httpx.SyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                raise SandboxError(f"an admin reply over {self._limit} bytes")
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _BoundedTransport(httpx.HTTPTransport):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self._limit = limit

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        reply = super().handle_request(request)
        length = reply.headers.get("content-length", "")
        if length.isdigit() and int(length) > self._limit:
            reply.close()
            raise SandboxError(f"an admin reply of {length} bytes, more than {self._limit}")
        assert isinstance(reply.stream, httpx.SyncByteStream)
        return httpx.Response(
            reply.status_code,
            headers=reply.headers,
            stream=_BoundedStream(reply.stream, self._limit),
            extensions=reply.extensions,
        )


def client(url: str, admin_token: Optional[str], limit: int = MAX_REPLY_BYTES) -> licensing_sandbox_admin.Client:
    """The generated client of the admin API at ``url``, with the admin token when there is
    one, a timeout per request and replies bounded to ``limit`` bytes."""
    headers = {} if admin_token is None else {"Authorization": f"Bearer {admin_token}"}
    return licensing_sandbox_admin.Client(
        base_url=url,
        headers=headers,
        timeout=httpx.Timeout(REQUEST_TIMEOUT),
        raise_on_unexpected_status=True,
        httpx_args={"transport": _BoundedTransport(limit)},
    )


def call(what: str, send: Callable[[], Response[Any]]) -> Any:
    """Sends one request by a generated function and returns the reply's JSON as the
    simulator wrote it (``None`` for an empty one): the documented dictionaries and
    lists, not the generated models, so that a field a newer simulator adds is kept."""
    try:
        reply = send()
    except SandboxError:
        raise
    except UnexpectedStatus as error:
        raise _refusal(what, error.status_code, error.content) from None
    except httpx.HTTPError as error:
        raise SandboxError(f"{what}: {type(error).__name__}: {error}") from None
    except RuntimeError as error:
        # httpx's own, for a client closed by ``stop()``.
        raise SandboxError(f"{what}: {error}") from None
    except (KeyError, TypeError, ValueError) as error:
        # The generated parser met a reply that does not match the admin spec.
        raise SandboxError(f"{what}: a reply the admin API does not document ({error!r})") from None
    status = int(reply.status_code)
    if status >= 300:
        raise _refusal(what, status, reply.content)
    return _json_or_none(reply.content)


def model(kind: Callable[[Mapping[str, Any]], T], document: Mapping[str, Any], what: str) -> T:
    """``document`` as the generated model ``kind`` (its ``from_dict``), or a
    ``SandboxError`` naming what is missing or wrong."""
    try:
        return kind(document)
    except KeyError as error:
        raise SandboxError(f"{what}: the field {error.args[0]!r} is required", field=str(error.args[0])) from None
    except (TypeError, ValueError, AttributeError) as error:
        raise SandboxError(f"{what}: {error}") from None


def _refusal(what: str, status: int, content: bytes) -> SandboxError:
    detail = _json_or_none(content)
    detail = detail if isinstance(detail, dict) else {}
    message = detail.get("message") or f"HTTP {status}"
    field = detail.get("field")
    return SandboxError(
        f"{what}: HTTP {status}: {message}",
        status=status,
        field=field if isinstance(field, str) else None,
    )


def _json_or_none(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None
