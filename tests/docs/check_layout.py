#!/usr/bin/env python3
"""Every room of src/ and tools/ is named in the design's layout, design.md §1.

A newcomer learns the house from that section: which folders there are and which process runs each room of
tools/. A room added without a line there is a room nobody can find, so this check (CTest
`docs.layout`) fails on a folder of src/ or tools/ (a room, and a stage of tools/run/) that
design.md §1 does not name as `src/<folder>/` or `tools/<room>/`, and on a name there that is no folder.
Usage: check_layout.py [ROOT]   (default: the repository this file is in)
"""

import os
import re
import sys

kDesign = os.path.join("docs", "guide", "design.md")
kParents = ["src", "tools", os.path.join("tools", "run")]
kNamed = re.compile(r"\b((?:src|tools)/[\w/]+/)")


def section_one(text):
    """The text of `## 1. ...` up to the next second-level heading."""
    match = re.search(r"^## 1\..*?(?=^## )", text, re.M | re.S)
    if not match:
        raise SystemExit(f"{kDesign}: no section '## 1.' (the layout)")
    return match.group(0)


def folders(root):
    found = set()
    for parent in kParents:
        for entry in sorted(os.listdir(os.path.join(root, parent))):
            if os.path.isdir(os.path.join(root, parent, entry)) and not entry.startswith(("_", ".")):
                found.add(f"{parent}/{entry}/".replace(os.sep, "/"))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, kDesign), encoding="utf-8") as page:
        named = set(kNamed.findall(section_one(page.read())))
    present = folders(root)
    problems = [f"{folder} is not in design.md §1 ({kDesign}): add a line saying what it holds (and, in tools/, "
                f"which process runs it)" for folder in sorted(present - named)]
    problems += [f"design.md §1 ({kDesign}) names {folder}, which is not a folder of the tree"
                 for folder in sorted(named) if not os.path.isdir(os.path.join(root, folder))]
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"design.md §1 ({kDesign}) names all {len(present)} folders of {', '.join(kParents)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
