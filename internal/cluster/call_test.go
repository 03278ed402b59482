package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

func TestCallAndHandle(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1")
	n2 := startNode(t, srv.Addr(), "n2")
	// A node with another secret: its calls are refused.
	n3 := startNode(t, srv.Addr(), "n3", func(c *cluster.Config) { c.Secret = "wrong" })
	type echo struct {
		From string `json:"from"`
		Text string `json:"text"`
	}
	n2.Handle("/relay/offer", func(_ context.Context, from string, req json.RawMessage) (any, error) {
		var in echo
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, err
		}
		if in.Text == "fail" {
			return nil, errors.New("no such feed")
		}
		return echo{From: from, Text: strings.ToUpper(in.Text)}, nil
	})
	waitFor(t, 2*heartbeat+nodeTTL, "n1 and n3 see n2", func() bool {
		_, a := n1.Node("n2")
		_, b := n3.Node("n2")
		return a && b
	})
	ctx := context.Background()
	var out echo
	if err := n1.Call(ctx, "n2", "/relay/offer", echo{Text: "hi"}, &out); err != nil {
		t.Fatal(err)
	}
	if out != (echo{From: "n1", Text: "HI"}) {
		t.Fatalf("answer: %+v", out)
	}
	err := n1.Call(ctx, "n2", "/relay/offer", echo{Text: "fail"}, &out)
	if err == nil || !strings.Contains(err.Error(), "no such feed") || !strings.Contains(err.Error(), "n2") {
		t.Fatalf("handler error: %v", err)
	}
	if err := n1.Call(ctx, "n2", "/nothing", nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown path: %v", err)
	}
	if err := n1.Call(ctx, "n9", "/relay/offer", nil, nil); err == nil || !strings.Contains(err.Error(), "n9") {
		t.Fatalf("unknown node: %v", err)
	}
	if err := n3.Call(ctx, "n2", "/relay/offer", echo{Text: "hi"}, &out); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong secret: %v", err)
	}
	// Without any Authorization, and with an oversized body.
	rec, _ := n1.Node("n2")
	resp, err := http.Post(rec.Internal+"/relay/offer", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no secret: %s", resp.Status)
	}
	big := `{"text":"` + strings.Repeat("x", cluster.MaxCallBody) + `"}`
	if err := n1.Call(ctx, "n2", "/relay/offer", json.RawMessage(big), nil); err == nil || !strings.Contains(err.Error(), "413") {
		t.Fatalf("oversized: %v", err)
	}
}
