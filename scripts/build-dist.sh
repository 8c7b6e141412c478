#!/usr/bin/env bash
# Build the release artifacts of this checkout: the wheel and the sdist, with their SHA-256
# sums, into OUTDIR (default dist/). docs/releasing.md is the whole procedure.
#
#   scripts/build-dist.sh [OUTDIR] [--tag vX.Y.Z]
#
# With --tag (or in CI on a tag: GITHUB_REF_TYPE=tag and GITHUB_REF_NAME), the tag must be
# "v" followed by plangate.__version__, the one source of the version; otherwise the build
# stops before anything is written. Needs the 'build' package (in the dev extra).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
OUTDIR="dist"
TAG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG="${2:?--tag needs a value}"; shift 2 ;;
    -*) echo "build-dist: unknown option $1" >&2; exit 2 ;;
    *) OUTDIR="$1"; shift ;;
  esac
done
if [ -z "$TAG" ] && [ "${GITHUB_REF_TYPE:-}" = "tag" ]; then
  TAG="${GITHUB_REF_NAME:-}"
fi

VERSION="$("$PYTHON" -c 'import ast, pathlib; tree = ast.parse(pathlib.Path("src/plangate/__init__.py").read_text()); print(next(n.value.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__version__"))')"
if [ -n "$TAG" ] && [ "$TAG" != "v$VERSION" ]; then
  echo "build-dist: tag $TAG does not name version $VERSION (plangate.__version__): expected v$VERSION" >&2
  exit 1
fi

echo "==> building plangate $VERSION (wheel and sdist) into $OUTDIR"
rm -rf "$OUTDIR"
"$PYTHON" -m build --sdist --wheel --outdir "$OUTDIR" . >"${TMPDIR:-/tmp}/plangate-build.log" 2>&1 || {
  cat "${TMPDIR:-/tmp}/plangate-build.log" >&2
  exit 1
}
WHEEL="$OUTDIR/plangate-$VERSION-py3-none-any.whl"
SDIST="$OUTDIR/plangate-$VERSION.tar.gz"
for artifact in "$WHEEL" "$SDIST"; do
  if [ ! -f "$artifact" ]; then
    echo "build-dist: $artifact was not built" >&2
    exit 1
  fi
done
(cd "$OUTDIR" && sha256sum "$(basename "$WHEEL")" "$(basename "$SDIST")" > SHA256SUMS)
cat "$OUTDIR/SHA256SUMS"
