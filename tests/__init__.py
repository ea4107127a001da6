"""gitvault's tests mirror the package: tests/vault, scrub, notes, memory, fold, agents, sync,
status and commands test the subpackage of the same name; tests/test_*.py test the top-level
modules and what holds product-wide (architecture, lint, packaging, install, hardening, docs);
tests/e2e runs the real agent CLIs against local mocks of their model APIs; tests/stress holds
the long runs (-m stress); tests/support is what the tests share (one import style:
``from tests.support.repos import Repo``); tests/data holds recorded inputs. Fixtures live in
tests/conftest.py (tests/e2e/conftest.py: the agent CLIs and the model API mocks)."""
