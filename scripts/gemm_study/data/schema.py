"""The results schema (results.schema.json, versioned beside this module) and a validator of the
part of JSON Schema it uses, so that checking a file needs no package beyond the study's own
(the tests cross-check it with the jsonschema package where that is installed)."""

import json
from functools import lru_cache
from pathlib import Path

from gemm_study.data.errors import InputError

SCHEMA_FILE = Path(__file__).with_name("results.schema.json")
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}


@lru_cache(maxsize=None)
def results_schema():
    return json.loads(SCHEMA_FILE.read_text())


def schema_version():
    """The version of the results these tools read (context.schema_version, where stated)."""
    return results_schema()["schema_version"]


def check_version(path, context):
    """InputError (one line) when a results file states a schema version these tools do not read."""
    stated = context.get("schema_version")
    if isinstance(stated, str) and stated.isdigit():
        stated = int(stated)  # gemm-bench's context holds strings
    if stated is not None and stated != schema_version():
        raise InputError(
            f"{path}: results schema version {stated!r}; these tools read version {schema_version()} "
            f"(scripts/gemm_study/data/results.schema.json)"
        )


def _is(value, kind):
    if kind in ("integer", "number") and isinstance(value, bool):
        return False  # JSON's true is not a number
    return isinstance(value, TYPES[kind])


def problems(value, schema=None, where="$", root=None):
    """Every place where `value` breaks `schema` (default: the results schema), as 'path: why'."""
    root = root or results_schema()
    schema = root if schema is None else schema
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    found = []
    if "type" in schema and not _is(value, schema["type"]):
        return [f"{where}: expected {schema['type']}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: expected {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: expected one of {schema['enum']}")
    if isinstance(value, dict):
        found += [f"{where}: missing {key}" for key in schema.get("required", ()) if key not in value]
        known = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, member in value.items():
            if key in known:
                found += problems(member, known[key], f"{where}.{key}", root)
            elif isinstance(extra, dict):
                found += problems(member, extra, f"{where}.{key}", root)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += problems(item, schema["items"], f"{where}[{i}]", root)
    if "anyOf" in schema and not any(not problems(value, option, where, root) for option in schema["anyOf"]):
        found.append(f"{where}: matches none of {len(schema['anyOf'])} alternatives")
    return found
