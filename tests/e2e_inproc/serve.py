"""The blackboard and message bus test server; it lives in
tests.harness.assemblies.blackboard_bus (`python -m tests.e2e_inproc.serve`
still runs it)."""

from tests.harness.assemblies.blackboard_bus import main

if __name__ == "__main__":
    main()
