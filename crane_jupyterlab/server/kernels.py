"""One kernel client per live kernel, reused across requests, and the rule that user code always wins.

Our requests to a kernel are silent (crane_jupyterlab.server.payload) but still occupy it, so a kernel
busy with the user's code is refused at once (409), never queued behind, and requests of ours on one
kernel run one at a time because they share the client's channels.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from jupyter_client.session import Session

from .errors import KernelBusy, KernelNotFound

log = logging.getLogger(__name__)

T = TypeVar("T")

# How long a request waits for jupyter_server to see a just-finished cell's "idle" before a 409.
BUSY_GRACE_S = 0.03

# How long to wait, after our own request, for jupyter_server to see the kernel idle again; its IOPub
# watcher may lag the reply a little, and a stale "busy" would make the next request a false 409.
SETTLE_S = 1.0


class KernelSource(Protocol):
    """jupyter_server's MappingKernelManager satisfies this."""

    def __contains__(self, kernel_id: str) -> bool: ...

    def get_kernel(self, kernel_id: str) -> Any: ...


@dataclass(eq=False)
class KernelLink:
    """The client of one kernel; the lock keeps our requests one at a time."""

    kernel: Any
    provisioner: Any
    client: Any
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    probing: bool = False
    closing: bool = False  # dropped while a request was in flight: closed when it is done


def _close_client(link: KernelLink) -> None:
    try:
        link.client.stop_channels()
    except Exception:  # a client of a dead kernel may fail to close; it is gone either way
        log.debug("crane: closing a kernel client failed", exc_info=True)


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of a request whose caller went away, so asyncio does not warn about it."""
    if not task.cancelled():
        task.exception()


class KernelPool:
    """The kernel clients of one server."""

    def __init__(self, kernels: KernelSource) -> None:
        self.kernels = kernels
        self._links: dict[str, KernelLink] = {}
        self._background: set[asyncio.Future[None]] = set()

    def kernel(self, kernel_id: str) -> Any:
        """The live kernel, or KernelNotFound."""
        # Membership first: jupyter_server's get_kernel raises a tornado 404 of its own for unknown ids.
        if kernel_id not in self.kernels:
            self.drop(kernel_id)
            raise KernelNotFound(f"no running kernel with id {kernel_id!r}")
        kernel = self.kernels.get_kernel(kernel_id)
        if getattr(kernel, "execution_state", None) == "dead":
            self.drop(kernel_id)
            raise KernelNotFound(f"kernel {kernel_id!r} is dead")
        return kernel

    async def link(self, kernel_id: str) -> KernelLink:
        """The cached client of this kernel, refusing a kernel busy with user code; a new client when
        the kernel was replaced or restarted (a restart gives the kernel manager a new provisioner)."""
        kernel = self.kernel(kernel_id)
        link = self._links.get(kernel_id)
        provisioner = getattr(kernel, "provisioner", None)
        if link is not None and (link.kernel is not kernel or link.provisioner is not provisioner):
            self.drop(kernel_id)
            link = None
        await refuse_if_busy(kernel, link)
        if link is None:
            # A session of our own: the manager's session id is the zmq identity of every client made
            # with it, and the kernel would route our replies to any of them (or theirs to us).
            session = Session(
                config=kernel.session.config,
                key=kernel.session.key,
                signature_scheme=kernel.session.signature_scheme,
            )
            client = kernel.client(session=session)
            # Shell only: we read nothing else, and an unread IOPub would queue every output.
            client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
            link = KernelLink(kernel=kernel, provisioner=provisioner, client=client)
            self._links[kernel_id] = link
        return link

    async def call(self, link: KernelLink, request: Callable[[Any], Awaitable[T]]) -> T:
        """`request(client)` holding the link's lock, refusing a kernel that started user code meanwhile.

        Shielded: a caller that goes away (a superseded analysis) answers at once, but the request
        completes and releases the lock, so the shared client never has two requests in flight.
        """
        await link.lock.acquire()
        try:
            # Behind our own previous request the kernel may have started user code meanwhile.
            await refuse_if_busy(link.kernel, None)
        except BaseException:
            link.lock.release()
            raise
        inner = asyncio.ensure_future(self._call_locked(link, request))
        inner.add_done_callback(_consume)
        return await asyncio.shield(inner)

    async def _call_locked(self, link: KernelLink, request: Callable[[Any], Awaitable[T]]) -> T:
        link.probing = True
        try:
            return await request(link.client)
        except KernelNotFound:
            self.drop_link(link)
            raise
        finally:
            # Keep the lock until jupyter_server has seen our request's "idle" (its IOPub watcher lags
            # the reply), so the next request never takes our busy for user code; off the caller's
            # path, so the answer does not wait for it.
            release = asyncio.ensure_future(self._release_when_settled(link))
            self._background.add(release)
            release.add_done_callback(self._background.discard)

    @staticmethod
    async def _release_when_settled(link: KernelLink) -> None:
        try:
            deadline = time.monotonic() + SETTLE_S
            while getattr(link.kernel, "execution_state", None) == "busy" and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
        finally:
            link.probing = False
            link.lock.release()
            if link.closing:
                _close_client(link)

    def drop(self, kernel_id: str) -> None:
        link = self._links.get(kernel_id)
        if link is not None:
            self.drop_link(link)

    def drop_link(self, link: KernelLink) -> None:
        for kernel_id, existing in list(self._links.items()):
            if existing is link:
                del self._links[kernel_id]
        if link.lock.locked():  # never pull the channels from under a request
            link.closing = True
            return
        _close_client(link)

    def prune(self) -> int:
        """Drop the clients of kernels that went away or restarted; returns how many were dropped."""
        dropped = 0
        for kernel_id, link in list(self._links.items()):
            if link.lock.locked():
                continue
            kernel = self.kernels.get_kernel(kernel_id) if kernel_id in self.kernels else None
            if kernel is not link.kernel or getattr(kernel, "provisioner", None) is not link.provisioner:
                self.drop_link(link)
                dropped += 1
        return dropped

    async def close(self) -> None:
        """Wait for the lock releases in flight (cancelled) and close every client."""
        pending = list(self._background)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for link in list(self._links.values()):
            _close_client(link)
        self._links.clear()


async def refuse_if_busy(kernel: Any, link: KernelLink | None) -> None:
    """Raise KernelBusy when the kernel runs something other than our own request (which the server
    tracks as busy too). The server learns "idle" from IOPub a moment after a cell's reply, so a
    request right behind a finished cell gets a few milliseconds' grace instead of a false 409."""

    def user_busy() -> bool:
        ours = link is not None and (link.probing or link.lock.locked())
        return getattr(kernel, "execution_state", None) == "busy" and not ours

    deadline = time.monotonic() + BUSY_GRACE_S
    while user_busy():
        if time.monotonic() >= deadline:
            raise KernelBusy("the kernel is running code")
        await asyncio.sleep(0.002)
