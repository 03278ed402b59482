package load

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
	"github.com/strata-rtc/strata/internal/load/sampler"
)

// sampling takes the per-second samples: the server process, the generator itself, and the
// clients' counters.
type sampling struct {
	r *run
	// server samples the one server; with several (servers), their readings are summed into
	// one (sumReadings) and each is kept in the sample's Nodes as well.
	server   *sampler.Sampler
	servers  []*sampler.Sampler
	self     *sampler.Sampler
	interval time.Duration
	progress *progress

	mu        sync.Mutex
	samples   []report.Sample
	firstSrv  sampler.Reading
	lastSrv   sampler.Reading
	firstSelf sampler.Reading
	lastSelf  sampler.Reading
	// firstNodes are the servers' baseline readings (with servers).
	firstNodes []sampler.Reading
	prev       totals
	prevAt     time.Duration
}

// totals are the clients' running counters at one moment.
type totals struct {
	pubs, pureSubs, subs, parts int
	calls                       int
	echoSent, echoMatched       uint64 // the SIP callers' payloads sent, and received back
	sent, recv                  uint64
	expected, lost              uint64
	late, sendErrs              uint64 // the pacers' late skips and failed writes
	lateFrames                  uint64 // received audio frames late by more than one period
}

func newSampling(r *run, pids []int, opts Options) *sampling {
	s := &sampling{r: r, self: sampler.Self(), interval: opts.Interval,
		progress: newProgress(opts.Progress, opts.Terminal, r.plan.Participants())}
	if len(pids) == 1 {
		s.server = sampler.New(pids[0])
		return s
	}
	for _, pid := range pids {
		s.servers = append(s.servers, sampler.New(pid))
	}
	return s
}

// readServer reads the server, or every server and their sum.
func (s *sampling) readServer() (sampler.Reading, []sampler.Reading) {
	if s.server != nil {
		return s.server.Read(), nil
	}
	each := make([]sampler.Reading, len(s.servers))
	for i, x := range s.servers {
		each[i] = x.Read()
	}
	return sumReadings(each), each
}

// begin takes the baseline sample, before anyone joins.
func (s *sampling) begin() {
	s.mu.Lock()
	s.firstSrv, s.firstNodes = s.readServer()
	s.firstSelf = s.self.Read()
	s.lastSrv, s.lastSelf = s.firstSrv, s.firstSelf
	s.mu.Unlock()
	s.take()
}

func (s *sampling) loop(stop <-chan struct{}) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.take()
		}
	}
}

// take records one sample.
func (s *sampling) take() {
	now := time.Since(s.r.start)
	cur := s.r.counters()
	srv, nodes := s.readServer()
	self := s.self.Read()
	s.mu.Lock()
	defer s.mu.Unlock()
	dt := (now - s.prevAt).Seconds()
	rate := func(cur, prev uint64) float64 {
		if dt <= 0 || cur < prev {
			return 0
		}
		return float64(cur-prev) * 8 / dt / 1e6
	}
	x := report.Sample{T: now.Seconds(), Publishers: cur.pubs, Subscribers: cur.pureSubs, AudioBridge: cur.parts, SIPCalls: cur.calls,
		PeerConnections: cur.pcs(), ServerOK: srv.OK, GenRSSBytes: self.Stat.RSSBytes, RecvBytes: cur.recv,
		SentMbps: rate(cur.sent, s.prev.sent), RecvMbps: rate(cur.recv, s.prev.recv)}
	x.Nodes = nodeSamples(s.firstNodes, nodes)
	if cur.lateFrames >= s.prev.lateFrames {
		x.LateFrames = cur.lateFrames - s.prev.lateFrames
	}
	elapsed := now - s.prevAt
	x.GenCPUPct = sampler.CPUPercent(s.lastSelf, self, elapsed)
	if srv.OK {
		x.ServerCPUPct = sampler.CPUPercent(s.lastSrv, srv, elapsed)
		x.ServerCPUSec = (srv.Stat.CPU - s.firstSrv.Stat.CPU).Seconds()
		x.ServerRSSBytes, x.ServerThreads = srv.Stat.RSSBytes, srv.Stat.Threads
		if srv.NetIsolated && dt > 0 {
			// Received by the server's interfaces is what clients sent it.
			x.NetInMbps = rate(srv.Net.RxBytes, s.lastSrv.Net.RxBytes)
			x.NetOutMbps = rate(srv.Net.TxBytes, s.lastSrv.Net.TxBytes)
			x.NetInPps = float64(srv.Net.RxPackets-s.lastSrv.Net.RxPackets) / dt
			x.NetOutPps = float64(srv.Net.TxPackets-s.lastSrv.Net.TxPackets) / dt
		}
		s.lastSrv = srv
	}
	if exp := cur.expected - s.prev.expected; cur.expected > s.prev.expected && cur.lost >= s.prev.lost {
		x.LossPct = 100 * float64(cur.lost-s.prev.lost) / float64(exp)
	}
	if self.OK {
		s.lastSelf = self
	}
	if s.lastSelf.OK && s.firstSelf.OK {
		x.GenCPUSec = (s.lastSelf.Stat.CPU - s.firstSelf.Stat.CPU).Seconds()
	}
	s.samples = append(s.samples, x)
	s.prev, s.prevAt = cur, now
	s.progress.update(x, x.Participants())
}

