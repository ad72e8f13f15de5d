import sys

from statekeeper.cli import main

sys.exit(main())
