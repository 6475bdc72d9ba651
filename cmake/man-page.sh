#!/usr/bin/env bash
# Writes forkcheck(1) from forkcheck's own help, so that the page cannot drift from it: help2man
# on `forkcheck --help`, with a COMMANDS section made of `forkcheck help COMMAND` for each
# command. The program is run as "forkcheck" (exec -a), so that its usage lines name no build
# path. Usage: man-page.sh FORKCHECK OUT.1
set -euo pipefail
bin=$1
out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#!/usr/bin/env bash\nexec -a forkcheck %q "$@"\n' "$bin" >"$work/forkcheck"
chmod +x "$work/forkcheck"
# The commands as forkcheck --help lists them (harness/commands/command_table.cc), help aside.
mapfile -t commands < <("$work/forkcheck" --help |
  awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1; next } on { exit }' |
  grep -vx help)
[ "${#commands[@]}" -gt 0 ] || { echo "man-page.sh: forkcheck --help lists no command" >&2; exit 1; }
# roff: a backslash is \e, and a line starting with . or ' is made text with \&.
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
{
  echo "[COMMANDS]"
  for c in "${commands[@]}"; do
    echo ".SS $c"
    echo ".nf"
    "$work/forkcheck" help "$c" | roff
    echo ".fi"
  done
  echo "[SEE ALSO]"
  echo "The documentation in /usr/share/doc/forkcheck (README.md, docs/), and"
  echo ".B forkcheck list CASE"
  echo "for a case's page."
} >"$work/commands.h2m"
help2man --no-info --name "fork-safety failures of multiprocessing PyTorch programs, reproduced" \
  --section 1 --include "$work/commands.h2m" --output "$out" "$work/forkcheck"
