#!/usr/bin/env python3
"""The simulator's release binary under the hostile clients of its "Limits" section.

Starts the binary (several times, on loopback), sends each hostile request, and prints
a Markdown table: the request, the answer, how long it took, and the server's resident
memory (VmRSS now, VmHWM the peak) read from /proc. Linux only; Python's standard
library and the `openssl` command (for a throw-away TLS certificate) only.

    cargo build --release -p licensing-sim
    python3 sim/tests/hostile/measure.py [--binary target/release/licensing-sim] [--out FILE]

HTTP/2 is spoken by hand (frames and HPACK literals), so a client can do what no
library lets it: advertise a zero flow-control window and never grant more.
"""

import argparse
import http.client
import json
import os
import resource
import secrets
import selectors
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

APP_TOKEN = "sim-app-token"
CLIENT_TOKEN = "sim-client-token"
USER_TOKEN = "sim-user-token"
CREATE = "/order/api/order/v1/enterprise/user/create"
SHELLNUMS = "/order/api/order/v1/shellnums"
STATE = "/__sandbox/v1/state"
JOURNAL = "/__sandbox/v1/journal"


def members(enterprise):
    return f"/me/api/v1/enterprise/{enterprise}/member"


# ---------------------------------------------------------------------------------------
# The binary


class Sim:
    """One run of the binary; `--addr 127.0.0.1:0`, its address read from stdout."""

    def __init__(self, binary, *args, tls=None):
        extra = list(args)
        if tls:
            extra += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        self.proc = subprocess.Popen(
            [binary, "--addr", "127.0.0.1:0", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            preexec_fn=raise_fd_limit,
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            raise SystemExit(f"the simulator did not start: {line!r} (exit {self.proc.wait()})")
        self.url = line.removeprefix("listening on ")
        hostport = self.url.split("://", 1)[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.tls = bool(tls)

    def memory(self):
        """VmRSS and VmHWM in MB."""
        fields = {}
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) / 1024
        return fields["VmRSS"], fields["VmHWM"]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def connection(self, timeout=120):
        if self.tls:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=insecure(["http/1.1"])
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def insecure(alpn):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(alpn)
    return context


def credentials(path):
    if path.startswith("/order/"):
        return {"authorization": f"Bearer {APP_TOKEN}", "content-type": "application/json"}
    if path.startswith("/me/"):
        return {
            "authorization": f"Bearer {CLIENT_TOKEN}",
            "clienttoken": CLIENT_TOKEN,
            "usertoken": USER_TOKEN,
            "content-type": "application/json",
        }
    return {"content-type": "application/json"}


def call(conn, method, path, body=None, raw=None, auth=True):
    """One request on `conn`; returns (status, reply bytes, seconds)."""
    if path.startswith(("/order/", "/me/")):
        path += ("&" if "?" in path else "?") + "g_nonce=" + secrets.token_urlsafe(24)
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = credentials(path) if auth else {"content-type": "application/json"}
    started = time.monotonic()
    conn.request(method, path, body=data, headers=headers)
    reply = conn.getresponse()
    payload = reply.read()
    return reply.status, payload, time.monotonic() - started


def short(payload, limit=160):
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} bytes)"


def code(payload):
    try:
        return json.loads(payload).get("code")
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------
# HTTP/2 by hand

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
NAMES = {0: "DATA", 1: "HEADERS", 3: "RST_STREAM", 4: "SETTINGS", 6: "PING", 7: "GOAWAY", 8: "WINDOW_UPDATE"}
ERRORS = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 5: "STREAM_CLOSED", 7: "REFUSED_STREAM", 8: "CANCEL", 11: "ENHANCE_YOUR_CALM"}


