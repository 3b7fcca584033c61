package carbonapi

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// redacted is what a Secret prints as, everywhere.
const redacted = "[redacted]"

// Secret holds an API token or password. It prints, marshals and logs as
// "[redacted]"; only this package reads the value, to put it in a request
// header. The value sits behind a pointer so that even printing a struct
// that holds a Secret in an unexported field (where fmt cannot call its
// methods) shows an address, not the value.
type Secret struct{ p *string }

// NewSecret wraps a token given by the caller (tests, or a daemon that
// reads secrets its own way). Surrounding white space is removed.
func NewSecret(s string) Secret {
	s = strings.TrimSpace(s)
	if s == "" {
		return Secret{}
	}
	return Secret{&s}
}

// v returns the value ("" when empty).
func (s Secret) v() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// LoadSecret reads a token from the environment variable env or, when env
// is "" or the variable is unset or empty, from the file path (white space
// trimmed). Errors name the variable or file, never the value.
func LoadSecret(env, path string) (Secret, error) {
	if env != "" {
		if v, ok := os.LookupEnv(env); ok && strings.TrimSpace(v) != "" {
			return NewSecret(v), nil
		}
		if path == "" {
			return Secret{}, fmt.Errorf("token: environment variable %s is not set or empty", env)
		}
	}
	if path == "" {
		return Secret{}, errors.New("token: no environment variable or file given")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return Secret{}, fmt.Errorf("token file %s: %w", path, pe.Err)
		}
		return Secret{}, fmt.Errorf("token file %s: cannot read", path)
	}
	s := NewSecret(string(b))
	if s.Empty() {
		return Secret{}, fmt.Errorf("token file %s is empty", path)
	}
	return s, nil
}

// Empty reports whether the secret holds nothing.
func (s Secret) Empty() bool { return s.v() == "" }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]" (for %#v).
func (s Secret) GoString() string { return redacted }

// Format prints "[redacted]" for every verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalText returns "[redacted]" (JSON, YAML and text encoders).
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue makes slog print "[redacted]".
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// redactor removes secrets from text that came from outside (response
// bodies, transport errors) before it goes into an error or a log line.
// It is safe for concurrent use.
type redactor struct {
	mu       sync.RWMutex
	fixed    []string // tokens, passwords and their Basic encodings
	sessions []string // the latest WattTime bearer tokens, newest last
}

// keepSessions is how many past session tokens stay redacted (an old one
// may still be echoed in a late answer).
const keepSessions = 4

// minSecret is the shortest value redacted: shorter ones would redact
// ordinary text (and are no secret anyway).
const minSecret = 4

// add registers secret values.
func (r *redactor) add(vals ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range vals {
		if len(v) >= minSecret {
			r.fixed = append(r.fixed, v)
		}
	}
}

// addBasic registers a password and the Basic authentication encoding of
// user:password.
func (r *redactor) addBasic(user, pass string) {
	r.add(pass, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

// setSession registers a new session token.
func (r *redactor) setSession(tok string) {
	if len(tok) < minSecret {
		return
	}
	r.mu.Lock()
	r.sessions = append(r.sessions, tok)
	if len(r.sessions) > keepSessions {
		r.sessions = r.sessions[len(r.sessions)-keepSessions:]
	}
	r.mu.Unlock()
}

// clean returns s with every registered secret replaced by "[redacted]".
func (r *redactor) clean(s string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range r.fixed {
		s = strings.ReplaceAll(s, v, redacted)
	}
	for _, v := range r.sessions {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
}

// Format keeps a redactor's secrets out of any printout.
func (r *redactor) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("[redactor]")) }

// sentinels are the errors a scrubbed error keeps matching.
func sentinels() []error {
	return []error{ErrBadResponse, ErrAuth, ErrRateLimited, ErrStale, ErrNoData}
}

// scrubbed is an error whose text had secrets removed. It drops the
// original chain (whose text holds the secret) but keeps matching the
// package's sentinel errors the original matched.
type scrubbed struct {
	msg string
	is  []error
}

// Error returns the scrubbed text.
func (e *scrubbed) Error() string { return e.msg }

// Is matches the sentinels the original error matched.
func (e *scrubbed) Is(target error) bool {
	for _, s := range e.is {
		if s == target {
			return true
		}
	}
	return false
}

// scrub returns err unchanged when its text holds no secret, else a
// scrubbed copy.
func (r *redactor) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := r.clean(msg)
	if clean == msg {
		return err
	}
	s := &scrubbed{msg: clean}
	for _, t := range sentinels() {
		if errors.Is(err, t) {
			s.is = append(s.is, t)
		}
	}
	return s
}
