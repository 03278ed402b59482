package videogen

import "fmt"

// Scaler shrinks I420 frames (planes without padding) by box filtering, as libyuv's ScalePlaneBox
// does when Chromium's video adapter asks for a smaller frame than the camera's: each output
// pixel is the mean of the source pixels its box covers, the box edges falling on whole source
// pixels (so that at 3/4 the boxes are alternately one and two pixels wide). It keeps its output
// and its tables between frames: scaling allocates nothing once the sizes are set.
type Scaler struct {
	sw, sh, dw, dh int
	out            []byte
	lumaX, chromaX []int32 // each output column's first source column, and one past the last
}

// NewScaler returns a scaler from sw × sh frames to dw × dh (even sizes, dw ≤ sw, dh ≤ sh).
func NewScaler(sw, sh, dw, dh int) (*Scaler, error) {
	s := &Scaler{}
	return s, s.Resize(sw, sh, dw, dh)
}

// Resize changes the sizes, reusing the buffers when they are large enough.
func (s *Scaler) Resize(sw, sh, dw, dh int) error {
	if sw < 2 || sh < 2 || dw < 2 || dh < 2 || sw%2+sh%2+dw%2+dh%2 != 0 || dw > sw || dh > sh {
		return fmt.Errorf("scaler: %dx%d to %dx%d: sizes must be even, positive and not growing", sw, sh, dw, dh)
	}
	s.sw, s.sh, s.dw, s.dh = sw, sh, dw, dh
	if dw < sw || dh < sh {
		s.out = grow(s.out, dw*dh*3/2)
	}
	s.lumaX = edges(s.lumaX, sw, dw)
	s.chromaX = edges(s.chromaX, sw/2, dw/2)
	return nil
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// edges fills out with the box edges of n output pixels over src source pixels: n+1 values.
func edges(out []int32, src, n int) []int32 {
	out = grow(out, n+1)
	for i := range n + 1 {
		out[i] = int32(i * src / n)
	}
	return out
}

// Scale returns the scaled frame; the slice is the scaler's own and is overwritten by the next
// call, or src itself when the sizes are the same. src must be sw × sh × 3/2 bytes.
func (s *Scaler) Scale(src []byte) ([]byte, error) {
	if len(src) != s.sw*s.sh*3/2 {
		return nil, fmt.Errorf("scaler: frame of %d bytes, want %d for %dx%d I420", len(src), s.sw*s.sh*3/2, s.sw, s.sh)
	}
	if s.sw == s.dw && s.sh == s.dh {
		return src, nil
	}
	ls, ld := s.sw*s.sh, s.dw*s.dh
	cs, cd := ls/4, ld/4
	box(s.out[:ld], src[:ls], s.sw, s.sh, s.dw, s.dh, s.lumaX)
	box(s.out[ld:ld+cd], src[ls:ls+cs], s.sw/2, s.sh/2, s.dw/2, s.dh/2, s.chromaX)
	box(s.out[ld+cd:], src[ls+cs:], s.sw/2, s.sh/2, s.dw/2, s.dh/2, s.chromaX)
	return s.out, nil
}

// box scales one plane: rows by the edges y·sh/dh, columns by xs.
func box(dst, src []byte, sw, sh, dw, dh int, xs []int32) {
	for y := range dh {
		y0, y1 := y*sh/dh, (y+1)*sh/dh
		row := dst[y*dw : (y+1)*dw]
		for x := range row {
			x0, x1 := int(xs[x]), int(xs[x+1])
			sum := 0
			for yy := y0; yy < y1; yy++ {
				for _, v := range src[yy*sw+x0 : yy*sw+x1] {
					sum += int(v)
				}
			}
			n := (y1 - y0) * (x1 - x0)
			row[x] = byte((sum + n/2) / n)
		}
	}
}
