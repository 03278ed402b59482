package vp8enc

/*
#include <stdlib.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8dx.h>

static vpx_codec_err_t strata_vp8_dec_open(vpx_codec_ctx_t *ctx) {
	return vpx_codec_dec_init(ctx, vpx_codec_vp8_dx(), NULL, 0);
}

// strata_vp8_dec_sum is an FNV-1a hash of the picture's visible pixels, plane by plane.
static unsigned long long strata_vp8_dec_sum(const vpx_image_t *img) {
	unsigned long long h = 1469598103934665603ULL;
	for (int p = 0; p < 3; p++) {
		int w = p ? (int)(img->d_w + 1) / 2 : (int)img->d_w;
		int rows = p ? (int)(img->d_h + 1) / 2 : (int)img->d_h;
		for (int y = 0; y < rows; y++) {
			const unsigned char *row = img->planes[p] + (long)y * img->stride[p];
			for (int x = 0; x < w; x++) h = (h ^ row[x]) * 1099511628211ULL;
		}
	}
	return h;
}

// strata_vp8_dec_frame decodes one frame and reports the size of the picture it produced and
// a hash of its pixels.
static vpx_codec_err_t strata_vp8_dec_frame(vpx_codec_ctx_t *ctx, const unsigned char *data, unsigned int n, int *w, int *h,
		unsigned long long *sum) {
	vpx_codec_err_t err = vpx_codec_decode(ctx, data, n, NULL, 0);
	if (err != VPX_CODEC_OK) return err;
	vpx_codec_iter_t iter = NULL;
	vpx_image_t *img = vpx_codec_get_frame(ctx, &iter);
	*w = img ? (int)img->d_w : 0;
	*h = img ? (int)img->d_h : 0;
	*sum = img ? strata_vp8_dec_sum(img) : 0;
	return VPX_CODEC_OK;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Decoder is libvpx's VP8 decoder, for tests to check that what an encoder produces is VP8 that
// a receiver decodes (and, with pixel hashes, to the same pictures). It is not safe for concurrent
// use.
type Decoder struct{ ctx *C.vpx_codec_ctx_t }

// NewDecoder opens a decoder; Close frees it.
func NewDecoder() (*Decoder, error) {
	ctx := (*C.vpx_codec_ctx_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vpx_codec_ctx_t{}))))
	if err := C.strata_vp8_dec_open(ctx); err != C.VPX_CODEC_OK {
		C.free(unsafe.Pointer(ctx))
		return nil, fmt.Errorf("vp8 decoder: %s", C.GoString(C.vpx_codec_err_to_string(err)))
	}
	return &Decoder{ctx: ctx}, nil
}

// decode decodes one frame and returns its picture's size.
func (d *Decoder) decode(frame []byte) (width, height int, err error) {
	width, height, _, err = d.Decode(frame)
	return width, height, err
}

// Decode decodes one frame and returns its picture's size and a hash of its pixels (two
// decoders that produce the same picture give the same hash).
func (d *Decoder) Decode(frame []byte) (width, height int, sum uint64, err error) {
	if d.ctx == nil {
		return 0, 0, 0, fmt.Errorf("vp8 decoder: closed")
	}
	if len(frame) == 0 {
		return 0, 0, 0, fmt.Errorf("vp8 decoder: an empty frame")
	}
	var w, h C.int
	var s C.ulonglong
	if e := C.strata_vp8_dec_frame(d.ctx, (*C.uchar)(unsafe.Pointer(&frame[0])), C.uint(len(frame)), &w, &h, &s); e != C.VPX_CODEC_OK {
		return 0, 0, 0, fmt.Errorf("vp8 decoder: %s", C.GoString(C.vpx_codec_err_to_string(e)))
	}
	return int(w), int(h), uint64(s), nil
}

// Close frees the decoder; it is safe to call more than once.
func (d *Decoder) Close() {
	if d.ctx == nil {
		return
	}
	C.vpx_codec_destroy(d.ctx)
	C.free(unsafe.Pointer(d.ctx))
	d.ctx = nil
}
