"""Read the parser fixtures written for the unit tests.

Each fixture starts with '# ' lines saying where its layout comes from (the first one
'# format: ...'); the parsers never see them.
"""

from __future__ import annotations

from pathlib import Path


def load(folder: Path, name: str) -> str:
    """The fixture's text without its leading '# ' header lines."""
    lines = (folder / name).read_text().splitlines(keepends=True)
    while lines and lines[0].startswith("# "):
        lines.pop(0)
    return "".join(lines)


def assert_sources_named(folder: Path, at_least: int = 1) -> None:
    """Every *.txt fixture in folder opens with a '# format: ' line naming its source."""
    paths = sorted(folder.glob("*.txt"))
    assert len(paths) >= at_least, folder
    for path in paths:
        assert path.read_text().startswith("# format: "), path.name
