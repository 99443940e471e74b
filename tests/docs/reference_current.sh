#!/bin/sh
# reference_current.sh: docs/reference/ is what scripts/gen-reference makes from this tree's code (ctest
# docs_reference_current): the generated reference cannot drift from the option definitions and tables.
#   reference_current.sh BIN_DIR SOURCE_DIR
set -eu
bin_dir=$1
source_dir=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$source_dir/scripts/gen-reference" "$bin_dir" "$scratch/reference"
if ! diff -ru "$source_dir/docs/reference" "$scratch/reference"; then
  echo "docs/reference is stale: run \`make reference\`" >&2
  exit 1
fi
