// Package scenario_test drives both services through the generated clients and the
// helper against sandboxes of package sandbox: the partner story (story_test.go), every
// operation of both specs (operations_test.go, the story the TypeScript and Python
// scenarios tell) with the journal checked as the clients driver checks theirs, and
// retries (retry_test.go).
package scenario_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"example.com/licensing-sdk/clients/go/licensing"
	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/order"
	"example.com/licensing-sdk/clients/go/sandbox/admin"
)

var ctx = context.Background()

// success takes a call's results and returns, applied to the test, the reply of a success;
// anything else fails the test: success(client.XWithResponse(…))(t).
func success[R licensing.Reply](reply R, err error) func(*testing.T) R {
	return func(t *testing.T) R {
		t.Helper()
		if err := licensing.Check(reply, err); err != nil {
			t.Fatalf("%T: %v", reply, err)
		}
		return reply
	}
}

// refusal takes a call's results and returns, applied to the test and a code, the business
// error the call must have ended with (HTTP 299, that code), read with errors.As.
func refusal[R licensing.Reply](reply R, err error) func(*testing.T, string) (R, *licensing.BusinessError) {
	return func(t *testing.T, code string) (R, *licensing.BusinessError) {
		t.Helper()
		var business *licensing.BusinessError
		if err := licensing.Check(reply, err); !errors.As(err, &business) {
			t.Fatalf("%T: expected business error %s, got %v", reply, code, err)
		}
		if business.Status != 299 || business.Code != code {
			t.Fatalf("%T: expected HTTP 299 with code %s, got %d with %s", reply, code, business.Status, business.Code)
		}
		return reply, business
	}
}

func ptr[T any](v T) *T { return &v }

// operations are the operation ids of a generated client: its interface's methods, less
// the WithBody variants, with the first letter lowered.
func operations(client any) []string {
	var ids []string
	kind := reflect.TypeOf(client).Elem()
	for i := range kind.NumMethod() {
		name := kind.Method(i).Name
		if !strings.HasSuffix(name, "WithBody") {
			runes := []rune(name)
			runes[0] = unicode.ToLower(runes[0])
			ids = append(ids, string(runes))
		}
	}
	return ids
}

var services = map[string][]string{
	"order":  operations((*order.ClientInterface)(nil)),
	"member": operations((*member.ClientInterface)(nil)),
}

// checkJournal fails unless the journal shows every operation of both services answered
// with code 0, at least one HTTP 299 from each service, and a g_nonce of its own on every
// request: what the clients driver checks of the TypeScript and Python scenarios.
func checkJournal(t *testing.T, journal admin.JournalPage) {
	t.Helper()
	if journal.Dropped != 0 {
		t.Errorf("the journal dropped %d entries", journal.Dropped)
	}
	serviceOf := map[string]string{}
	for service, ids := range services {
		for _, id := range ids {
			serviceOf[id] = service
		}
	}
	succeeded, refused, nonces := map[string]bool{}, map[string][]string{}, map[string]bool{}
	for _, entry := range journal.Entries {
		operation := ""
		if entry.Operation != nil {
			operation = *entry.Operation
		}
		service, known := serviceOf[operation]
		if !known {
			t.Errorf("request #%d (%s %s): not an operation of the specs", entry.Seq, entry.Method, entry.Path)
			continue
		}
		var given []string
		for _, q := range entry.Query {
			if q.Name == "g_nonce" {
				given = append(given, q.Value)
			}
		}
		if len(given) != 1 || given[0] == "" || nonces[given[0]] {
			t.Errorf("request #%d (%s): g_nonce %q, not one fresh value", entry.Seq, operation, given)
		} else {
			nonces[given[0]] = true
		}
		code := ""
		if entry.Code != nil {
			code = *entry.Code
		}
		switch {
		case entry.Status == 200 && code == "0":
			succeeded[operation] = true
		case entry.Status == 299 && code != "0" && code != "":
			refused[service] = append(refused[service], code)
		default:
			t.Errorf("request #%d (%s): HTTP %d, code %q", entry.Seq, operation, entry.Status, code)
		}
	}
	for id, service := range serviceOf {
		if !succeeded[id] {
			t.Errorf("%s operation %s was never answered with code 0", service, id)
		}
	}
	for service := range services {
		if len(refused[service]) == 0 {
			t.Errorf("the %s service never answered HTTP 299", service)
		}
	}
	t.Logf("%d operations answered code 0; %d requests, each with its own g_nonce; HTTP 299: order %v, member %v",
		len(serviceOf), len(journal.Entries), slices.Compact(slices.Sorted(slices.Values(refused["order"]))),
		slices.Compact(slices.Sorted(slices.Values(refused["member"]))))
}
