#!/usr/bin/env python3
"""What OpenClaw's own SKILL.md files state, read independently of skill-markdown.

Usage: python3 xtask/openclaw_expected.py <package-dir> > tests/fixtures/openclaw-<version>.json

<package-dir> is an extracted `openclaw` npm package (`cargo xtask peers` puts one under
the peers cache). Every `SKILL.md` below `skills/` and `custodian-skills/` is read with
PyYAML and reduced to what `crates/skill-markdown/tests/openclaw.rs` compares, keyed by
its path relative to <package-dir>.

The rules are OpenClaw's (`packages/markdown-core/src/frontmatter.ts`,
`src/shared/frontmatter.ts`, `src/skills/loading/frontmatter.ts` in 2026.9.6):

- `name` is the frontmatter's `name`, trimmed, or the skill folder's name when empty.
- `description` is trimmed; a skill without one is an error here (OpenClaw drops it).
- `metadata` is a mapping, or a string holding JSON (JSON5 in OpenClaw: only the trailing
  commas of JSON5 are accepted here, anything else fails loudly). The manifest is the
  first of `openclaw`, `clawdbot`, `moltbot`, `clawdis` whose value is a mapping.
  OpenClaw 2026.9.6 itself only knows `openclaw` and `clawdbot`; no bundled skill uses
  the other two.
- From the manifest: `emoji` when it is a string; `requires.{bins,anyBins,env,config}`
  and `os` as lists, given as arrays or comma-separated strings, entries trimmed, empty
  ones dropped; `always` only when it is a boolean.

Only PyYAML (6) is needed; the output is stable (sorted keys, UTF-8, two-space indent).
"""

import json
import pathlib
import re
import sys

import yaml

MANIFEST_KEYS = ("openclaw", "clawdbot", "moltbot", "clawdis")
SKILL_ROOTS = ("skills", "custodian-skills")


def frontmatter_block(text, path):
    """The text between the opening and closing `---` lines, as OpenClaw finds it."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    opening = re.match(r"---[^\S\n]*\n", text)
    if not opening:
        raise SystemExit(f"{path}: no opening `---` line")
    tail = text[opening.end():]
    closing = re.search(r"(?:^|\n)---[^\S\n]*(?:\n|$)", tail)
    if not closing:
        raise SystemExit(f"{path}: no closing `---` line")
    return tail[: closing.start()]


def scalar_text(value):
    """A frontmatter scalar as OpenClaw's `String(value)` gives it; None for the rest."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value).strip()
    return None


def string_list(value):
    """OpenClaw's `normalizeCsvOrLooseStringList`."""
    if isinstance(value, list):
        entries = ("true" if e is True else "false" if e is False else str(e) for e in value)
    elif isinstance(value, str):
        entries = value.split(",")
    else:
        return []
    return [entry.strip() for entry in entries if entry.strip()]


def metadata_object(value, path):
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    # JSON5's trailing commas, the only JSON5 OpenClaw's skills are known to use.
    without_trailing_commas = re.sub(r",(\s*[}\]])", r"\1", value)
    try:
        return json.loads(without_trailing_commas)
    except json.JSONDecodeError as error:
        raise SystemExit(f"{path}: `metadata` needs more JSON5 than this script reads: {error}")


def expected(path, skill_dir_name):
    top = yaml.safe_load(frontmatter_block(path.read_text(encoding="utf-8"), path))
    if not isinstance(top, dict):
        raise SystemExit(f"{path}: the frontmatter is not a YAML mapping")
    name = scalar_text(top.get("name")) or skill_dir_name
    description = scalar_text(top.get("description"))
    if not description:
        raise SystemExit(f"{path}: no description")
    metadata = metadata_object(top.get("metadata"), path)
    manifest = {}
    if isinstance(metadata, dict):
        manifest = next(
            (metadata[key] for key in MANIFEST_KEYS if isinstance(metadata.get(key), dict)), {}
        )
    requires = manifest.get("requires")
    requires = requires if isinstance(requires, dict) else {}
    emoji = manifest.get("emoji")
    return {
        "name": name,
        "description": description,
        "emoji": emoji if isinstance(emoji, str) else None,
        "requires": {key: string_list(requires.get(key)) for key in ("bins", "anyBins", "env", "config")},
        "os": string_list(manifest.get("os")),
        "always": manifest.get("always") if isinstance(manifest.get("always"), bool) else False,
    }


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: openclaw_expected.py <package-dir>")
    package = pathlib.Path(sys.argv[1])
    skills = {}
    for root in SKILL_ROOTS:
        for path in sorted((package / root).rglob("SKILL.md")):
            skills[path.relative_to(package).as_posix()] = expected(path, path.parent.name)
    if not skills:
        raise SystemExit(f"{package}: no SKILL.md under {' or '.join(SKILL_ROOTS)}")
    json.dump(skills, sys.stdout, ensure_ascii=False, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
