package gateway

import (
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
)

// Server identity reported by `info`. The lead may set these at link time or from main.
var (
	// VersionString is strata's version, e.g. "0.1.0".
	VersionString = "0.1.0"
	// Version is VersionString encoded as Janus encodes its own (major*1000 + minor*100 + patch:
	// 1.1.2 is 1102).
	Version = 10
	// Author is reported as "author".
	Author = "the strata authors"
)

// candidatesTimeout is Janus's default; strata reports it for clients that read it.
const candidatesTimeout = 45

// ServerInfo is the `info` reply (also served by GET base/info), shaped like Janus's server_info.
func (g *Gateway) ServerInfo(tx string) janus.Message {
	m := janus.Message{Janus: "server_info", Transaction: tx}
	cfg := g.cfg
	ice := cfg.Media.ICE
	fields := map[string]any{
		"name":                    "strata",
		"version":                 Version,
		"version_string":          VersionString,
		"author":                  Author,
		"commit-hash":             buildSetting("vcs.revision", "not-a-git-repo"),
		"compile-time":            buildSetting("vcs.time", ""),
		"log-to-stdout":           true,
		"log-to-file":             false,
		"data_channels":           true,
		"accepting-new-sessions":  g.acceptNew.Load(),
		"session-timeout":         int(g.SessionTimeout().Seconds()),
		"reclaim-session-timeout": int(cfg.General.ReclaimSessionTimeout.Seconds()),
		"candidates-timeout":      candidatesTimeout,
		"server-name":             cfg.General.ServerName,
		"ipv6":                    false,
		"ice-lite":                ice.Lite,
		"ice-tcp":                 ice.TCPPort != 0,
		"full-trickle":            ice.FullTrickle,
		"mdns-enabled":            false,
		"api_secret":              cfg.General.APISecret != "",
		"auth_token":              cfg.General.TokenAuth,
		"event_handlers":          g.events != nil,
		"opaqueid_in_api":         false,
		"dependencies":            dependencies(),
		"transports":              g.transportInfo(),
		"events":                  g.eventHandlerInfo(),
		"loggers":                 map[string]any{},
		"plugins":                 g.pluginInfo(),
	}
	m.Extra = fields
	return m
}

func (g *Gateway) transportInfo() map[string]plugin.Info {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make(map[string]plugin.Info, len(g.transports))
	for k, v := range g.transports {
		out[k] = v
	}
	return out
}

func (g *Gateway) pluginInfo() map[string]plugin.Info {
	out := make(map[string]plugin.Info, len(g.plugins))
	for name, p := range g.plugins {
		out[name] = p.Info()
	}
	return out
}

// dependencies lists the Go runtime and the Pion modules strata was built with.
func dependencies() map[string]string {
	deps := map[string]string{"go": runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if strings.HasPrefix(d.Path, "github.com/pion/") {
				deps[strings.TrimPrefix(d.Path, "github.com/")] = d.Version
			}
		}
	}
	return deps
}

func buildSetting(key, fallback string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == key && s.Value != "" {
				return s.Value
			}
		}
	}
	return fallback
}
