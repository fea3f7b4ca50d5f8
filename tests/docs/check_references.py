#!/usr/bin/env python3
"""Every reference in the repository to a Markdown page names a page and a section that exist.

Code, tests and pages point at the design as `design.md §N` (docs/guide/design.md) and at the
guide pages by name (`docs/guide/hosts.md`, `long-jobs.md`, `[the report](long-jobs.md#anchor)`).
A reference that outlives the section it names misleads every reader after it, so this check
(CTest `docs.references`) resolves each one: the page must exist in the tree, a `§N` must be a
numbered heading of that page, an `#anchor` a heading's anchor as MyST makes it. It also fails on
references to the project brief, which lives outside the repository: a clone cannot follow them.
Usage: check_references.py [ROOT]   (default: the repository this file is in)
"""

import os
import re
import sys

# Directories that hold no source of ours: VCS data, caches, build trees (see also is_build_tree).
kSkippedDirs = {".git", "__pycache__", ".pytest_cache", "_build", "_skbuild", "dist", "Testing"}
kLargestFile = 4 << 20
# The guide's pages, where a bare page name (`long-jobs.md`) is also looked up.
kGuideDir = os.path.join("docs", "guide")
kThisFile = os.path.join("tests", "docs", "check_references.py")

# Built from pieces so that this file does not match itself.
kBriefPatterns = [
    (re.compile(r"\bDESI" r"GN\b"), "names the project brief, which is not in the repository"),
    (re.compile(r"\.\./" r"shared\b"), "points outside the repository"),
    (re.compile(r"\bshared/[A-Z]+\.md\b"), "points at a file outside the repository"),
]
kUrl = re.compile(r"[a-z]+://\S+")
# A page name or path ending in .md, with an optional #anchor, and the sections it names (`§3.2`,
# `§3.2/§3.3`, `§3 and §4`).
kPageReference = re.compile(
    r"(?<![\w./-])(?P<page>[\w./-]*[\w-]\.md)\b(?:#(?P<anchor>[\w-]+))?"
    r"(?P<sections>(?:\s*(?:,|/|and|or)?\s*§\d+(?:\.\d+)*)*)")
kSection = re.compile(r"§(\d+(?:\.\d+)*)")
kMarkdownLink = re.compile(r"\]\((?P<target>[^)\s]+)\)")
kHeading = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
kNumberedHeading = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")
kFence = re.compile(r"^\s*(```|~~~)")
kSlugDrop = re.compile(r"[^\w\u4e00-\u9fff\- ]")
kInlineLink = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def is_build_tree(path):
    return os.path.exists(os.path.join(path, "CMakeCache.txt"))


def text_files(root):
    """(relative path, text) of every text file of the tree, in a stable order."""
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in kSkippedDirs and not d.endswith(".egg-info")
                            and not is_build_tree(os.path.join(directory, d)))
        for name in sorted(files):
            path = os.path.join(directory, name)
            if not os.path.isfile(path) or os.path.getsize(path) > kLargestFile:
                continue
            with open(path, "rb") as handle:
                data = handle.read()
            if b"\0" in data:
                continue
            try:
                yield os.path.relpath(path, root), data.decode("utf-8")
            except UnicodeDecodeError:
                continue


class Page:
    """What a Markdown page offers to references: its anchors and its numbered sections."""

    def __init__(self, text):
        self.anchors = set()
        self.sections = set()
        in_fence = False
        for line in text.splitlines():
            if kFence.match(line):
                in_fence = not in_fence
                continue
            heading = None if in_fence else kHeading.match(line)
            if not heading:
                continue
            title = kInlineLink.sub(r"\1", heading.group(2))
            # MyST gives anchors to headings of levels 1-3 (docs/conf.py: myst_heading_anchors).
            if len(heading.group(1)) <= 3:
                self.anchors.add(kSlugDrop.sub("", title.lower().replace(" ", "-")))
            number = kNumberedHeading.match(title)
            if number:
                self.sections.add(number.group(1))


