"""What the tests share: real repositories and the CLI (repos), vault and fold helpers (memory),
remotes for sync (remotes), Claude hook inputs (claude_hooks), the real agent CLIs (claude_cli,
agent_clis) and local mocks of their model APIs (mock_*)."""
