"""Server configuration of the Galata UI tests (`jlpm start`).

Starts JupyterLab (root allowed, no token) with the crane server extension, whose model is an
OpenAI-compatible stub on 127.0.0.1 running in this process (crane_stub.py). Works both with the
package installed (CI: `pip install .`) and from a source checkout whose labextension was built
with `jlpm build` (the repository is put on sys.path and the built extension is linked).
"""

import sys
import tempfile
from pathlib import Path

from jupyter_core.paths import jupyter_path
from jupyterlab.galata import configure_jupyter_server

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from crane_stub import start_stub  # noqa: E402

c = get_config()  # type: ignore[name-defined]  # noqa: F821
configure_jupyter_server(c)
c.ServerApp.allow_root = True
c.ServerApp.jpserver_extensions = {"crane_jupyterlab": True}

try:
    import crane_jupyterlab  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO))

# Without an installed labextension, serve the one `jlpm build` wrote into the source tree.
if not any((Path(p) / "crane-jupyterlab" / "package.json").exists() for p in jupyter_path("labextensions")):
    built = REPO / "crane_jupyterlab" / "labextension"
    link_root = Path(tempfile.mkdtemp(prefix="crane-labext-"))
    (link_root / "crane-jupyterlab").symlink_to(built, target_is_directory=True)
    galata = c.LabServerApp.extra_labextensions_path
    c.LabServerApp.extra_labextensions_path = [*([galata] if isinstance(galata, str) else galata), str(link_root)]

stub = start_stub()
c.CraneExtension.model = "openai/crane-stub"
c.CraneExtension.api_base = stub.url
c.CraneExtension.api_key = "sk-ui-tests"
# auto_check is on by default; the tests switch it off through the user settings.
# Trial runs only when asked: the level tests show what the checks and the model say on their own;
# tests/trial.spec.ts asks for trials (the command, and the user setting "auto").
c.CraneExtension.trial = "on-demand"
# The replica judge off as well: the level tests need cells whose verdict the stub model gives (the
# replicas would make several of them certain); tests/server/test_handlers_replica.py covers it.
c.CraneExtension.replicas = False
