"""``python -m labile_cli``: the ``labile`` command line."""

from labile_cli import main

raise SystemExit(main())
