#!/bin/bash
# LocalAI launcher for dacpp-server (spec/localai-backend.md §2.2): LocalAI runs `run.sh --addr <host:port>` from
# this directory. Puts a bundled lib/ on the library path and execs the server, so its parent is LocalAI itself.
# The binary is, first found: $DACPP_SERVER_BIN, ./dacpp-server (a packaged backend directory), or the build tree.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -d "$DIR/lib" ]; then
  export LD_LIBRARY_PATH="$DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
BIN="${DACPP_SERVER_BIN:-}"
for candidate in "$DIR/dacpp-server" "$DIR/../build/release/server/dacpp-server"; do
  if [ -z "$BIN" ] && [ -x "$candidate" ]; then BIN="$candidate"; fi
done
if [ -z "$BIN" ]; then
  echo "dacpp-server run.sh: no dacpp-server binary next to $DIR or in build/release (set DACPP_SERVER_BIN)" >&2
  exit 127
fi
exec "$BIN" "$@"