def frame(kind, flags, stream, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def hpack_int(value, prefix_bits, first=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def hpack_literal(name, value):
    """A literal header field without indexing, new name, no Huffman coding."""
    name, value = name.encode(), value.encode()
    return b"\x00" + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def request_frames(stream, authority, path, extra=(), body=None, method="POST"):
    block = b"".join(
        hpack_literal(n, v)
        for n, v in [(":method", method), (":scheme", "https"), (":path", path), (":authority", authority), *extra]
    )
    pieces = [block[i : i + 16384] for i in range(0, len(block), 16384)] or [b""]
    end = 0x1 if body is None else 0
    out = frame(HEADERS, end | (0x4 if len(pieces) == 1 else 0), stream, pieces[0])
    for i, piece in enumerate(pieces[1:], 1):
        out += frame(CONTINUATION, 0x4 if i == len(pieces) - 1 else 0, stream, piece)
    if body is not None:
        out += frame(DATA, 0x1, stream, body)
    return out


class H2:
    """A connection that advertises SETTINGS_INITIAL_WINDOW_SIZE = 0 and never grants
    window: no reply body can be sent to it. It reads the frames the server sends (when
    pumped), to see what ends its streams."""

    def __init__(self, sim, plain=False):
        tcp = socket.create_connection((sim.host, sim.port))
        if plain:
            self.sock = tcp
        else:
            self.sock = insecure(["h2"]).wrap_socket(tcp, server_hostname="localhost")
            assert self.sock.selected_alpn_protocol() == "h2", self.sock.selected_alpn_protocol()
        self.authority = f"{sim.host}:{sim.port}"
        settings = (4).to_bytes(2, "big") + (0).to_bytes(4, "big") + (2).to_bytes(2, "big") + (0).to_bytes(4, "big")
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))
        self.next_stream = 1
        self.buffer = b""
        self.frames = []  # (seconds since `start`, name, stream, detail)
        self.closed = None
        self.sock.setblocking(False)

    def send(self, data):
        view = memoryview(data)
        while view:
            try:
                sent = self.sock.send(view)
                view = view[sent:]
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                time.sleep(0.001)
            except OSError as e:
                self.closed = self.closed or f"send: {e.__class__.__name__}"
                return

    def request(self, path, extra=(), body=None, method="POST", auth=False):
        """One request on a new stream; with `auth`, the service's credentials and a
        fresh g_nonce."""
        stream = self.next_stream
        self.next_stream += 2
        if auth:
            path += ("&" if "?" in path else "?") + "g_nonce=" + secrets.token_urlsafe(24)
            extra = [*credentials(path).items(), *extra]
        self.send(request_frames(stream, self.authority, path, extra, body, method))
        return stream

    def readable(self, start):
        while True:
            try:
                data = self.sock.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError):
                return
            except OSError as e:
                self.closed = self.closed or f"{e.__class__.__name__} at {time.monotonic() - start:.1f} s"
                return
            if not data:
                self.closed = self.closed or f"closed at {time.monotonic() - start:.1f} s"
                return
            self.buffer += data
            while len(self.buffer) >= 9:
                length = int.from_bytes(self.buffer[:3], "big")
                if len(self.buffer) < 9 + length:
                    break
                kind, flags = self.buffer[3], self.buffer[4]
                stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
                payload = self.buffer[9 : 9 + length]
                self.buffer = self.buffer[9 + length :]
                detail = ""
                if kind == RST_STREAM:
                    detail = ERRORS.get(int.from_bytes(payload[:4], "big"), payload[:4].hex())
                elif kind == GOAWAY:
                    detail = ERRORS.get(int.from_bytes(payload[4:8], "big"), payload[4:8].hex())
                elif kind == HEADERS:
                    # :status 200 is static-table index 8; others come as literals.
                    detail = "200" if payload[:1] == b"\x88" else "other status"
                self.frames.append((time.monotonic() - start, NAMES.get(kind, str(kind)), stream, detail))


def pump(connections, seconds, start, until=None):
    """Reads every connection for `seconds` (or until `until()` holds)."""
    selector = selectors.DefaultSelector()
    for c in connections:
        if c.closed is None:
            selector.register(c.sock, selectors.EVENT_READ, c)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and selector.get_map():
        for key, _ in selector.select(timeout=0.2):
            c = key.data
            c.readable(start)
            if c.closed is not None:
                selector.unregister(c.sock)
        if until and until():
            break
    selector.close()


def summary(connections):
    """Counts of what the server sent, over all connections."""
    counts = {}
    for c in connections:
        for _, name, _, detail in c.frames:
            key = f"{name} {detail}".strip()
            counts[key] = counts.get(key, 0) + 1
        if c.closed:
            counts["connection closed"] = counts.get("connection closed", 0) + 1
    return ", ".join(f"{v} × {k}" for k, v in sorted(counts.items()))


def last(connections, names):
    times = [t for c in connections for t, n, _, _ in c.frames if n in names]
    return max(times) if times else None


# ---------------------------------------------------------------------------------------
# The findings

ROWS = []


def row(finding, request, answer, seconds, sim):
    rss, hwm = sim.memory()
    ROWS.append((finding, request, answer, seconds, rss, hwm))
    print(f"[{finding}] {request}\n    -> {answer} in {seconds}; VmRSS {rss:.0f} MB, VmHWM {hwm:.0f} MB", flush=True)


