package cc

import "testing"

type testConfig struct{ window, floor int }

func TestNewConfigAppliesOptionsInOrderThenRepairs(t *testing.T) {
	defaults := func() testConfig { return testConfig{window: 10, floor: 2} }
	repair := func(c *testConfig, d testConfig) {
		if c.window <= 0 {
			c.window = d.window
		}
	}
	set := func(w int) func(*testConfig) { return func(c *testConfig) { c.window = w } }
	if c := NewConfig(defaults, []func(*testConfig){set(5), set(7)}, repair); c.window != 7 || c.floor != 2 {
		t.Fatalf("options: %+v, want the last one (7) over the defaults", c)
	}
	if c := NewConfig(defaults, []func(*testConfig){set(-1)}, repair); c.window != 10 {
		t.Fatalf("a broken option was not repaired from the defaults: %+v", c)
	}
}
