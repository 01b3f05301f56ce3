#!/usr/bin/env bash
# dacpp pull against a fake hub on loopback (fake_hub.py): listing, file choice, download, resume, SHA-256 check,
# HTTP errors, tokens, unreachable endpoints, and skipping work already done.
source "$(dirname "$0")/lib.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"
SERVER=""
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$TMP"' EXIT
P="$TMP/payload"
mkdir -p "$P"

# Payloads: random bytes (never all zero), sizes off the 64-byte SHA block boundary.
python3 - "$P" <<'PY'
import os, sys, json
d = sys.argv[1]
for name, n in [("f32.gguf", 300007), ("f16.gguf", 1000), ("a.gguf", 10), ("b.gguf", 20), ("ckpt.pth", 200003),
                ("model.safetensors", 70001)]:
    open(os.path.join(d, name), "wb").write(os.urandom(n - 1) + b"\x01")
open(os.path.join(d, "config.json"), "w").write(json.dumps({"model_type": "depth_anything"}))
PY

FIX="$ROOT/tests/fixtures/models/da2_tiny_rel"
FIX3="$ROOT/tests/fixtures/models/da3mono_tiny"
python3 - "$P" "$FIX" "$FIX3" > "$TMP/hub.json" <<'PY'
import json, os, sys
p, fix, fix3 = sys.argv[1], sys.argv[2], sys.argv[3]
f = lambda n: os.path.join(p, n)
repos = {
    "test/gguf": {"files": {"model-f16.gguf": f("f16.gguf"), "model-f32.gguf": f("f32.gguf")}},
    "test/multi": {"files": {"a.gguf": f("a.gguf"), "b.gguf": f("b.gguf"), "README.md": f("config.json")}},
    "test/pth": {"files": {"depth_anything_v2_vits.pth": f("ckpt.pth")}},
    "test/flaky": {"files": {"m.pth": f("ckpt.pth")}, "cut_once": {"m.pth": 50000}},
    "test/badsha": {"files": {"m.gguf": f("f16.gguf")}, "bad_sha": ["m.gguf"]},
    "test/gone": {"files": {"m.pth": f("missing.pth")}},
    "test/private": {"private": True, "files": {"m.gguf": f("f16.gguf")}},
    "test/norange": {"files": {"m.pth": f("ckpt.pth")}, "no_range": True},
    "test/st": {"files": {"model.safetensors": f("model.safetensors"), "config.json": f("config.json")},
                "no_lfs": ["config.json"]},
}
for repo, d in [("test/tiny", fix), ("test/da3", fix3)]:
    if os.path.isdir(d):
        repos[repo] = {"files": {n: os.path.join(d, n) for n in sorted(os.listdir(d))
                                 if n.endswith((".pth", ".safetensors", ".json"))}, "no_lfs": ["config.json"]}
print(json.dumps({"token": "s3cret", "repos": repos}))
PY

python3 "$HERE/fake_hub.py" --config "$TMP/hub.json" --port-file "$TMP/port" --log "$TMP/requests.log" &
SERVER=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || { echo "FAIL: fake hub did not start"; exit 1; }
export HF_ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")"
export DACPP_CACHE="$TMP/cache"
unset HF_TOKEN
HUB="$DACPP_CACHE/hub"
pull() { timeout 60 "$DACPP" pull "$@"; }
# expect_stdout PATH — stdout is exactly that one line.
expect_stdout() {
  if [ "$(cat "$TMP/out")" != "$1" ] || [ "$(wc -l < "$TMP/out")" != 1 ]; then
    echo "FAIL: stdout is '$(cat "$TMP/out")', expected '$1'"; FAILS=$((FAILS + 1))
  fi
}
expect_same() { cmp -s "$1" "$2" || { echo "FAIL: $1 differs from $2"; FAILS=$((FAILS + 1)); }; }
expect_absent() { [ ! -e "$1" ] || { echo "FAIL: $1 should not exist"; FAILS=$((FAILS + 1)); }; }
requests() { grep -c -- "$1" "$TMP/requests.log"; }

