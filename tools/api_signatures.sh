#!/bin/sh
# api_signatures.sh [--check|--update] [ROOT] -- prints every public function declaration
# of include/jaxc.h and include/jaxc/*.h, one per line with whitespace collapsed, grouped
# by header as markdown: the "Full C signatures" section of docs/api.md is this output.
# --update rewrites that section in place (between its "### `include/" blocks and
# "## Planned"); --check exits non-zero naming each declaration docs/api.md lacks (the
# api_signatures CTest test).
set -eu
check=0 update=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}

# declarations: top-level lines from a type up to ';' containing "jx_name(", outside
# comments, not typedefs; joined and whitespace-collapsed
decls() {
  awk '
    { line = $0 }
    incomment { if (line !~ /\*\//) next; sub(/^.*\*\//, "", line); incomment = 0 }
    { while (match(line, /\/\*.*\*\//)) line = substr(line, 1, RSTART - 1) substr(line, RSTART + RLENGTH) }
    /\/\*/ { if (line ~ /\/\*/) { sub(/\/\*.*/, "", line); incomment = 1 } }
    { sub(/\/\/.*/, "", line); sub(/[ \t]+$/, "", line) }
    line ~ /^#/ || line ~ /^typedef/ || line ~ /^\}/ || line ~ /^extern "C"/ { next }
    buf == "" && line ~ /^[A-Za-z].*jx_[a-z0-9_]*\(/ { buf = line }
    buf != "" && line != buf { buf = buf " " line }
    buf != "" && buf ~ /;[ \t]*$/ { gsub(/[ \t]+/, " ", buf); gsub(/\( /, "(", buf); print buf; buf = "" }
  ' "$1"
}

if [ $check -eq 1 ]; then
  missing=0
  for h in "$root/include/jaxc.h" "$root"/include/jaxc/*.h; do
    decls "$h" | while IFS= read -r d; do
      grep -qF -- "$d" "$root/docs/api.md" || { echo "docs/api.md lacks: $d"; echo x >> "${TMPDIR:-/tmp}/api_sig_missing.$$"; }
    done
  done
  if [ -f "${TMPDIR:-/tmp}/api_sig_missing.$$" ]; then
    missing=$(wc -l < "${TMPDIR:-/tmp}/api_sig_missing.$$")
    rm -f "${TMPDIR:-/tmp}/api_sig_missing.$$"
    echo "$missing declarations missing from docs/api.md (tools/api_signatures.sh regenerates the section)"
    exit 1
  fi
  echo "every public declaration is in docs/api.md"
  exit 0
fi

section() {
  for h in "$root/include/jaxc.h" "$root"/include/jaxc/*.h; do
    echo
    echo "### \`${h#"$root"/}\`"
    echo
    echo '```c'
    decls "$h"
    echo '```'
  done
}

if [ $update -eq 1 ]; then
  doc=$root/docs/api.md
  section > "$doc.sig.tmp"
  # keep everything up to the section's intro (the line before its first block) and
  # from "## Planned" on; the blocks in between are replaced
  awk -v sig="$doc.sig.tmp" '
    /^## Full C signatures/ { insec = 1 }
    insec && /^### `include\// { if (!done) { while ((getline l < sig) > 0) print l; print ""; done = 1 } skip = 1; next }
    insec && /^## Planned/ { skip = 0; insec = 0 }
    skip { next }
    { print }
  ' "$doc" > "$doc.tmp"
  mv "$doc.tmp" "$doc"
  rm -f "$doc.sig.tmp"
  exit 0
fi
section
