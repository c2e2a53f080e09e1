from __future__ import annotations

import sys

from gitimprove.cli import main

if __name__ == "__main__":
    sys.exit(main())
