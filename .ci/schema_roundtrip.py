"""Python side of .ci/schemas.sh: the pydantic v2 models that datamodel-code-generator made
from schemas/ against the samples.

    python schema_roundtrip.py SCHEMAS MODELS SAMPLES INVALID

SCHEMAS is schemas/ (its index.json lists the schemas); MODELS the directory holding the
generated package `licensing_schemas` (one subpackage per service, one module per schema);
SAMPLES the output of `cargo xtask export-samples`; INVALID the committed invalid samples.

Checks, one line per failure and `RESULT <passed> <failed>` at the end:
* every generated module imports and defines the class named after its schema;
* every valid sample parses, and `model_validate` then
  `model_dump(mode="json", by_alias=True, exclude_unset=True)` gives back the same JSON
  (compared as canonical JSON text, so that `true` is not `1` and `1` is not `1.0`);
* every invalid sample is rejected by the model in strict JSON mode
  (`validate_json(text, strict=True)`), except the known gaps of the generated models
  listed in KNOWN_MODEL_GAPS, which must still be accepted (so that the list, and what
  the README tells consumers, stays true).
"""

import importlib
import json
import sys
from pathlib import Path

from pydantic import BaseModel, TypeAdapter, ValidationError

# Invalid samples that the generated pydantic models accept, and why.
KNOWN_MODEL_GAPS = {
    "order/BindEnterpriseReply/optional-cause-null.type.json": (
        "an optional property is `X | None = None`, so an explicit null is accepted where "
        "the schema allows only absence"
    ),
    "member/ProductInstance/trial-as-boolean.type.json": (
        "pydantic validates an integer enum by equality, so JSON `true` (and `1.0`) is "
        "taken as 1, even in strict mode"
    ),
}

passed = 0
failed = 0


def check(ok: bool, what: str) -> bool:
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}")
    return ok


def canonical(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def main(schemas: Path, models: Path, samples: Path, invalid: Path) -> None:
    sys.path.insert(0, str(models))
    index = json.loads((schemas / "index.json").read_text())

    types = {}
    for entry in index["schemas"]:
        service, name = entry["service"], entry["name"]
        module_name = f"licensing_schemas.{service}.{name}"
        try:
            types[(service, name)] = getattr(importlib.import_module(module_name), name)
        except Exception as error:  # noqa: BLE001 - any failure to import is the finding
            check(False, f"python: from {module_name} import {name}: {error!r}")
            continue
        check(True, f"python: from {module_name} import {name}")

    round_trips = 0
    for sample in json.loads((samples / "samples.json").read_text()):
        model = types.get((sample["service"], sample["schema"]))
        what = f"python round trip of {sample['file']} ({sample['source']})"
        if model is None or not issubclass(model, BaseModel):
            check(False, f"{what}: no pydantic model")
            continue
        original = json.loads((samples / sample["file"]).read_text())
        try:
            dumped = model.model_validate(original).model_dump(
                mode="json", by_alias=True, exclude_unset=True
            )
        except ValidationError as error:
            check(False, f"{what}: rejected: {error}")
            continue
        if check(canonical(dumped) == canonical(original), what):
            round_trips += 1
        else:
            print(f"  sent: {canonical(original)}\n  got:  {canonical(dumped)}")

    rejected = 0
    gaps = 0
    for file in sorted(invalid.glob("*/*/*.json")):
        service, name = file.parts[-3], file.parts[-2]
        model = types.get((service, name))
        if model is None:
            check(False, f"python: {file}: no model {service}/{name}")
            continue
        try:
            TypeAdapter(model).validate_json(file.read_text(), strict=True)
            accepted = True
        except ValidationError:
            accepted = False
        gap = KNOWN_MODEL_GAPS.get("/".join(file.parts[-3:]))
        if gap is None:
            if check(not accepted, f"python model {service}.{name} rejects {file}"):
                rejected += 1
        elif check(accepted, f"python: {file} is now rejected; drop it from KNOWN_MODEL_GAPS"):
            gaps += 1

    print(
        f"python: {len(types)}/{len(index['schemas'])} modules import, "
        f"{round_trips} valid samples round-trip, {rejected} invalid samples rejected, "
        f"{gaps} accepted as known gaps"
    )
    for file, reason in KNOWN_MODEL_GAPS.items():
        print(f"  known gap: {file}: {reason}")
    print(f"RESULT {passed} {failed}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*(Path(arg) for arg in sys.argv[1:]))
