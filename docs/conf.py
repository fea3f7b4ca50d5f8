"""Sphinx configuration of popdist's user guide (docs/). Built by the test suite with -W (every
warning is an error), so a guide page or a docstring that stops rendering fails a test."""

project = "popdist"
author = "popdist maintainers"
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
# Headings up to level 3 get anchors, so pages can link to each other's sections.
myst_heading_anchors = 3
# The API reference documents what the installed package exports, in source order.
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True}
html_theme = "alabaster"
