"""The one way tests start a statekeeper server.

    deadlines   load-scaled deadlines and polling waits that fail with details
    processes   every spawned process: own process group, log file, stopped
                (SIGTERM then SIGKILL) however the test ends, checked at
                session end (tests/conftest.py)
    servers     ServerProcess (the real `statekeeper serve`) and AssemblyProcess
                (a test assembly module that reports its addresses in a file)
    backends    embedded or production (a fresh PostgreSQL database and a
                Redis prefix of its own)
    deploy      N replicas of one backend as processes, started and stopped
                together (`statekeeper serve` or the blackboard/bus assembly)
    inproc      servers in this process, on a loop of their own in a thread:
                InProcessStatekeeper (the whole server, as `serve` wires it)
    checkpoints CheckpointServer: the CheckpointService in process, with limits
    memory      MemoryApp builders in the test's loop, served or not
    assemblies  the blackboard and bus server with fast sweeps (limits the CLI
                does not expose yet); everything else runs the real server

Suites keep their fixtures (tests/e2e/conftest.py `server`, ...); the
fixtures build on this package.
"""
