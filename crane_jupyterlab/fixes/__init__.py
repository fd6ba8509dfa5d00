"""Fixes for a cell that will crash: candidates drawn from the facts, the crash's own message and the
installed library (candidates.py, derived.py, library.py, words.py), and a table of renamed APIs no
message names (renamed.py). The server runs each as a trial and offers only one that ran
(server/service.py)."""

from .candidates import ALIASES, candidates, notes
from .proposal import Candidate, Crash
from .renamed import RENAMES, Rename, renamed

__all__ = ["ALIASES", "RENAMES", "Candidate", "Crash", "Rename", "candidates", "notes", "renamed"]
