"""The journals of one pytest run, for one coverage report: the session's simulator's and
each ``licensing_tenant``'s (a tenant has a journal of its own, read before it is
deleted), one file each in a folder every pytest-xdist worker of the run writes to, and
``licensing-proxy coverage`` over all of them once the run is over.

One file per journal, not one merged journal: the report's check for double submissions
reads each file as a sandbox of its own, so two tenants that each disabled the same lock
once are not taken for one integration that did it twice; and no worker ever rewrites
what another wrote."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Optional

from ._admin import SandboxError
from ._api import PathLike, coverage_format, proxy_coverage

#: Characters of a label kept in its file's name (a test's id can be long).
LABEL_LIMIT = 120

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _file_name(label: str) -> str:
    """``tests/test_a.py::test_x[1]`` as ``tests-test_a.py-test_x-1``: the name the report
    gives the journal's entries (``…#seq 3``)."""
    name = _UNSAFE.sub("-", label).strip("-.")[:LABEL_LIMIT]
    return name or "journal"


class Journals:
    """The journals of a run, in ``folder``."""

    def __init__(self, folder: PathLike) -> None:
        self.folder = Path(folder)

    def add(self, label: str, journal: Any) -> Path:
        """Writes ``journal`` (a ``GET /__sandbox/v1/journal`` reply) as a file of its own,
        named after ``label``, never over another's: a name taken (by this process or
        another worker) gets the next free number."""
        stem = _file_name(label)
        data = json.dumps(journal).encode()
        for n in range(1, 10_000):
            path = self.folder / (f"{stem}.json" if n == 1 else f"{stem}.{n}.json")
            try:
                with open(path, "xb") as out:
                    out.write(data)
                return path
            except FileExistsError:
                continue
        raise SandboxError(f"coverage: no free file name for the journal of {label!r} in {self.folder}")

    def files(self) -> list[str]:
        """The journals written so far, by name."""
        return sorted(p.name for p in self.folder.glob("*.json"))

    def report(self, path: PathLike) -> Optional[int]:
        """Writes the report on every journal to ``path`` (``.json``: JSON, ``.xml``:
        JUnit, else markdown); how many journals it read, or ``None`` when there were
        none (nothing is written then)."""
        files = self.files()
        if not files:
            return None
        Path(path).write_text(proxy_coverage(files, coverage_format(path), self.folder), encoding="utf-8")
        return len(files)

    def remove(self) -> None:
        """Deletes the folder and what is in it."""
        for name in os.listdir(self.folder):
            (self.folder / name).unlink(missing_ok=True)
        self.folder.rmdir()
