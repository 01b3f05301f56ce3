#!/usr/bin/env bash
# The device tool carries the working tree (tracked + untracked-not-ignored files) and the carried paths under
# 64 MiB; the tracked tree (~51 MB, mostly test fixtures) plus .carry (~16 MB) is just over. The GPU tests and
# cuda_run.sh do not read the DA2 metric fixture (4 MB), so it can leave the index for the run:
#   bash scripts/gpu/slim_tree.sh drop      # untrack it and ignore it locally (the files stay on disk)
#   ... device run ...
#   bash scripts/gpu/slim_tree.sh restore   # track it again, drop the local ignore: nothing to commit
# `status` says which state the tree is in. Never commit while dropped (git status shows the deletions).
set -euo pipefail
cd "$(dirname "$0")/../.."
FIX=tests/fixtures/models/da2_tiny_metric
EXCLUDE=.git/info/exclude
case "${1:-status}" in
  drop)
    git rm -r -q --cached "$FIX"
    grep -qxF "$FIX/" "$EXCLUDE" 2>/dev/null || echo "$FIX/" >> "$EXCLUDE"
    echo "slim_tree: $FIX untracked for the device run; run 'restore' afterwards" ;;
  restore)
    git reset -q -- "$FIX"
    if [ -f "$EXCLUDE" ]; then grep -vxF "$FIX/" "$EXCLUDE" > "$EXCLUDE.tmp" || true; mv "$EXCLUDE.tmp" "$EXCLUDE"; fi
    git status --short -- "$FIX" | grep -q . && { echo "slim_tree: $FIX still differs from HEAD" >&2; exit 1; }
    echo "slim_tree: $FIX tracked again" ;;
  status)
    if git diff --cached --quiet -- "$FIX"; then echo "slim_tree: full tree"; else echo "slim_tree: dropped"; fi ;;
  *) echo "usage: $0 drop|restore|status" >&2; exit 2 ;;
esac
