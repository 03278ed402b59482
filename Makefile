# strata — the two commands of the quick start are `make run` and `make test`.
GO          ?= go
BIN         := bin/strata
CONFIG      ?=
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Packages with concurrency run under the race detector.
RACE_PKGS   := ./internal/audio/... ./internal/record/... ./internal/sfu/... ./internal/media/... ./internal/bwe/... ./internal/gateway/... ./internal/transport/... ./internal/peer/... ./internal/plugins/... ./internal/janusclient/... ./internal/server/... ./internal/load/... ./e2e/...
RACE_PKGS   += ./internal/source/mjrplay/...
RACE_PKGS   += ./internal/rtpbridge/...
RACE_PKGS   += ./internal/cluster/...
RACE_PKGS   += ./internal/emu/netem/...
RACE_PKGS   += ./internal/lowprio/...
RACE_PKGS   += ./internal/netctl/... ./internal/ovs/... ./internal/udpbatch/... ./internal/sched/...

.PHONY: all build wasm run deps-run deps-test test lint unit bench chaos microbench lab lab-emu lab-emu-versus lab-seed000-emu lab-lowprio fuzz clean
.PHONY: e2e-janus-streaming
.PHONY: e2e-janus-sip

all: build

deps-run:
	@scripts/install-deps.sh run
	@$(GO) mod download

deps-test:
	@scripts/install-deps.sh test
	@$(GO) mod download

build: wasm
	$(GO) build -o $(BIN) ./cmd/strata

## wasm: the low-priority transfer protocol for browsers (web/wasm/, embedded by package web):
## internal/lowprio compiled to WebAssembly, and the Go runtime's wasm_exec.js beside it.
wasm:
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags='-s -w' -o web/wasm/lowprio.wasm ./cmd/lowprio-wasm
	cp -f "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" web/wasm/wasm_exec.js

## run: install what is missing, build, and serve with the embedded default configuration.
run: deps-run build
	./$(BIN) serve $(if $(CONFIG),-config $(CONFIG))

## test: install what the tests need and run every test.
test: deps-test wasm lint unit

lint:
	@echo "== gofmt"; out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@echo "== go vet"; $(GO) vet ./... && GOOS=js GOARCH=wasm $(GO) vet ./cmd/lowprio-wasm
	@echo "== staticcheck"; $(GO) run $(STATICCHECK) ./... && $(GO) run -exec 'env GOOS=js GOARCH=wasm' $(STATICCHECK) ./cmd/lowprio-wasm

# The SIP lab's own tests run alone: the address its root-namespace link brings and takes away is a
# network change to every browser on the machine, which aborts the e2e tests' page loads. So do the
# cluster tests (./e2e TestCluster*), whose bridge comes and goes in the root namespace.
#
# The browser tests (./e2e, five minutes of Chromium sessions) run once, under the race detector,
# which checks strata's concurrency while real browsers drive it; only the test that must measure
# real time without the detector runs in the plain pass. So do the other concurrent packages: the
# plain pass takes of them only those with tests built without the detector (allocation counts,
# real-time measurements; scripts/plain-packages.sh), so that no long test runs twice.
unit: wasm
	@echo "== go test"
	pkgs=$$(GO=$(GO) bash scripts/plain-packages.sh $(RACE_PKGS)) && test -n "$$pkgs" && $(GO) test -count=1 -timeout 15m $$pkgs
	$(GO) test -count=1 -timeout 5m -run 'TestLowprioBrowsersThroughNamespaceLink' ./e2e
	@echo "== go test -race (concurrent packages)"
	$(GO) test -count=1 -race -timeout 15m -skip '^TestCluster' $(RACE_PKGS)
	@echo "== go test -race (the SIP lab, alone)"
	$(GO) test -count=1 -race -timeout 5m ./internal/siplab/...
	@echo "== go test (the cluster: nodes in network namespaces, alone)"
	$(GO) test -count=1 -timeout 8m -run '^TestCluster' ./e2e

