package sandbox

import (
	"strings"
	"testing"
)

// A simulator that cannot start says why, in its own words.
func TestALaunchThatFailsSaysWhy(t *testing.T) {
	_, err := launch([]string{"--no-such-flag"})
	if err == nil || !strings.Contains(err.Error(), "ended (exit status") ||
		!strings.Contains(err.Error(), "--no-such-flag") {
		t.Fatalf("a bad flag: %v", err)
	}
}

// The log kept for messages is the last logTail bytes, however much is written.
func TestTheLogKeepsItsTail(t *testing.T) {
	var log tail
	for i := range 100 {
		_, _ = log.Write([]byte(strings.Repeat(string(rune('a'+i%26)), 1000)))
	}
	kept := log.String()
	if len(kept) != logTail || !strings.HasSuffix(kept, strings.Repeat("v", 1000)) {
		t.Fatalf("kept %d bytes ending %q", len(kept), kept[len(kept)-10:])
	}
}
