package carbonapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Defaults of Options and Retry.
const (
	DefaultTimeout     = 10 * time.Second // one HTTP attempt
	DefaultAttempts    = 4                // tries per request, the first included
	DefaultBackoffBase = time.Second      // first backoff
	DefaultBackoffMax  = 30 * time.Second // longest single wait
	DefaultConcurrency = 4                // zones fetched at once by Refresh
	// DefaultRefreshTimeout bounds one Source.Refresh as a whole (every
	// zone, retries included): a healthy API answers a refresh of 12
	// zones in about a second, and a hanging one must not hold the
	// daemon's hourly plan for minutes.
	DefaultRefreshTimeout = 30 * time.Second
)

// maxBody bounds a response body; a 72-hour 5-minute forecast is < 100 kB.
const maxBody = 4 << 20

// Options configure the HTTP clients and the Source. The zero value is
// usable: every field has a default.
type Options struct {
	// HTTPClient sends the requests (default: a new http.Client). Its own
	// Timeout, if any, applies on top of Timeout.
	HTTPClient *http.Client
	// Timeout bounds one HTTP attempt (default DefaultTimeout). The
	// caller's context bounds the whole request, retries included.
	Timeout time.Duration
	// Retry configures backoff on 429, 5xx and transport errors.
	Retry Retry
	// Now is the clock (default time.Now); tests inject a fake one.
	Now func() time.Time
	// Logger receives retries and fetch failures (default: discarded).
	// Nothing secret is ever logged.
	Logger *slog.Logger
	// Concurrency is how many zones Source.Refresh fetches at once
	// (default DefaultConcurrency).
	Concurrency int
	// RefreshTimeout bounds one Source.Refresh as a whole, every zone and
	// retry included (default DefaultRefreshTimeout); zones not fetched by
	// then keep their cache and report ErrRefreshTimeout.
	RefreshTimeout time.Duration

	// sleep waits d or until ctx is done (tests replace it).
	sleep func(ctx context.Context, d time.Duration) error
}

// Retry is the backoff policy. A request is retried after a 429, a 5xx or
// a transport error, waiting the server's Retry-After when it gives one,
// else Base·2^n with jitter (uniform in [½, 1] of that), capped at Max. A
// Retry-After longer than Max is not waited for: the request fails with
// ErrRateLimited and the client makes no request to that API until the
// Retry-After has passed. No wait extends past the context's deadline.
type Retry struct {
	Attempts int           // tries per request, the first included (default 4)
	Base     time.Duration // first backoff (default 1s)
	Max      time.Duration // longest single wait (default 30s)
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retry.Attempts <= 0 {
		o.Retry.Attempts = DefaultAttempts
	}
	if o.Retry.Base <= 0 {
		o.Retry.Base = DefaultBackoffBase
	}
	if o.Retry.Max <= 0 {
		o.Retry.Max = DefaultBackoffMax
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.RefreshTimeout <= 0 {
		o.RefreshTimeout = DefaultRefreshTimeout
	}
	if o.sleep == nil {
		o.sleep = sleepCtx
	}
	return o
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Errors the clients and the Source wrap; test with errors.Is.
var (
	// ErrStale: no value younger than the staleness bound (see StaleError).
	ErrStale = errors.New("carbon data stale")
	// ErrAuth: the API rejected the credentials (HTTP 401, or a failed
	// WattTime login). Retrying does not help; fix the token.
	ErrAuth = errors.New("credentials rejected")
	// ErrRateLimited: HTTP 429 after the retries, or a Retry-After that
	// has not passed yet.
	ErrRateLimited = errors.New("rate limited")
	// ErrBadResponse: a 200 response that is not the documented JSON,
	// is about another zone, or holds implausible values.
	ErrBadResponse = errors.New("bad response")
	// ErrRefreshTimeout: a Source.Refresh ran out of its overall deadline
	// (Options.RefreshTimeout) before every zone was fetched.
	ErrRefreshTimeout = errors.New("carbon refresh deadline exceeded")
)

// HTTPError is a non-200 answer of an API. Body is the start of the
// response body with every secret removed.
type HTTPError struct {
	API        string        // "Electricity Maps" or "WattTime"
	Request    string        // path and query, e.g. "/v3/carbon-intensity/latest?zone=DE"
	Status     int           // HTTP status code
	RetryAfter time.Duration // the server's Retry-After, 0 if none
	Body       string
}

// Error renders "API GET path: 429 Too Many Requests (Retry-After 2m0s): body".
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s GET %s: %d %s", e.API, e.Request, e.Status, http.StatusText(e.Status))
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (Retry-After %s)", e.RetryAfter)
	}
	if e.Body != "" {
		b.WriteString(": ")
		b.WriteString(e.Body)
	}
	return b.String()
}

// Is makes 401 match ErrAuth and 429 match ErrRateLimited.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.Status == http.StatusUnauthorized
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	}
	return false
}

