package dc

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// The generated stream read in odd-sized pieces is the same as byte by byte, and the Verifier
// accepts it and rejects one changed, missing or extra byte.
func TestGenerated(t *testing.T) {
	const n = 100_003
	var buf bytes.Buffer
	if _, err := io.CopyBuffer(&buf, Generated(n), make([]byte, 7)); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for i := range b {
		if b[i] != GeneratedByte(int64(i)) {
			t.Fatalf("byte %d", i)
		}
	}
	if len(b) != n {
		t.Fatalf("%d bytes", len(b))
	}
	v := &Verifier{N: n}
	if _, err := v.Write(b); err != nil || v.Check() != nil {
		t.Fatal(err, v.Check())
	}
	b[5000]++
	v = &Verifier{N: n}
	if _, err := v.Write(b); !errors.Is(err, ErrMismatch) {
		t.Fatal("a changed byte passed")
	}
	v = &Verifier{N: n + 1}
	_, _ = v.Write(b[:10])
	if v.Check() == nil {
		t.Fatal("a short stream passed")
	}
	v = &Verifier{N: 3}
	if _, err := v.Write(b[:4]); err == nil {
		t.Fatal("an extra byte passed")
	}
}
