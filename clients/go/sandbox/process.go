package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The variables that say where licensing-sim is, in the order they are tried (then PATH).
const (
	// BinEnv names the simulator's binary itself.
	BinEnv = "LICENSING_SIM_BIN"
	// BinDirEnv names the folder of the Python and npm packages' programs, as they read it.
	BinDirEnv = "LICENSING_SANDBOX_BIN_DIR"
)

// StartTimeout is how long a start waits for the simulator to say where it listens.
var StartTimeout = 30 * time.Second

// StopTimeout is how long a stop waits for the simulator to end on its closed stdin before
// it is killed.
var StopTimeout = 10 * time.Second

// The most of the simulator's stderr kept for an error message, and of its one stdout line.
const (
	logTail  = 16 << 10
	maxFirst = 4 << 10
)

// Binary is the licensing-sim to start: $LICENSING_SIM_BIN; else licensing-sim in
// $LICENSING_SANDBOX_BIN_DIR; else licensing-sim on PATH.
func Binary() (string, error) {
	if path := os.Getenv(BinEnv); path != "" {
		if err := executable(path); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinEnv, path, err)
		}
		return path, nil
	}
	if dir := os.Getenv(BinDirEnv); dir != "" {
		path := filepath.Join(dir, "licensing-sim")
		if err := executable(path); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinDirEnv, dir, err)
		}
		return path, nil
	}
	path, err := exec.LookPath("licensing-sim")
	if err != nil {
		return "", fmt.Errorf("licensing-sim not found: set %s to the binary "+
			"(`cargo build -p licensing-sim --features bin` makes target/debug/licensing-sim), "+
			"set %s to a folder holding it (the licensing-sandbox wheel's or npm package's), "+
			"or put it on PATH", BinEnv, BinDirEnv)
	}
	return path, nil
}

func executable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// process is a licensing-sim this program started, with --exit-on-stdin-close on a pipe
// only this process holds: when it ends, killed included, the simulator stops too.
type process struct {
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	url        string
	adminToken string
	log        *tail
	exited     chan struct{}
}

func launch(args []string) (*process, error) {
	exe, err := Binary()
	if err != nil {
		return nil, err
	}
	token := make([]byte, 24)
	_, _ = rand.Read(token)
	p := &process{adminToken: hex.EncodeToString(token), log: &tail{}, exited: make(chan struct{})}
	p.cmd = exec.Command(exe, append([]string{"--addr", "127.0.0.1:0", "--exit-on-stdin-close"}, args...)...)
	// The admin token through the environment, not the command line others can read; the
	// other LICENSING_SIM_ settings of this environment (fault rates, a seed) left out, so
	// that every sandbox starts the same. The journal directory CI collects stays.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LICENSING_SIM_") || strings.HasPrefix(kv, "LICENSING_SIM_JOURNAL_DIR=") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, "LICENSING_SIM_ADMIN_TOKEN="+p.adminToken)
	p.cmd.Stderr = p.log
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	// A pipe of this function's rather than StdoutPipe, which Wait closes as soon as the
	// process ends, perhaps before its line is read.
	stdout, writer, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout = writer
	err = p.cmd.Start()
	_ = writer.Close()
	if err != nil {
		_ = stdout.Close()
		return nil, fmt.Errorf("cannot start %s: %w", exe, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	line := make(chan string, 1)
	go func() {
		reader := bufio.NewReaderSize(io.LimitReader(stdout, maxFirst), maxFirst)
		first, _ := reader.ReadString('\n')
		line <- first
		_, _ = io.Copy(io.Discard, stdout)
		_ = stdout.Close()
	}()
	var what string
	select {
	case first := <-line:
		if url, ok := strings.CutPrefix(strings.TrimSpace(first), "listening on "); ok {
			p.url = url
			return p, nil
		}
		if first != "" {
			what = fmt.Sprintf("printed %q where it says where it listens", first)
		}
	case <-time.After(StartTimeout):
		what = "did not say where it listens within " + StartTimeout.String()
	}
	// The line's end comes before Wait's: stop waits for the exit, whose status says why.
	p.stop()
	if what == "" {
		what = fmt.Sprintf("ended (%v)", p.cmd.ProcessState)
	}
	return nil, fmt.Errorf("%s %s; its stderr:\n%s", exe, what, p.log)
}

// alive reports whether the process has not ended.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop closes the simulator's stdin, on which it stops as on SIGTERM (its journal
// written), and kills it if it has not ended after StopTimeout.
func (p *process) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(StopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// tail keeps the last logTail bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - logTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
