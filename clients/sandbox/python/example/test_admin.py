"""The admin API as ``licensing_sandbox`` drives it through its generated client: a refusal
raised with its status and field, a document the client cannot send refused before it is
sent, and replies past their bound refused however they are framed."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from licensing_sandbox import Sandbox, SandboxError
from licensing_sandbox import _admin as admin
from licensing_sandbox_admin.api.clock import get_clock


def test_a_refusal_names_its_status_and_field(clean_sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError) as refused:
        clean_sandbox.set_clock(-1)
    assert refused.value.status == 400
    assert refused.value.field == "now", refused.value
    assert str(refused.value).startswith("set clock: HTTP 400: ")


def test_a_seed_document_without_a_required_field_is_not_sent(clean_sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError, match="the field 'enterprises' is required") as refused:
        clean_sandbox.seed({})
    assert refused.value.field == "enterprises"
    assert refused.value.status is None


def test_an_unknown_journal_filter_is_named(clean_sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError, match="no filter 'operationId'"):
        clean_sandbox.journal(operationId="batchOrder")


@contextmanager
def serve(reply: bytes) -> Iterator[str]:
    """A server answering every connection with ``reply`` (then more bytes, without end,
    when it ends with ``...``), on a free port."""
    listener = socket.create_server(("127.0.0.1", 0))
    endless = reply.endswith(b"...")

    def answer() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                try:
                    connection.recv(65536)
                    connection.sendall(reply.removesuffix(b"..."))
                    while endless:
                        connection.sendall(b"1000\r\n" + b"x" * 4096 + b"\r\n")
                except OSError:
                    pass

    threading.Thread(target=answer, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 99999999\r\n\r\n{",
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n...",
    ],
    ids=["a long content-length", "chunks without end"],
)
def test_a_reply_past_its_bound_is_refused(reply: bytes) -> None:
    with serve(reply) as url:
        client = admin.client(url, None, limit=64 * 1024)
        with pytest.raises(SandboxError, match="an admin reply (of|over)"):
            admin.call("clock", lambda: get_clock.sync_detailed(client=client))


def test_connecting_where_no_sandbox_answers_names_the_address() -> None:
    with serve(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n") as url:
        with pytest.raises(SandboxError, match=f"no sandbox answers at {url}") as refused:
            Sandbox.connect(url, "token")
    assert "HTTP 503" in str(refused.value)
