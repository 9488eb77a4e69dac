package licensing_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"example.com/licensing-sdk/clients/go/licensing"
	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/order"
)

var ctx = context.Background()

// recorder is a server answering every request with status and body, keeping the requests.
type recorder struct {
	mu       sync.Mutex
	requests []*http.Request
	status   int
	body     string
}

func serve(t *testing.T, status int, body string) (*recorder, *httptest.Server) {
	r := &recorder{status: status, body: body}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(r.status)
		_, _ = io.WriteString(w, r.body)
	}))
	t.Cleanup(server.Close)
	return r, server
}

var nonceShape = regexp.MustCompile(`^[A-Za-z0-9_-]{32}$`)

func TestOrderRequestsCarryTheTokenContentTypeAndAFreshNonce(t *testing.T) {
	seen, server := serve(t, 200, `{"code": 0, "message": "success", "data": []}`)
	client, err := licensing.NewOrderClient(server.URL, "app-token")
	if err != nil {
		t.Fatal(err)
	}
	params := &order.QueryEnterpriseParams{ChannelCode: "CH01", ChannelCustomerID: "CC-1", DefaultCustomer: "N", GNonce: "stale"}
	for range 2 {
		if err := licensing.Check(client.QueryEnterpriseWithResponse(ctx, params)); err != nil {
			t.Fatal(err)
		}
	}
	if err := licensing.Check(client.AllocateShellNumsWithResponse(ctx, nil, order.AllocateShellNumsRequest{Size: 1})); err != nil {
		t.Fatal(err)
	}
	nonces := map[string]bool{}
	for _, req := range seen.requests {
		if req.Header.Get("Authorization") != "Bearer app-token" || req.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: headers %v", req.Method, req.URL, req.Header)
		}
		given := req.URL.Query()["g_nonce"]
		if len(given) != 1 || !nonceShape.MatchString(given[0]) || nonces[given[0]] {
			t.Fatalf("%s %s: g_nonce %q", req.Method, req.URL, given)
		}
		nonces[given[0]] = true
	}
	if len(nonces) != 3 || seen.requests[0].Method != http.MethodGet || seen.requests[0].URL.Query().Get("channelCode") != "CH01" {
		t.Fatalf("requests: %v", seen.requests)
	}
	if params.GNonce != "stale" {
		t.Fatalf("the caller's params changed: %q", params.GNonce)
	}
}

func TestMemberRequestsCarryTheThreeHeadersOnceEach(t *testing.T) {
	seen, server := serve(t, 200, `{"code": 0, "message": "success", "data": []}`)
	client, err := licensing.NewMemberClient(server.URL, "client-token", "user-token")
	if err != nil {
		t.Fatal(err)
	}
	// A stale header of the caller's, in another case, must not be sent beside the helper's.
	stale := func(_ context.Context, req *http.Request) error {
		req.Header["clienttoken"] = []string{"stale"}
		req.Header["USERTOKEN"] = []string{"stale"}
		return nil
	}
	if err := licensing.Check(client.ListAssetNumsWithResponse(ctx, "EG-1", nil, stale)); err != nil {
		t.Fatal(err)
	}
	req := seen.requests[0]
	for name, want := range map[string]string{"Authorization": "Bearer client-token", "Clienttoken": "client-token", "Usertoken": "user-token"} {
		if got := req.Header.Values(name); len(got) != 1 || got[0] != want {
			t.Fatalf("%s: %q, want %q only (headers %v)", name, got, want, req.Header)
		}
	}
	if req.Header.Get("Content-Type") != "" || !nonceShape.MatchString(req.URL.Query().Get("g_nonce")) {
		t.Fatalf("a bodiless member request: %v %v", req.Header, req.URL)
	}
}

func TestTheTransportLeavesTheCallersRequestAlone(t *testing.T) {
	_, server := serve(t, 200, `{}`)
	req, err := http.NewRequest(http.MethodGet, server.URL+"/x?a=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: licensing.OrderTransport("t", nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if req.URL.RawQuery != "a=1" || len(req.Header) != 0 {
		t.Fatalf("the caller's request became %v %v", req.URL, req.Header)
	}
}

