"""Runs the example suite and three ways a run can end badly, each pytest in a child
process, and checks by PID that no ``licensing-sim`` outlives any of them:

1. the example suite (``test_story.py``, and ``test_admin.py``: the admin API's refusals and
   bounds), which must pass and write its coverage report;
2. a failing test (``lifecycle/fails.py``), which must fail;
3. Ctrl-C: SIGINT sent to pytest while a test runs (``lifecycle/waits.py``), as a terminal
   sends it to its foreground group, of which the simulator is not a member;
4. pytest killed (SIGKILL) while a test runs: no clean-up code runs at all, and the
   simulator must end by itself, on its standard input's end;
5. one shared simulator, started here, and ``test_tenants.py`` in four pytest-xdist workers
   against it (``--licensing-url``, the admin token in ``LICENSING_SANDBOX_TOKEN``), each
   test in a tenant of its own: the run must pass, have used more than one worker, and
   leave no tenant behind and the default tenant's state as it was;
6. the coverage report of a run in four pytest-xdist workers (``lifecycle/covered.py``),
   each with its own simulator and a tenant per test: one report, counting every call of
   every worker, each tenant's traffic included (read before the tenant was deleted), a
   double submission found within one tenant and none across tenants.

Usage: ``python check_lifecycle.py COVERAGE_FILE`` with the venv's python, pytest and the
wheel installed. Exits non-zero naming the case that failed. POSIX only (signals, /proc
or ``kill -0``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Seconds any one case may take.
CASE_TIMEOUT = 120


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting for its parent to reap it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    return True


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def pytest(pid_file: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "LICENSING_EXAMPLE_PID_FILE": str(pid_file)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--licensing-seed", "demo", *args]
    print("$", " ".join(command), flush=True)
    # A program started in the background by a non-interactive shell (as CI starts this
    # check) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt: the
    # terminal's Ctrl-C this case stands for reaches a pytest whose SIGINT is the default.
    return subprocess.Popen(
        command, cwd=HERE, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )


def simulator_pid(pid_file: Path, child: subprocess.Popen[bytes]) -> int:
    """The PID the session wrote, once it has (the simulator is then running)."""
    deadline = time.monotonic() + CASE_TIMEOUT
    while time.monotonic() < deadline:
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        if child.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit(f"pytest (exit {child.poll()}) wrote no simulator PID to {pid_file}")


def case(name: str, *args: str, expect: int, act=None, grace: float = 0.0) -> None:
    with tempfile.TemporaryDirectory() as folder:
        pid_file = Path(folder) / "sim.pid"
        child = pytest(pid_file, *args)
        if act is not None:
            sim = simulator_pid(pid_file, child)
            in_test(pid_file, child)
            act(child)
        status = child.wait(timeout=CASE_TIMEOUT)
        sim = simulator_pid(pid_file, child)
        if status != expect:
            raise SystemExit(f"{name}: pytest exited {status}, expected {expect}")
        if not gone_within(sim, grace):
            os.kill(sim, signal.SIGKILL)
            raise SystemExit(f"{name}: licensing-sim (pid {sim}) still running {grace:.0f} s after pytest ended")
        print(f"ok: {name}: pytest exited {status}, licensing-sim (pid {sim}) gone", flush=True)


def in_test(pid_file: Path, child: subprocess.Popen[bytes]) -> None:
    """Waits until the test says it is inside its body (``lifecycle/waits.py``): a signal
    that came during a fixture's set-up would test the set-up, and how soon that ends
    depends on the machine's load."""
    marker = Path(str(pid_file) + ".in-test")
    deadline = time.monotonic() + CASE_TIMEOUT
    while time.monotonic() < deadline:
        if marker.exists():
            return
        if child.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit(f"pytest (exit {child.poll()}) never reached the test's body ({marker})")


def interrupt(child: subprocess.Popen[bytes]) -> None:
    child.send_signal(signal.SIGINT)


def kill(child: subprocess.Popen[bytes]) -> None:
    child.kill()


