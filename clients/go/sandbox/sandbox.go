// Package sandbox gives each Go test a licensing sandbox of its own: a tenant of a
// licensing-sim that this package starts on a free loopback port, with its URL, its tokens,
// clients of both services and the admin operations (seed, clock, faults, journal).
//
//	func TestOrders(t *testing.T) {
//		sb := sandbox.Start(t, sandbox.Options{Seed: "demo"})
//		order := sb.Order() // licensing.NewOrderClient(sb.URL, sb.Tokens.App)
//		…
//	}
//
// By default the tests of one test binary share one simulator, started by the first
// Start, and each Start creates a tenant in it (an empty sandbox, or seeded): its own
// state, ids, clock, fault rules, journal and tokens, deleted by t.Cleanup. Tests may run
// in parallel. Options.Dedicated (or Options.Args, the simulator's flags) starts a
// simulator for the test alone, stopped by t.Cleanup.
//
// Every simulator runs with --exit-on-stdin-close on a pipe only the test binary holds, so
// none outlives it, however it ends: a failed test, a timeout's panic, Ctrl-C or SIGKILL.
//
// The binary: $LICENSING_SIM_BIN, else licensing-sim in $LICENSING_SANDBOX_BIN_DIR, else
// licensing-sim on PATH (see Binary).
package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"example.com/licensing-sdk/clients/go/licensing"
	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/order"
	"example.com/licensing-sdk/clients/go/sandbox/admin"
)

// Options say what a test's sandbox starts with; the zero value is an empty tenant of the
// shared simulator.
type Options struct {
	// Seed is a built-in seed loaded into the tenant ("demo"), none when empty.
	Seed string
	// Region is the region of its asset numbers: "domestic" (8…, the default) or
	// "singapore" (6…).
	Region string
	// Dedicated starts a simulator for this test alone, stopped by t.Cleanup.
	Dedicated bool
	// Args are flags of a simulator for this test alone (sim/README.md, "Command line":
	// "--password-min", "12"); they imply Dedicated.
	Args []string
}

// Tokens are a tenant's own credentials, accepted under its URL only.
type Tokens struct {
	// App is the order service's application token.
	App string
	// Client and User are the member center's client and user tokens.
	Client, User string
	// Admin is the token of the tenant's admin API.
	Admin string
}

// String keeps the tokens out of logs and failure messages.
func (Tokens) String() string { return "sandbox.Tokens{[REDACTED]}" }

// GoString keeps them out of %#v.
func (t Tokens) GoString() string { return t.String() }

// Sandbox is one test's tenant.
type Sandbox struct {
	// URL is the base address of both services and of the tenant's admin API.
	URL    string
	Tokens Tokens
	// TenantID is the tenant's id (32 hexadecimal digits).
	TenantID string
	// Seeded maps the seed's names to the ids the simulator gave, when Options.Seed was set.
	Seeded *admin.SeedResult

	tb    testing.TB
	admin *admin.ClientWithResponses
	proc  *process
}

// String names the tenant and its URL, never its tokens nor the simulator's.
func (s Sandbox) String() string {
	return fmt.Sprintf("sandbox.Sandbox{URL: %s, TenantID: %s}", s.URL, s.TenantID)
}

// RequestTimeout bounds each admin call a Sandbox makes.
var RequestTimeout = 60 * time.Second

var shared struct {
	sync.Mutex
	proc *process
}

