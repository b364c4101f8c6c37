"""A recursive strict schema is refused however its references are spelled.

References resolve as jsonschema resolves them (the ``referencing`` library):
JSON Pointers, embedded ``$id`` resources (absolute or relative), ``$anchor``
names, draft-07 ``$id: "#name"`` anchors, and pointers into non-schema
places. A non-recursive schema that reuses a definition is served.
"""

from __future__ import annotations

from typing import Any

import pytest

from claude_agent_sdk import tool

try:
    from claude_agent_sdk._internal.strict.transform import make_strict
except ImportError:  # a tree without the patch: these tests must fail
    make_strict = None  # type: ignore[assignment]

pytestmark = pytest.mark.requires_patch("strict-schema-checks")


def _closed(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        **extra,
    }


RECURSIVE = {
    "pointer": (
        _closed(
            {"n": {"$ref": "#/$defs/N"}},
            **{"$defs": {"N": _closed({"c": {"$ref": "#/$defs/N"}})}},
        ),
        "#/$defs/N/properties/c/$ref",
    ),
    "root": (_closed({"n": {"$ref": "#"}}), "#/properties/n/$ref"),
    "embedded-id-relative": (
        _closed(
            {"n": {"$ref": "node.json"}},
            **{
                "$defs": {
                    "N": _closed({"c": {"$ref": "node.json"}}, **{"$id": "node.json"})
                }
            },
        ),
        "#/$defs/N/properties/c/$ref",
    ),
    "embedded-id-absolute": (
        _closed(
            {"n": {"$ref": "https://example.com/node"}},
            **{
                "$id": "https://example.com/root",
                "$defs": {
                    "N": _closed(
                        {"c": {"$ref": "node"}}, **{"$id": "https://example.com/node"}
                    )
                },
            },
        ),
        "#/$defs/N/properties/c/$ref",
    ),
    "embedded-id-self-fragment": (
        _closed(
            {"n": {"$ref": "node.json"}},
            **{"$defs": {"N": _closed({"c": {"$ref": "#"}}, **{"$id": "node.json"})}},
        ),
        "#/$defs/N/properties/c/$ref",
    ),
    "anchor": (
        _closed(
            {"n": {"$ref": "#node"}},
            **{
                "$defs": {"N": _closed({"c": {"$ref": "#node"}}, **{"$anchor": "node"})}
            },
        ),
        "#/$defs/N/properties/c/$ref",
    ),
    "anchor-in-embedded-resource": (
        _closed(
            {"n": {"$ref": "t.json#node"}},
            **{
                "$defs": {
                    "T": {
                        "$id": "t.json",
                        "$defs": {
                            "N": _closed(
                                {"c": {"$ref": "#node"}}, **{"$anchor": "node"}
                            )
                        },
                    }
                }
            },
        ),
        "#/$defs/T/$defs/N/properties/c/$ref",
    ),
    "draft-07-id-anchor": (
        _closed(
            {"n": {"$ref": "#node"}},
            **{
                "$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {
                    "N": _closed({"c": {"$ref": "#node"}}, **{"$id": "#node"})
                },
            },
        ),
        "#/definitions/N/properties/c/$ref",
    ),
    "through-two-definitions": (
        _closed(
            {"a": {"$ref": "#/$defs/A"}},
            **{
                "$defs": {
                    "A": _closed({"b": {"$ref": "#/$defs/B"}}),
                    "B": _closed({"a": {"$ref": "#/$defs/A"}}),
                }
            },
        ),
        "#/$defs/B/properties/a/$ref",
    ),
    "pointer-into-x-keyword": (
        _closed(
            {"n": {"$ref": "#/x-shared/N"}},
            **{"x-shared": {"N": _closed({"c": {"$ref": "#/x-shared/N"}})}},
        ),
        "#/x-shared/N/properties/c/$ref",
    ),
}


@pytest.mark.parametrize("case", list(RECURSIVE))
def test_recursion_is_found_however_it_is_spelled(case: str) -> None:
    schema, at = RECURSIVE[case]
    _, violations = make_strict(schema)
    recursive = [v for v in violations if v.rule.startswith("recursive schema")]
    assert [v.path for v in recursive] == [at], violations


@pytest.mark.requires_patch("schema-checks")
@pytest.mark.parametrize("case", list(RECURSIVE))
def test_a_recursive_strict_tool_is_refused(case: str) -> None:
    schema, at = RECURSIVE[case]

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    with pytest.raises(ValueError, match="recursive schema") as refused:
        tool("r", "d", schema, strict=True)(handler)
    assert f"  - {at}: " in str(refused.value)


@pytest.mark.parametrize(
    "schema",
    [
        _closed(
            {"a": {"$ref": "#/$defs/S"}, "b": {"$ref": "#/$defs/S"}},
            **{"$defs": {"S": {"type": "string"}}},
        ),
        _closed(
            {"a": {"$ref": "s.json"}, "b": {"$ref": "s.json#s"}},
            **{"$defs": {"S": {"$id": "s.json", "$anchor": "s", "type": "string"}}},
        ),
        _closed(
            {"a": {"$ref": "https://example.com/root#/$defs/S"}},
            **{"$id": "https://example.com/root", "$defs": {"S": {"type": "string"}}},
        ),
    ],
    ids=["pointer-twice", "id-and-anchor", "absolute-self-uri"],
)
def test_reuse_is_not_recursion(schema: dict[str, Any]) -> None:
    _, violations = make_strict(schema)
    assert violations == []


def test_a_pointer_inside_an_embedded_resource_resolves_against_it() -> None:
    # "#/$defs/S" inside the t.json resource means t.json's own $defs.
    schema = _closed(
        {"t": {"$ref": "t.json"}},
        **{
            "$defs": {
                "T": _closed(
                    {"s": {"$ref": "#/$defs/S"}},
                    **{"$id": "t.json", "$defs": {"S": {"type": "string"}}},
                )
            }
        },
    )
    _, violations = make_strict(schema)
    assert violations == []