// TestABodilessRequestIsNotResentByNetHTTP: a server that reads a GET on a reused
// connection and closes it unanswered. net/http alone sends that GET again by itself, the
// same g_nonce with it; through the helper's transport the error comes back instead.
func TestABodilessRequestIsNotResentByNetHTTP(t *testing.T) {
	for _, through := range []struct {
		name      string
		transport func(base http.RoundTripper) http.RoundTripper
		sent      int32
		fails     bool
	}{
		{"net/http alone", func(base http.RoundTripper) http.RoundTripper { return base }, 3, false},
		{"OrderTransport", func(base http.RoundTripper) http.RoundTripper { return licensing.OrderTransport("t", base) }, 2, true},
	} {
		var sent atomic.Int32
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if sent.Add(1) == 2 {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
				return
			}
			_, _ = io.WriteString(w, `{"code": 0, "message": "success"}`)
		}))
		client := &http.Client{Transport: through.transport(&http.Transport{})}
		var failed error
		for range 2 {
			resp, err := client.Get(server.URL + "/order/api/order/v1/asset/EG-1/list")
			if err != nil {
				failed = err
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		server.Close()
		if sent.Load() != through.sent || (failed != nil) != through.fails {
			t.Fatalf("%s: the server saw %d requests (want %d); the client's error: %v",
				through.name, sent.Load(), through.sent, failed)
		}
	}
}

func TestRepliesAreBounded(t *testing.T) {
	body := `{"code": 0, "message": "success"}`
	_, server := serve(t, 200, body)
	for limit, fails := range map[int64]bool{int64(len(body)): false, int64(len(body)) - 1: true} {
		transport := licensing.OrderTransport("t", nil)
		transport.Limit = limit
		client, err := licensing.NewOrderClient(server.URL, "t", order.WithHTTPClient(&http.Client{Transport: transport}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.AllocateShellNumsWithResponse(ctx, nil, order.AllocateShellNumsRequest{Size: 1})
		if fails != errors.Is(err, licensing.ErrReplyTooLarge) {
			t.Fatalf("a %d-byte reply under a %d-byte limit: %v", len(body), limit, err)
		}
		if fails && !strings.Contains(err.Error(), "limit of") {
			t.Fatalf("the error does not say the limit: %v", err)
		}
	}
}

// reply is a reply as the generated code hands it over.
type reply struct {
	status int
	body   string
}

func (r reply) StatusCode() int { return r.status }
func (r reply) Bytes() []byte   { return []byte(r.body) }

func TestCheckReadsTheEnvelope(t *testing.T) {
	var business *licensing.BusinessError
	err := licensing.Check(reply{299, `{"code": "13004", "message": "parameter validation failure", "cause": "size must be positive"}`}, nil)
	if !errors.As(err, &business) || *business != (licensing.BusinessError{Status: 299, Code: "13004",
		Message: "parameter validation failure", Cause: "size must be positive"}) {
		t.Fatalf("HTTP 299: %#v", err)
	}
	if err.Error() != "13004: parameter validation failure (size must be positive)" {
		t.Fatalf("its text: %q", err.Error())
	}
	for _, case_ := range []struct {
		reply reply
		want  string // "" success, else the error's text
	}{
		{reply{200, `{"code": 0, "message": "success", "data": [1]}`}, ""},
		{reply{200, `{"code": 60027, "message": "partial"}`}, "60027: partial"},
		{reply{200, `{"code": "0", "message": "a string is no success code"}`}, "0: a string is no success code"},
		{reply{299, `{"code": "500", "message": "network exception, retry"}`}, "500: network exception, retry"},
		{reply{299, `{"code": "1", "message": "\u001b[31mred\u0007"}`}, `1: \x1b[31mred\a`},
		{reply{500, `{"code": "500", "message": "x"}`}, `unexpected HTTP 500: "{\"code\": \"500\", \"message\": \"x\"}"`},
		{reply{299, `<html>`}, `unexpected HTTP 299: "<html>"`},
		{reply{200, `{"message": "no code"}`}, `unexpected HTTP 200: "{\"message\": \"no code\"}"`},
		{reply{200, `{"code": [], "message": "m"}`}, `unexpected HTTP 200: "{\"code\": [], \"message\": \"m\"}"`},
		{reply{502, strings.Repeat("x", 10000)}, `unexpected HTTP 502: "` + strings.Repeat("x", 200) + `"`},
	} {
		err := licensing.Check(case_.reply, nil)
		if (case_.want == "") != (err == nil) || (err != nil && err.Error() != case_.want) {
			t.Errorf("%v: %v, want %q", case_.reply, err, case_.want)
		}
	}
	failed := errors.New("connection refused")
	if err := licensing.Check(reply{}, failed); err != failed {
		t.Fatalf("a transport error: %v", err)
	}
}

func TestNoncesAreFreshAndURLSafe(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := licensing.Nonce()
		if !nonceShape.MatchString(n) || seen[n] {
			t.Fatalf("nonce %q", n)
		}
		seen[n] = true
	}
}

// The member center's client compiles against the helper's options too.
var _ = []member.ClientOption{member.WithHTTPClient(&http.Client{Transport: licensing.MemberTransport("c", "u", nil)})}