// clients returns the joined clients.
func (r *run) clients() (pubs []*client.Publisher, subs []*client.Subscriber, parts []*client.Participant) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pubs {
		if p != nil {
			pubs = append(pubs, p)
		}
	}
	for _, p := range r.parts {
		if p != nil {
			parts = append(parts, p)
		}
	}
	return pubs, append([]*client.Subscriber(nil), r.subs...), parts
}

// pcs is how many PeerConnections the clients have.
func (t totals) pcs() int { return t.pubs + t.subs + t.parts + t.calls }

// counters sums every client's counters.
func (r *run) counters() totals {
	pubs, subs, parts := r.clients()
	var t totals
	sent := func(st mediasrc.PacerStats) {
		t.sent += st.Bytes
		t.late += st.Late
		t.sendErrs += st.Errors
	}
	received := func(c rtpstats.Counters) {
		t.recv += c.Bytes
		t.expected += c.Expected
		t.lost += c.Lost
		t.lateFrames += c.Late
	}
	for _, p := range pubs {
		t.pubs++
		sent(p.Sent())
	}
	if f := r.feedOf(); f != nil {
		sent(f.Sent())
	}
	for _, p := range parts {
		t.parts++
		sent(p.Sent())
		received(p.Mix().Counters())
	}
	for _, c := range r.joinedCallers() {
		t.calls++
		sent(c.Sent())
		received(c.In().Counters())
		e := c.Echo()
		t.echoSent += e.Sent
		t.echoMatched += e.Matched
	}
	for _, sub := range subs {
		t.subs++
		if sub.Owner < 0 {
			t.pureSubs++
		}
		for _, st := range sub.Streams() {
			received(st.Counters())
		}
	}
	return t
}

// timing merges the timing of every received audio stream.
func (r *run) timing() rtpstats.TimingCounts {
	_, subs, parts := r.clients()
	var all rtpstats.TimingCounts
	for _, p := range parts {
		c := p.Mix().Timing()
		all.Merge(&c)
	}
	for _, c := range r.joinedCallers() {
		t := c.In().Timing()
		all.Merge(&t)
	}
	for _, sub := range subs {
		for _, st := range sub.Streams() {
			if st.Kind == "audio" {
				c := st.Timing()
				all.Merge(&c)
			}
		}
	}
	return all
}

