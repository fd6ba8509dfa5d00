"""`python -m crane_jupyterlab`: the server options of the extension, with their help.

`jupyter lab --help-all` does not list the traits of server extensions; this does. Each is set as
`--CraneExtension.<name>=...` on the `jupyter lab` command line or `c.CraneExtension.<name>` in
`jupyter_server_config.py`.
"""

from __future__ import annotations

from .server.app import CraneExtension


def main() -> None:
    print(CraneExtension.__doc__)
    print()
    for name in sorted(CraneExtension.class_own_traits(config=True)):
        print(CraneExtension.class_get_trait_help(CraneExtension.class_traits()[name]))
        print()


if __name__ == "__main__":
    main()
