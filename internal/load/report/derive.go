package report

// Subscription is one receiving PeerConnection and how many streams it should get.
type Subscription struct {
	Index    int `json:"index"`
	Owner    int `json:"owner"`
	Expected int `json:"expected_streams"`
	// Server is the index in the plan's server list of the server it joined; Apart marks the
	// plan's apart subscriber (plan.Apart).
	Server int  `json:"server,omitempty"`
	Apart  bool `json:"apart,omitempty"`
}

// Finalize derives the summary figures from the samples, streams and subscriptions. steadyFrom
// (seconds since the start) begins the steady window.
func (r *Result) Finalize(steadyFrom float64) {
	r.deriveServer(steadyFrom)
	r.deriveNodes(steadyFrom)
	r.deriveQuality(r.Subscriptions)
	t := &r.Totals
	t.Subscriptions = len(r.Subscriptions)
	if r.Server.CPUSeconds > 0 {
		t.GeneratorCPUPerServer = r.Generator.CPUSeconds / r.Server.CPUSeconds
	}
}

// steady returns the first and last samples of the steady window.
func (r *Result) steady(from float64) (a, b Sample, ok bool) {
	first := -1
	for i, s := range r.Samples {
		if s.T >= from {
			first = i
			break
		}
	}
	if first < 0 || first >= len(r.Samples)-1 {
		return a, b, false
	}
	return r.Samples[first], r.Samples[len(r.Samples)-1], true
}

func (r *Result) deriveServer(steadyFrom float64) {
	s, t := &r.Server, &r.Totals
	if len(r.Samples) == 0 {
		return
	}
	last := r.Samples[len(r.Samples)-1]
	t.ReceivedBytes = last.RecvBytes
	for _, x := range r.Samples {
		if x.ServerOK {
			s.PeakRSSBytes = max(s.PeakRSSBytes, x.ServerRSSBytes)
			s.PeakThreads = max(s.PeakThreads, x.ServerThreads)
			s.CPUSeconds = max(s.CPUSeconds, x.ServerCPUSec)
		}
		r.Generator.PeakRSSBytes = max(r.Generator.PeakRSSBytes, x.GenRSSBytes)
	}
	if r.Samples[0].ServerOK && s.BaselineRSSBytes == 0 {
		s.BaselineRSSBytes = r.Samples[0].ServerRSSBytes
	}
	a, b, ok := r.steady(steadyFrom)
	if !ok {
		return
	}
	t.SteadySeconds = b.T - a.T
	t.SteadyReceivedBytes = b.RecvBytes - a.RecvBytes
	gbit := float64(t.SteadyReceivedBytes) * 8 / 1e9
	if t.SteadySeconds > 0 {
		t.ForwardedMbps = gbit * 1000 / t.SteadySeconds
	}
	if a.ServerOK && b.ServerOK {
		s.SteadyCPUSeconds = b.ServerCPUSec - a.ServerCPUSec
		if gbit > 0 {
			t.CPUSecondsPerGbit = s.SteadyCPUSeconds / gbit
		}
	}
	r.Generator.SteadyCPUSeconds = b.GenCPUSec - a.GenCPUSec
	if gbit > 0 {
		t.GeneratorCPUSecondsPerGbit = r.Generator.SteadyCPUSeconds / gbit
	}
	if t.CPUSecondsPerGbit > 0 {
		t.GeneratorPerGbitShare = t.GeneratorCPUSecondsPerGbit / t.CPUSecondsPerGbit
	}
	var sum int64
	var n int64
	for _, x := range r.Samples {
		if x.T >= a.T && x.ServerOK {
			sum += x.ServerRSSBytes
			n++
		}
	}
	if n > 0 {
		s.SteadyRSSBytes = sum / n
		if t.PeerConnections > 0 {
			t.RSSPerPCBytes = float64(s.SteadyRSSBytes-s.BaselineRSSBytes) / float64(t.PeerConnections)
		}
	}
}

func (r *Result) deriveQuality(subs []Subscription) {
	t := &r.Totals
	live := map[int]int{}
	var lossSum, ttffSum, vKbps, aKbps float64
	var nTTFF, nVideo, nAudio int
	for _, st := range r.Streams {
		if st.Live && st.TTFFMs >= 0 {
			t.StreamsReceiving++
			live[st.Subscription]++
		}
		lossSum += st.LossRatio
		t.MaxLossRatio = max(t.MaxLossRatio, st.LossRatio)
		t.Freezes += st.Freezes
		if st.TTFFMs >= 0 {
			ttffSum += st.TTFFMs
			nTTFF++
		}
		if st.Kind == "video" {
			vKbps += st.KbitPerSec
			nVideo++
		} else {
			aKbps += st.KbitPerSec
			nAudio++
		}
	}
	if len(r.Streams) > 0 {
		t.MeanLossRatio = lossSum / float64(len(r.Streams))
	}
	if nTTFF > 0 {
		t.MeanTTFFMs = ttffSum / float64(nTTFF)
	}
	if nVideo > 0 {
		t.MeanVideoKbps = vKbps / float64(nVideo)
	}
	if nAudio > 0 {
		t.MeanAudioKbps = aKbps / float64(nAudio)
	}
	t.StreamsExpected = 0
	for _, s := range subs {
		t.StreamsExpected += s.Expected
		if s.Expected > 0 && live[s.Index] >= s.Expected {
			t.CompleteSubscribers++
		}
	}
	if len(subs) > 0 {
		t.CompleteShare = float64(t.CompleteSubscribers) / float64(len(subs))
	}
}
