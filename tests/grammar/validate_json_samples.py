#!/usr/bin/env python3
"""Validates grammar samples against their JSON Schemas with an independent validator (python3-jsonschema).

Input: a JSON array of {"name", "schema", "text"}. Every text must parse as JSON and validate, formats included.
The date-time and time checks need rfc3339-validator, which Debian does not package, so they are added here from
the standard library (RFC 3339 via datetime.fromisoformat after a strict shape check)."""
import datetime
import json
import re
import sys

import jsonschema

RFC3339_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$")

checker = jsonschema.FormatChecker()


@checker.checks("time", raises=ValueError)
def is_time(value):
    if not isinstance(value, str):
        return True
    if not RFC3339_TIME.match(value):
        raise ValueError("not an RFC 3339 time")
    return True


@checker.checks("date-time", raises=ValueError)
def is_date_time(value):
    if not isinstance(value, str):
        return True
    date, sep, time = value.partition("T")
    if not sep or not RFC3339_TIME.match(time) or not re.match(r"^\d{4}-\d{2}-\d{2}$", date):
        raise ValueError("not an RFC 3339 date-time")
    datetime.date.fromisoformat(date)
    return True


def main():
    samples = json.load(open(sys.argv[1], encoding="utf-8"))
    failures = 0
    for s in samples:
        try:
            instance = json.loads(s["text"])
            cls = jsonschema.validators.validator_for(s["schema"], default=jsonschema.Draft202012Validator)
            cls(s["schema"], format_checker=checker).validate(instance)
        except Exception as e:  # noqa: BLE001 - every failure is reported the same way
            failures += 1
            print(f"INVALID {s['name']}: {s['text']!r}: {str(e).splitlines()[0]}")
    print(f"validate_json_samples: {len(samples) - failures}/{len(samples)} valid")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
