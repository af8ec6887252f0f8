#!/usr/bin/env bash
# The project's test command (README: "Run the tests"). CI runs exactly this
# through .ci/run. It needs only Go; modules come from the Go module proxy.
#
#   go vet, gofmt, staticcheck, the generated assembly against its generators,
#   then every test, then the race detector on the packages that run
#   goroutines, then a short -fuzz smoke of every target in fuzz/.
#
# WITAN_FUZZTIME sets the smoke's length per target (default 10s; at most 15s in CI).
#
# scripts/test.sh -quick is the check to run while working: go vet, gofmt,
# then every package's tests with -short (the long soaks, scale and
# network-heavy cases skip themselves), two packages at a time; no
# staticcheck, race detector or fuzzing. CI still runs the full script.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
case "${1:-}" in
-quick) quick=true ;;
"") ;;
*) echo "usage: scripts/test.sh [-quick]" >&2; exit 2 ;;
esac

fuzztime="${WITAN_FUZZTIME:-10s}"

echo "== go vet ./..."
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== merge-conflict markers"
# A merge committed with its conflict unresolved shows as these lines;
# gofmt catches them in Go files, this in every other tracked text.
marked=$(git grep -l -E '^(<<<<<<<|>>>>>>>) ' -- . ':!*.go' 2>/dev/null || true)
if [ -n "$marked" ]; then
	echo "conflict markers in:"; echo "$marked"; exit 1
fi

if $quick; then
	echo "== go test -short ./... (quick)"
	go test -count=1 -short -p 2 ./...
	echo "quick checks passed (CI runs the full scripts/test.sh)"
	exit 0
fi

# staticcheck at a pinned version, built from the Go module proxy (go run
# caches the build): CI starts from a clean machine with only Go on it.
staticcheck_version=v0.8.2
echo "== staticcheck ${staticcheck_version}"
go run "honnef.co/go/tools/cmd/staticcheck@${staticcheck_version}" ./...

echo "== go test ./..."
# dag/badgerstore's power-loss tests take some minutes of the package's
# time (LazyFS mounts and power cuts): more than go test's default 10m
# per package leaves on a loaded machine.
go test -count=1 -timeout 30m ./...

# Packages that start goroutines or share state across them. The race
# detector makes replica/httpapi alone take most of ten minutes on a loaded
# two-core machine, hence the same 30m per package as above.
race_pkgs=()
for p in ./dag ./dag/badgerstore ./heads ./replica ./replica/node ./replica/httpapi ./sync/... ./cmd/witan; do
	if compgen -G "${p%/...}/*.go" >/dev/null; then race_pkgs+=("$p"); fi
done
if [ ${#race_pkgs[@]} -gt 0 ]; then
	echo "== go test -race ${race_pkgs[*]}"
	go test -count=1 -race -short -timeout 30m "${race_pkgs[@]}"
fi

echo "== fuzz smoke (${fuzztime} per target)"
# A real finding is written to <package>/testdata/fuzz/<target>/ and fails
# the run. Two exits without a finding are the engine's, not the target's:
# - "context deadline exceeded" at the end of -fuzztime is a race in Go's
#   fuzzing coordinator (go.dev/issue/75804, fixed in Go 1.27; this module's
#   Go 1.26 has it): the smoke ran its time, so it counts as run;
# - under heavy load the engine can judge a worker hung; such a run is tried
#   once more.
# The engine minimizes every new interesting input for up to a minute by
# default, and its workers run no new inputs meanwhile: FuzzSyncPull spent
# whole smokes minimizing after a dozen executions. A second is enough here.
# Targets live in fuzz/, and in the few packages fuzz/ cannot import
# (internal ones): dag/internal/edwards4's point-by-point comparison with voi,
# dag/internal/msm's multiplication against voi's, and dag/internal/sha8's
# digests against crypto/sha512's.
# corpus_size counts a target's saved inputs; a target with no committed
# corpus has no directory (under pipefail, ls of it would end the script).
corpus_size() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }
fuzzlog=$(mktemp)
trap 'rm -f "$fuzzlog"' EXIT
for pkg in ./fuzz ./dag/internal/edwards4 ./dag/internal/msm ./dag/internal/sha8; do
	for target in $(go test "$pkg" -list '^Fuzz' | grep '^Fuzz'); do
		echo "-- $pkg $target"
		corpus="${pkg#./}/testdata/fuzz/$target"
		before=$(corpus_size "$corpus")
		if ! go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s 2>&1 | tee "$fuzzlog"; then
			after=$(corpus_size "$corpus")
			if [ "$after" != "$before" ]; then
				echo "$target found a failing input (see $corpus)"; exit 1
			fi
			if grep -A1 -- "^--- FAIL: $target " "$fuzzlog" | grep -qx '    context deadline exceeded'; then
				echo "$target ran its time; the engine's deadline race (go.dev/issue/75804) failed its exit"
				continue
			fi
			echo "$target exited without a finding; trying once more"
			go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s
		fi
	done
done
echo "all checks passed"
