"""Administration of a stopped (or idle) deployment at the store level:
`statekeeper export` / `import` (admin/transfer.py) and `statekeeper
inspect` (admin/inspect.py). They open the configured store directly, like
`statekeeper audit list`, so ids, revisions, etags, times and sequences
survive exactly; they never go through the RPCs."""
