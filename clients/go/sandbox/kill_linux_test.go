package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"example.com/licensing-sdk/clients/go/licensing"
	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/sandbox"
)

// wait bounds how long a simulator may take to end once it should: its stdin closed, it
// stops as on SIGTERM. A bound for a hang, not a measure of speed.
const wait = 30 * time.Second

// gone reports whether the process pid has ended within wait (a zombie, ended but not yet
// reaped by whoever adopted it, counts as ended).
func gone(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// pid (comm) state …: the state follows the last parenthesis.
		if fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(fields) > 0 && fields[0] == "Z" {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// isSimulator reports whether pid is a licensing-sim, so that a reused pid is not taken
// for one.
func isSimulator(pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(cmdline), "licensing-sim") &&
		strings.Contains(string(cmdline), "--exit-on-stdin-close")
}

// TestKilledTestBinaryLeavesNoSimulator runs this test binary again as a child holding a
// shared and a dedicated sandbox (TestASandboxAnswers with holdEnv set), SIGKILLs it, and
// checks that both simulators end: no Cleanup runs then, only their closed stdin stops
// them.
func TestKilledTestBinaryLeavesNoSimulator(t *testing.T) {
	child := exec.Command(os.Args[0], "-test.run=^TestASandboxAnswers$", "-test.count=1")
	child.Env = append(os.Environ(), holdEnv+"=1")
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	reported := make(chan [2]int, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			var pids [2]int
			if _, err := fmt.Sscanf(lines.Text(), "simulators %d %d", &pids[0], &pids[1]); err == nil {
				reported <- pids
				return
			}
		}
		close(reported)
	}()
	var pids [2]int
	select {
	case got, ok := <-reported:
		if !ok {
			_ = child.Wait()
			t.Fatalf("the child ended without reporting its simulators (%v)", child.ProcessState)
		}
		pids = got
	case <-time.After(2 * wait):
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatal("the child did not report its simulators")
	}
	for _, pid := range pids {
		if !isSimulator(pid) {
			t.Fatalf("process %d is not a licensing-sim started with --exit-on-stdin-close", pid)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the child was not killed: %v", err)
	}
	for _, pid := range pids {
		if !gone(t, pid) {
			t.Errorf("simulator %d outlived its SIGKILLed test binary", pid)
		}
	}
}

// TestDedicatedSandboxStopsAtCleanup: a simulator of a test's own, with its flags, ends
// when the test does.
func TestDedicatedSandboxStopsAtCleanup(t *testing.T) {
	var pid int
	t.Run("dedicated", func(t *testing.T) {
		sb := sandbox.Start(t, sandbox.Options{Seed: "demo", Args: []string{"--password-min", "12"}})
		pid = sb.PID()
		acme := sb.Seeded.Enterprises[0]
		reply, err := sb.Member().ResetMemberPasswordWithResponse(context.Background(),
			acme.EnterpriseGlobalID, acme.Members["alice"], nil, member.ResetPasswordRequest{Password: "Eleven-char"})
		if err := licensing.Check(reply, err); err == nil || !strings.Contains(err.Error(), "12") {
			t.Fatalf("an 11-character password under --password-min 12: %v", err)
		}
	})
	if !gone(t, pid) {
		t.Fatalf("the dedicated simulator %d is still running after its test", pid)
	}
}
