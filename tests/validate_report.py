#!/usr/bin/python3
"""Validates a report.json against reports/report.schema.json (JSON Schema draft 2020-12).

Uses Debian's python3-jsonschema (4.10 in bookworm, the first with 2020-12 support). Exits 1 with
every error listed when the report does not validate, 2 when the schema itself is not valid.
usage: validate_report.py SCHEMA REPORT
"""
import copy
import importlib.metadata
import json
import sys

import jsonschema


def main(schema_path: str, report_path: str) -> int:
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    if validator_class is not jsonschema.Draft202012Validator:
        print(f"{schema_path}: expected a draft 2020-12 schema, got {validator_class.__name__}")
        return 2
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as e:
        print(f"{schema_path} is not a valid schema: {e.message} at {list(e.path)}")
        return 2
    validator = validator_class(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
    for e in errors:
        print(f"{report_path}: {'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}")
    # A schema that accepts anything would pass too: it must reject these breakages of the report.
    breakages = {
        "an unknown outcome": lambda r: r["cases"][0]["variants"][0].update(outcome="exploded"),
        "a start method that does not exist": lambda r: r["cases"][0]["variants"][0].update(start_method="clone"),
        "a variant without its exit": lambda r: r["cases"][0]["variants"][0].pop("exit"),
        "a stack entry without frames": lambda r: r["cases"][0]["variants"][0].update(stacks=[{"pid": 1, "tid": 1, "name": "x"}]),
        "no schema_version": lambda r: r.pop("schema_version"),
        "an unknown verdict": lambda r: r["cases"][0].update(verdict="maybe"),
    }
    accepted = []
    for what, breakage in breakages.items():
        broken = copy.deepcopy(report)
        breakage(broken)
        if validator.is_valid(broken):
            accepted.append(what)
    if accepted:
        print(f"{schema_path} accepts a broken report: {', '.join(accepted)}")
        return 1
    cases = len(report.get("cases", []))
    variants = sum(len(c.get("variants", [])) for c in report.get("cases", []))
    if errors:
        print(f"{len(errors)} error(s): {report_path} does not match {schema_path}")
        return 1
    print(f"{report_path} matches {schema_path} ({cases} cases, {variants} variants,"
          f" {len(breakages)} breakages rejected,"
          f" jsonschema {importlib.metadata.version('jsonschema')}, draft 2020-12)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