// Start creates the test's sandbox, failing the test when it cannot.
func Start(tb testing.TB, opts Options) *Sandbox {
	tb.Helper()
	proc, err := simulator(tb, opts)
	if err != nil {
		tb.Fatalf("sandbox: %v", err)
	}
	root, err := adminClient(proc.url, proc.adminToken)
	if err != nil {
		tb.Fatalf("sandbox: %v", err)
	}
	spec := admin.TenantSpec{Name: name(tb)}
	if opts.Seed != "" {
		seed := admin.BuiltinSeed(opts.Seed)
		spec.Seed = &seed
	}
	if opts.Region != "" {
		region := admin.TenantRegion(opts.Region)
		spec.Region = &region
	}
	reply, err := root.CreateTenantWithResponse(context.Background(), spec)
	if err := expect("createTenant", reply, err, http.StatusCreated); err != nil {
		tb.Fatalf("sandbox: %v (its log:\n%s)", err, proc.log)
	}
	tenant := reply.JSON201
	tb.Cleanup(func() {
		// The simulator may have ended before (a dedicated one the test stopped).
		if proc.alive() {
			reply, err := root.DeleteTenantWithResponse(context.Background(), tenant.ID)
			if err := expect("deleteTenant", reply, err, http.StatusNoContent); err != nil {
				tb.Errorf("sandbox: %v", err)
			}
		}
	})
	own, err := adminClient(tenant.URL, tenant.Tokens.Admin)
	if err != nil {
		tb.Fatalf("sandbox: %v", err)
	}
	return &Sandbox{
		URL: tenant.URL,
		Tokens: Tokens{
			App: tenant.Tokens.App, Client: tenant.Tokens.Client,
			User: tenant.Tokens.User, Admin: tenant.Tokens.Admin,
		},
		TenantID: tenant.ID,
		Seeded:   tenant.Seeded,
		tb:       tb,
		admin:    own,
		proc:     proc,
	}
}