## bench: strata and Janus side by side under the same load (seed 001's full videoroom included), Chromium's
## uplink on each one's feedback, the lab against ns-3 (root, ffmpeg, janus, chromium, ns-3; ~40 min); the goals
## verdict and tables on stdout,
## results in bench-out/ (docs/PERFORMANCE.md). BENCH_FLAGS passes flags to ./bench (e.g. --only fanout).
BENCH_FLAGS ?=
bench: deps-test build
	@command -v janus >/dev/null 2>&1 || apt-get install -y -o DPkg::Lock::Timeout=600 janus
	@command -v sipp >/dev/null 2>&1 || apt-get install -y -o DPkg::Lock::Timeout=600 sip-tester
	$(GO) run ./bench --strata $(BIN) --out bench-out $(BENCH_FLAGS)

## chaos: the abuse probes (bad input, bursts, session cycles, floods, oversized offers, slow clients,
## SIGTERM with live calls, fan-outs under a CPU hog, loss and congestion) against strata, and Janus
## beside it, each in a network namespace (root, janus, nftables; ~15 min); a table on stdout,
## results in chaos-out/ (docs/SECURITY.md). CHAOS_FLAGS passes flags to ./chaos (e.g. --only battery,burst).
CHAOS_FLAGS ?=
chaos: deps-test build
	@command -v janus >/dev/null 2>&1 || apt-get install -y -o DPkg::Lock::Timeout=600 janus
	@command -v nft >/dev/null 2>&1 || apt-get install -y -o DPkg::Lock::Timeout=600 nftables
	$(GO) run ./chaos --strata $(BIN) --out chaos-out $(CHAOS_FLAGS)

## microbench: Go benchmarks of the hot paths and controllers.
microbench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## lab: run the full scenario library and refresh docs/RESULTS.md.
lab: deps-test build
	./$(BIN) lab run scenarios --out lab-out --results docs/RESULTS.md

## lab-emu: the scenarios both engines run (TCP dumbbells, seed 004, RFC 8867, seed 003, seed 002's data channels, the Chromium
## files) in emulation on real network stacks (root; real time: the files' durations add up to hours
## at --scale 1), the same files in the simulator, the sim-versus-emu comparison (lab-emu-out/compare.md)
## and both refreshed in docs/RESULTS.md, plus strata's GCC against Chromium's (the strata-vs-chromium tables).
## LAB_EMU_FLAGS passes flags to both runs (e.g. --scale 0.2).
LAB_EMU_ONLY  ?= examples/dumbbell-6tcp,seed004,rfc8867,seed003,seed002/datachannel,seed002/chromium
LAB_EMU_FLAGS ?=
# strata's GCC (Pion sender; the statistical codec, then libvpx as Chromium's encoder) against
# Chromium's on the same network: emu-dir-a:emu-dir-b:table-name.
LAB_EMU_VERSUS := seed003/gcc-caps:seed003/chromium-caps:seed003-caps seed003/gcc-latency:seed003/chromium-latency:seed003-latency \
	seed003/gcc-loss:seed003/chromium-loss:seed003-loss seed003/gcc-vs-tcp/gcc:seed003/chromium-vs-tcp:seed003-vs-tcp \
	rfc8867/5.1/gcc:rfc8867/chromium-5.1:rfc8867-5.1 rfc8867/5.2/gcc:rfc8867/chromium-5.2:rfc8867-5.2 \
	rfc8867/5.3/gcc:rfc8867/chromium-5.3:rfc8867-5.3 \
	seed003/gcc-libvpx-caps:seed003/chromium-caps:seed003-caps-libvpx rfc8867/gcc-libvpx-5.1:rfc8867/chromium-5.1:rfc8867-5.1-libvpx \
	rfc8867/gcc-libvpx-5.2:rfc8867/chromium-5.2:rfc8867-5.2-libvpx rfc8867/gcc-libvpx-5.3:rfc8867/chromium-5.3:rfc8867-5.3-libvpx
lab-emu: deps-test build
	rm -rf lab-emu-out
	./$(BIN) lab run scenarios --engine emu --only $(LAB_EMU_ONLY) --out lab-emu-out/emu --results docs/RESULTS.md $(LAB_EMU_FLAGS)
	./$(BIN) lab run scenarios --only $(LAB_EMU_ONLY) --out lab-emu-out/sim $(LAB_EMU_FLAGS)
	./$(BIN) lab compare lab-emu-out/sim lab-emu-out/emu --out lab-emu-out/compare.md --results docs/RESULTS.md
	$(MAKE) lab-emu-versus