def finding1(binary, work):
    state = os.path.join(work, "state.json")
    sim = Sim(binary, "--state-file", state)
    conn = sim.connection()
    ids, codes = [], []
    started = time.monotonic()
    for i, name in enumerate(["Zed", "zede11", "ZED"]):
        status, payload, _ = call(conn, "POST", CREATE, {"crmCustomerId": f"CRM-{i}", "customerName": name, "branchName": "North"})
        ids.append(json.loads(payload)["data"]["enterpriseGlobalId"])
    users = []
    for ent in ids:
        status, payload, _ = call(conn, "POST", members(ent), {"userList": [{"userName": "alice", "password": "Secret-123", "name": "Alice"}]})
        users += [m.get("userName") for m in json.loads(payload)["data"].get("succeeded", [])]
    status, exported, _ = call(conn, "GET", STATE)
    document = json.loads(exported)
    codes = sorted(e["code"] for e in document["state"]["enterprises"].values())
    status, imported, took = call(conn, "PUT", STATE, raw=exported)
    total = time.monotonic() - started
    row(
        "1",
        "createEnterprise Zed, zede11, ZED; addMembers alice to each; GET /__sandbox/v1/state; PUT it back",
        f"codes {codes}, users {users}; importState HTTP {status} {short(imported, 80)}",
        f"{total:.2f} s (import {took * 1000:.0f} ms)",
        sim,
    )
    conn.close()
    sim.stop()
    started = time.monotonic()
    sim = Sim(binary, "--state-file", state)
    took = time.monotonic() - started
    conn = sim.connection()
    _, again, _ = call(conn, "GET", STATE)
    same = json.loads(again)["state"] == document["state"]
    row("1", "restart from the state file (SIGTERM, start again)", f"started; export identical: {same}", f"{took:.2f} s to listening", sim)
    conn.close()
    sim.stop()


def finding2(binary):
    sim = Sim(binary)
    body = {f"k{i:05}": i for i in range(24000)}
    body.update({"crmCustomerId": "CRM-W", "customerName": 12345, "branchName": "North"})
    raw = json.dumps(body, separators=(",", ":")).encode()
    result = {}

    def concurrent():
        time.sleep(0.02)
        c = sim.connection()
        result["write"] = call(c, "POST", SHELLNUMS, {"size": 1})
        c.close()

    thread = threading.Thread(target=concurrent)
    conn = sim.connection()
    thread.start()
    status, payload, took = call(conn, "POST", CREATE, raw=raw)
    thread.join()
    w_status, w_payload, w_took = result["write"]
    row(
        "2",
        f"createEnterprise, {len(raw) / 1000:.0f} KB: 24,000 unknown keys, customerName 12345; allocateShellNums size 1 sent 20 ms later",
        f"{code(payload)} {short(json.loads(payload)['message'], 90)}; concurrent allocateShellNums code {code(w_payload)} in {w_took * 1000:.0f} ms",
        f"{took * 1000:.0f} ms",
        sim,
    )
    conn.close()
    sim.stop()


def tls_files(work):
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return cert, key


def well_behaved(sim):
    conn = sim.connection(timeout=30)
    try:
        status, payload, took = call(conn, "POST", SHELLNUMS, {"size": 1})
        return f"HTTP {status} code {code(payload)}", took
    except OSError as e:
        return f"failed: {e.__class__.__name__}", None
    finally:
        conn.close()


def finding3(binary, work, connections, parts="abcd"):
    cert, key = tls_files(work)
    base_rss = None
    if "a" in parts:
        finding3a(binary, connections)
    if "b" in parts:
        finding3b(binary, cert, key, connections)
    if "c" in parts:
        finding3c(binary, cert, key)
    if "d" in parts:
        base_rss = finding3d(binary, cert, key)
    return base_rss


def finding3a(binary, connections):
    """Prior knowledge on the plain port."""
    sim = Sim(binary)
    base_rss, _ = sim.memory()
    start = time.monotonic()
    conns = []
    for _ in range(connections):
        c = H2(sim, plain=True)
        c.request(SHELLNUMS)
        conns.append(c)
    opened = time.monotonic() - start
    pump(conns, 5, start, until=lambda: all(c.closed for c in conns))
    answer, took = well_behaved(sim)
    row(
        "3",
        f"{connections} plain connections: HTTP/2 preface, SETTINGS_INITIAL_WINDOW_SIZE=0, one request each (no credentials), then one HTTP/1.1 allocateShellNums",
        f"{sum(1 for c in conns if c.closed)} of {connections} closed by the server ({summary(conns[:1])} on the first; never an HTTP/2 frame); then {answer} in {took * 1000:.0f} ms",
        f"{opened:.1f} s to open all",
        sim,
    )
    for c in conns:
        c.sock.close()
    sim.stop()