# A GGUF repo with several files: the f32 one is chosen, downloaded, verified, printed (no conversion).
expect_exit 0 pull test/gguf
expect_stdout "$HUB/test--gguf/main/model-f32.gguf"
expect_same "$HUB/test--gguf/main/model-f32.gguf" "$P/f32.gguf"
expect_absent "$HUB/test--gguf/main/model-f32.gguf.part"
expect_grep 'api/models/test/gguf/revision/main' "$TMP/requests.log"
# Again: the file is there, only the listing is asked for; with --file not even that.
before=$(requests 'resolve/main/model-f32.gguf')
expect_exit 0 pull test/gguf
expect_stdout "$HUB/test--gguf/main/model-f32.gguf"
[ "$(requests 'resolve/main/model-f32.gguf')" = "$before" ] || { echo "FAIL: re-downloaded"; FAILS=$((FAILS + 1)); }
lines=$(wc -l < "$TMP/requests.log")
expect_exit 0 pull test/gguf --file model-f32.gguf
[ "$(wc -l < "$TMP/requests.log")" = "$lines" ] || { echo "FAIL: network used for a cached file"; FAILS=$((FAILS + 1)); }

# Several GGUFs and no f32: an error listing them; --file picks one.
expect_exit 2 pull test/multi
expect_grep 'a\.gguf, b\.gguf' "$TMP/err"
expect_grep 'with --file' "$TMP/err"
expect_exit 0 pull test/multi --file b.gguf
expect_same "$HUB/test--multi/main/b.gguf" "$P/b.gguf"
expect_exit 3 pull test/multi --file c.gguf
expect_grep "no file 'c\.gguf'" "$TMP/err"

# Resume: a .part holding the first 100000 bytes is continued with a Range request.
mkdir -p "$HUB/test--pth/main"
head -c 100000 "$P/ckpt.pth" > "$HUB/test--pth/main/depth_anything_v2_vits.pth.part"
expect_exit 0 pull test/pth --no-convert
expect_stdout "$HUB/test--pth/main/depth_anything_v2_vits.pth"
expect_same "$HUB/test--pth/main/depth_anything_v2_vits.pth" "$P/ckpt.pth"
expect_grep 'range=bytes=100000-' "$TMP/requests.log"
expect_grep 'resuming' "$TMP/err"

# A connection dropped mid-file: exit 3, the .part is kept, the next run resumes and completes it.
expect_exit 3 pull test/flaky --no-convert
expect_grep 'resume' "$TMP/err"
[ "$(stat -c %s "$HUB/test--flaky/main/m.pth.part" 2>/dev/null)" = 50000 ] ||
  { echo "FAIL: the partial download was not kept"; FAILS=$((FAILS + 1)); }
expect_exit 0 pull test/flaky --no-convert
expect_same "$HUB/test--flaky/main/m.pth" "$P/ckpt.pth"
expect_grep 'range=bytes=50000-' "$TMP/requests.log"

# A server that ignores Range answers 200: the .part is rewritten from byte 0.
mkdir -p "$HUB/test--norange/main"
head -c 7000 /dev/urandom > "$HUB/test--norange/main/m.pth.part"
expect_exit 0 pull test/norange --no-convert
expect_same "$HUB/test--norange/main/m.pth" "$P/ckpt.pth"
expect_grep '/test/norange/resolve/main/m.pth auth=- range=bytes=7000-' "$TMP/requests.log"

# A .part that is already complete is verified and kept without another request.
mkdir -p "$HUB/test--pth/v3"
cp "$P/ckpt.pth" "$HUB/test--pth/v3/depth_anything_v2_vits.pth.part"
expect_exit 0 pull test/pth --revision v3 --no-convert
expect_same "$HUB/test--pth/v3/depth_anything_v2_vits.pth" "$P/ckpt.pth"
[ "$(requests 'resolve/v3/')" = 0 ] || { echo "FAIL: a complete .part was downloaded again"; FAILS=$((FAILS + 1)); }

