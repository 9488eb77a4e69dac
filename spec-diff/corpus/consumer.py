"""The Python consumer of `cargo xtask spec-diff-corpus` (see spec-diff/corpus/main.rs).

    python consumer.py generate OUT.py USAGE.json   # with the OLD packages on sys.path
    python consumer.py parse SAMPLES.json     # with the packages to test on sys.path

`generate` reads the models and operations of the packages openapi-python-client made from
the current specs (licensing_order, licensing_member) and writes a program that uses them as
that version allowed: each model built with only its required keyword arguments and with
all of them, each attribute read into a variable of its old type (literal enums spelled out
with their old values), each operation called with its old keyword arguments. mypy then
checks that program against the packages made from a mutated spec.

`parse` decodes samples (`[{"service", "schema", "value"}]`) with the packages on sys.path:
`Model.from_dict`, or a literal enum's `check_*` function. Exit 1 when one is refused.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import sys
import types
import typing
from typing import Any

SERVICES = ("order", "member")


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Renderer:
    """Type hints as source text, with the modules they need imported."""

    def __init__(self) -> None:
        self.modules: set[str] = set()

    def render(self, t: Any) -> str:
        origin = typing.get_origin(t)
        args = typing.get_args(t)
        if t is type(None) or t is None:
            return "None"
        if t is Any:
            return "Any"
        if origin is typing.Literal:
            # The old values themselves: the new alias of the same name may list others.
            return "Literal[" + ", ".join(repr(a) for a in args) + "]"
        if origin is typing.Union or origin is types.UnionType:
            return "Union[" + ", ".join(self.render(a) for a in args) + "]"
        if origin in (list, typing.List):
            return "list[" + self.render(args[0]) + "]"
        if origin in (dict, typing.Dict):
            return "dict[" + ", ".join(self.render(a) for a in args) + "]"
        if isinstance(t, type):
            if t.__module__ == "builtins":
                return t.__qualname__
            self.modules.add(t.__module__)
            return f"{t.__module__}.{t.__qualname__}"
        return "Any"


def hints(obj: Any, service: str) -> dict[str, Any]:
    models = importlib.import_module(f"licensing_{service}.models")
    ns = dict(vars(models))
    ns.update(vars(importlib.import_module(f"licensing_{service}.types")))
    module = sys.modules[obj.__module__]
    ns.update(vars(module))
    return typing.get_type_hints(obj, globalns=ns, localns=ns)


def generate(out_path: str, usage_path: str) -> None:
    # Where each schema travels ({"service": {"Name": [in_requests, in_replies]}}): code
    # builds what requests carry and reads what replies carry.
    with open(usage_path, encoding="utf-8") as f:
        usage = json.load(f)
    r = Renderer()
    body: list[str] = []
    for service in SERVICES:
        pkg = f"licensing_{service}"
        models = importlib.import_module(f"{pkg}.models")
        for name in sorted(getattr(models, "__all__", dir(models))):
            cls = getattr(models, name)
            if not (isinstance(cls, type) and hasattr(cls, "from_dict")):
                continue
            fn = f"{service}_{name}"
            request, reply = usage.get(service, {}).get(name, [True, True])
            if not request and not reply:
                request = reply = True
            params = inspect.signature(cls.__init__).parameters
            init = hints(cls.__init__, service)
            fields = [p for p in params.values() if p.name != "self"]
            # Built with only the required keywords, and with all of them.
            for kind, chosen in (
                ("min", [p for p in fields if p.default is inspect.Parameter.empty]),
                ("max", fields),
            ):
                if not request:
                    break
                args = ", ".join(f"{p.name}: {r.render(init[p.name])}" for p in chosen)
                call = ", ".join(f"{p.name}={p.name}" for p in chosen)
                r.modules.add(cls.__module__)
                body.append(
                    f"def c_{fn}_{kind}({args}) -> None:\n"
                    f"    {cls.__module__}.{name}({call})\n"
                )
            # Every attribute read into a variable of its old type.
            if not reply:
                continue
            attrs = hints(cls, service)
            lines = [
                f"    a_{i}: {r.render(t)} = v.{a}"
                for i, (a, t) in enumerate(attrs.items())
                if a != "additional_properties"
            ]
            body.append(
                f"def r_{fn}(v: {cls.__module__}.{name}) -> None:\n"
                + ("\n".join(lines) if lines else "    pass")
                + "\n"
            )
        api = importlib.import_module(f"{pkg}.api")
        for tag in pkgutil.iter_modules(api.__path__):
            tag_mod = importlib.import_module(f"{pkg}.api.{tag.name}")
            for op in pkgutil.iter_modules(tag_mod.__path__):
                mod_name = f"{pkg}.api.{tag.name}.{op.name}"
                mod = importlib.import_module(mod_name)
                f = mod.sync_detailed
                sig = inspect.signature(f).parameters
                h = hints(f, service)
                r.modules.add(mod_name)
                for kind, chosen in (
                    ("min", [p for p in sig.values() if p.default is inspect.Parameter.empty]),
                    ("max", list(sig.values())),
                ):
                    args = ", ".join(f"{p.name}: {r.render(h[p.name])}" for p in chosen)
                    call = ", ".join(f"{p.name}={p.name}" for p in chosen)
                    body.append(
                        f"def o_{service}_{op.name}_{kind}({args}) -> None:\n"
                        f"    {mod_name}.sync_detailed({call})\n"
                    )
    head = [
        "# Generated by `cargo xtask spec-diff-corpus` from the clients of the current specs.",
        "from typing import Any, Literal, Union",
    ]
    head += [f"import {m}" for m in sorted(r.modules)]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(head) + "\n\n\n" + "\n\n".join(body))


def parse(samples_path: str) -> int:
    with open(samples_path, encoding="utf-8") as f:
        samples = json.load(f)
    failed = 0
    for s in samples:
        service, schema, value = s["service"], s["schema"], s["value"]
        try:
            models = importlib.import_module(f"licensing_{service}.models")
            cls = getattr(models, schema, None)
            if isinstance(cls, type) and hasattr(cls, "from_dict"):
                cls.from_dict(value)
            else:
                module = importlib.import_module(
                    f"licensing_{service}.models.{snake(schema)}"
                )
                getattr(module, f"check_{snake(schema)}")(value)
        except Exception as e:  # noqa: BLE001 - any refusal is the finding
            print(f"REFUSED {service} {schema}: {type(e).__name__}: {e}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2], sys.argv[3])
    else:
        sys.exit(parse(sys.argv[2]))
