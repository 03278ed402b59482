package report

import (
	"encoding/binary"
	"hash/crc32"
	"image"
	"io"
	"math/bits"
)

// writePNG encodes an opaque RGBA image as an 8-bit RGB PNG, compressed for
// speed rather than size. A plot is mostly white with thin lines: with the
// "Up" filter every pixel that equals the one above becomes 0, and the
// stream is mostly long runs of one byte. The deflate coder below codes runs
// as matches at distance 1 and everything else as literals, with deflate's
// fixed Huffman table: a linear pass with no hashing and no code tables to
// build. It costs a tenth of image/png at its fastest level, for files about
// twice as large (a 864×432 plot: about 150 kB).
func writePNG(w io.Writer, img *image.RGBA) error {
	wd, ht := img.Rect.Dx(), img.Rect.Dy()
	out := make([]byte, 0, 256<<10)
	out = append(out, "\x89PNG\r\n\x1a\n"...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(wd))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(ht))
	ihdr[8], ihdr[9] = 8, 2 // 8 bits per sample, RGB; deflate, adaptive filtering, no interlace
	out = appendChunk(out, "IHDR", ihdr[:])

	// IDAT: its length is patched in once the data is known.
	idat := len(out)
	out = append(out, 0, 0, 0, 0, 'I', 'D', 'A', 'T', 0x78, 0x01) // zlib: deflate, 32 KiB window, fastest
	z := runCoder{out: out, sumA: 1}
	z.bits(1, 1) // the final block ...
	z.bits(1, 2) // ... with the fixed Huffman codes
	row := make([]byte, 1+3*wd)
	var above []byte // the previous row of img, nil for the first
	for y := 0; y < ht; y++ {
		pix := img.Pix[y*img.Stride : y*img.Stride+4*wd]
		if above != nil && string(pix) == string(above) {
			// The same pixels as the row above: the filter byte and zeros.
			z.feed(row[:1])
			z.feedZeros(3 * wd)
			above = pix
			continue
		}
		row[0] = 2 // Up
		out := row[1:]
		for x := 0; x < wd; x++ {
			p, o := pix[4*x:4*x+3:4*x+3], out[3*x:3*x+3:3*x+3]
			if above == nil {
				o[0], o[1], o[2] = p[0], p[1], p[2]
				continue
			}
			a := above[4*x : 4*x+3 : 4*x+3]
			o[0], o[1], o[2] = p[0]-a[0], p[1]-a[1], p[2]-a[2]
		}
		z.feed(row)
		above = pix
	}
	z.flushRun()
	z.code(256) // end of block
	z.align()
	out = binary.BigEndian.AppendUint32(z.out, uint32(z.sumB%adlerMod)<<16|uint32(z.sumA%adlerMod))
	binary.BigEndian.PutUint32(out[idat:], uint32(len(out)-idat-8))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[idat+4:]))
	out = appendChunk(out, "IEND", nil)
	_, err := w.Write(out)
	return err
}

func appendChunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	start := len(out)
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
}

// fixedCode is deflate's fixed Huffman code of each literal/length symbol,
// bit-reversed for LSB-first output, with its length.
var fixedCode = func() (t [286]struct {
	code uint16
	n    uint8
}) {
	for s := range t {
		var c, n int
		switch {
		case s < 144:
			c, n = 0x30+s, 8
		case s < 256:
			c, n = 0x190+s-144, 9
		case s < 280:
			c, n = s-256, 7
		default:
			c, n = 0xc0+s-280, 8
		}
		t[s].code = bits.Reverse16(uint16(c)) >> (16 - n)
		t[s].n = uint8(n)
	}
	return t
}()

// lengthBase and lengthExtra are deflate's length codes 257..284 (285 is 258).
var (
	lengthBase  = [...]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227}
	lengthExtra = [...]uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5}
)

// runCoder writes a deflate block of literals and distance-1 matches, and
// keeps zlib's Adler-32 checksum of what it is fed: a run of n bytes v
// adds n·v to the first sum and n·a + v·n(n+1)/2 to the second at once.
type runCoder struct {
	out  []byte
	acc  uint64
	nacc uint
	prev int  // the last byte fed ...
	init bool // ... once there is one
	run  int  // bytes equal to prev after it, not yet coded
	// sumA and sumB are Adler-32's sums, reduced modulo adlerMod at least
	// every adlerSpan literal bytes.
	sumA, sumB uint64
	literals   int
}

const (
	adlerMod  = 65521
	adlerSpan = 4096
)

func (z *runCoder) sumRun(v, n uint64) {
	z.sumB = (z.sumB + n%adlerMod*z.sumA + v*(n*(n+1)/2%adlerMod)) % adlerMod
	z.sumA = (z.sumA + n*v) % adlerMod
}

func (z *runCoder) bits(v uint64, n uint) {
	z.acc |= v << z.nacc
	z.nacc += n
	for z.nacc >= 8 {
		z.out = append(z.out, byte(z.acc))
		z.acc >>= 8
		z.nacc -= 8
	}
}

func (z *runCoder) align() {
	if z.nacc > 0 {
		z.out = append(z.out, byte(z.acc))
		z.acc, z.nacc = 0, 0
	}
}

func (z *runCoder) code(sym int) {
	c := fixedCode[sym]
	z.bits(uint64(c.code), uint(c.n))
}

// match codes a copy of n (3..258) bytes from distance 1.
func (z *runCoder) match(n int) {
	if n == 258 {
		z.code(285)
	} else {
		i := len(lengthBase) - 1
		for lengthBase[i] > n {
			i--
		}
		z.code(257 + i)
		z.bits(uint64(n-lengthBase[i]), lengthExtra[i])
	}
	z.bits(0, 5) // distance code 0: distance 1
}

func (z *runCoder) flushRun() {
	for z.run > 0 {
		switch n := min(z.run, 258); {
		case n >= 3:
			z.match(n)
			z.run -= n
		default:
			z.code(z.prev)
			z.run--
		}
	}
}

func (z *runCoder) feed(data []byte) {
	for i := 0; i < len(data); {
		b := int(data[i])
		if z.init && b == z.prev {
			// Count the whole run at once, eight bytes at a time.
			j := i + 1
			word := uint64(b) * 0x0101010101010101
			for j+8 <= len(data) && binary.LittleEndian.Uint64(data[j:]) == word {
				j += 8
			}
			for j < len(data) && int(data[j]) == b {
				j++
			}
			z.run += j - i
			z.sumRun(uint64(b), uint64(j-i))
			i = j
			continue
		}
		z.flushRun()
		z.code(b)
		z.sumA += uint64(b)
		z.sumB += z.sumA
		if z.literals++; z.literals == adlerSpan {
			z.sumA %= adlerMod
			z.sumB %= adlerMod
			z.literals = 0
		}
		z.prev, z.init = b, true
		i++
	}
}

// feedZeros feeds n zero bytes.
func (z *runCoder) feedZeros(n int) {
	if n == 0 {
		return
	}
	if !z.init || z.prev != 0 {
		z.feed([]byte{0})
		n--
	}
	z.run += n
	z.sumRun(0, uint64(n))
}
