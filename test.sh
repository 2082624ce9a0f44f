#!/usr/bin/env bash
# The test suite: unit, property and end-to-end tests of the whole workspace.
# Tests that need root (SCHED_FIFO, network namespaces) skip with a printed reason
# when not run as root.
set -euo pipefail
cd "$(dirname "$0")"
exec cargo test --workspace "$@"
