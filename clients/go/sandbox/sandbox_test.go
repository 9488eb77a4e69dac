package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"example.com/licensing-sdk/clients/go/licensing"
	"example.com/licensing-sdk/clients/go/order"
	"example.com/licensing-sdk/clients/go/sandbox"
	"example.com/licensing-sdk/clients/go/sandbox/admin"
)

// holdEnv makes TestASandboxAnswers, run as a child by TestKilledTestBinaryLeavesNoSimulator,
// report its simulators and wait to be killed.
const holdEnv = "LICENSING_GO_SANDBOX_HOLD"

func shellNums(t *testing.T, sb *sandbox.Sandbox, size int32) []string {
	t.Helper()
	reply, err := sb.Order().AllocateShellNumsWithResponse(context.Background(), nil, order.AllocateShellNumsRequest{Size: size})
	if err := licensing.Check(reply, err); err != nil {
		t.Fatal(err)
	}
	return *reply.JSON200.Data
}

// TestASandboxAnswers: a tenant's services answer with its tokens, and its admin API with
// its admin token.
func TestASandboxAnswers(t *testing.T) {
	sb := sandbox.Start(t, sandbox.Options{Seed: "demo"})
	dedicated := sandbox.Start(t, sandbox.Options{Dedicated: true})
	if !strings.Contains(sb.URL, "/t/"+sb.TenantID) || len(sb.TenantID) != 32 {
		t.Fatalf("the tenant's URL %s and id %s", sb.URL, sb.TenantID)
	}
	if sb.Seeded == nil || sb.Seeded.Enterprises[0].Name != "Acme Robotics" {
		t.Fatalf("the demo seed: %+v", sb.Seeded)
	}
	if got := shellNums(t, dedicated, 1); len(got) != 1 {
		t.Fatalf("allocateShellNums: %v", got)
	}
	if sb.PID() == dedicated.PID() {
		t.Fatalf("a dedicated sandbox shares process %d", sb.PID())
	}
	if os.Getenv(holdEnv) != "" {
		fmt.Printf("simulators %d %d\n", sb.PID(), dedicated.PID())
		time.Sleep(time.Hour) // until killed
	}
}

// TestTenantsAreIsolated: two tests' sandboxes share a simulator but nothing else.
func TestTenantsAreIsolated(t *testing.T) {
	var pids [2]int
	var journals [2]int
	for i := range 2 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			sb := sandbox.Start(t, sandbox.Options{})
			pids[i] = sb.PID()
			// Each tenant's own allocator: the same first numbers in both.
			if got := shellNums(t, sb, 2); got[0] != "8000000001" || got[1] != "8000000002" {
				t.Fatalf("allocateShellNums in a new tenant: %v", got)
			}
			journals[i] = len(sb.Journal().Entries)
		})
	}
	if pids[0] != pids[1] || journals != [2]int{1, 1} {
		t.Fatalf("processes %v, journal entries %v", pids, journals)
	}
}

// TestAdminOperations: seed, clock, faults and journal of a tenant, and Reset.
func TestAdminOperations(t *testing.T) {
	sb := sandbox.Start(t, sandbox.Options{Region: "singapore"})
	seeded := sb.LoadBuiltinSeed("demo")
	if len(seeded.Enterprises) == 0 || seeded.Enterprises[0].EnterpriseGlobalID == "" {
		t.Fatalf("loadBuiltinSeed: %+v", seeded)
	}
	own := sb.LoadSeed(admin.Seed{Enterprises: []admin.SeedEnterprise{{Name: "Tiny", CrmCustomerID: "CRM-TINY"}}})
	if len(own.Enterprises) != 1 || own.Enterprises[0].Name != "Tiny" {
		t.Fatalf("loadSeed: %+v", own)
	}

	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if clock := sb.SetClock(start, true); clock.Now != start.UnixMilli() || !clock.Frozen {
		t.Fatalf("setClock: %+v", clock)
	}
	if clock := sb.AdvanceClock(24 * time.Hour); clock.Now != start.Add(24*time.Hour).UnixMilli() {
		t.Fatalf("advanceClock: %+v", clock)
	}
	if clock := sb.Clock(); clock.Now != start.Add(24*time.Hour).UnixMilli() {
		t.Fatalf("getClock: %+v", clock)
	}

	rule := sb.AddFault(admin.FaultRuleSpec{Operation: "allocateShellNums", Times: ptr(int64(1)),
		Fault: admin.Fault{Kind: "code", Code: ptr("500")}})
	reply, err := sb.Order().AllocateShellNumsWithResponse(context.Background(), nil, order.AllocateShellNumsRequest{Size: 1})
	if err := licensing.Check(reply, err); err == nil || !strings.HasPrefix(err.Error(), "500: ") {
		t.Fatalf("the fault rule %d did not fire: %v", rule.ID, err)
	}
	// Singapore's region marker.
	if got := shellNums(t, sb, 1); got[0][0] != '6' {
		t.Fatalf("allocateShellNums in singapore: %v", got)
	}
	sb.AddFault(admin.FaultRuleSpec{Operation: "allocateShellNums", Fault: admin.Fault{Kind: "code", Code: ptr("500")}})
	sb.ClearFaults()
	shellNums(t, sb, 1)

	journal := sb.Journal().Entries
	if len(journal) != 3 || journal[0].Fault == nil || *journal[0].Fault != rule.ID || journal[1].Fault != nil {
		t.Fatalf("listJournal: %+v", journal)
	}
	sb.ClearJournal()
	if left := sb.Journal().Entries; len(left) != 0 {
		t.Fatalf("clearJournal left %+v", left)
	}
	sb.Reset()
	if got := shellNums(t, sb, 1); got[0] != "6000000001" {
		t.Fatalf("after reset the sequence starts again: %v", got)
	}
}

// TestBinaryLookup: the variable first, and an error naming it when it is wrong.
func TestBinaryLookup(t *testing.T) {
	t.Setenv(sandbox.BinEnv, "/nonexistent/licensing-sim")
	if _, err := sandbox.Binary(); err == nil || !strings.Contains(err.Error(), "LICENSING_SIM_BIN=/nonexistent/licensing-sim") {
		t.Fatalf("a wrong %s: %v", sandbox.BinEnv, err)
	}
	t.Setenv(sandbox.BinEnv, "")
	t.Setenv(sandbox.BinDirEnv, t.TempDir())
	if _, err := sandbox.Binary(); err == nil || !strings.Contains(err.Error(), sandbox.BinDirEnv) {
		t.Fatalf("an empty %s: %v", sandbox.BinDirEnv, err)
	}
	t.Setenv(sandbox.BinDirEnv, "")
	t.Setenv("PATH", t.TempDir())
	_, err := sandbox.Binary()
	for _, want := range []string{"licensing-sim not found", sandbox.BinEnv, sandbox.BinDirEnv, "PATH"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("no binary anywhere: %v (wants %q)", err, want)
		}
	}
}

// TestTokensStayOutOfLogs: printing a sandbox's tokens shows none of them.
func TestTokensStayOutOfLogs(t *testing.T) {
	sb := sandbox.Start(t, sandbox.Options{})
	for _, shown := range []string{fmt.Sprint(sb.Tokens), fmt.Sprintf("%+v", sb.Tokens), fmt.Sprintf("%#v", sb.Tokens), fmt.Sprintf("%v", *sb), fmt.Sprintf("%+v", sb)} {
		for _, token := range []string{sb.Tokens.App, sb.Tokens.Client, sb.Tokens.User, sb.Tokens.Admin} {
			if strings.Contains(shown, token) {
				t.Fatalf("%q shows a token", shown)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
