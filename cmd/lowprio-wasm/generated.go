//go:build js && wasm

package main

import "io"

// generatedStream stands in for dc.Generated until branch dc's binding is merged.
// TODO(lpweb): replace with internal/lowprio/dc's function.
func generatedStream(n int64) io.Reader { return &genReader{n: n} }

type genReader struct{ off, n int64 }

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), g.n-g.off))
	for i := range k {
		x := uint64(g.off+int64(i))/8 + 0x9e3779b97f4a7c15
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		p[i] = byte(x >> (8 * (uint64(g.off+int64(i)) % 8)))
	}
	g.off += int64(k)
	return k, nil
}
