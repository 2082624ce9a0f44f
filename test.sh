#!/usr/bin/env bash
# The test suite: unit, property and end-to-end tests of the whole workspace.
# Extra arguments go to cargo test. Tests that need root are marked ignored and
# show as such; as root, run them too with: ./test.sh -- --include-ignored
set -euo pipefail
cd "$(dirname "$0")"
exec cargo test --workspace "$@"
