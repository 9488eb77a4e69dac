package scenario_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"example.com/licensing-sdk/clients/go/licensing"
	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/order"
	"example.com/licensing-sdk/clients/go/sandbox"
	"example.com/licensing-sdk/clients/go/sandbox/admin"
)

// retry calls call until it succeeds, at most attempts times, again after a failure to get
// an answer or a business 500 ("network exception, retry"): how a partner retries an
// operation its spec marks x-idempotent. It returns the last reply and the attempts made.
func retry[R licensing.Reply](attempts int, call func() (R, error)) (R, int, error) {
	var reply R
	var err error
	for n := 1; ; n++ {
		reply, err = call()
		err = licensing.Check(reply, err)
		var business *licensing.BusinessError
		var unexpected *licensing.UnexpectedReply
		again := err != nil && !errors.As(err, &unexpected) &&
			(!errors.As(err, &business) || business.Code == "500")
		if !again || n == attempts {
			return reply, n, err
		}
	}
}

// entries are the journal's entries of one operation.
func entries(sb *sandbox.Sandbox, operation string) []admin.JournalEntry {
	var of []admin.JournalEntry
	for _, e := range sb.Journal().Entries {
		if e.Operation != nil && *e.Operation == operation {
			of = append(of, e)
		}
	}
	return of
}

func nonce(e admin.JournalEntry) string {
	for _, q := range e.Query {
		if q.Name == "g_nonce" {
			return q.Value
		}
	}
	return ""
}

// TestRetriesSendFreshNonces retries two idempotent operations through the helper after a
// dropped connection and after a business 500, each fired once by a fault rule: the second
// attempt succeeds, as a request of its own with a g_nonce of its own.
func TestRetriesSendFreshNonces(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Seed: "demo"})
	o, m := sb.Order(), sb.Member()
	acme := sb.Seeded.Enterprises[0].EnterpriseGlobalID
	sb.AddFault(admin.FaultRuleSpec{Operation: "listVirtualAssets", Times: ptr(int64(1)),
		Fault: admin.Fault{Kind: "dropConnection"}})
	sb.AddFault(admin.FaultRuleSpec{Operation: "listAssetNums", Times: ptr(int64(1)),
		Fault: admin.Fault{Kind: "code", Code: ptr("500")}})

	params := &order.ListVirtualAssetsParams{} // the same params for both attempts
	_, attempts, err := retry(3, func() (*order.ListVirtualAssetsResponse, error) {
		return o.ListVirtualAssetsWithResponse(ctx, acme, params)
	})
	if err != nil || attempts != 2 {
		t.Fatalf("listVirtualAssets after a dropped connection: %d attempts, %v", attempts, err)
	}
	nums, attempts, err := retry(3, func() (*member.ListAssetNumsResponse, error) {
		return m.ListAssetNumsWithResponse(ctx, acme, nil)
	})
	if err != nil || attempts != 2 || len(*nums.JSON200.Data) == 0 {
		t.Fatalf("listAssetNums after a business 500: %d attempts, %v", attempts, err)
	}

	for operation, first := range map[string]int32{"listVirtualAssets": 0, "listAssetNums": 299} {
		seen := entries(sb, operation)
		if len(seen) != 2 || seen[0].Status != first || seen[0].Fault == nil ||
			seen[1].Status != 200 || *seen[1].Code != "0" {
			t.Fatalf("%s: the journal shows %+v", operation, seen)
		}
		if nonce(seen[0]) == "" || nonce(seen[0]) == nonce(seen[1]) {
			t.Fatalf("%s: the retry sent g_nonce %q again", operation, nonce(seen[0]))
		}
	}
}

// TestASentNonceIsRefusedAgain is why the nonce is set per attempt: a request sent again
// with the g_nonce it had, past the helper's transport, is refused as a replay.
func TestASentNonceIsRefusedAgain(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{})
	url := sb.URL + "/order/api/order/v1/shellnums?g_nonce=" + licensing.Nonce()
	var codes []string
	for range 2 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"size": 1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+sb.Tokens.App)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var business *licensing.BusinessError
		switch err := licensing.Check(raw{resp.StatusCode, body}, nil); {
		case err == nil:
			codes = append(codes, "0")
		case errors.As(err, &business):
			codes = append(codes, business.Code)
		default:
			t.Fatal(err)
		}
	}
	if codes[0] != "0" || codes[1] != "13004" {
		t.Fatalf("the same g_nonce twice was answered %v, not 0 then 13004", codes)
	}
}

// raw is a reply read by hand, for licensing.Check.
type raw struct {
	status int
	body   []byte
}

func (r raw) StatusCode() int { return r.status }
func (r raw) Bytes() []byte   { return r.body }
