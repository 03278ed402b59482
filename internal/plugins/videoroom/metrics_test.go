package videoroom

import (
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/record"
)

func TestCounts(t *testing.T) {
	p := New(config.Default().Plugins.VideoRoom, record.SessionOptions{}, nil)
	defer p.Destroy()
	r := p.rooms[1234]
	if err := r.addSubscription(0); err != nil {
		t.Fatal(err)
	}
	c := p.Counts()
	if c.Rooms != len(p.rooms) || c.Rooms == 0 || c.Participants != 0 || c.Publishers != 0 || c.Subscribers != 1 {
		t.Errorf("counts %+v, want the configured rooms, one subscription", c)
	}
}
