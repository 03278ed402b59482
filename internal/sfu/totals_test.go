package sfu

import (
	"testing"

	"github.com/strata-rtc/strata/internal/sfu/policy"
)

func TestTotalsCountSwitchesAndDecisions(t *testing.T) {
	before := ReadTotals()
	countSwitch(Layer{Spatial: 0, Temporal: 2}, Layer{Spatial: 1, Temporal: 0})
	countSwitch(Layer{Spatial: 1, Temporal: 0}, Layer{Spatial: 0, Temporal: 2})
	countSwitch(Layer{Spatial: 1, Temporal: 0}, Layer{Spatial: 1, Temporal: 1})
	countDecision(policy.NoLayer, Layer{})
	countDecision(Layer{Spatial: 2}, Layer{Spatial: 1})
	countDecision(Layer{Spatial: 1}, policy.NoLayer)
	got := ReadTotals()
	if got.SwitchesUp-before.SwitchesUp != 2 || got.SwitchesDown-before.SwitchesDown != 1 {
		t.Errorf("switches %+v -> %+v, want 2 up and 1 down", before, got)
	}
	if got.DecisionsUp-before.DecisionsUp != 1 || got.DecisionsDown-before.DecisionsDown != 1 || got.DecisionsPause-before.DecisionsPause != 1 {
		t.Errorf("decisions %+v -> %+v, want one up, one down, one pause", before, got)
	}
}