def finding3b(binary, cert, key, connections):
    """The same over TLS (ALPN h2): the connection cap (1,024) held by zero windows."""
    sim = Sim(binary, tls=(cert, key))
    start = time.monotonic()
    conns = []
    for _ in range(connections):
        c = H2(sim)
        c.request(SHELLNUMS)
        conns.append(c)
    pump(conns, 2, start)
    heads = sum(1 for c in conns for _, n, _, _ in c.frames if n == "HEADERS")
    opened = time.monotonic() - start
    rss_held, _ = sim.memory()
    answer, took = well_behaved(sim)
    row(
        "3",
        f"TLS: {connections} connections (ALPN h2), SETTINGS_INITIAL_WINDOW_SIZE=0, one request each (no credentials), then a well-behaved HTTPS allocateShellNums",
        f"{heads} reply heads, no reply body (window 0); the well-behaved request: {answer} in {(took or 0) * 1000:.0f} ms (a connection evicted to make room)",
        f"{opened:.1f} s to open all; served at +{time.monotonic() - start:.1f} s",
        sim,
    )
    pump(conns, 45, start, until=lambda: all(c.closed for c in conns))
    ended = last(conns, ("RST_STREAM", "GOAWAY"))
    row(
        "3",
        "… the same zero-window connections, left alone (write timeout 30 s)",
        f"{summary(conns)}; {sum(1 for c in conns if c.closed)} of {connections} closed",
        f"last reset/GOAWAY at +{ended:.1f} s" if ended else "no reset",
        sim,
    )
    for c in conns:
        c.sock.close()
    sim.stop()


def finding3c(binary, cert, key):
    """12 zero-window streams, each asking for the journal filled to its bound."""
    sim = Sim(binary, tls=(cert, key))
    conn = sim.connection()
    body = json.dumps({"crmCustomerId": "x" * 16000, "customerName": "y" * 16000, "branchName": "z" * 16000, "address": "w" * 15000}).encode()
    for _ in range(1000):
        call(conn, "POST", CREATE, raw=body, auth=False)
    conn.close()
    time.sleep(0.5)
    base_rss, _ = sim.memory()
    start = time.monotonic()
    conns = []
    for _ in range(12):
        c = H2(sim)
        c.request(JOURNAL, method="GET")
        conns.append(c)
    pump(conns, 3, start)
    rss, hwm = sim.memory()
    row(
        "3",
        "TLS: 12 zero-window connections, each GET /__sandbox/v1/journal (the journal filled to its 32 MiB bound)",
        f"{summary(conns)} (200: the reply admitted to the reply budget, 64 MiB; other: 503 with Retry-After); "
        f"{rss - base_rss:.0f} MB held over the server before",
        "at +3 s",
        sim,
    )
    conn = sim.connection(timeout=30)
    status, journal, took = call(conn, "GET", JOURNAL)
    conn.close()
    row(
        "3",
        "… then a well-behaved HTTPS GET /__sandbox/v1/journal",
        f"HTTP {status}, {len(journal) / 1e6:.1f} MB (the stalled reply's connection closed to make room)",
        f"{took * 1000:.0f} ms",
        sim,
    )
    ended = lambda c: c.closed or any(f[1] in ("RST_STREAM", "GOAWAY") for f in c.frames)
    pump(conns, 40, start, until=lambda: all(ended(c) for c in conns))
    time.sleep(1)
    ended = last(conns, ("RST_STREAM",))
    rss, _ = sim.memory()
    row(
        "3",
        "… left alone (write timeout 30 s)",
        f"{summary(conns)}; {rss - base_rss:.0f} MB held over the server before",
        f"reset at +{ended:.1f} s" if ended else "no reset",
        sim,
    )
    for c in conns:
        c.sock.close()
    sim.stop()


