"""Fixes for a cell that will crash: candidates drawn from the facts and the libraries' own word
(candidates.py, renamed.py). The server runs each as a trial and offers only one that ran
(server/service.py)."""

from .candidates import ALIASES, Candidate, candidates, notes
from .renamed import RENAMES, Rename, renamed

__all__ = ["ALIASES", "RENAMES", "Candidate", "Rename", "candidates", "notes", "renamed"]
