#!/usr/bin/env bash
# Install the pinned agent hosts (Claude Code, Codex CLI) for the journey tests.
#
# Reads src/plangate/resources/pinned-hosts.toml, installs node and npm from the
# distribution's packages when they are missing (apt-get), then both hosts from npm
# into a cache directory keyed by their versions:
#   ${PLANGATE_HOSTS_CACHE:-$HOME/.cache/plangate/hosts}/claude-<version>_codex-<version>
# A complete entry is reused as is; an incomplete one is installed again. The last
# line printed on stdout is the entry's bin directory (claude, codex, and the
# codex-linux-sandbox link Codex needs on PATH for its sandboxed commands).
# Progress goes to stderr. Exit 0 installed or reused, 1 could not install.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
PIN_FILE="src/plangate/resources/pinned-hosts.toml"

say() { echo "==> $*" >&2; }

# "<claude package> <claude version> <codex package> <codex version>", from the pin file.
read -r CLAUDE_PKG CLAUDE_VERSION CODEX_PKG CODEX_VERSION < <(
  "$PYTHON" - "$PIN_FILE" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as handle:
    pins = tomllib.load(handle)
print(pins["claude"]["package"], pins["claude"]["version"],
      pins["codex"]["package"], pins["codex"]["version"])
PY
)

CACHE="${PLANGATE_HOSTS_CACHE:-$HOME/.cache/plangate/hosts}"
ENTRY="$CACHE/claude-${CLAUDE_VERSION}_codex-${CODEX_VERSION}"
STAMP="$ENTRY/.complete"
EXPECTED_STAMP="$CLAUDE_PKG@$CLAUDE_VERSION $CODEX_PKG@$CODEX_VERSION"

complete() {
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$EXPECTED_STAMP" ] \
    && [ -x "$ENTRY/bin/claude" ] && [ -x "$ENTRY/bin/codex" ] \
    && [ -x "$ENTRY/bin/codex-linux-sandbox" ]
}

if complete; then
  say "pinned hosts already installed: $ENTRY"
  echo "$ENTRY/bin"
  exit 0
fi

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if ! command -v npm >/dev/null 2>&1 || [ "$(node_major)" -lt 18 ]; then
  # Both hosts need node 18 or newer.
  say "node/npm missing or older than 18: installing them from the distribution's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq nodejs npm >/dev/null
  if [ "$(node_major)" -lt 18 ]; then
    echo "install-hosts: node $(node --version 2>/dev/null || echo none) is older than 18" >&2
    exit 1
  fi
fi

mkdir -p "$CACHE"
WORK="$(mktemp -d "$CACHE/.install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"
say "installing $EXPECTED_STAMP into $ENTRY"
# Install scripts stay on: Claude Code's postinstall puts its platform's native
# binary in place of the bin/claude.exe stub (without it claude refuses to start).
# Each host's platform binary is an optional dependency: optional ones stay on too.
npm install --prefix "$WORK" --no-save --no-audit --no-fund --loglevel=error \
  "$CLAUDE_PKG@$CLAUDE_VERSION" "$CODEX_PKG@$CODEX_VERSION" >&2

# The bin directory: links to what npm installed, plus codex-linux-sandbox (Codex
# creates that alias itself only under a CODEX_HOME outside temporary directories).
mkdir -p "$WORK/bin"
ln -s ../node_modules/.bin/claude "$WORK/bin/claude"
ln -s ../node_modules/.bin/codex "$WORK/bin/codex"
native="$(find "$WORK/node_modules/@openai" -path '*/vendor/*/bin/codex' -type f | head -n 1)"
if [ -z "$native" ]; then
  echo "install-hosts: no native codex binary for this platform under $WORK/node_modules/@openai" >&2
  exit 1
fi
ln -s "../${native#"$WORK"/}" "$WORK/bin/codex-linux-sandbox"

"$WORK/bin/claude" --version >&2
"$WORK/bin/codex" --version >&2
echo "$EXPECTED_STAMP" > "$WORK/.complete"

rm -rf "$ENTRY"
mv "$WORK" "$ENTRY"
trap - EXIT
say "installed: $ENTRY"
echo "$ENTRY/bin"
