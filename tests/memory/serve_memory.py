"""The memory test server; it lives in tests.harness.assemblies.memory
(`python -m tests.memory.serve_memory ... --ready-file FILE` still runs it)."""

from tests.harness.assemblies.memory import main

if __name__ == "__main__":
    main()
