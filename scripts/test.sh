#!/usr/bin/env bash
# The one test command (README, `make test`, .ci/run): installs what the tests
# need (the pinned agent hosts of the journey tier included), starts a throwaway
# PostgreSQL server on loopback, runs the whole suite against it (SQLite and
# PostgreSQL ledgers alike), and stops the server.
# Extra arguments are passed to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
echo "==> installing plangate with test, dev and ray extras (the ray tests start a real cluster)"
"$PYTHON" -m pip install --quiet --disable-pip-version-check -e '.[dev,ray]'

find_pg_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  return 1
}

PG_BIN="$(find_pg_bin || true)"
if [ -z "$PG_BIN" ]; then
  echo "==> PostgreSQL server not found: installing it from the distribution's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
  PG_BIN="$(find_pg_bin)"
fi

if [ "$(uname -s)" = "Linux" ] && [ ! -x /usr/bin/bwrap ]; then
  # Isolation tests run real boxes: bubblewrap is the Linux sandbox backend.
  echo "==> bubblewrap not found: installing it from the distribution's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq bubblewrap >/dev/null
fi
if [ "$(uname -s)" = "Linux" ] && ! command -v socat >/dev/null 2>&1; then
  # Claude Code's own sandbox (the journey tests run it) needs bubblewrap and socat, and
  # exec's box bridges its proxy with a trusted socat when there is one.
  echo "==> socat not found: installing it from the distribution's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq socat >/dev/null
fi
if [ "$(uname -s)" = "Linux" ] && ! command -v cc >/dev/null 2>&1; then
  # The hook helper's native client is built and tested with a real C compiler.
  echo "==> cc not found: installing gcc and libc6-dev from the distribution's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq gcc libc6-dev >/dev/null
fi
if ! command -v ssh-keygen >/dev/null 2>&1; then
  echo "==> ssh-keygen not found: installing openssh-client (signature tests need it)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq openssh-client >/dev/null
fi

if ! command -v chromium >/dev/null 2>&1; then
  # The report tests load the HTML page in a real headless browser.
  echo "==> chromium not found: installing it from the distribution's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi

# The journey tests run the pinned real hosts (Claude Code, Codex) against a scripted
# model: install them (cached by version) and tell the tests where they are.
echo "==> installing the pinned agent hosts (scripts/install-hosts.sh)"
PLANGATE_HOSTS_BIN="$(scripts/install-hosts.sh | tail -n 1)"
export PLANGATE_HOSTS_BIN

PG_TMP="$(mktemp -d /tmp/plangate-pg.XXXXXX)"
PG_PORT="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
as_pg() {
  # initdb and postgres refuse to run as root; use the postgres account then.
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = "0" ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir "$PG_TMP" postgres
  chown postgres "$PG_TMP"
fi
cleanup() {
  as_pg "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_TMP"
}
trap cleanup EXIT

echo "==> starting a throwaway PostgreSQL server on 127.0.0.1:$PG_PORT ($PG_TMP)"
as_pg "$PG_BIN/initdb" -D "$PG_TMP/data" -U plangate --auth=trust -E UTF8 >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_TMP -c fsync=off" start >/dev/null
export PLANGATE_TEST_PG_URL="postgresql://plangate@127.0.0.1:$PG_PORT/postgres"

echo "==> running the test suite"
set +e
"$PYTHON" -m pytest "$@"
status=$?
set -e
if [ "$status" = "5" ]; then
  echo "pytest ran no tests: that is a failure" >&2
fi
exit "$status"
