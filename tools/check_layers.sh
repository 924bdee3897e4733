#!/bin/sh
# check_layers.sh SRC_DIR -- fails (exit 1, listing each offending line) when a file
# under src/ includes a header of a later layer. The order is the one of
# docs/architecture.md (and /work/shared/ARCHITECTURE.md, section 3):
#   core < ir < render < backend < trace < jaxpr < transform < jit < lib < io
# A layer may include its own headers and those of any earlier layer.
set -eu
src=${1:-$(dirname "$0")/../src}
order="core ir render backend trace jaxpr transform jit lib io"
rank() {
  i=0
  for l in $order; do
    [ "$l" = "$1" ] && { echo $i; return; }
    i=$((i + 1))
  done
  echo -1
}
bad=0
checked=0
for dir in "$src"/*/; do
  layer=$(basename "$dir")
  me=$(rank "$layer")
  if [ "$me" -lt 0 ]; then
    echo "check_layers: $layer/ is not in the layer order ($order)"
    bad=1
    continue
  fi
  for f in $(find "$dir" -name '*.c' -o -name '*.h' -o -name '*.def' -o -name '*.cu'); do
    checked=$((checked + 1))
    # lines: NUMBER:#include "LAYER/..."
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" | while IFS= read -r line; do
      target=$(printf '%s\n' "$line" | sed 's/^[^"]*"\([a-z_]*\)\/.*/\1/')
      them=$(rank "$target")
      if [ "$them" -gt "$me" ]; then
        echo "${f#"$src"/}:${line%%:*}: $layer includes the later layer $target: ${line#*:}"
      fi
    done
  done
done > "${TMPDIR:-/tmp}/check_layers.$$" || true
if [ -s "${TMPDIR:-/tmp}/check_layers.$$" ]; then
  cat "${TMPDIR:-/tmp}/check_layers.$$"
  bad=1
fi
rm -f "${TMPDIR:-/tmp}/check_layers.$$"
[ "$checked" -gt 0 ] || { echo "check_layers: no sources under $src"; exit 1; }
[ "$bad" -eq 0 ] && echo "check_layers: $checked files, every include goes down the layers"
exit $bad
