#!/usr/bin/env bash
# Which of libtorch's shared libraries a torch program should name first so that it starts
# faster, and a check that doing so binds no strong symbol differently.
#
# Why: Debian's libtorch pulls in ~290 shared libraries (OpenCV, and through it GDAL, Xerces,
# GEOS, ...), all bound at start-up. ld.so looks each symbol up along the program's global scope,
# in order, and most lookups come from those deep libraries for their own symbols, each walking
# past ~200 libraries first: a quarter of a libtorch process's start. Naming the libraries that
# pay most for this first in the program's DT_NEEDED puts them at the front of the scope.
#
# Reordering the scope can change which copy of a symbol defined in several libraries wins. For
# weak definitions (C++ inline functions, template instances: identical copies by the one
# definition rule) any copy will do. For strong ones it would change behaviour, so the libraries
# that define a strong symbol another library also defines are all named, in their original
# order, which keeps every such contest as it was; `check` verifies that. The loader and the
# OpenMP and CUDA runtimes, whose state the cases are about, are never named for speed: like every
# library not named, they follow the named ones in their usual order.
#
#   torch-load-order.sh order PROBE        libraries to name first, one path per line
#   torch-load-order.sh ld-options PROBE OUT
#       the same as options for ld (an @file): the paths between --push-state --no-as-needed and
#       --pop-state; an empty file, and a warning, when they cannot be worked out (the program is
#       then linked as usual)
#   torch-load-order.sh check PLAIN HOIST [--shorter]
#       compares the two programs' bindings, every function bound at start (LD_BIND_NOW): exit 1
#       naming every symbol bound to another library where a strong definition won or lost, and
#       when the two do not load the same libraries; with --shorter, also when HOIST's lookups do
#       not walk at least a third less
#
# PROBE and PLAIN: programs linked with libtorch as usual; HOIST: linked with `order`'s list
# first. They are run with no arguments and no input, without LD_PRELOAD and LD_LIBRARY_PATH;
# they only have to start. NM names nm (default: nm).
set -euo pipefail
nm=${NM:-nm}

