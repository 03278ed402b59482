package sim

import (
	"fmt"
	"time"
)

// CBRConfig describes an unresponsive constant-bit-rate UDP flow.
type CBRConfig struct {
	Name        string
	Forward     []*Link
	Start, Stop time.Duration
	Rate        float64 // bit/s on the wire
	PacketSize  int     // bytes (default 1200)
}

// CBRFlow sends fixed-size packets at a fixed rate; nothing comes back.
type CBRFlow struct {
	sim   *Sim
	cfg   CBRConfig
	stats *FlowStats
	route Route
	seq   int64
	gap   time.Duration
}

// NewCBRFlow builds a CBR flow and adds it to s.
func NewCBRFlow(s *Sim, cfg CBRConfig) (*CBRFlow, error) {
	if cfg.PacketSize == 0 {
		cfg.PacketSize = 1200
	}
	if cfg.Rate <= 0 {
		return nil, fmt.Errorf("cbr flow %s: rate must be positive", cfg.Name)
	}
	f := &CBRFlow{sim: s, cfg: cfg, gap: time.Duration(float64(cfg.PacketSize) * 8 / cfg.Rate * 1e9)}
	f.stats = newFlowStats(s, cfg.Name, "cbr", "none")
	f.stats.Start, f.stats.Stop, f.stats.Forward = cfg.Start, cfg.Stop, cfg.Forward
	f.route = Route{Links: cfg.Forward, Dst: cbrSink{f}}
	s.AddFlow(f)
	return f, nil
}

// Stats returns the flow's statistics.
func (f *CBRFlow) Stats() *FlowStats { return f.stats }

func (f *CBRFlow) begin() { f.sim.Schedule(f.cfg.Start, f, 0, 0, nil) }

// HandleEvent sends the next packet.
func (f *CBRFlow) HandleEvent(ev Event) {
	if ev.At >= f.cfg.Stop {
		return
	}
	p := f.sim.NewPacket()
	f.seq++
	p.Kind, p.Size, p.Seq, p.SentAt, p.Stats = KindMedia, f.cfg.PacketSize, f.seq, ev.At, f.stats
	f.stats.onSent(ev.At, p.Size)
	f.sim.Send(p, &f.route)
	f.sim.Schedule(ev.At+f.gap, f, 0, 0, nil)
}

type cbrSink struct{ f *CBRFlow }

func (c cbrSink) Receive(p *Packet) {
	c.f.stats.onReceive(c.f.sim.Now(), p, p.Size)
	c.f.sim.Free(p)
}

// Rate is the flow's configured rate in bit/s.
func (f *CBRFlow) Rate() float64 { return f.cfg.Rate }

func (f *CBRFlow) routes() []*Route { return []*Route{&f.route} }
