"""Command-line validators of .ci/schemas.sh: check-jsonschema and ajv-cli, as a consumer
would run them, against every sample.

    python schema_validate.py SCHEMAS SAMPLES INVALID CHECK_JSONSCHEMA AJV

SCHEMAS is schemas/ (index.json lists the schemas), SAMPLES the output of
`cargo xtask export-samples` (valid/<service>/<Schema>/<n>.json), INVALID the committed
invalid samples (<service>/<Schema>/<what-is-wrong>.<keyword>.json), CHECK_JSONSCHEMA and
AJV the two executables. Each validator runs once per schema with all of that schema's
samples; a valid sample must be accepted and an invalid one rejected.

Prints one FAIL line per failed check, a count per validator and `RESULT <passed> <failed>`.
"""

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

AJV_VERDICT = re.compile(r"^(\S+) (valid|invalid)$")


def check_jsonschema(tool: str, schema: Path, files: list[Path]) -> dict[str, bool]:
    """Whether check-jsonschema accepts each file."""
    run = subprocess.run(
        [tool, "--output-format", "JSON", "--schemafile", str(schema), *map(str, files)],
        capture_output=True,
        text=True,
    )
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        # Not a per-file report: the schema itself was refused.
        print(f"  check-jsonschema {schema}: {run.stdout.strip()} {run.stderr.strip()}")
        return {}
    rejected = {e["filename"] for e in report.get("errors", [])}
    rejected |= {e.get("filename") for e in report.get("parse_errors", [])}
    return {str(f): str(f) not in rejected for f in files}


def ajv_cli(tool: str, schema: Path, files: list[Path]) -> dict[str, bool]:
    """Whether ajv-cli (draft 2020-12, ajv-formats) accepts each file."""
    data = [arg for f in files for arg in ("-d", str(f))]
    run = subprocess.run(
        [tool, "validate", "--spec=draft2020", "-c", "ajv-formats", "--strict=false",
         "--all-errors", "--errors=line", "-s", str(schema), *data],
        capture_output=True,
        text=True,
    )
    verdicts = {}
    for line in (run.stdout + "\n" + run.stderr).splitlines():
        match = AJV_VERDICT.match(line.strip())
        if match:
            verdicts[match[1]] = match[2] == "valid"
    if not verdicts:
        print(f"  ajv-cli {schema}: {run.stdout.strip()} {run.stderr.strip()}")
    return verdicts


def main(schemas: Path, samples: Path, invalid: Path, cjs_tool: str, ajv_tool: str) -> None:
    index = json.loads((schemas / "index.json").read_text())
    jobs = []
    for entry in index["schemas"]:
        service, name = entry["service"], entry["name"]
        valid = sorted((samples / "valid" / service / name).glob("*.json"))
        broken = sorted((invalid / service / name).glob("*.json"))
        if valid or broken:
            jobs.append((schemas / entry["file"], valid, broken))
    known = {(e["service"], e["name"]) for e in index["schemas"]}
    strays = [d for d in invalid.glob("*/*") if (d.parts[-2], d.parts[-1]) not in known]

    validators = {"check-jsonschema": (check_jsonschema, cjs_tool), "ajv-cli": (ajv_cli, ajv_tool)}
    passed = failed = 0
    for label, (run, tool) in validators.items():
        counts = {"valid": 0, "invalid": 0}
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = pool.map(lambda job: (job, run(tool, job[0], job[1] + job[2])), jobs)
            for (schema, valid, broken), verdicts in results:
                for files, expected, kind in ((valid, True, "valid"), (broken, False, "invalid")):
                    for file in files:
                        verdict = verdicts.get(str(file))
                        if verdict is expected:
                            passed += 1
                            counts[kind] += 1
                        else:
                            failed += 1
                            outcome = {True: "accepts", False: "rejects", None: "gives no verdict on"}
                            print(f"FAIL {label} {outcome[verdict]} {kind} sample {file} ({schema})")
        print(
            f"{label}: {counts['valid']} valid samples accepted, "
            f"{counts['invalid']} invalid samples rejected, against {len(jobs)} schemas"
        )
    for stray in strays:
        failed += 1
        print(f"FAIL {stray}: no such schema in {schemas / 'index.json'}")
    print(f"RESULT {passed} {failed}")


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5])
