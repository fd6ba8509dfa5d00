"""A trial never claims what it did not see, in a real ipykernel: what the kernel holds open (connections,
keep-alive sessions, sqlite databases, pipes to processes, pools, files open for writing) is *blocked* on
use, with the reason, and nothing outside changes, while the real run of the same cell succeeds; a cell
that does not touch them is unaffected; IPython's cleanup of pasted cells and its display step are the
kernel's own. Each trial is compared with what the kernel itself does when the cell runs for real."""

from __future__ import annotations

import hashlib
import http.server
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient

from crane_jupyterlab.bench.kernels import fresh_kernel, run_cell
from crane_jupyterlab.bench.verify import execute

pytestmark = [
    pytest.mark.integration,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("os_layer"),
]


class Counting:
    """An HTTP/1.1 server (keep-alive) that counts the requests it answers, and a UDP socket that counts
    the datagrams it gets: the network edge of the test."""

    def __init__(self) -> None:
        counter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                counter.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.requests = 0
        self.datagrams = 0
        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.port = self.http.server_address[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.2)
        self.udp_port = self.udp.getsockname()[1]
        self.unix_bytes = 0
        self.unix_path = os.path.join(tempfile.mkdtemp(prefix="crane-unix-"), "s")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        self.unix.listen()
        self.unix.settimeout(0.2)
        self.running = True
        self.threads = [
            threading.Thread(target=self.http.serve_forever, daemon=True),
            threading.Thread(target=self._receive, daemon=True),
            threading.Thread(target=self._receive_unix, daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _receive(self) -> None:
        while self.running:
            try:
                self.udp.recv(100)
            except OSError:
                continue
            self.datagrams += 1

    def _receive_unix(self) -> None:
        while self.running:
            try:
                conn, _ = self.unix.accept()
            except OSError:
                continue
            conn.settimeout(0.2)
            while self.running:
                try:
                    data = conn.recv(100)
                except OSError:
                    continue
                if not data:
                    break
                self.unix_bytes += len(data)
            conn.close()

    def close(self) -> None:
        self.running = False
        self.http.shutdown()
        self.http.server_close()
        for thread in self.threads:
            thread.join()
        self.udp.close()
        self.unix.close()
        shutil.rmtree(os.path.dirname(self.unix_path), ignore_errors=True)


@pytest.fixture(scope="module")
def counting() -> Iterator[Counting]:
    server = Counting()
    yield server
    server.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(
    tmp_path_factory: pytest.TempPathFactory, counting: Counting
) -> AsyncIterator[tuple[AsyncKernelClient, Path]]:
    """A kernel holding one resource of each kind, opened as a notebook would open them."""
    root = tmp_path_factory.mktemp("held")
    (root / "log.txt").write_text("start\n")
    async with fresh_kernel(cwd=str(root)) as (_, kc):
        await run_cell(
            kc,
            "import http.client, json, multiprocessing, socket, sqlite3, subprocess\n"
            "import pandas as pd\n"
            f"PORT, UDP_PORT, UNIX = {counting.port}, {counting.udp_port}, {counting.unix_path!r}\n"
            "ux = socket.socket(socket.AF_UNIX); ux.connect(UNIX)\n"
            "conn = http.client.HTTPConnection('127.0.0.1', PORT)\n"  # a keep-alive connection
            "conn.request('GET', '/'); conn.getresponse().read()\n"
            "raw = socket.create_connection(('127.0.0.1', PORT))\n"
            "udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.connect(('127.0.0.1', UDP_PORT))\n"
            "db = sqlite3.connect('rows.db')\n"
            "db.execute('create table t (a integer)')\n"
            "db.executemany('insert into t values (?)', [(1,), (2,)])\n"
            "db.commit()\n"
            "pool = multiprocessing.Pool(2)\n"  # before the pipe, or its workers would hold it open too
            "counter = subprocess.Popen(['wc', '-c'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
            "log = open('log.txt', 'a')\n"
            "frame = pd.DataFrame({'a': [1, 2, 3]})\n",
        )
        try:
            import requests  # noqa: F401

            await run_cell(
                kc,
                "import requests\nsession = requests.Session()\n"
                "assert session.get(f'http://127.0.0.1:{PORT}/').text == 'ok'",
            )
        except ImportError:
            pass
        counting.requests = 0
        yield kc, root
        await run_cell(kc, "pool.terminate()")


# (cell, words the reason must hold)
USES = {
    "http.client keep-alive": (
        "conn.request('GET', '/')\nassert conn.getresponse().read() == b'ok'",
        "a connection the kernel already had open to 127.0.0.1:{port}",
    ),
    "raw TCP": (
        "raw.sendall(b'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\nassert b'200' in raw.recv(1000)",
        "a connection the kernel already had open to 127.0.0.1:{port}",
    ),
    "TCP, the error caught": (
        "try:\n    raw.sendall(b'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\nexcept OSError:\n    pass",
        "a connection the kernel already had open to 127.0.0.1:{port}",
    ),
    "UDP": ("udp.send(b'x')", "a UDP socket the kernel had open (127.0.0.1:{udp_port})"),
    "unix socket": ("ux.sendall(b'x')", "a unix socket the kernel had open to {unix}"),
    "sqlite read": (
        "assert pd.read_sql('select a from t', db).a.sum() >= 3",
        "the sqlite database {root}/rows.db the kernel had open for writing",
    ),
    "sqlite write": (
        "db.execute('insert into t values (3)')\ndb.commit()",
        "the sqlite database {root}/rows.db the kernel had open for writing",
    ),
    "pipe": (
        "counter.stdin.write(b'abc')\ncounter.stdin.flush()",
        "a pipe to a process the kernel started (pid",
    ),
    "multiprocessing pool": (
        "assert pool.map(abs, [-1, -2]) == [1, 2]",
        "a multiprocessing pool the kernel started",
    ),
    "file open for writing": ("log.write('from the cell\\n')\nlog.flush()", "the file {root}/log.txt"),
}


def outside(kc_root: Path, counting: Counting) -> dict[str, Any]:
    """What the resources lead to, seen from outside the kernel."""
    import sqlite3

    with sqlite3.connect(kc_root / "rows.db") as db:
        rows = db.execute("select a from t order by a").fetchall()
    return {
        "requests": counting.requests,
        "datagrams": counting.datagrams,
        "unix bytes": counting.unix_bytes,
        "rows": rows,
        "log": digest(kc_root / "log.txt"),
    }


@pytest.mark.parametrize("name", list(USES))
async def test_a_resource_the_kernel_holds_is_blocked_on_use(
    name: str, kernel: tuple[AsyncKernelClient, Path], counting: Counting, kit: SimpleNamespace
) -> None:
    import asyncio

    kc, root = kernel
    cell, words = USES[name]
    before = outside(root, counting)
    outcome = (await kit.run_in_kernel(kc, cell))["outcome"]
    where = {"port": counting.port, "udp_port": counting.udp_port, "root": root, "unix": counting.unix_path}
    expected = words.format(**where)
    assert outcome["status"] == "blocked", outcome
    assert expected in outcome["reason"], outcome["reason"]
    await asyncio.sleep(0.3)
    assert outside(root, counting) == before  # nothing reached the server, the database, the file
    assert await execute(kc, cell, 60) is None  # and the cell runs fine for real


async def test_requests_session_is_blocked(
    kernel: tuple[AsyncKernelClient, Path], counting: Counting, kit: SimpleNamespace
) -> None:
    import asyncio

    pytest.importorskip("requests")
    kc, root = kernel
    cell = "assert session.get(f'http://127.0.0.1:{PORT}/').text == 'ok'"
    before = outside(root, counting)
    outcome = (await kit.run_in_kernel(kc, cell))["outcome"]
    assert outcome["status"] == "blocked", outcome  # the pooled connection, or a new one: refused
    await asyncio.sleep(0.3)
    assert outside(root, counting) == before
    assert await execute(kc, cell, 60) is None


async def test_the_pipe_carried_only_the_real_runs_bytes(
    kernel: tuple[AsyncKernelClient, Path], kit: SimpleNamespace
) -> None:
    kc, _ = kernel
    # `wc -c` counts what reached it: the "pipe" case wrote 3 bytes in its trial and 3 in its real run.
    assert (await kit.run_in_kernel(kc, "counter.stdin.write(b'abc')"))["outcome"]["status"] in (
        "blocked",
        "finished",  # Python's buffer holds the bytes: nothing was written, as in the kernel
    )
    count = await kit.printed(kc, "print(json.dumps(int(counter.communicate()[0].split()[0])))")
    assert count == 3


@pytest.mark.parametrize(
    ("cell", "status", "exception"),
    [
        ("total = frame.a.sum()\nassert total == 6", "finished", None),
        ("frame.b", "crashed", "AttributeError"),
        ("import os\nsize = os.path.getsize('log.txt')", "finished", None),  # reading is fine
        ("text = open('log.txt').read()\nassert text.startswith('start')", "finished", None),
    ],
)
async def test_a_cell_that_does_not_use_them_is_unaffected(
    cell: str,
    status: str,
    exception: str | None,
    kernel: tuple[AsyncKernelClient, Path],
    kit: SimpleNamespace,
) -> None:
    outcome = (await kit.run_in_kernel(kernel[0], cell))["outcome"]
    assert (outcome["status"], outcome.get("exception")) == (status, exception), outcome
    real = await execute(kernel[0], cell, 60)
    assert (real[0] if real else None) == exception


# -- IPython's cell rules and its display step, against the kernel's own run --------------------------

SETUP = (
    "class Bad:\n    def _repr_html_(self):\n        raise ValueError('no html')\n"
    "class BadRepr:\n    def __repr__(self):\n        raise TypeError('no repr')\n"
)
CELLS = [
    ("    y = 1\n    y + 1", None, None),  # pasted with a common indentation
    ("\n\n    z = 1\n    z / 0", "ZeroDivisionError", 4),
    (">>> a = 2\n>>> a * 2", None, None),
    ("In [1]: b = 3\n   ...: b", None, None),
    ("Bad()", "ValueError", 1),  # the displayhook's HTML formatter raises
    ("Bad();", None, None),  # ';': nothing is displayed
    ("x = Bad()", None, None),
    ("display(Bad())\nx = 1", "ValueError", 1),
    ("print(1)\nBadRepr()", "TypeError", 2),
    ("import matplotlib.pyplot as plt\nplt.plot([1, 2], 'zz')", "ValueError", 2),
]


@pytest.mark.parametrize(("cell", "exception", "line"), CELLS)
async def test_cells_run_as_ipython_runs_them(
    cell: str,
    exception: str | None,
    line: int | None,
    kernel: tuple[AsyncKernelClient, Path],
    kit: SimpleNamespace,
) -> None:
    from crane_jupyterlab.checks.cell import parse_cell
    from crane_jupyterlab.server.trial import parses

    kc, _ = kernel
    await run_cell(kc, SETUP)
    assert parses(cell) and parse_cell(cell)[1] is None  # the checks read it as the kernel does
    outcome = (await kit.run_in_kernel(kc, cell))["outcome"]
    real = await execute(kc, cell, 60)
    assert (real[0] if real else None) == exception
    if exception is None:
        assert outcome["status"] == "finished", outcome
    else:
        assert (outcome["status"], outcome["exception"], outcome["line"]) == ("crashed", exception, line)


async def test_the_kernels_interactivity_setting_is_followed(
    kernel: tuple[AsyncKernelClient, Path], kit: SimpleNamespace
) -> None:
    kc, _ = kernel
    await run_cell(kc, SETUP)
    cell = "Bad()\nx = 1"  # with 'all', the first statement's value is displayed too
    for mode, exception in (("last_expr", None), ("all", "ValueError")):
        await run_cell(kc, f"get_ipython().ast_node_interactivity = {mode!r}")
        outcome = (await kit.run_in_kernel(kc, cell))["outcome"]
        real = await execute(kc, cell, 60)
        assert (real[0] if real else None) == exception
        assert (outcome["status"], outcome.get("exception")) == (
            "finished" if exception is None else "crashed",
            exception,
        )
    await run_cell(kc, "get_ipython().ast_node_interactivity = 'last_expr'")
