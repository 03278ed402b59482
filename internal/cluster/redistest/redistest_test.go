package redistest

import (
	"context"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestRestartEmptiesAndCleanupKills(t *testing.T) {
	var pid int
	t.Run("server", func(t *testing.T) {
		s := Start(t, Addr("127.0.0.1:0"))
		pid = s.cmd.Process.Pid
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
		defer c.Close()
		ctx := context.Background()
		if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		addr := s.Addr()
		s.Restart()
		if s.Addr() != addr {
			t.Fatalf("restarted on %s, not %s", s.Addr(), addr)
		}
		if err := c.Get(ctx, "k").Err(); err != redis.Nil {
			t.Fatalf("after a restart: %v, want an empty Redis", err)
		}
		s.Stop()
		if err := c.Ping(ctx).Err(); err == nil {
			t.Fatal("a stopped server answers")
		}
		s.Start()
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		pid = s.cmd.Process.Pid
	})
	// The cleanup killed and reaped it: no such process any more.
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("redis-server %d still there after the test: %v", pid, err)
	}
}
