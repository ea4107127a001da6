#!/usr/bin/env bash
# Build the two throw-away environments evaluate.py runs third-party detectors in.
# detect-secrets and bc-detect-secrets both install the module `detect_secrets`, so they
# cannot share one environment. Needs only the package registry; nothing here touches the
# project's own .venv.
#
#   bash bench/secrets/setup_envs.sh [DIR]        # default DIR=/tmp
#   python bench/secrets/evaluate.py -v --python DIR/secvenv/bin/python --python DIR/bcvenv/bin/python
set -euo pipefail
dir=${1:-/tmp}
py=${PYTHON:-python3.11}

"$py" -m venv "$dir/secvenv"
"$dir/secvenv/bin/pip" install -q \
    detect-secrets==1.5.0 \
    microsoft-security-utilities-secret-masker==1.0.0b4 \
    trufflehog3==3.0.10 \
    whispers==2.4.0

"$py" -m venv "$dir/bcvenv"
"$dir/bcvenv/bin/pip" install -q bc-detect-secrets==1.5.52
# llm-guard pulls torch and transformers; only its detect-secrets plugin files are used.
"$dir/bcvenv/bin/pip" install -q --no-deps llm-guard==0.3.16
echo "ok: $dir/secvenv $dir/bcvenv"
