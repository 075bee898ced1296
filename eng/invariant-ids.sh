#!/usr/bin/env bash
# Invariant IDs: every ID the code cites as [ID] must be stated in docs/ARCHITECTURE.md, and every ID stated there
# should be cited somewhere in src/.
#
#   bash eng/invariant-ids.sh
#
# An ID is stated by a bullet that begins "- **ID," in docs/ARCHITECTURE.md. A citation is an ID in square brackets in
# a .cs file under src/: [G1], [X1, X2], [M3, M6]; "[B1]-[B3]" also cites B2. IDs in the bench/ and tests/ folders and
# in prose ("(X1)") are not counted. Exits 1 when the code cites an ID the document does not state.
set -euo pipefail
cd "$(dirname "$0")/.."

id='[A-Z]{1,2}[0-9]{1,2}'
stated="$(grep -oE "^- \*\*${id}," docs/ARCHITECTURE.md | grep -oE "${id}" | sort -u)"

brackets="$(git ls-files 'src/*.cs' | xargs grep -ohE "\[${id}(, ?${id})*\](-\[${id}\])?" || true)"
cited="$(
  {
    printf '%s\n' "$brackets" | grep -oE "${id}"
    # A range [B1]-[B3] cites every ID between its ends.
    printf '%s\n' "$brackets" | grep -E "^\[${id}\]-\[${id}\]$" | sed -E 's/^\[([A-Z]+)([0-9]+)\]-\[[A-Z]+([0-9]+)\]$/\1 \2 \3/' |
      while read -r prefix from to; do seq "$from" "$to" | sed "s/^/${prefix}/"; done
  } | sort -u
)"

missing="$(comm -13 <(printf '%s\n' "$stated") <(printf '%s\n' "$cited"))"
uncited="$(comm -23 <(printf '%s\n' "$stated") <(printf '%s\n' "$cited"))"
echo "stated in docs/ARCHITECTURE.md: $(printf '%s\n' "$stated" | wc -l); cited in src/: $(printf '%s\n' "$cited" | wc -l)"
if [ -n "$uncited" ]; then
  echo "stated, not cited as [ID] in src/: $(printf '%s ' $uncited)"
fi
if [ -n "$missing" ]; then
  echo "cited in src/, not stated in docs/ARCHITECTURE.md: $(printf '%s ' $missing)" >&2
  exit 1
fi
