package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/runner/executor"
	"golang.org/x/net/html/charset"
)

// nonPublic lists ranges refused unless AllowPrivate, beyond what netip's
// predicates (loopback, private, link-local, multicast, unspecified) cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (could reach private IPv4)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4 (embeds any IPv4)
	netip.MustParsePrefix("fc00::/7"),        // unique local
}

// publicAddr reports whether a is a globally routable unicast address.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// ErrNotPublic marks a dial refused by the address policy: the job's host
// resolved (or redirected) to an address that is not globally routable.
// Execute reports it as executor.ErrBadInput, the job's fault: the host is
// one the job declared in required_domains, and no runner with the default
// policy will reach it, so the committee commits an ActorFault report
// instead of staying silent and being penalised for a missed commit.
var ErrNotPublic = errors.New("target address is not public")

// dialControl runs after DNS resolution and before connect, on the address
// actually dialled, so a name that resolves (or re-resolves) to a private
// address is refused however it was reached.
func dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %q", ErrNotPublic, address)
	}
	if !publicAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrNotPublic, ap.Addr())
	}
	return nil
}

func newTransport(cfg Config) *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		d.Control = dialControl
	}
	return &http.Transport{
		Proxy:                  nil, // a proxy would dial for us and bypass the address check
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// fetched is one source's response.
type fetched struct {
	body         []byte
	contentType  string
	date         time.Time // Date header, zero if absent
	lastModified time.Time // Last-Modified header, zero if absent
}

// budget is the bytes a job may still hold across all its responses.
type budget struct{ left atomic.Int64 }

// take reserves n bytes; false when the job's memory bound is exhausted.
func (b *budget) take(n int64) bool {
	if b.left.Add(-n) < 0 {
		return false
	}
	return true
}

// fetch performs one request under the job's domain policy with the body
// capped at limit bytes and charged to bud.
func (e *Executor) fetch(ctx context.Context, pol *policy, p *plan, u *url.URL, limit int64, bud *budget) (*fetched, error) {
	client := &http.Client{
		Transport: e.transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > e.cfg.MaxRedirects {
				return fmt.Errorf("%w: more than %d redirects", executor.ErrUpstream, e.cfg.MaxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("%w: redirect to scheme %q", executor.ErrUpstream, req.URL.Scheme)
			}
			if err := pol.check(req.URL); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
			}
			return nil
		},
	}
	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%w: request: %w", executor.ErrBadInput, err)
	}
	req.Header = p.headers.Clone()
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", e.cfg.UserAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		return nil, fmt.Errorf("%w: %s %s: status %s", executor.ErrUpstream, p.method, u.Redacted(), resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: response of %d bytes exceeds the %d-byte cap", executor.ErrBoundExceeded, resp.ContentLength, limit)
	}
	data, err := readCapped(resp.Body, limit, bud)
	if err != nil {
		if errors.Is(err, executor.ErrBoundExceeded) {
			return nil, err
		}
		return nil, classify(ctx, err)
	}
	f := &fetched{body: data, contentType: resp.Header.Get("Content-Type")}
	if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		f.date = t
	}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		f.lastModified = t
	}
	return f, nil
}

// toUTF8 converts a body whose Content-Type declares a charset other than
// UTF-8 (ISO-8859-1, Shift_JIS, …) to UTF-8, so extraction and text results
// see characters, not bytes. Bodies without a declaration are left alone:
// guessing would make runners disagree. A body that is not valid in its
// declared charset is refused (executor.ErrNotUTF8): the decoder would have
// replaced the bad bytes with U+FFFD.
func toUTF8(body []byte, contentType string) ([]byte, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["charset"] == "" {
		return body, nil
	}
	enc, name := charset.Lookup(params["charset"])
	if enc == nil || name == "utf-8" {
		return body, nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: body is not %s: %w", executor.ErrUpstream, executor.ErrNotUTF8, name, err)
	}
	if bytes.ContainsRune(out, utf8.RuneError) {
		// U+FFFD is either in the text (only if the charset can encode
		// it) or the decoder's replacement of bytes invalid in it.
		back, err := enc.NewEncoder().Bytes(out)
		if err != nil || !bytes.Equal(back, body) {
			return nil, fmt.Errorf("%w: %w: body holds bytes that are not valid %s", executor.ErrUpstream, executor.ErrNotUTF8, name)
		}
	}
	return out, nil
}

// readCapped reads r fully, failing with ErrBoundExceeded as soon as more
// than limit bytes arrive or the job's budget runs out, so an oversized body
// is never held in full.
func readCapped(r io.Reader, limit int64, bud *budget) ([]byte, error) {
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	lr := io.LimitReader(r, limit+1)
	for {
		n, err := lr.Read(chunk)
		if n > 0 {
			if int64(buf.Len()+n) > limit {
				return nil, fmt.Errorf("%w: response exceeds the %d-byte cap", executor.ErrBoundExceeded, limit)
			}
			if !bud.take(int64(n)) {
				return nil, fmt.Errorf("%w: responses exceed the job's max_memory_bytes", executor.ErrBoundExceeded)
			}
			buf.Write(chunk[:n])
		}
		if errors.Is(err, io.EOF) {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// classify maps a transport error to the executor's error classes.
func classify(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrNotPublic):
		return fmt.Errorf("%w: %w", executor.ErrBadInput, err)
	case errors.Is(err, executor.ErrRefused), errors.Is(err, executor.ErrBadInput),
		errors.Is(err, executor.ErrUpstream), errors.Is(err, executor.ErrBoundExceeded):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: wall time: %w", executor.ErrBoundExceeded, err)
	case ctx.Err() != nil:
		return fmt.Errorf("cancelled: %w", err)
	}
	return fmt.Errorf("%w: %w", executor.ErrUpstream, err)
}
