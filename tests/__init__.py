"""gitvault's tests mirror the package: tests/vault, notes, memory, fold, agents, sync and
commands test the subpackage of the same name; tests/test_*.py test the top-level modules and
what holds product-wide (architecture, lint, packaging, install, status, hardening); tests/e2e
runs the real agent CLIs against local mocks of their model APIs; tests/support is what the
tests share (one import style: ``from tests.support.repos import Repo``); tests/data holds
recorded inputs. Fixtures live in tests/conftest.py."""
