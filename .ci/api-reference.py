#!/usr/bin/env python3
"""The book's API reference (docs/src/api/reference.md), written from the OpenAPI description
the server serves (docs/src/api/openapi.json, kept equal to it by a test): every operation with
who may call it, its body, its answer and its refusals, then every schema with its fields.

    python3 .ci/api-reference.py docs/src/api/openapi.json > docs/src/api/reference.md
    python3 .ci/api-reference.py --check docs/src/api/openapi.json docs/src/api/reference.md
"""

import json
import sys

ORDER = ["chat", "turn", "conversations", "workspaces", "blocks", "messages", "search",
         "titles", "instructions", "presets", "preferences", "models", "render", "attachments",
         "shares", "usage", "accounts", "pages", "operations", "description"]


def anchor(name):
    return "schema-" + name.lower()


def type_of(schema, depth=0):
    """A schema as a short type: a link to a named schema, a list, a choice of words."""
    if not isinstance(schema, dict):
        return "any"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{anchor(name)})"
    if "oneOf" in schema:
        parts = [p for p in schema["oneOf"] if p.get("type") != "null"]
        nullable = len(parts) < len(schema["oneOf"])
        text = " \\| ".join(type_of(p, depth + 1) for p in parts)
        return text + (" or null" if nullable else "")
    if "allOf" in schema:
        return " and ".join(type_of(p, depth + 1) for p in schema["allOf"])
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    kind = schema.get("type", "any")
    nullable = False
    if isinstance(kind, list):
        nullable = "null" in kind
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "array":
        if "prefixItems" in schema:
            text = "[" + ", ".join(type_of(p, depth + 1) for p in schema["prefixItems"]) + "]"
        else:
            text = "list of " + type_of(schema.get("items", {}), depth + 1)
    elif kind == "object" and "additionalProperties" in schema:
        text = "map of " + type_of(schema["additionalProperties"], depth + 1)
    elif kind == "object" and "properties" in schema and depth == 0:
        text = "object (below)"
    else:
        text = kind
    return text + (" or null" if nullable else "")


def cell(text):
    return " ".join((text or "").split()).replace("|", "\\|")


def fields(schema):
    required = set(schema.get("required", []))
    rows = ["| field | type | required | what it is |", "|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        rows.append(f"| `{name}` | {type_of(prop, 1)} | {'yes' if name in required else 'no'} "
                    f"| {cell(prop.get('description', ''))} |")
    return rows if len(rows) > 2 else ["(no fields)"]


def access(op):
    security = op.get("security", [])
    if security in ([], [{}]):
        return "anyone"
    return "signed in: an API token (`Authorization: Bearer …`) or the session cookie"


def render(doc):
    out = ["# API reference", "",
           "<!-- Written by .ci/api-reference.py from openapi.json; do not edit by hand. -->", "",
           f"Ponder {doc['info']['version']}, OpenAPI {doc['openapi']}: the description the server "
           "serves at `/api/openapi.json` ([download](openapi.json)), generated from the code. "
           "How to call it: [An example client](example-client.md); the turn stream: "
           "[The turn contract](turn-contract.md); the error codes: "
           "[The HTTP API](http-api.md#error-codes).", ""]
    schemas = doc["components"]["schemas"]
    by_tag = {}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            by_tag.setdefault(op["tags"][0], []).append((path, method, op))
    tags = sorted(by_tag, key=lambda t: (ORDER.index(t) if t in ORDER else len(ORDER), t))
    for tag in tags:
        out += [f"## {tag}", ""]
        for path, method, op in sorted(by_tag[tag], key=lambda x: x[0]):
            out += [f"### {method.upper()} `{path}`", ""]
            if op.get("description"):
                out += [op["description"], ""]
            out += [f"Who: {access(op)}.", ""]
            query = [p for p in op.get("parameters", []) if p["in"] == "query"]
            if query:
                out += ["Query: " + ", ".join(
                    f"`{p['name']}`" + ("" if p.get("required") else " (optional)")
                    for p in query) + ".", ""]
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                out += [f"Body (`{media}`): {type_of(content.get('schema', {}))}.", ""]
            for status, response in op["responses"].items():
                if not status.startswith(("2", "3")):
                    continue
                contents = response.get("content", {})
                if not contents:
                    out += [f"Answer `{status}`: {response['description']}.", ""]
                for media, content in contents.items():
                    out += [f"Answer `{status}` (`{media}`): {type_of(content.get('schema', {}))}.", ""]
                    schema = content.get("schema", {})
                    if schema.get("type") == "object" and "properties" in schema:
                        out += fields(schema) + [""]
            refusals = [s for s in op["responses"] if not s.startswith(("2", "3"))]
            if refusals:
                out += ["Refusals: " + ", ".join(f"`{s}`" for s in refusals) +
                        " (an [Error](#schema-error) body).", ""]
    out += ["## Schemas", ""]
    for name in sorted(schemas):
        schema = schemas[name]
        out += [f'<a id="{anchor(name)}"></a>', "", f"### {name}", ""]
        if schema.get("description"):
            out += [cell(schema["description"]), ""]
        if "properties" in schema:
            out += fields(schema) + [""]
        elif "allOf" in schema:
            out += ["All of: " + ", ".join(type_of(p, 1) for p in schema["allOf"]) + ".", ""]
            for part in schema["allOf"]:
                if "properties" in part:
                    out += fields(part) + [""]
        else:
            out += [f"Type: {type_of(schema, 1)}.", ""]
    return "\n".join(out).rstrip() + "\n"


def main(args):
    if args and args[0] == "--check":
        with open(args[1]) as f:
            expected = render(json.load(f))
        with open(args[2]) as f:
            if f.read() != expected:
                sys.exit(f"{args[2]} is not what {args[1]} gives: "
                         f"python3 .ci/api-reference.py {args[1]} > {args[2]}")
        return
    with open(args[0]) as f:
        sys.stdout.write(render(json.load(f)))


if __name__ == "__main__":
    main(sys.argv[1:])
