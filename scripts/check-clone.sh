#!/usr/bin/env bash
# Proves that a clone tests itself, as a user gets it: `git clone` the committed checkout into an empty
# temporary folder (so no ../shared or anything else lies beside it) and run the README's `npm test` there.
# The dependencies and the addon that `npm install` would give the clone are reused from this checkout
# (node_modules linked, the addon node-gyp-build loads copied) rather than installed and compiled twice.
# Usage: scripts/check-clone.sh [vitest arguments, e.g. test files]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
test -z "$(git status --porcelain --untracked-files=no)" || echo "note: uncommitted changes are not in the clone"
addon="$(node -e "console.log(require('node:path').relative('.', require('node-gyp-build').path('.')))")"
parent="$(mktemp -d)"
trap 'rm -rf "$parent"' EXIT
git clone --quiet "$root" "$parent/grpo-native"
cd "$parent/grpo-native"
ln -s "$root/node_modules" node_modules
mkdir -p "$(dirname "$addon")"
cp "$root/$addon" "$addon"
echo "commit $(git rev-parse --short HEAD) cloned into $PWD; beside it: $(ls -A ..)"
npm test -- "$@"
