#!/usr/bin/env bash
# Proves that `make table` computes what it prints: in a copy of this tree
# whose golden/table.txt has one cell changed by hand, `make table` must exit
# non-zero and show the changed cell in its diff. Exits 0 only if it does.
set -euo pipefail
cd "$(dirname "$0")/.."
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
# The tracked files and the untracked ones git does not ignore, as they are now.
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$copy" 2>/dev/null || true
[ -f "$copy/golden/table.txt" ] || { echo "table-tamper: golden/table.txt was not copied"; exit 1; }

# The token bucket's node-clock peak, whatever it is, changed to a number no
# run computes (0.01x: a hundredth of the limit, where every table has more).
sed -i 's/^\(token-bucket *| [0-9.]*x | *\)[0-9.]*x/\10.01x/' "$copy/golden/table.txt"
if ! grep -q '^token-bucket *| [0-9.]*x | *0\.01x' "$copy/golden/table.txt"; then
  echo "table-tamper: could not plant 0.01x in golden/table.txt (has the table's layout changed?)"
  exit 1
fi

set +e
(cd "$copy" && make --no-print-directory table) >"$copy/table.log" 2>&1
status=$?
set -e
if [ "$status" -eq 0 ]; then
  cat "$copy/table.log"
  echo "table-tamper: FAILED: make table exited 0 with a tampered golden/table.txt"
  exit 1
fi
if ! grep -q '^ *-token-bucket.*0\.01x' "$copy/table.log"; then
  cat "$copy/table.log"
  echo "table-tamper: FAILED: make table failed, but its output has no diff line for the tampered cell"
  exit 1
fi
echo "table-tamper: a golden/table.txt with 0.01x planted makes make table exit $status, with the diff:"
grep -E '^ *[-+]token-bucket' "$copy/table.log"
