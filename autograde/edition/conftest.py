"""The student edition's test files are templates here (autograde/publish.py copies them into an
edition's tests/); they run in an edition, never from the instructor repository."""

collect_ignore_glob = ["tests/*"]