# A library is named first when this many lookups end in it: named behind the ~100 libraries
# that are, it would cost more than it does in front of them. (Rank matters, not the probe's own
# position: a library the probe names directly is early there and late once others come first.)
min_lookups=100

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# loader_log NAME PROGRAM [BIND_NOW]: the main program's scope (NAME.scope, one library per line,
# the program first) and every binding of its run (NAME.bind: "FILE TARGET SYMBOL"), from the log
# of that process alone (not of any child it starts). With BIND_NOW, every function is bound at
# start, not only those the run calls.
loader_log() {
  local name=$tmp/$1 pid
  (
    # Set here, in the shell that execs the program: no other program may start in between
    # (the loader would log that one under the same pid).
    unset LD_PRELOAD LD_LIBRARY_PATH
    export LD_DEBUG=scopes,bindings LD_DEBUG_OUTPUT=$name.log
    if [ -n "${3:-}" ]; then export LD_BIND_NOW=1; fi
    exec "$2" >/dev/null 2>&1 </dev/null
  ) &
  pid=$!
  wait "$pid" || true
  if [ ! -s "$name.log.$pid" ]; then
    echo "torch-load-order: the loader logged nothing for $2" >&2
    exit 1
  fi
  # The first "scope 0" line is the main program's (sed stops there: no head, no SIGPIPE).
  sed -n '/^ *[0-9]*:[[:space:]]*scope 0: /{s///p;q;}' "$name.log.$pid" | tr ' ' '\n' |
    { grep . || true; } >"$name.scope"
  awk '$2 == "binding" && $3 == "file" && $6 == "to" {
         s = $11; gsub(/^`|\047$/, "", s); print $4, $7, s }' "$name.log.$pid" >"$name.bind"
  if [ ! -s "$name.scope" ] || [ ! -s "$name.bind" ]; then
    echo "torch-load-order: no scope or no bindings in the loader's log of $2" >&2
    exit 1
  fi
}

# walk NAME: scope entries looked at before each binding's target, summed: the lookup work.
walk() {
  awk 'NR == FNR { pos[$1] = FNR - 1; next } { w += pos[$2] } END { print w + 0 }' \
    "$tmp/$1.scope" "$tmp/$1.bind"
}

never_moved() {
  case "${1##*/}" in
    ld-linux* | libgomp* | libomp* | libiomp* | libcuda*)
      return 0 ;;
  esac
  return 1
}

# strong_rivals NAME: the libraries of the scope that define a strong symbol another one also
# defines, in scope order.
strong_rivals() {
  tail -n +2 "$tmp/$1.scope" | xargs "$nm" -D --defined-only -A 2>/dev/null |
    awk '{ split($1, f, ":"); sym = $3; sub(/@.*/, "", sym) }
         $2 ~ /^[TDBRi]$/ && sym !~ /^(_init|_fini|_edata|_end|__bss_start)$/ {
           if (sym in first && first[sym] != f[1]) { rival[first[sym]] = 1; rival[f[1]] = 1 }
           else if (!(sym in first)) first[sym] = f[1] }
         END { for (l in rival) print l }' >"$tmp/rivals"
  grep -Fxf "$tmp/rivals" "$tmp/$1.scope" || true
}

order() {
  loader_log probe "$1"
  strong_rivals probe >"$tmp/pinned"
  # The libraries most lookups end in, most first, and the rivals wherever their count puts them.
  awk -v min="$min_lookups" '
    FILENAME == ARGV[1] { if (FNR > 1) in_scope[$1] = 1; next }
    FILENAME == ARGV[2] { pinned[$1] = 1; next }
    { n[$2]++ }
    END { for (t in in_scope) if (t in pinned || n[t] >= min) print n[t] + 0, t }' \
    "$tmp/probe.scope" "$tmp/pinned" "$tmp/probe.bind" | sort -k1,1nr -k2 | cut -d' ' -f2 |
    while read -r lib; do
      if grep -Fxq "$lib" "$tmp/pinned" || ! never_moved "$lib"; then echo "$lib"; fi
    done >"$tmp/ranked"
  # The rivals' places in that ranking, filled with the rivals in their original order: each
  # contest between strong definitions comes out as before.
  awk 'FILENAME == ARGV[1] { queue[++q] = $1; pinned[$1] = 1; next }
       { if ($1 in pinned) print queue[++i]; else print $1 }' "$tmp/pinned" "$tmp/ranked"
}

case "${1:-}" in
  order)
    [ $# -eq 2 ] || { echo "usage: torch-load-order.sh order PROBE" >&2; exit 2; }
    order "$2"
    ;;
  ld-options)
    [ $# -eq 3 ] || { echo "usage: torch-load-order.sh ld-options PROBE OUT" >&2; exit 2; }
    # In a child bash: inside an `if`, errors would not stop a function of this one (set -e is
    # off there), and a failed step could leave a list without its rivals.
    if bash "$0" order "$2" >"$tmp/order" 2>"$tmp/why" && [ -s "$tmp/order" ] &&
      ! grep -q "[[:space:]\"']" "$tmp/order"; then
      { echo --push-state --no-as-needed; cat "$tmp/order"; echo --pop-state; } >"$3"
      echo "torch-load-order: $(wc -l <"$tmp/order") libraries named first"
    else
      : >"$3"
      echo "torch-load-order: warning: linked as usual, no order worked out: $(cat "$tmp/why")" >&2
    fi
    ;;
  check)
    [ $# -eq 3 ] || { [ $# -eq 4 ] && [ "$4" = --shorter ]; } ||
      { echo "usage: torch-load-order.sh check PLAIN HOIST [--shorter]" >&2; exit 2; }
    # The lookup work as the programs start (functions bound lazily, as they are here) ...
    loader_log plain "$2"
    loader_log hoist "$3"
    plain_walk=$(walk plain) hoist_walk=$(walk hoist)
    # ... and every binding there is (LD_BIND_NOW), for the comparison.
    loader_log plain "$2" now
    loader_log hoist "$3" now
    # The same libraries, in another order.
    problems=0
    tail -n +2 "$tmp/plain.scope" | sort >"$tmp/plain.set"
    tail -n +2 "$tmp/hoist.scope" | sort >"$tmp/hoist.set"
    if ! cmp -s "$tmp/plain.set" "$tmp/hoist.set"; then
      echo "torch-load-order: the two programs do not load the same libraries:" >&2
      diff "$tmp/plain.set" "$tmp/hoist.set" >&2 || true
      problems=1
    fi
    # The main programs differ by name, by what they call and by the data they copy into
    # themselves (copy relocations: stdout, std::cout, ...), which the libraries then bind to:
    # compare the libraries' bindings of what neither program defines.
    awk -v exe="$2" '$1 != exe && $2 != exe' "$tmp/plain.bind" | sort -u >"$tmp/plain.lib"
    awk -v exe="$3" '$1 != exe && $2 != exe' "$tmp/hoist.bind" | sort -u >"$tmp/hoist.lib"
    # "WAS NOW SYMBOL" for each (file, symbol) whose definition comes from another library now.
    awk 'NR == FNR { t[$1 " " $3] = $2; next }
         ($1 " " $3) in t && t[$1 " " $3] != $2 { print t[$1 " " $3], $2, $3 }' \
      "$tmp/plain.lib" "$tmp/hoist.lib" | sort -u >"$tmp/moved"
    # nm's letter for both definitions: W, V (weak) and u (unique) are copies any of which will
    # do; a strong one on either side is a contest that came out differently (a strong definition
    # lost, or one now overrides a weak default).
    cut -d' ' -f1,2 "$tmp/moved" | tr ' ' '\n' | sort -u |
      xargs -r "$nm" -D --defined-only -A 2>/dev/null |
      awk '{ split($1, f, ":"); sym = $3; sub(/@.*/, "", sym); print f[1], sym, $2 }' >"$tmp/types"
    awk 'NR == FNR { type[$1 " " $2] = $3; next }
         function weak(t) { return t == "W" || t == "V" || t == "u" }
         { was = type[$1 " " $3]; now = type[$2 " " $3]
           if (!weak(was) || !weak(now))
             print "torch-load-order: symbol", $3, "moved from", $1, "(" was ") to", $2, "(" now ")" }' \
      "$tmp/types" "$tmp/moved" >"$tmp/strong"
    cat "$tmp/strong" >&2
    [ ! -s "$tmp/strong" ] || problems=1
    echo "torch-load-order: $(wc -l <"$tmp/plain.lib") library bindings compared (all bound at" \
      "start); $(wc -l <"$tmp/moved") weak definitions taken from another weak copy;" \
      "$(wc -l <"$tmp/strong") with a strong side; lookup walk at start $plain_walk ->" \
      "$hoist_walk scope entries"
    [ "$problems" -eq 0 ] || exit 1
    if [ "${4:-}" = --shorter ] && [ $((hoist_walk * 3)) -gt $((plain_walk * 2)) ]; then
      echo "torch-load-order: $3's lookups are not a third shorter than $2's" >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: torch-load-order.sh order PROBE | ld-options PROBE OUT | check PLAIN HOIST [--shorter]" >&2
    exit 2 ;;
esac