## lab-emu-versus: strata's GCC against Chromium's from lab-emu-out/emu (part of lab-emu).
lab-emu-versus:
	@for p in $(LAB_EMU_VERSUS); do \
	  a=$${p%%:*}; rest=$${p#*:}; b=$${rest%%:*}; name=$${rest#*:}; \
	  [ -d lab-emu-out/emu/$$a ] && [ -d lab-emu-out/emu/$$b ] || continue; \
	  ./$(BIN) lab compare lab-emu-out/emu/$$a lab-emu-out/emu/$$b --as strata-vs-chromium/$$name --labels "strata,Chromium" \
	    --results docs/RESULTS.md --out lab-emu-out/strata-vs-chromium-$$name.md || exit 1; \
	done

## lab-seed000-emu: seed 000's experiments 1-3 live (root): the real SFU, Open vSwitch and kernel TCP
## Cubic, each file with all four layer policies, one run at a time (real time: about 2.5 h at
## --scale 1, 75 min at the default --scale 0.5, which halves every duration and start time). Tables
## in lab-seed000-emu-out/report.md (docs/RESULTS.md, "Seed 000 live").
LAB_SEED000_ONLY  ?= seed000/exp1,seed000/exp2,seed000/exp3
LAB_SEED000_FLAGS ?= --scale 0.5
lab-seed000-emu: deps-test build
	rm -rf lab-seed000-emu-out
	./$(BIN) lab run scenarios --engine emu --jobs 1 --only $(LAB_SEED000_ONLY) --out lab-seed000-emu-out $(LAB_SEED000_FLAGS)

## lab-lowprio: a video call (1 Mbit/s of VP8 through the echotest) and a LEDBAT download on one
## PeerConnection through a 2 Mbit/s link, with each lowprio.share mode (root, ~90 s); prints the
## table of docs/RESULTS.md (A call and a low-priority transfer). LAB_LOWPRIO_SHARES picks the modes.
LAB_LOWPRIO_SHARES ?= headroom,none
lab-lowprio:
	@LOWPRIO_CALL_SHARES=$(LAB_LOWPRIO_SHARES) $(GO) test -count=1 -run 'TestCallWithTransfer$$' -v ./internal/lowprio/service/ > lab-lowprio.log 2>&1; \
	  status=$$?; sed -n 's/^ *call_test.go:[0-9]*: \(|.*\)/\1/p; s/^ *call_test.go:[0-9]*: \(the .*\)/FAIL: \1/p; s/^ *call_test.go:[0-9]*: \(run 1 .*\)/\1/p' lab-lowprio.log; \
	  echo "(log: lab-lowprio.log)"; exit $$status

## fuzz: run every fuzzer for FUZZTIME each.
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin lab-out lab-emu-out bench-out chaos-out

## e2e-janus-streaming: the streaming browser tests (janus.js, Janus's streaming demo, strata's demo)
## against Debian's Janus 1.1.2 instead of strata (janus, ffmpeg, chromium; ~1 min): what they expect
## is what Janus does. `make test` runs them against strata.
e2e-janus-streaming: deps-test
	@command -v janus >/dev/null 2>&1 || apt-get install -y -o DPkg::Lock::Timeout=600 janus
	STRATA_E2E_STREAMING=janus $(GO) test -count=1 -run 'TestJanusJSStreaming|TestJanusStreamingDemo|TestStreamingDemo' ./e2e

## e2e-janus-sip: the SIP tests (kamailio, baresip in network namespaces; docs/SIP.md) against Debian's
## Janus 1.1.2 and its SIP plugin instead of strata (root, janus; ~30 s): what they expect is what Janus
## does. `make test` runs them against strata.
e2e-janus-sip: deps-test
	@command -v janus >/dev/null 2>&1 || apt-get install -y -o DPkg::Lock::Timeout=600 janus
	STRATA_E2E_SIP=janus $(GO) test -count=1 -run 'TestSIP' ./e2e
