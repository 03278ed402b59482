package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

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

// TestCallOthers: every other live node is asked once, this one never; a node that fails is
// reported with its error and the others still answer.
func TestCallOthers(t *testing.T) {
	srv := redistest.Start(t)
	nodes := []*cluster.Node{startNode(t, srv.Addr(), "n1"), startNode(t, srv.Addr(), "n2"), startNode(t, srv.Addr(), "n3")}
	for _, n := range nodes[1:] {
		n.Handle("/who", func(_ context.Context, from string, _ json.RawMessage) (any, error) {
			if n.Self().ID == "n3" {
				return nil, errors.New("busy")
			}
			return n.Self().ID + " answers " + from, nil
		})
	}
	nodes[0].Handle("/who", func(context.Context, string, json.RawMessage) (any, error) {
		t.Error("CallOthers asked the calling node")
		return nil, nil
	})
	waitFor(t, 2*heartbeat+nodeTTL, "n1 sees n2 and n3", func() bool { return len(nodes[0].Nodes()) == 3 })
	got := map[string]string{}
	cluster.CallOthers(context.Background(), nodes[0], "/who", nil, time.Second, func(node, ans string, err error) {
		if err != nil {
			ans = "error: " + err.Error()
		}
		got[node] = ans
	})
	if len(got) != 2 || got["n2"] != "n2 answers n1" || !strings.Contains(got["n3"], "busy") {
		t.Fatalf("answers %v", got)
	}
}
