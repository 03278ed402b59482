#!/usr/bin/env bash
# Lists the packages of make test's plain pass (the Makefile's unit target), given the race pass's
# package patterns: every package outside them (but the SIP lab and the browser tests, which have
# steps of their own), and those inside them that have tests built only without the race detector
# (//go:build !race: allocation counts, real-time measurements). So every test runs at least
# once, and the concurrent packages' long tests do not run twice.
set -euo pipefail
go=${GO:-go}
module=$($go list -m)
all=$($go list ./... | grep -v -e /internal/siplab -e /e2e | sort)
race=$($go list "$@" | sort)
norace=$(grep -rl --include='*_test.go' '^//go:build !race' . | xargs -r -n1 dirname | sort -u | sed "s|^\.|$module|")
{
  comm -23 <(echo "$all") <(echo "$race")
  comm -12 <(echo "$all") <(echo "$norace" | sort)
} | sort -u
