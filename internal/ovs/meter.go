package ovs

import (
	"context"
	"fmt"
	"strconv"
)

// Meter is an OpenFlow meter with one drop band: a policer that drops what exceeds RateKbps,
// allowing bursts of BurstKb. Flows use it with "actions=meter:ID,NORMAL".
//
// With the userspace datapath a small burst starves TCP (reference measurements: a 64 kbit burst
// at 2 Mbit/s gave TCP 0.32 Mbit/s, 500 kbit gave 1.9), so size BurstKb to a few round trips.
type Meter struct {
	ID       uint32
	RateKbps uint64
	BurstKb  uint64
}

func (m Meter) spec() (string, error) {
	if m.ID == 0 || m.ID > 0xffff0000 {
		return "", fmt.Errorf("ovs: meter id %d out of range", m.ID)
	}
	if m.RateKbps == 0 {
		return "", fmt.Errorf("ovs: meter %d: rate must be positive", m.ID)
	}
	s := "meter=" + strconv.FormatUint(uint64(m.ID), 10) + ",kbps"
	band := ",band=type=drop,rate=" + strconv.FormatUint(m.RateKbps, 10)
	if m.BurstKb > 0 {
		s += ",burst"
		band += ",burst_size=" + strconv.FormatUint(m.BurstKb, 10)
	}
	return s + band, nil
}

// AddMeter adds a meter (OpenFlow 1.3 meter messages).
func (c *Client) AddMeter(ctx context.Context, m Meter) error { return c.meter(ctx, "add-meter", m) }

// ModMeter changes a meter's rate and burst in place; flows using it keep it.
func (c *Client) ModMeter(ctx context.Context, m Meter) error { return c.meter(ctx, "mod-meter", m) }

func (c *Client) meter(ctx context.Context, op string, m Meter) error {
	spec, err := m.spec()
	if err != nil {
		return err
	}
	_, err = c.run(ctx, "OpenFlow13", "", op, op, c.Target, spec)
	return err
}

// DelMeter removes a meter (flows using it are removed with it, as OpenFlow specifies).
func (c *Client) DelMeter(ctx context.Context, id uint32) error {
	_, err := c.run(ctx, "OpenFlow13", "", "del-meter", "del-meter", c.Target, "meter="+strconv.FormatUint(uint64(id), 10))
	return err
}
