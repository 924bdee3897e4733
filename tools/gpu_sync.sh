#!/bin/sh
# gpu_sync.sh -- copies this worktree (without build directories or .git) into
# /work/main/.gpu, the git-ignored folder that the device tool's `run` carries to the GPU
# machine (run with carry [".gpu"] and a command such as `bash .gpu/tools/gpu_run.sh`).
set -e
src=$(cd "$(dirname "$0")/.." && pwd)
dst=${1:-/work/main/.gpu}
# tracked and untracked-but-not-ignored files, as `run` would carry a checkout
rm -rf "$dst" && mkdir -p "$dst"
(cd "$src" && git ls-files -co --exclude-standard -z | grep -zv '\.log$' | xargs -0 cp --parents -t "$dst")
du -sh "$dst"