// simulator is the test binary's shared simulator (started when there is none, or the
// last one ended), or one for this test alone.
func simulator(tb testing.TB, opts Options) (*process, error) {
	if opts.Dedicated || len(opts.Args) > 0 {
		proc, err := launch(opts.Args)
		if err != nil {
			return nil, err
		}
		tb.Cleanup(proc.stop)
		return proc, nil
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.proc == nil || !shared.proc.alive() {
		proc, err := launch(nil)
		if err != nil {
			return nil, err
		}
		shared.proc = proc
	}
	return shared.proc, nil
}

// name is the test's name as the tenant's, within the 100 characters a tenant name may have.
func name(tb testing.TB) *string {
	runes := []rune(tb.Name())
	text := string(runes[:min(len(runes), 100)])
	return &text
}

func adminClient(url, token string) (*admin.ClientWithResponses, error) {
	client := &http.Client{Timeout: RequestTimeout, Transport: licensing.LimitTransport{}}
	return admin.NewClientWithResponses(url, admin.WithHTTPClient(client),
		admin.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
}

// expect fails unless the call answered the status wanted.
func expect(what string, reply interface {
	StatusCode() int
	Bytes() []byte
}, err error, want int) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if got := reply.StatusCode(); got != want {
		body := reply.Bytes()
		return fmt.Errorf("%s answered HTTP %d, not %d: %q", what, got, want, body[:min(len(body), 500)])
	}
	return nil
}

// PID is the simulator's process id (shared with the test binary's other sandboxes unless
// it is Dedicated).
func (s *Sandbox) PID() int { return s.proc.cmd.Process.Pid }

// Order is a client of the tenant's order service, with its application token.
func (s *Sandbox) Order() *order.ClientWithResponses {
	s.tb.Helper()
	client, err := licensing.NewOrderClient(s.URL, s.Tokens.App)
	if err != nil {
		s.tb.Fatalf("sandbox: %v", err)
	}
	return client
}

// Member is a client of the tenant's member center, with its client and user tokens.
func (s *Sandbox) Member() *member.ClientWithResponses {
	s.tb.Helper()
	client, err := licensing.NewMemberClient(s.URL, s.Tokens.Client, s.Tokens.User)
	if err != nil {
		s.tb.Fatalf("sandbox: %v", err)
	}
	return client
}

// Admin is the tenant's admin API client, with its admin token, for what the methods below
// do not cover (state export and import, a fault rule's hits, journal filters).
func (s *Sandbox) Admin() *admin.ClientWithResponses { return s.admin }

// must fails the test unless the admin call answered the status wanted.
func (s *Sandbox) must(what string, reply interface {
	StatusCode() int
	Bytes() []byte
}, err error, want int) {
	s.tb.Helper()
	if err := expect(what, reply, err, want); err != nil {
		s.tb.Fatalf("sandbox: %v", err)
	}
}

// LoadBuiltinSeed loads a built-in seed ("demo") into the tenant: the ids it was given.
func (s *Sandbox) LoadBuiltinSeed(name string) admin.SeedResult {
	s.tb.Helper()
	reply, err := s.admin.LoadBuiltinSeedWithResponse(context.Background(), admin.BuiltinSeed(name))
	s.must("loadBuiltinSeed "+name, reply, err, http.StatusOK)
	return *reply.JSON200
}

// LoadSeed loads a seed of the test's own (sim/README.md, "Seeds").
func (s *Sandbox) LoadSeed(seed admin.Seed) admin.SeedResult {
	s.tb.Helper()
	reply, err := s.admin.LoadSeedWithResponse(context.Background(), seed)
	s.must("loadSeed", reply, err, http.StatusOK)
	return *reply.JSON200
}

// Reset forgets every enterprise, customer, order, asset, employee and loan of the tenant
// and sets its clock back to the machine's; the journal and fault rules stay.
func (s *Sandbox) Reset() {
	s.tb.Helper()
	reply, err := s.admin.ResetWithResponse(context.Background(), admin.ResetRequest{})
	s.must("reset", reply, err, http.StatusOK)
}

// Clock is the tenant's time.
func (s *Sandbox) Clock() admin.Clock {
	s.tb.Helper()
	reply, err := s.admin.GetClockWithResponse(context.Background())
	s.must("getClock", reply, err, http.StatusOK)
	return *reply.JSON200
}

// SetClock sets the tenant's time, frozen there or running on from it.
func (s *Sandbox) SetClock(now time.Time, frozen bool) admin.Clock {
	s.tb.Helper()
	reply, err := s.admin.SetClockWithResponse(context.Background(),
		admin.ClockSetting{Now: now.UnixMilli(), Frozen: &frozen})
	s.must("setClock", reply, err, http.StatusOK)
	return *reply.JSON200
}

// AdvanceClock moves the tenant's time forward by d (whole milliseconds).
func (s *Sandbox) AdvanceClock(d time.Duration) admin.Clock {
	s.tb.Helper()
	reply, err := s.admin.AdvanceClockWithResponse(context.Background(),
		admin.ClockAdvance{Ms: d.Milliseconds()})
	s.must("advanceClock", reply, err, http.StatusOK)
	return *reply.JSON200
}

// AddFault adds a fault rule: the rule as stored, with its id.
func (s *Sandbox) AddFault(rule admin.FaultRuleSpec) admin.FaultRule {
	s.tb.Helper()
	reply, err := s.admin.CreateFaultWithResponse(context.Background(), rule)
	s.must("createFault", reply, err, http.StatusCreated)
	return *reply.JSON201
}

// ClearFaults deletes every fault rule.
func (s *Sandbox) ClearFaults() {
	s.tb.Helper()
	reply, err := s.admin.ClearFaultsWithResponse(context.Background())
	s.must("clearFaults", reply, err, http.StatusNoContent)
}

// Journal is every request the tenant's services received, oldest first, with what they
// answered.
func (s *Sandbox) Journal() admin.JournalPage {
	s.tb.Helper()
	reply, err := s.admin.ListJournalWithResponse(context.Background(), nil)
	s.must("listJournal", reply, err, http.StatusOK)
	return *reply.JSON200
}

// ClearJournal forgets the tenant's journal.
func (s *Sandbox) ClearJournal() {
	s.tb.Helper()
	reply, err := s.admin.ClearJournalWithResponse(context.Background())
	s.must("clearJournal", reply, err, http.StatusNoContent)
}
