"""The trial's sandbox: what a trial process may do, and who says so.

`confine.py` enters the OS layers in the trial process (namespaces, Landlock, capabilities, then the
seccomp filter of `seccomp.py`) and probes what the platform allows; `supervisor.py` answers the filter's
notifications in the kernel; `hooks.py` adds Python audit hooks as a second layer; `overlay.py` gives the
cell a private copy-on-write copy of the directories it may write to; `inherited.py` neutralises the
descriptors the process inherited from the kernel.
"""