class Checker:
    def __init__(self, root):
        self.root = root
        self.pages = {}
        self.problems = []
        self.references = 0

    def page(self, relative):
        if relative not in self.pages:
            with open(os.path.join(self.root, relative), encoding="utf-8") as handle:
                self.pages[relative] = Page(handle.read())
        return self.pages[relative]

    def resolve(self, source, name):
        """The page `name` written in file `source` means, relative to the root, or None."""
        if name.startswith("/"):
            return None
        candidates = [os.path.join(os.path.dirname(source), name), name]
        if "/" not in name:
            candidates.append(os.path.join(kGuideDir, name))
        for candidate in candidates:
            candidate = os.path.normpath(candidate)
            if not candidate.startswith("..") and os.path.isfile(os.path.join(self.root, candidate)):
                return candidate
        return None

    def report(self, source, text, offset, message):
        line = text.count("\n", 0, offset) + 1
        self.problems.append(f"{source}:{line}: {message}")

    def check_target(self, source, text, offset, name, anchor, sections):
        """One reference: the page exists, and so do its anchor and its sections."""
        self.references += 1
        page = self.resolve(source, name)
        if page is None:
            self.report(source, text, offset, f"'{name}': no such file in the repository")
            return
        if not page.endswith(".md"):
            return
        if anchor and anchor not in self.page(page).anchors:
            self.report(source, text, offset, f"'{name}#{anchor}': {page} has no heading with that anchor")
        for section in sections:
            if section not in self.page(page).sections:
                self.report(source, text, offset, f"'{name} §{section}': {page} has no section {section}")

    def check_file(self, source, text):
        for pattern, why in kBriefPatterns:
            for match in pattern.finditer(text):
                self.report(source, text, match.start(), f"'{match.group(0)}' {why}; refer to docs/guide/design.md §N")
        without_urls = kUrl.sub(lambda match: " " * len(match.group(0)), text)
        claimed = set()
        for match in kPageReference.finditer(without_urls):
            sections = kSection.findall(match.group("sections"))
            claimed.update(m.start() for m in kSection.finditer(without_urls, match.start(), match.end()))
            self.check_target(source, text, match.start(), match.group("page"), match.group("anchor"), sections)
        self.check_orphan_sections(source, text, without_urls, claimed)
        if source.endswith(".md"):
            self.check_links(source, text, without_urls)

    def check_orphan_sections(self, source, text, without_urls, claimed):
        """A `§N` must follow its page (`design.md §N`), except inside that page itself."""
        own = self.page(source) if source.endswith(".md") else None
        for match in kSection.finditer(without_urls):
            if match.start() in claimed:
                continue
            self.references += 1
            if own is None:
                self.report(source, text, match.start(), f"'{match.group(0)}' names no page: write 'design.md {match.group(0)}'")
            elif match.group(1) not in own.sections:
                self.report(source, text, match.start(), f"'{match.group(0)}': {source} has no section {match.group(1)}")

    def check_links(self, source, text, without_urls):
        """Markdown links to files of the tree (`[..](x.md#anchor)`, `[..](../examples/x.py)`)."""
        for match in kMarkdownLink.finditer(without_urls):
            target = match.group("target")
            name, _, anchor = target.partition("#")
            if name.endswith(".md"):
                continue  # a page: already checked as a page reference above
            if not name:
                self.references += 1
                if anchor not in self.page(source).anchors:
                    self.report(source, text, match.start(), f"'#{anchor}': no heading of {source} has that anchor")
                continue
            self.check_target(source, text, match.start(), name, None, [])


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    checker = Checker(root)
    files = 0
    for source, text in text_files(root):
        if source == kThisFile:
            continue  # its docstring and patterns show the forms it checks
        files += 1
        checker.check_file(source, text)
    for problem in checker.problems:
        print(problem)
    print(f"{checker.references} references in {files} files: {len(checker.problems)} broken")
    return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
