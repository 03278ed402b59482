#!/usr/bin/env bash
# Installs what strata needs from Debian packages, idempotently: packages already present are not
# touched, and apt-get runs only when something is missing.
#   scripts/install-deps.sh run    what `make run` needs
#   scripts/install-deps.sh test   what `make test` needs (browsers, the Janus client library, ns-3, ...)
set -euo pipefail

need_go() {
  if ! command -v go >/dev/null 2>&1; then
    echo "strata needs Go $(sed -n 's/^go //p' go.mod) or newer on PATH; install it from https://go.dev/dl/ (not in Debian bookworm)" >&2
    exit 1
  fi
}

# The audio bridge decodes and encodes Opus with the real libopus through cgo (and reads Ogg/Opus
# announcements with libopusfile), and the lab's emulated sender encodes VP8 with the real libvpx,
# so building the server needs a C compiler and these libraries' headers; the test set includes
# the run set.
packages_run=(
  ca-certificates
  gcc libc6-dev pkg-config        # cgo
  libopus-dev libopusfile-dev     # Opus codec and Ogg/Opus files (internal/audio)
  libvpx-dev                      # VP8 encoder of the lab's emulated sender (internal/vp8enc)
)
packages_test=(
  chromium             # headless browser for the end-to-end tests
  libjs-janus-gateway  # the unmodified janus.js the compatibility tests load
  janus-demos          # Janus's own demo pages (the admin page), loaded unmodified by the e2e tests
                       # (janus-demos also holds /usr/share/janus/streams: radio.alaw, music.mulaw, played by internal/source/file's tests)
  ffmpeg               # encodes the test media (VP8 simulcast, Opus, announcement files); ffprobe reads recordings back
  iproute2             # network namespaces for isolated test servers
  libns3-dev           # ns-3, the simulator's fidelity peer
  g++                  # to build the small ns-3 program
  janus-tools          # janus-pp-rec, which reads the recordings (.mjr) back in internal/record's tests
  janus                # Janus itself: Record&Play recordings shared both ways (internal/plugins/recordplay)
  kamailio             # SIP registrar and proxy with digest authentication (internal/siplab, the SIP e2e tests)
  baresip-core         # SIP user agent that answers, plays a tone and records (internal/siplab)
  sip-tester           # sipp, SIP scenarios (internal/siplab, the SIP plugin's tests, the sip bench)
  iperf3               # TCP and UDP load through the network emulator (internal/emu/topo's tests and CPU figure)
  openvswitch-switch   # Open vSwitch (userspace datapath), the switch netctl programs (internal/ovs, netctl's switch enforcer)
  ethtool              # turns checksum offload off on veths that send into the userspace datapath (internal/ovs)
  redis-server         # the cluster's shared state and events (internal/cluster's tests start their own server)
  nftables             # nft: random loss on the link between two cluster nodes (internal/cluster/clusterrig, TestCluster)
)

install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -o DPkg::Lock::Timeout=600 -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"
  for p in "${missing[@]}"; do
    [ "$p" = kamailio ] && no_service kamailio "$sudo"
    [ "$p" = redis-server ] && no_service redis-server "$sudo"
  done
  return 0
}

# The kamailio and redis-server packages enable and start a system-wide service (ports 5060 and
# 6379); the tests start their own servers on their own ports or in network namespaces, so the
# service just installed is stopped and disabled.
no_service() {
  local name="$1" sudo="$2"
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    $sudo systemctl disable --now "$name.service" >/dev/null 2>&1 || true
  elif [ -x "/etc/init.d/$name" ]; then
    $sudo update-rc.d "$name" disable >/dev/null 2>&1 || true
    $sudo invoke-rc.d "$name" stop >/dev/null 2>&1 || true
  fi
  return 0
}

need_go
case "${1:-run}" in
  run) install "${packages_run[@]}" ;;
  test) install "${packages_run[@]}" "${packages_test[@]}" ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac
