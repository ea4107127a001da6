"""The agent hooks' tests: their fixtures (a repository wired for every agent, a record of
every Python interpreter that starts) live in tests/conftest.py, shared with
tests/pathrecall/test_served.py."""
