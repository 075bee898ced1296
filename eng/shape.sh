#!/usr/bin/env bash
# The shape of the code, for issue 23's before/after figures: public types and members per package (from the
# PublicAPI.*.txt files the public API analyzer keeps), src/ lines, and the src/ files over 300 lines.
#
#   bash eng/shape.sh
#
# In a PublicAPI file a line without "->" is a type, a line with "->" a member (a property accessor, an enum value, a
# constructor and a record's generated members each count once, as the analyzer lists them); "#nullable enable" and
# blank lines are neither. Removed entries (*REMOVED*) are not counted.
set -euo pipefail
cd "$(dirname "$0")/.."

printf '%-24s %7s %9s\n' package types members
total_types=0
total_members=0
for project in src/*/; do
  name="$(basename "$project")"
  [ -f "$project/PublicAPI.Shipped.txt" ] || continue
  entries="$(cat "$project"/PublicAPI.Shipped.txt "$project"/PublicAPI.Unshipped.txt | grep -v -e '^#' -e '^[[:space:]]*$' -e '^\*REMOVED\*' || true)"
  types="$(printf '%s\n' "$entries" | grep -c -v -e '->' -e '^$' || true)"
  members="$(printf '%s\n' "$entries" | grep -c -e '->' || true)"
  printf '%-24s %7d %9d\n' "$name" "$types" "$members"
  total_types=$((total_types + types))
  total_members=$((total_members + members))
done
printf '%-24s %7d %9d\n' total "$total_types" "$total_members"

echo
files="$(git ls-files 'src/*.cs')"
echo "src/: $(printf '%s\n' "$files" | xargs cat | wc -l) lines in $(printf '%s\n' "$files" | wc -l) .cs files"
echo "files over 300 lines:"
printf '%s\n' "$files" | xargs wc -l | grep -v ' total$' | awk '$1 > 300' | sort -rn | sed 's/^/  /'
