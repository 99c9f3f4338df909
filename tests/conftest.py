"""Shared pytest setup: make the in-repo collection importable."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
COLLECTIONS = REPO_ROOT / "collections"

# ansible_collections is a namespace package (the `ansible` distribution ships one
# in site-packages too); appending our directory merges rdma.fabric into it.
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))
