"""crane-jupyterlab: predicts whether a notebook cell will crash, before it runs."""

from typing import Any

try:
    from ._version import __version__
except ImportError:  # running from a source tree that was never built
    import warnings

    warnings.warn("Importing 'crane_jupyterlab' outside a proper installation.", stacklevel=2)
    __version__ = "dev"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "crane-jupyterlab"}]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .server.app import CraneExtension

    return [{"module": "crane_jupyterlab", "app": CraneExtension}]