def finding3d(binary, cert, key):
    """100 connections × 200 streams of large headers over TLS, window 0."""
    sim = Sim(binary, tls=(cert, key))
    time.sleep(0.5)
    base_rss, _ = sim.memory()
    start = time.monotonic()
    conns = []
    # 15 headers of 4,000 bytes: 60 KB, under the 64 KiB header list bound.
    big = [(f"x-large-{i:02}", "v" * 4000) for i in range(15)]
    for _ in range(100):
        c = H2(sim)
        for _ in range(200):
            c.request(SHELLNUMS, big, body=b'{"size":1}', auth=True)
        conns.append(c)
    sent = time.monotonic() - start
    pump(conns, 2, start)
    rss, hwm = sim.memory()
    heads = sum(1 for c in conns for _, n, _, _ in c.frames if n == "HEADERS")
    per_conn = (hwm - base_rss) * 1024 / 100
    row(
        "3",
        "TLS: 100 connections × 200 streams, each an allocateShellNums with credentials and 60 KB of headers (15 × 4,000 bytes), window 0",
        f"{summary(conns)}; {heads} requests in progress (32 per connection at most); "
        f"peak {hwm - base_rss:.0f} MB over the idle server: {per_conn:.0f} KiB per connection, {per_conn / 32:.1f} KiB per stream",
        f"{sent:.1f} s to send",
        sim,
    )
    answer, took = well_behaved(sim)
    row("3", "… meanwhile a well-behaved HTTPS allocateShellNums", answer, f"{(took or 0) * 1000:.0f} ms", sim)
    for c in conns:
        c.sock.close()
    sim.stop()
    return base_rss


def finding4(binary, work):
    sim = Sim(binary)
    conn = sim.connection()
    huge = "n" * (50 * 1024 * 1024)
    raw = json.dumps({"crmCustomerId": "CRM-L", "customerName": huge, "branchName": "North"}).encode()
    status, payload, took = call(conn, "POST", CREATE, raw=raw)
    _, state, _ = call(conn, "GET", STATE)
    kept = len(json.loads(state)["state"]["enterprises"])
    row(
        "4",
        "createEnterprise with a 50 MB customerName",
        f"{code(payload)}, a {len(payload)} byte reply ({short(json.loads(payload)['message'], 70)}); enterprises kept: {kept}",
        f"{took * 1000:.0f} ms",
        sim,
    )
    raw = b'{"size":"' + b"9" * (50 * 1024 * 1024) + b'"}'
    status, payload, took = call(conn, "POST", SHELLNUMS, raw=raw)
    row("4", "allocateShellNums with a 50 MB string size", f"{code(payload)}, a {len(payload)} byte reply", f"{took * 1000:.0f} ms", sim)
    conn.close()
    sim.stop()

    sim = Sim(binary)
    conn = sim.connection()
    # Unauthenticated requests, each with 63 KB of body (under the 64 KiB kept whole).
    body = json.dumps({"crmCustomerId": "x" * 16000, "customerName": "y" * 16000, "branchName": "z" * 16000, "address": "w" * 15000}).encode()
    started = time.monotonic()
    for _ in range(1000):
        call(conn, "POST", CREATE, raw=body, auth=False)
    filled = time.monotonic() - started
    status, journal, took = call(conn, "GET", JOURNAL)
    entries = json.loads(journal)
    count = len(entries if isinstance(entries, list) else entries.get("entries", entries.get("data", [])))
    row(
        "4",
        f"1,000 unauthenticated createEnterprise of {len(body) / 1000:.0f} KB each, then GET /__sandbox/v1/journal",
        f"HTTP {status}: {count} entries kept, a {len(journal) / 1e6:.1f} MB export (journal bound 32 MiB)",
        f"{filled:.1f} s to send; export {took * 1000:.0f} ms",
        sim,
    )
    conn.close()
    sim.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    parser.add_argument("--binary", default=os.path.join(target, "release", "licensing-sim"))
    parser.add_argument("--connections", type=int, default=1024, help="connections for finding 3 (default 1,024)")
    parser.add_argument("--out", help="also write the table to this Markdown file")
    parser.add_argument("--only", help="comma-separated findings to run (1,2,3,4; 3a…3d for one case of 3)")
    args = parser.parse_args()
    raise_fd_limit()
    only = set((args.only or "1,2,3,4").split(","))
    with tempfile.TemporaryDirectory(prefix="licensing-hostile-") as work:
        if "1" in only:
            finding1(args.binary, work)
        if "2" in only:
            finding2(args.binary)
        parts = "".join(o[1:] for o in only if o.startswith("3") and len(o) > 1)
        if "3" in only or parts:
            finding3(args.binary, work, args.connections, parts if "3" not in only else "abcd")
        if "4" in only:
            finding4(args.binary, work)
    lines = [
        "| finding | request | answer | time | VmRSS | VmHWM |",
        "|---|---|---|---|---|---|",
    ]
    for finding, request, answer, seconds, rss, hwm in ROWS:
        cell = lambda s: str(s).replace("|", "\\|")
        lines.append(f"| {finding} | {cell(request)} | {cell(answer)} | {seconds} | {rss:.0f} MB | {hwm:.0f} MB |")
    table = "\n".join(lines)
    print("\n" + table)
    if args.out:
        with open(args.out, "w") as out:
            out.write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())
