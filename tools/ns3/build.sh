#!/bin/sh
# Builds the ns-3 fidelity peer of strata's simulator.
#   tools/ns3/build.sh [OUTPUT]    (default: ${XDG_CACHE_HOME:-$HOME/.cache}/strata/ns3/tcp-dumbbell)
# Needs Debian's ns-3 3.37 and a C++ compiler:
#   apt-get install -y libns3-dev g++ pkg-config
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/strata/ns3/tcp-dumbbell}
mods="ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control"
if ! command -v g++ >/dev/null 2>&1 || ! pkg-config --exists $mods 2>/dev/null; then
	echo "ns-3 3.37 (libns3-dev), g++ and pkg-config are needed; make test installs them:" >&2
	echo "  apt-get install -y libns3-dev g++ pkg-config" >&2
	exit 1
fi
mkdir -p "$(dirname "$out")"
# Link the modules directly: pkg-config's flags for Debian's ns-3 carry a
# stray "-I/usr\;" and name libgsl.so/libsqlite3.so, which only their -dev
# packages provide; the ns-3 libraries already depend on them.
libs=$(for m in $mods; do printf ' -l%s' "$m"; done)
g++ -std=c++17 -O2 -o "$out.tmp" "$here/tcp-dumbbell.cc" $libs
mv "$out.tmp" "$out"
echo "$out"
