#!/usr/bin/python3
"""Validates a report.json against reports/report.schema.json (JSON Schema draft 2020-12).

Uses Debian's python3-jsonschema (4.10 in bookworm, the first with 2020-12 support). Exits 1 with
every error listed when the report does not validate, 2 when the schema itself is not valid.

Every key of the report must also be described by the schema (the report model,
reports/model/report_model.h, is tested against the schema's properties), except inside objects
the schema marks open with "additionalProperties" (a case's details, a Python process's facts).
usage: validate_report.py SCHEMA REPORT
"""
import copy
import importlib.metadata
import json
import sys

import jsonschema


def undescribed_keys(schema: dict, value, node, path: str = "") -> list:
    """The paths of keys in `value` that `node` (a part of `schema`) does not describe."""
    defs = schema.get("$defs", {})

    def resolve(n):
        while isinstance(n, dict) and "$ref" in n:
            n = defs[n["$ref"].split("/")[-1]]
        return n if isinstance(n, dict) else {}

    def branches(n):
        n = resolve(n)
        out = [n]
        for key in ("oneOf", "anyOf", "allOf"):
            for b in n.get(key, []):
                out.extend(branches(b))
        return out

    found = []
    parts = branches(node)
    if isinstance(value, dict):
        props, extra, is_open = {}, None, False
        for b in parts:
            for k, sub in b.get("properties", {}).items():
                props.setdefault(k, []).append(sub)  # every branch's word on it
            if "additionalProperties" in b:
                is_open = True
                if isinstance(b["additionalProperties"], dict):
                    extra = b["additionalProperties"]
        for k, v in value.items():
            if k in props:
                found += undescribed_keys(schema, v, {"anyOf": props[k]}, f"{path}/{k}")
            elif extra is not None:
                found += undescribed_keys(schema, v, extra, f"{path}/{k}")
            elif not is_open and props:
                found.append(f"{path}/{k}")
    elif isinstance(value, list):
        for b in parts:
            if "items" in b:
                for i, v in enumerate(value):
                    found += undescribed_keys(schema, v, b["items"], f"{path}/{i}")
                break
    return found


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
    undescribed = undescribed_keys(schema, report, schema)
    for path in undescribed:
        print(f"{report_path}: {path}: a key the schema does not describe")
    # The walk must see a key nobody described.
    planted = copy.deepcopy(report)
    if planted.get("cases") and planted["cases"][0].get("variants"):
        planted["cases"][0]["variants"][0]["no_such_key"] = 1
        if not undescribed_keys(schema, planted, schema):
            print(f"{schema_path}: a variant's undescribed key went unseen")
            return 1
    cases = len(report.get("cases", []))
    variants = sum(len(c.get("variants", [])) for c in report.get("cases", []))
    if undescribed:
        print(f"{len(undescribed)} key(s) of {report_path} not described by {schema_path}")
        return 1
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
