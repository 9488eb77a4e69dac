// Package licensing adds to the generated clients (packages order and member) what every
// request of the licensing platform needs beyond the specs, and reads the reply envelope:
//
//   - a fresh g_nonce query parameter on every request, a retry included (24 random bytes,
//     URL-safe base64): callers pass nil params, or leave GNonce empty;
//   - the order service's Authorization: Bearer <app token> and Content-Type:
//     application/json on every request, bodiless ones too;
//   - the member center's Authorization: Bearer <client token>, clientToken and userToken;
//   - replies at most MaxReplyBytes long;
//   - Check: HTTP 200 with code 0 is a success, HTTP 299 (or a non-zero code) a
//     *BusinessError with the envelope's code, message and cause, for errors.As.
//
// The headers and the nonce are set by an http.RoundTripper rather than a RequestEditorFn:
// an editor runs once per call, so a retrying transport beneath it would send the same
// g_nonce again, which the platform refuses as a replay.
package licensing

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/order"
)

// MaxReplyBytes is the most of a reply body the transports let through (64 MiB, the Rust
// SDK's default); reading past it fails with ErrReplyTooLarge.
const MaxReplyBytes = 64 << 20

// ErrReplyTooLarge is what reading a reply body longer than the transport's limit returns.
var ErrReplyTooLarge = errors.New("licensing: reply body over the limit")

// Nonce returns 192 bits from the operating system's random source, URL-safe base64
// without padding: 32 characters.
func Nonce() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Transport sets Headers and a fresh g_nonce on each request it sends through Base
// (http.DefaultTransport when nil), and bounds each reply body to Limit bytes
// (MaxReplyBytes when 0).
type Transport struct {
	Base    http.RoundTripper
	Headers map[string]string
	Limit   int64
}

// OrderTransport is the order service's: the application token as a bearer token and
// Content-Type: application/json on every request.
func OrderTransport(appToken string, base http.RoundTripper) *Transport {
	return &Transport{Base: base, Headers: map[string]string{
		"Authorization": "Bearer " + appToken,
		// The order document requires it on every endpoint, bodiless GETs included.
		"Content-Type": "application/json",
	}}
}

// MemberTransport is the member center's: the client token twice (bearer and clientToken)
// and the user token.
func MemberTransport(clientToken, userToken string, base http.RoundTripper) *Transport {
	return &Transport{Base: base, Headers: map[string]string{
		"Authorization": "Bearer " + clientToken,
		"clientToken":   clientToken,
		"userToken":     userToken,
	}}
}

// RoundTrip sends a copy of req (a RoundTripper must not change the caller's) with the
// headers set over any the caller gave, in whatever case, and a new g_nonce.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	for name, value := range t.Headers {
		for key := range out.Header {
			if strings.EqualFold(key, name) {
				delete(out.Header, key)
			}
		}
		out.Header.Set(name, value)
	}
	query := out.URL.Query()
	query.Set("g_nonce", Nonce())
	out.URL.RawQuery = query.Encode()
	if out.Body == nil || out.Body == http.NoBody {
		out.Body = noReplay{}
	}
	return LimitTransport{Base: t.Base, Limit: t.Limit}.RoundTrip(out)
}

// noReplay is an empty body net/http cannot rewind. net/http resends a bodiless GET by
// itself when a reused connection closes before the reply, even after the server read the
// request: with its g_nonce, which the platform then refuses as a replay. With this body it
// returns the error instead, and a retry comes back through Transport for a new nonce. It
// sends no body: net/http finds it empty before writing the request.
type noReplay struct{}

func (noReplay) Read([]byte) (int, error) { return 0, io.EOF }
func (noReplay) Close() error             { return nil }

// LimitTransport bounds each reply body it receives through Base (http.DefaultTransport
// when nil) to Limit bytes (MaxReplyBytes when 0): reading past it fails with
// ErrReplyTooLarge. Transport sends through one; so does package sandbox, for the admin API.
type LimitTransport struct {
	Base  http.RoundTripper
	Limit int64
}

// RoundTrip sends req through Base and bounds the reply's body.
func (t LimitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	limit := t.Limit
	if limit <= 0 {
		limit = MaxReplyBytes
	}
	resp.Body = &bounded{body: resp.Body, left: limit, limit: limit}
	return resp, nil
}

// bounded fails a read that would go past its limit instead of cutting the body short,
// which would decode as a different reply or as broken JSON.
type bounded struct {
	body        io.ReadCloser
	left, limit int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var probe [1]byte
		n, err := b.body.Read(probe[:])
		if n > 0 {
			return 0, fmt.Errorf("%w of %d bytes", ErrReplyTooLarge, b.limit)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *bounded) Close() error { return b.body.Close() }

// NewOrderClient is the order service's client at baseURL (the platform's address, without
// the /order/api/order/v1 prefix every path has), sending through OrderTransport. A client
// of your own goes in with order.WithHTTPClient; give it an OrderTransport.
func NewOrderClient(baseURL, appToken string, opts ...order.ClientOption) (*order.ClientWithResponses, error) {
	client := &http.Client{Transport: OrderTransport(appToken, nil)}
	c, err := order.NewClientWithResponses(baseURL, append([]order.ClientOption{order.WithHTTPClient(client)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("licensing: order client for %q: %w", baseURL, err)
	}
	return c, nil
}

// NewMemberClient is the member center's client at baseURL, sending through
// MemberTransport; see NewOrderClient.
func NewMemberClient(baseURL, clientToken, userToken string, opts ...member.ClientOption) (*member.ClientWithResponses, error) {
	client := &http.Client{Transport: MemberTransport(clientToken, userToken, nil)}
	c, err := member.NewClientWithResponses(baseURL, append([]member.ClientOption{member.WithHTTPClient(client)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("licensing: member client for %q: %w", baseURL, err)
	}
	return c, nil
}
