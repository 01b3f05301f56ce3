#!/usr/bin/env bash
# The device tool carries the working tree (tracked + untracked-not-ignored files) and the carried paths under
# 64 MiB; the tracked tree (~47 MB, mostly test fixtures) plus .carry (~17 MB, more with an A/B arm's binary) is
# just over. The GPU tests and cuda_run.sh read none of the fixtures below (~9.6 MB: the DA2 metric and relative
# models, the checkpoint-import inputs), so they can leave the index for the run:
#   bash scripts/gpu/slim_tree.sh drop      # untrack them and ignore them locally (the files stay on disk)
#   ... device run ...
#   bash scripts/gpu/slim_tree.sh restore   # track them again, drop the local ignores: nothing to commit
# `status` says which state the tree is in. Never commit while dropped (git status shows the deletions).
set -euo pipefail
cd "$(dirname "$0")/../.."
FIXTURES=(tests/fixtures/models/da2_tiny_metric tests/fixtures/models/da2_tiny_rel tests/fixtures/import)
EXCLUDE=.git/info/exclude
case "${1:-status}" in
  drop)
    for fix in "${FIXTURES[@]}"; do
      git rm -r -q --cached "$fix"
      grep -qxF "$fix/" "$EXCLUDE" 2>/dev/null || echo "$fix/" >> "$EXCLUDE"
    done
    echo "slim_tree: ${FIXTURES[*]} untracked for the device run; run 'restore' afterwards" ;;
  restore)
    for fix in "${FIXTURES[@]}"; do
      git reset -q -- "$fix"
      if [ -f "$EXCLUDE" ]; then grep -vxF "$fix/" "$EXCLUDE" > "$EXCLUDE.tmp" || true; mv "$EXCLUDE.tmp" "$EXCLUDE"; fi
      git status --short -- "$fix" | grep -q . && { echo "slim_tree: $fix still differs from HEAD" >&2; exit 1; }
    done
    echo "slim_tree: ${FIXTURES[*]} tracked again" ;;
  status)
    if git diff --cached --quiet -- "${FIXTURES[@]}"; then echo "slim_tree: full tree"; else echo "slim_tree: dropped"; fi ;;
  *) echo "usage: $0 drop|restore|status" >&2; exit 2 ;;
esac
