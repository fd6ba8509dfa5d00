"""CI guard: every HTTP method of every crane handler is wrapped by `tornado.web.authenticated`.

jupyter_server only warns about an undecorated extension endpoint; this makes it a failure. The check
compares code objects: `authenticated` wraps with functools.wraps, so a name or a docstring would not
tell its wrapper from any other decorator's.
"""

from __future__ import annotations

import pytest
import tornado.web

from crane_jupyterlab.server.handlers import routes

pytestmark = pytest.mark.integration  # real kernels or a real jupyter_server

HTTP_METHODS = ("get", "head", "post", "delete", "patch", "put", "options")
_WRAPPER_CODE = tornado.web.authenticated(lambda self: None).__code__


def unauthenticated_methods() -> list[str]:
    missing = []
    for pattern, handler in routes():
        for name in HTTP_METHODS:
            # Only methods the crane classes define: APIHandler's own OPTIONS is jupyter_server's.
            owner = next(c for c in handler.__mro__ if name in vars(c) or c is object)
            if owner is object or not owner.__module__.startswith("crane_jupyterlab"):
                continue
            if getattr(vars(owner)[name], "__code__", None) is not _WRAPPER_CODE:
                missing.append(f"{handler.__name__}.{name} ({pattern})")
    return missing


def test_every_handler_method_is_authenticated() -> None:
    assert unauthenticated_methods() == []


def test_the_guard_catches_an_undecorated_method(monkeypatch: pytest.MonkeyPatch) -> None:
    (_, handler), *_ = routes()

    async def post(self: object) -> None: ...

    monkeypatch.setattr(handler, "post", post)
    assert any(m.startswith(f"{handler.__name__}.post") for m in unauthenticated_methods())
