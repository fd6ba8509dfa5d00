"""The trial: the target cell run in a sandbox before the user runs it (one family of the payload).

Entry points `start`, `result`, `cancel` (`control.py`). The data path: `control.start` decides whether a
trial can run and starts one; `fork.py` forks the kernel, and the child (`child.py`) enters the sandbox
(`sandbox/`), runs the cell as IPython would (`execute.py`; loops counted or cut by `quick.py`; TensorFlow
graph functions stopped by `tfwork.py`) and reports on a pipe; in the kernel, `watch.py` supervises the
process (budget, memory, `stuck.py`, the sandbox's notifications) and turns its report into the outcome
(`outcome.py`).
"""

from __future__ import annotations

from .control import cancel, result, spare, start, top_cancel, top_result, top_start

__all__ = ["cancel", "result", "spare", "start", "top_cancel", "top_result", "top_start"]