// doer sends GET requests to one API with timeouts, retries and the
// Retry-After memory.
type doer struct {
	api  string
	base string // scheme://host[/prefix], no trailing slash
	o    Options
	red  *redactor

	mu        sync.Mutex
	notBefore time.Time  // no request before this (a long Retry-After)
	blockErr  *HTTPError // the answer that set notBefore
}

// parseBase checks a base URL: http(s), a host, no credentials, query or
// fragment (credentials go in headers, never in URLs).
func parseBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("base URL %q: want http(s)://host[/path]", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("base URL %s://%s: credentials in the URL are not allowed (use token_env or token_file)", u.Scheme, u.Host)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("base URL %q: no query or fragment allowed", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func newDoer(api, base string, o Options, red *redactor) *doer {
	return &doer{api: api, base: base, o: o, red: red}
}

// get sends GET base+path?q, setting headers with auth on every attempt,
// and returns the body of a 200 answer.
func (d *doer) get(ctx context.Context, path string, q url.Values, auth func(http.Header)) ([]byte, error) {
	what := path
	if len(q) > 0 {
		what += "?" + q.Encode()
	}
	if err := d.blocked(what); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		body, herr, retryable := d.once(ctx, what, auth)
		if herr == nil {
			return body, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%w)", herr, ctx.Err())
		}
		var he *HTTPError
		retryAfter := time.Duration(0)
		if errors.As(herr, &he) {
			retryAfter = he.RetryAfter
		}
		if !retryable {
			return nil, herr
		}
		wait := retryAfter
		if wait <= 0 {
			wait = d.backoff(attempt)
		}
		if retryAfter > d.o.Retry.Max {
			d.block(retryAfter, he)
			return nil, herr
		}
		if attempt+1 >= d.o.Retry.Attempts {
			if retryAfter > 0 {
				d.block(retryAfter, he)
			}
			return nil, herr
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, fmt.Errorf("%w (not retried: waiting %s would pass the deadline)", herr, wait)
		}
		d.o.Logger.Warn("carbon API retry", "api", d.api, "request", what, "error", herr.Error(),
			"attempt", attempt+1, "wait", wait)
		if err := d.o.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%w (%w)", herr, err)
		}
	}
}

// once makes one attempt. herr is nil on a 200; retryable says whether
// another attempt may succeed.
func (d *doer) once(ctx context.Context, what string, auth func(http.Header)) (body []byte, herr error, retryable bool) {
	actx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, d.base+what, nil)
	if err != nil {
		return nil, fmt.Errorf("%s GET %s: %s", d.api, what, d.red.clean(err.Error())), false
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "p4ctl")
	if auth != nil {
		auth(req.Header)
	}
	resp, err := d.o.HTTPClient.Do(req)
	if err != nil {
		// Transport errors quote the URL, which holds no secret; clean anyway.
		return nil, fmt.Errorf("%s GET %s: %s", d.api, what, d.red.clean(transportReason(err))), true
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s GET %s: reading the response: %s", d.api, what, d.red.clean(transportReason(err))), true
	}
	if resp.StatusCode == http.StatusOK {
		if len(b) > maxBody {
			return nil, fmt.Errorf("%s GET %s: %w: response larger than %d bytes", d.api, what, ErrBadResponse, maxBody), false
		}
		return b, nil, false
	}
	he := &HTTPError{
		API:        d.api,
		Request:    what,
		Status:     resp.StatusCode,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), d.o.Now()),
		Body:       d.snippet(b),
	}
	return nil, he, resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}

// transportReason is the error text without net/http's `Get "URL":` prefix
// (the request is named separately).
func transportReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// snippet is the start of a body for an error: secrets removed, one line,
// printable, at most 200 bytes.
func (d *doer) snippet(b []byte) string {
	s := d.red.clean(strings.ToValidUTF8(string(b), "?"))
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// backoff is Base·2^attempt capped at Max, with jitter in [½, 1].
func (d *doer) backoff(attempt int) time.Duration {
	w := d.o.Retry.Base
	for range attempt {
		w *= 2
		if w >= d.o.Retry.Max {
			w = d.o.Retry.Max
			break
		}
	}
	w = min(w, d.o.Retry.Max)
	half := w / 2
	return half + time.Duration(rand.Int64N(int64(w-half)+1))
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 if absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 || n > 7*24*3600 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func (d *doer) block(wait time.Duration, he *HTTPError) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t := d.o.Now().Add(wait); t.After(d.notBefore) {
		d.notBefore, d.blockErr = t, he
	}
}

// blocked fails fast while an earlier Retry-After has not passed.
func (d *doer) blocked(what string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.o.Now()
	if d.blockErr == nil || !now.Before(d.notBefore) {
		return nil
	}
	return fmt.Errorf("%s GET %s: not sent before %s (%w)", d.api, what,
		d.notBefore.UTC().Format(time.RFC3339), d.blockErr)
}
