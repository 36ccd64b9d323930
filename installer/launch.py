"""The frozen app's entry point: `tripane` with the same commands as the installed package."""

import sys

from core.cli import main

if __name__ == "__main__":
    sys.exit(main())
