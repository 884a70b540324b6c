"""Regenerate docs/findings.md from the rules (observe/rules/: RULES and each finding's Doc).

    python3 tools/regen_findings_doc.py          # rewrite docs/findings.md
    python3 tools/regen_findings_doc.py --check  # exit 1 when it differs from the rules

Edit a finding's row in its rule's module (its ``Doc``), then run this and commit both.
tests/rules/test_findings_doc.py runs the check.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "findings.md"


def main(argv: list[str]) -> int:
    from observe.rules import doc

    text = doc.render()
    if "--check" in argv:
        if not DOC.exists() or DOC.read_text(encoding="utf-8") != text:
            print(f"differs: {DOC.relative_to(ROOT)} (run python3 tools/regen_findings_doc.py)")
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's observe, not an installed one
    sys.exit(main(sys.argv[1:]))
