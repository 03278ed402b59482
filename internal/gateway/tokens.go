package gateway

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/strata-rtc/strata/internal/janus"
)

// tokenStore holds the tokens of Janus's stored-token authentication (general.token_auth): each
// token with the plugins it may attach to. The configured tokens (general.tokens) may attach to
// every plugin; the admin API's add_token, allow_token, disallow_token and remove_token change the
// set at run time (in memory only, as Janus keeps them).
type tokenStore struct {
	mu     sync.RWMutex
	tokens map[string]map[string]bool // token → plugin package → allowed
}

func newTokenStore(configured []string, plugins []string) *tokenStore {
	s := &tokenStore{tokens: make(map[string]map[string]bool, len(configured))}
	for _, t := range configured {
		s.add(t, plugins)
	}
	return s
}

// valid reports whether token exists.
func (s *tokenStore) valid(token string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.tokens[token]
	return ok
}

// allows reports whether token exists and may attach to plugin.
func (s *tokenStore) allows(token, plugin string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tokens[token][plugin]
}

// add adds token (false if it exists already) and allows it the plugins.
func (s *tokenStore) add(token string, plugins []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[token]; ok {
		return false
	}
	set := make(map[string]bool, len(plugins))
	for _, p := range plugins {
		set[p] = true
	}
	s.tokens[token] = set
	return true
}

// remove removes token (false if there was none).
func (s *tokenStore) remove(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tokens[token]
	delete(s.tokens, token)
	return ok
}

// setPlugins allows or disallows plugins to an existing token (false if there is none).
func (s *tokenStore) setPlugins(token string, plugins []string, allow bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, ok := s.tokens[token]
	if !ok {
		return false
	}
	for _, p := range plugins {
		if allow {
			set[p] = true
		} else {
			delete(set, p)
		}
	}
	return true
}

// plugins lists the plugins token may attach to, sorted.
func (s *tokenStore) plugins(token string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.tokens[token]))
	for p := range s.tokens[token] {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// tokenInfo is one entry of list_tokens.
type tokenInfo struct {
	Token   string   `json:"token"`
	Allowed []string `json:"allowed_plugins"`
}

// list lists the tokens that may attach to at least one plugin (Janus leaves the others out),
// sorted by token.
func (s *tokenStore) list() []tokenInfo {
	s.mu.RLock()
	names := make([]string, 0, len(s.tokens))
	for t, set := range s.tokens {
		if len(set) > 0 {
			names = append(names, t)
		}
	}
	s.mu.RUnlock()
	slices.Sort(names)
	out := make([]tokenInfo, 0, len(names))
	for _, t := range names {
		out = append(out, tokenInfo{Token: t, Allowed: s.plugins(t)})
	}
	return out
}

// pluginNames lists the loaded plugins, sorted.
func (g *Gateway) pluginNames() []string {
	out := make([]string, 0, len(g.plugins))
	for p := range g.plugins {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// tokenVerb answers the admin API's token verbs, as Janus's janus_request_allow_token and its
// list_tokens and remove_token: all of them need token_auth (490 otherwise) and a string `token`
// (456, 467), except list_tokens.
func (g *Gateway) tokenVerb(r adminReq) janus.Message {
	if !g.cfg.General.TokenAuth {
		return r.fail(janus.Errorf(janus.ErrUnknown, "Stored-Token based authentication disabled"))
	}
	if r.Janus == "list_tokens" {
		return r.ok().With("data", map[string]any{"tokens": g.tokens.list()})
	}
	if _, ok := r.Fields["token"]; !ok {
		return r.fail(janus.Missing("token"))
	}
	token := r.Token // Decode checked it is a string
	switch r.Janus {
	case "remove_token":
		if !g.tokens.remove(token) {
			return r.fail(janus.Errorf(janus.ErrUnknown, "Error removing token"))
		}
		return r.ok()
	case "add_token":
		plugins, jerr := g.tokenPlugins(r, true)
		if jerr != nil {
			return r.fail(jerr)
		}
		if plugins == nil { // no limitation: every plugin
			plugins = g.pluginNames()
		}
		if !g.tokens.add(token, plugins) {
			return r.fail(janus.Errorf(janus.ErrUnknown, "Error adding token"))
		}
	default: // allow_token, disallow_token
		plugins, jerr := g.tokenPlugins(r, false)
		if jerr != nil {
			return r.fail(jerr)
		}
		if !g.tokens.setPlugins(token, plugins, r.Janus == "allow_token") {
			return r.fail(janus.Errorf(janus.ErrTokenNotFound, "Token %s not found", token))
		}
	}
	return r.ok().With("data", map[string]any{"plugins": g.tokens.plugins(token)})
}

// tokenPlugins reads the request's `plugins`: nil when absent or empty (add_token only: allow and
// disallow need a non-empty array, 467). add_token skips entries that are not loaded plugins (Janus
// logs and skips them); allow_token and disallow_token refuse them (467), as Janus does.
func (g *Gateway) tokenPlugins(r adminReq, add bool) ([]string, *janus.Error) {
	raw, present := r.Fields["plugins"]
	var items []json.RawMessage
	if present && (json.Unmarshal(raw, &items) != nil || items == nil) { // null is not an array
		return nil, janus.WrongType("plugins", "an array")
	}
	if len(items) == 0 {
		if add {
			return nil, nil
		}
		return nil, janus.Errorf(janus.ErrInvalidElementType, "Invalid element type (plugins should be a non-empty array)")
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var name string
		loaded := false
		if json.Unmarshal(it, &name) == nil {
			_, loaded = g.plugins[name]
		}
		if !loaded {
			if add {
				continue
			}
			return nil, janus.Errorf(janus.ErrInvalidElementType, "Invalid element type (some of the provided plugins are invalid)")
		}
		out = append(out, name)
	}
	return out, nil
}
