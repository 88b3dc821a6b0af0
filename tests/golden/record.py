"""Record the golden outputs: ``python tests/golden/record.py [NAME ...]`` rewrites ``tests/golden/NAME.json``.

Without names, every item of :data:`tests.golden.cases.CASES` is recorded. Each
item's data come from the same function that ``tests/test_golden.py`` calls. The
data in the repository were recorded at commit 200a2c2 (the main branch before
the package was restructured into subpackages); re-record only on purpose, when
a result is meant to change, and say why in the commit.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from tests.golden import cases  # noqa: E402


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(cases.CASES))
    if unknown:
        print(f"unknown items {unknown}; known: {', '.join(cases.CASES)}", file=sys.stderr)
        return 2
    for name in names or list(cases.CASES):
        t0 = time.perf_counter()
        text = cases.dumps(cases.CASES[name]()) + "\n"
        path = cases.GOLDEN_DIR / f"{name}.json"
        path.write_text(text)
        print(f"{path.relative_to(_REPO_ROOT)}: {len(text):,} bytes, {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