# A corrupt .part prefix makes the SHA-256 check fail; the .part is deleted, the next run starts over.
mkdir -p "$HUB/test--pth/v2"
head -c 5000 /dev/urandom > "$HUB/test--pth/v2/depth_anything_v2_vits.pth.part"
expect_exit 3 pull test/pth --revision v2 --no-convert
expect_grep 'SHA-256 mismatch' "$TMP/err"
expect_absent "$HUB/test--pth/v2/depth_anything_v2_vits.pth.part"
expect_exit 0 pull test/pth --revision v2 --no-convert
expect_same "$HUB/test--pth/v2/depth_anything_v2_vits.pth" "$P/ckpt.pth"

# The hub's sha256 does not match the bytes: an error, nothing left behind.
expect_exit 3 pull test/badsha
expect_grep 'SHA-256 mismatch for m\.gguf of test/badsha' "$TMP/err"
expect_absent "$HUB/test--badsha/main/m.gguf.part"
expect_absent "$HUB/test--badsha/main/m.gguf"

# 404s name the repo or the file.
expect_exit 3 pull test/gone --no-convert
expect_grep "file 'm\.pth' not found in test/gone" "$TMP/err"
expect_exit 3 pull test/nothere
expect_grep "test/nothere.*not found" "$TMP/err"

# A private repo: 401 without a token, the token goes out as a Bearer header, a wrong token is refused.
expect_exit 3 pull test/private
expect_grep 'access denied for test/private.*HF_TOKEN' "$TMP/err"
expect_exit 3 env HF_TOKEN=wrong timeout 60 "$DACPP" pull test/private
expect_grep 'HF_TOKEN' "$TMP/err"
expect_exit 0 env HF_TOKEN=s3cret timeout 60 "$DACPP" pull test/private
expect_same "$HUB/test--private/main/m.gguf" "$P/f16.gguf"
expect_grep '/api/models/test/private/revision/main auth=Bearer s3cret' "$TMP/requests.log"
expect_grep '/test/private/resolve/main/m.gguf auth=Bearer s3cret' "$TMP/requests.log"

# safetensors + config.json (config without LFS sha), download only: prints the checkpoint folder.
expect_exit 0 pull test/st --no-convert
expect_stdout "$HUB/test--st/main"
expect_same "$HUB/test--st/main/model.safetensors" "$P/model.safetensors"
expect_same "$HUB/test--st/main/config.json" "$P/config.json"

# Bad arguments.
expect_exit 2 pull ../etc
expect_exit 2 pull test/gguf --revision ../x
expect_exit 2 pull test/gguf --max-depth -1

# No network: a transport error that says how to use a local model file instead.
HF_ENDPOINT=http://127.0.0.1:1 timeout 60 "$DACPP" pull test/gguf --cache "$TMP/c2" >"$TMP/out" 2>"$TMP/err"
rc=$?
{ [ $rc = 3 ] || [ $rc = 5 ]; } || { echo "FAIL: unreachable endpoint exited $rc"; cat "$TMP/err"; FAILS=$((FAILS + 1)); }
expect_grep 'http://127\.0\.0\.1:1/api/models/test/gguf' "$TMP/err"
expect_grep 'dacpp depth -m' "$TMP/err"

# Conversion to GGUF in the cache, then the cached result is reused without network.
convert_case() {  # REPO FIXTURE_DIR
  local repo="$1" gguf="$DACPP_CACHE/models/${1/\//--}.gguf"
  if [ ! -d "$2" ]; then echo "SKIP: conversion of $repo: $2 is absent"; return; fi
  pull "$repo" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ $rc = 4 ] && grep -q 'importer' "$TMP/err"; then echo "SKIP: conversion of $repo: no importer in this build"; return; fi
  [ $rc = 0 ] || { echo "FAIL: pull $repo exited $rc"; cat "$TMP/err"; FAILS=$((FAILS + 1)); return; }
  expect_stdout "$gguf"
  expect_exit 0 timeout 60 "$DACPP" info "$gguf"
  local lines
  lines=$(wc -l < "$TMP/requests.log")
  expect_exit 0 pull "$repo"
  expect_stdout "$gguf"
  [ "$(wc -l < "$TMP/requests.log")" = "$lines" ] || { echo "FAIL: up-to-date GGUF not reused"; FAILS=$((FAILS + 1)); }
}
convert_case test/tiny "$FIX"
convert_case test/da3 "$FIX3"
finish
