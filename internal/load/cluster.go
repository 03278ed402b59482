package load

import (
	"net"
	"time"

	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/sampler"
)

// newEnvs builds the clients' environments: one per server of the plan (a cluster's nodes, or
// the one server), and the apart subscriber's, whose ICE gathers on its address alone while the
// others' leave that address out (so a rate limit that matches it holds that subscriber only).
func (r *run) newEnvs(media *mediasrc.Media) error {
	p := r.plan
	var others, apart func(net.IP) bool
	if p.Apart.Set() {
		addr := net.ParseIP(p.Apart.Address)
		others = func(ip net.IP) bool { return !ip.Equal(addr) }
		apart = func(ip net.IP) bool { return ip.Equal(addr) }
	}
	build := func(server string, keep func(net.IP) bool) (*client.Env, error) {
		return client.NewEnv(client.Config{Server: server, Room: p.Room, Plugin: p.Plugin(), Media: media, Substream: p.Substream,
			JoinTimeout: p.JoinTimeout, ICEInterfaces: p.ICEInterfaces, ICEAddress: keep, Light: p.Receiver == plan.ReceiverLight,
			Now: func() time.Duration { return time.Since(r.start) }})
	}
	for _, server := range p.ServerList() {
		env, err := build(server, others)
		if err != nil {
			return err
		}
		r.envs = append(r.envs, env)
	}
	r.env = r.envs[0]
	if p.Apart.Set() {
		var err error
		r.apartEnv, err = build(p.ServerList()[p.Apart.Server], apart)
		return err
	}
	return nil
}

// sumReadings adds the readings of several servers into one, as if they were one process: OK
// and NetIsolated only if every one is.
func sumReadings(each []sampler.Reading) sampler.Reading {
	sum := sampler.Reading{OK: len(each) > 0, NetIsolated: len(each) > 0}
	for _, x := range each {
		sum.OK = sum.OK && x.OK
		sum.NetIsolated = sum.NetIsolated && x.NetIsolated
		sum.Stat.CPU += x.Stat.CPU
		sum.Stat.User += x.Stat.User
		sum.Stat.System += x.Stat.System
		sum.Stat.Threads += x.Stat.Threads
		sum.Stat.RSSBytes += x.Stat.RSSBytes
		sum.Mixer += x.Mixer
		sum.Net = sum.Net.Add(x.Net)
	}
	return sum
}

// nodeSamples are each server's part of a sample, counted from its baseline reading.
func nodeSamples(first, cur []sampler.Reading) []report.NodeSample {
	if len(cur) == 0 {
		return nil
	}
	out := make([]report.NodeSample, len(cur))
	for i, x := range cur {
		if !x.OK || i >= len(first) || !first[i].OK {
			continue
		}
		out[i] = report.NodeSample{OK: true, CPUSec: (x.Stat.CPU - first[i].Stat.CPU).Seconds(), RSSBytes: x.Stat.RSSBytes}
		if x.NetIsolated && x.Net.RxBytes >= first[i].Net.RxBytes && x.Net.TxBytes >= first[i].Net.TxBytes {
			out[i].NetInBytes, out[i].NetOutBytes = x.Net.RxBytes-first[i].Net.RxBytes, x.Net.TxBytes-first[i].Net.TxBytes
		}
	}
	return out
}
