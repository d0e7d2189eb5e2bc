"""``python -m handreader.cli``: the same as the ``handreader`` command."""

import sys

from handreader.cli import main

sys.exit(main())