// collect assembles the result at the end of the hold.
func (r *run) collect(interrupted bool) *report.Result {
	s := r.sampler
	now := time.Since(r.start)
	cur := r.counters()
	s.mu.Lock()
	res := &report.Result{Plan: r.plan, Machine: report.DetectMachine(), Started: r.start, Seconds: now.Seconds(),
		Interrupted: interrupted, Samples: s.samples}
	res.Server.Sampled = s.firstSrv.OK
	if s.server != nil {
		res.Server.PID = s.server.PID()
	}
	for i, x := range s.servers {
		res.Nodes = append(res.Nodes, report.Node{Server: r.plan.ServerList()[i], PID: x.PID(), Sampled: s.firstNodes[i].OK})
	}
	if s.firstSrv.OK {
		res.Server.BaselineRSSBytes = s.firstSrv.Stat.RSSBytes
		if s.lastSrv.NetIsolated {
			res.Server.NetIsolated = true
			res.Server.NetInBytes = s.lastSrv.Net.RxBytes - s.firstSrv.Net.RxBytes
			res.Server.NetOutBytes = s.lastSrv.Net.TxBytes - s.firstSrv.Net.TxBytes
			res.Server.NetInPackets = s.lastSrv.Net.RxPackets - s.firstSrv.Net.RxPackets
			res.Server.NetOutPackets = s.lastSrv.Net.TxPackets - s.firstSrv.Net.TxPackets
		}
	}
	if s.lastSelf.OK && s.firstSelf.OK {
		res.Generator.CPUSeconds = (s.lastSelf.Stat.CPU - s.firstSelf.Stat.CPU).Seconds()
	}
	s.mu.Unlock()
	res.Generator.LateSkips, res.Generator.SendErrors = cur.late, cur.sendErrs
	res.Generator.Receiver = r.plan.Receiver
	timing := r.timing()

	r.mu.Lock()
	defer r.mu.Unlock()
	res.Errors = append(res.Errors, r.errs...)
	feedIndex := map[uint64]int{}
	for _, p := range r.pubs {
		if p != nil {
			feedIndex[p.ID] = p.Index
			st := p.Sent()
			res.Publishers = append(res.Publishers, report.Publisher{Index: p.Index, Packets: st.Packets, Bytes: st.Bytes, LateSkips: st.Late, SendErrors: st.Errors})
		}
	}
	if r.feed != nil {
		st := r.feed.Sent()
		res.Publishers = append(res.Publishers, report.Publisher{Index: 0, Packets: st.Packets, Bytes: st.Bytes, LateSkips: st.Late, SendErrors: st.Errors})
	}
	res.Totals = report.Totals{Publishers: cur.pubs, Subscribers: cur.pureSubs, AudioBridge: cur.parts,
		PeerConnections: cur.pcs(), FailedJoins: r.failed, SentBytes: cur.sent}
	res.Totals.Audio = report.TimingOf(&timing)
	r.collectParticipants(res, now)
	r.collectCallers(res, now)
	for _, sub := range r.subs {
		swallowed, reads, datagrams := sub.Swallowed()
		res.Generator.Swallowed += swallowed
		res.Generator.SocketReads += reads
		res.Generator.SocketDatagrams += datagrams
		res.Subscriptions = append(res.Subscriptions, report.Subscription{Index: sub.Index, Owner: sub.Owner, Expected: r.expected[sub], Server: r.serverOf[sub], Apart: sub == r.apart})
		for _, err := range sub.Errors() {
			res.Errors = append(res.Errors, err.Error())
		}
		for _, st := range sub.Streams() {
			feed, ok := feedIndex[st.Feed]
			if !ok {
				feed = -1
			}
			lc := st.LightCounts()
			g := &res.Generator
			g.Sampled, g.Verified, g.BadSamples, g.NACKs = g.Sampled+lc.Sampled, g.Verified+lc.Verified, g.BadSamples+lc.BadSamples, g.NACKs+lc.NACKed
			res.Streams = append(res.Streams, report.Stream{Subscription: sub.Index, Owner: sub.Owner, Feed: feed, Mid: st.Mid, Server: r.serverOf[sub], Summary: st.Summarize(now)})
		}
	}
	return res
}

func (s *sampling) finishProgress() { s.progress.finish() }