def shared_case() -> None:
    """Case 5: the tenants of one shared simulator, in four workers."""
    from licensing_sandbox import Sandbox, SandboxError

    with Sandbox.start(seed="demo") as shared, tempfile.TemporaryDirectory() as folder:
        before = shared.state()
        env = {
            **os.environ,
            "LICENSING_SANDBOX_URL": shared.url,
            "LICENSING_SANDBOX_TOKEN": shared.admin_token or "",
            "LICENSING_EXAMPLE_TENANTS": folder,
        }
        env.pop("LICENSING_EXAMPLE_PID_FILE", None)
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "4", "--licensing-seed", "demo"]
        print("$", " ".join([*command, "test_tenants.py"]), flush=True)
        status = subprocess.run([*command, "test_tenants.py"], cwd=HERE, env=env, timeout=CASE_TIMEOUT).returncode
        if status != 0:
            raise SystemExit(f"tenants in four workers: pytest exited {status}, expected 0")
        recorded = [name.split("-", 1) for name in os.listdir(folder)]
        workers = {worker for worker, _ in recorded}
        if len(recorded) < 9 or len(workers) < 2:
            raise SystemExit(f"tenants in four workers: {len(recorded)} tenants recorded by workers {sorted(workers)}")
        for _, tenant in recorded:
            try:
                shared.get_tenant(tenant)
                raise SystemExit(f"tenants in four workers: tenant {tenant} is still there after the run")
            except SandboxError as error:
                if error.status != 404:
                    raise
        if shared.tenants()["tenants"] or shared.state() != before:
            raise SystemExit("tenants in four workers: the shared sandbox is not as it was before the run")
    print(f"ok: tenants in four workers: {len(recorded)} tenants of workers {sorted(workers)}, all gone", flush=True)


def coverage_case() -> None:
    """Case 6: one report from four workers' journals and their tenants'."""
    sys.path.insert(0, str(HERE / "lifecycle"))
    from covered import DEFAULT_TESTS, LOCK, TENANT_TESTS

    with tempfile.TemporaryDirectory() as folder:
        report_file = Path(folder) / "coverage.json"
        workers_folder = Path(folder) / "workers"
        workers_folder.mkdir()
        env = {**os.environ, "LICENSING_EXAMPLE_TENANTS": str(workers_folder)}
        for name in ("LICENSING_EXAMPLE_PID_FILE", "LICENSING_SANDBOX_URL", "LICENSING_SANDBOX_TOKEN"):
            env.pop(name, None)
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "4", "--licensing-seed", "demo"]
        command += [f"--licensing-coverage={report_file}", "lifecycle/covered.py"]
        print("$", " ".join(command), flush=True)
        status = subprocess.run(command, cwd=HERE, env=env, timeout=CASE_TIMEOUT).returncode
        if status != 0:
            raise SystemExit(f"coverage in four workers: pytest exited {status}, expected 0")
        workers = {name.split("-", 1)[0] for name in os.listdir(workers_folder)}
        if len(workers) < 2:
            raise SystemExit(f"coverage in four workers: the tests ran in workers {sorted(workers)} only")
        report = json.loads(report_file.read_text())
        counted = {op["operation"]: op["calls"] for op in report["operations"]}
        expected = {"allocateShellNums": TENANT_TESTS + 1 + DEFAULT_TESTS, "disableLocks": TENANT_TESTS + 2}
        for operation, calls in expected.items():
            if counted.get(operation) != calls:
                raise SystemExit(f"coverage in four workers: {operation}: {counted.get(operation)} calls counted, {calls} made")
        doubles = report["suspectedDoubleSubmissions"]
        twice = [d for d in doubles if d["what"] == f"disable of lock {LOCK}"]
        if len(doubles) != 1 or len(twice) != 1 or "test_twice_in_one_tenant" not in twice[0]["first"]:
            raise SystemExit(f"coverage in four workers: one double expected, of test_twice_in_one_tenant's tenant: {doubles}")
    print(
        f"ok: coverage in four workers {sorted(workers)}: {expected} calls counted, "
        f"one double ({twice[0]['first']} and {twice[0]['second']})",
        flush=True,
    )


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: check_lifecycle.py COVERAGE_FILE")
    coverage = Path(sys.argv[1]).resolve()
    coverage.unlink(missing_ok=True)
    case("the example suite", f"--licensing-coverage={coverage}", "test_story.py", "test_admin.py", expect=0)
    report = coverage.read_text()
    for operation in ("createEnterprise", "batchOrder", "disableLocks", "addMembers"):
        if f"`{operation}`" not in report:
            raise SystemExit(f"the coverage report {coverage} does not name {operation}")
    print(f"ok: the coverage report {coverage} ({len(report)} bytes)", flush=True)
    case("a failing test", "lifecycle/fails.py", expect=1)
    # pytest's exit status for an interrupted run is 2.
    case("Ctrl-C (SIGINT to pytest)", "lifecycle/waits.py", expect=2, act=interrupt)
    # Killed, it cannot stop the simulator: the simulator sees its stdin end and stops.
    case("pytest killed (SIGKILL)", "lifecycle/waits.py", expect=-signal.SIGKILL, act=kill, grace=10.0)
    shared_case()
    coverage_case()
    print("6 passed, 0 failed", flush=True)


if __name__ == "__main__":
    main()
