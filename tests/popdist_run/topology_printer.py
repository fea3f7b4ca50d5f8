#!/usr/bin/env python3
"""The program of the PopRun corpus (poprun_corpus.py): stands in for `python3 train.py ...`,
ignores its arguments, and prints where it runs, the variables PopRun's options give, then the
topology popdist detects (`popdist topology --json`)."""

import os
import subprocess
import sys

print(f"HOST={os.uname().nodename} LOCAL={os.environ.get('POPDIST_LOCAL_INSTANCE_INDEX', 'unset')} "
      f"CACHE={os.environ.get('POPDIST_EXECUTABLE_CACHE_PATH', 'unset')} "
      f"TARGET={os.environ.get('POPLAR_TARGET_OPTIONS', 'unset')}", flush=True)
sys.exit(subprocess.call(["popdist", "topology", "--json"]))
