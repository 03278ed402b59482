package vp8enc

/*
#include <stdlib.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8dx.h>

static vpx_codec_err_t strata_vp8_dec_open(vpx_codec_ctx_t *ctx) {
	return vpx_codec_dec_init(ctx, vpx_codec_vp8_dx(), NULL, 0);
}

// strata_vp8_dec_frame decodes one frame and reports the size of the picture it produced.
static vpx_codec_err_t strata_vp8_dec_frame(vpx_codec_ctx_t *ctx, const unsigned char *data, unsigned int n, int *w, int *h) {
	vpx_codec_err_t err = vpx_codec_decode(ctx, data, n, NULL, 0);
	if (err != VPX_CODEC_OK) return err;
	vpx_codec_iter_t iter = NULL;
	vpx_image_t *img = vpx_codec_get_frame(ctx, &iter);
	*w = img ? (int)img->d_w : 0;
	*h = img ? (int)img->d_h : 0;
	return VPX_CODEC_OK;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// decoder is libvpx's VP8 decoder, for the tests to check that what the encoder produces is
// VP8 that a receiver decodes.
type decoder struct{ ctx *C.vpx_codec_ctx_t }

func newDecoder() (*decoder, error) {
	ctx := (*C.vpx_codec_ctx_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vpx_codec_ctx_t{}))))
	if err := C.strata_vp8_dec_open(ctx); err != C.VPX_CODEC_OK {
		C.free(unsafe.Pointer(ctx))
		return nil, fmt.Errorf("vp8 decoder: %s", C.GoString(C.vpx_codec_err_to_string(err)))
	}
	return &decoder{ctx: ctx}, nil
}

// decode decodes one frame and returns its picture's size.
func (d *decoder) decode(frame []byte) (width, height int, err error) {
	var w, h C.int
	if e := C.strata_vp8_dec_frame(d.ctx, (*C.uchar)(unsafe.Pointer(&frame[0])), C.uint(len(frame)), &w, &h); e != C.VPX_CODEC_OK {
		return 0, 0, fmt.Errorf("vp8 decoder: %s", C.GoString(C.vpx_codec_err_to_string(e)))
	}
	return int(w), int(h), nil
}

func (d *decoder) close() {
	C.vpx_codec_destroy(d.ctx)
	C.free(unsafe.Pointer(d.ctx))
}
