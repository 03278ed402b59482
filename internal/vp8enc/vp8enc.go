// Package vp8enc is a small cgo binding to libvpx's VP8 encoder, configured as libwebrtc's
// LibvpxVp8Encoder configures it for a real-time camera call, so that strata's emulated sender
// encodes what Chromium encodes with the same rate control.
//
// What makes libwebrtc's encoder behave as it does is its rate control: CBR with a 500/600/1000 ms
// decoder buffer model (rc_buf_initial_sz, rc_buf_optimal_sz, rc_buf_sz), 100 % undershoot and
// 15 % overshoot, and frame dropping when the buffer runs low (rc_dropframe_thresh 30). General
// Go encoder bindings (pion/mediadevices' vpx encoder, for one) set the target bitrate but expose
// neither the buffer sizes nor the drop threshold, hence this binding.
//
// An Encoder is not safe for concurrent use.
package vp8enc

/*
#cgo pkg-config: vpx
#include <stdlib.h>
#include <string.h>
#include <vpx/vpx_encoder.h>
#include <vpx/vp8cx.h>

typedef struct {
	vpx_codec_ctx_t ctx;
	vpx_codec_enc_cfg_t cfg;
	int width, height;
	int last_key;
} strata_vp8;

typedef struct {
	int width, height, fps, kbps, threads, cpu_used, max_intra_pct;
	// ts_layers 3 asks for three temporal layers, pattern 0,2,1,2, at the cumulative targets
	// ts_kbps; 0 for one layer.
	int ts_layers;
	unsigned ts_kbps[3];
} strata_vp8_params;

// strata_vp8_temporal configures three temporal layers as libvpx's own temporal scalability
// example does for a 4-frame period: layer ids 0,2,1,2, frame rate decimators 4,2,1. Error
// resilience keeps the entropy contexts from depending on frames a receiver may not get; no frame
// dropping and no automatic keyframes keep the pattern and the keyframes where the caller puts
// them.
static void strata_vp8_temporal(vpx_codec_enc_cfg_t *c, strata_vp8_params p) {
	static const unsigned ids[4] = {0, 2, 1, 2};
	c->g_error_resilient = VPX_ERROR_RESILIENT_DEFAULT;
	c->ts_number_layers = 3;
	c->ts_periodicity = 4;
	memcpy(c->ts_layer_id, ids, sizeof(ids));
	c->ts_rate_decimator[0] = 4;
	c->ts_rate_decimator[1] = 2;
	c->ts_rate_decimator[2] = 1;
	for (int i = 0; i < 3; i++) c->ts_target_bitrate[i] = p.ts_kbps[i];
	c->rc_target_bitrate = p.ts_kbps[2];
	c->rc_dropframe_thresh = 0;
	c->kf_mode = VPX_KF_DISABLED;
}

// strata_vp8_open fills the configuration as LibvpxVp8Encoder::InitEncode and
// InitAndSetControlSettings do for one camera stream, and opens the encoder.
static vpx_codec_err_t strata_vp8_open(strata_vp8 *e, strata_vp8_params p) {
	vpx_codec_enc_cfg_t *c = &e->cfg;
	vpx_codec_err_t err = vpx_codec_enc_config_default(vpx_codec_vp8_cx(), c, 0);
	if (err != VPX_CODEC_OK) return err;
	e->width = p.width;
	e->height = p.height;
	c->g_w = p.width;
	c->g_h = p.height;
	c->g_timebase.num = 1;
	c->g_timebase.den = 90000;
	c->g_threads = p.threads;
	c->g_lag_in_frames = 0;
	c->g_error_resilient = 0; // libwebrtc sets it only with temporal layers
	c->g_pass = VPX_RC_ONE_PASS;
	c->rc_end_usage = VPX_CBR;
	c->rc_target_bitrate = p.kbps;
	c->rc_resize_allowed = 0;
	c->rc_dropframe_thresh = 30;
	c->rc_min_quantizer = 2;
	c->rc_max_quantizer = 56;
	c->rc_undershoot_pct = 100;
	c->rc_overshoot_pct = 15;
	c->rc_buf_initial_sz = 500;
	c->rc_buf_optimal_sz = 600;
	c->rc_buf_sz = 1000;
	c->kf_mode = VPX_KF_AUTO;
	c->kf_max_dist = 3000;
	if (p.ts_layers == 3) strata_vp8_temporal(c, p);
	err = vpx_codec_enc_init(&e->ctx, vpx_codec_vp8_cx(), c, 0);
	if (err != VPX_CODEC_OK) return err;
	if ((err = vpx_codec_control(&e->ctx, VP8E_SET_NOISE_SENSITIVITY, 4u)) != VPX_CODEC_OK ||
	    (err = vpx_codec_control(&e->ctx, VP8E_SET_STATIC_THRESHOLD, 1u)) != VPX_CODEC_OK ||
	    (err = vpx_codec_control(&e->ctx, VP8E_SET_CPUUSED, p.cpu_used)) != VPX_CODEC_OK ||
	    (err = vpx_codec_control(&e->ctx, VP8E_SET_TOKEN_PARTITIONS, (int)VP8_ONE_TOKENPARTITION)) != VPX_CODEC_OK ||
	    (err = vpx_codec_control(&e->ctx, VP8E_SET_MAX_INTRA_BITRATE_PCT, (unsigned)p.max_intra_pct)) != VPX_CODEC_OK ||
	    (err = vpx_codec_control(&e->ctx, VP8E_SET_SCREEN_CONTENT_MODE, 0u)) != VPX_CODEC_OK) {
		vpx_codec_destroy(&e->ctx);
		return err;
	}
	return VPX_CODEC_OK;
}

// strata_vp8_last_qp is the last frame's quantiser on VP8's 0–127 scale (the scale libwebrtc's
// quality scaler reads).
static int strata_vp8_last_qp(strata_vp8 *e) {
	int qp = -1;
	if (vpx_codec_control(&e->ctx, VP8E_GET_LAST_QUANTIZER, &qp) != VPX_CODEC_OK) return -1;
	return qp;
}

static vpx_codec_err_t strata_vp8_set_rate(strata_vp8 *e, unsigned kbps) {
	e->cfg.rc_target_bitrate = kbps;
	return vpx_codec_enc_config_set(&e->ctx, &e->cfg);
}

// strata_vp8_encode encodes one I420 frame whose planes follow each other without padding. The
// image wraps the caller's memory for the call only: the encoder copies its source before it
// returns (it keeps no lookahead with g_lag_in_frames 0). flags are the frame's reference and
// update flags; layer ≥ 0 is its temporal layer (for the rate control of a layered encoder).
static vpx_codec_err_t strata_vp8_encode(strata_vp8 *e, unsigned char *frame, vpx_codec_pts_t pts,
		unsigned long duration, int force_key, long flags, int layer) {
	vpx_image_t img;
	if (!vpx_img_wrap(&img, VPX_IMG_FMT_I420, e->width, e->height, 1, frame)) return VPX_CODEC_INVALID_PARAM;
	if (layer >= 0) {
		vpx_codec_err_t err = vpx_codec_control(&e->ctx, VP8E_SET_TEMPORAL_LAYER_ID, layer);
		if (err != VPX_CODEC_OK) return err;
	}
	if (force_key) flags = VPX_EFLAG_FORCE_KF;
	return vpx_codec_encode(&e->ctx, &img, pts, duration, flags, VPX_DL_REALTIME);
}

// strata_vp8_collect copies the last encode's frame data into dst and returns its size, or the
// negated size when dst is too small (the packets stay available until the next encode, so the
// caller may grow dst and call again).
static long strata_vp8_collect(strata_vp8 *e, unsigned char *dst, long cap) {
	vpx_codec_iter_t iter = NULL;
	const vpx_codec_cx_pkt_t *pkt;
	long n = 0;
	e->last_key = 0;
	while ((pkt = vpx_codec_get_cx_data(&e->ctx, &iter)) != NULL) {
		if (pkt->kind != VPX_CODEC_CX_FRAME_PKT) continue;
		if (n + (long)pkt->data.frame.sz <= cap) memcpy(dst + n, pkt->data.frame.buf, pkt->data.frame.sz);
		n += (long)pkt->data.frame.sz;
		if (pkt->data.frame.flags & VPX_FRAME_IS_KEY) e->last_key = 1;
	}
	return n <= cap ? n : -n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Encoder is one VP8 encoder. Its methods must not be called concurrently.
type Encoder struct {
	e             *C.strata_vp8
	width, height int
	fps           float64
	kbps          uint
	forceKey      bool
	out           []byte
	layers        *temporal // nil: one layer
}

// Size limits: VP8 codes 14-bit dimensions; the frames are 4:2:0 without padding, so even.
const maxSide = 1<<14 - 1

// ErrClosed is returned by an Encoder used after Close.
var ErrClosed = errors.New("vp8enc: encoder closed")

// New opens an encoder for frames of width × height (even, at most 16383) at fps frames per
// second and a target of bitrate bit/s.
func New(width, height int, fps float64, bitrate float64) (*Encoder, error) {
	return open(width, height, fps, bitrate, nil)
}

// open opens an encoder, of three temporal layers at the cumulative targets ts (kbit/s) when ts
// is set.
func open(width, height int, fps float64, bitrate float64, ts *[3]uint) (*Encoder, error) {
	if width < 2 || height < 2 || width > maxSide || height > maxSide || width%2 != 0 || height%2 != 0 {
		return nil, fmt.Errorf("vp8enc: frame size %dx%d must be even and between 2 and %d", width, height, maxSide)
	}
	if !(fps >= 1 && fps <= 1000) {
		return nil, fmt.Errorf("vp8enc: frame rate %v out of range [1, 1000]", fps)
	}
	if !(bitrate > 0) {
		return nil, fmt.Errorf("vp8enc: bitrate %v must be positive", bitrate)
	}
	enc := &Encoder{width: width, height: height, fps: fps, kbps: kbps(bitrate)}
	p := C.strata_vp8_params{width: C.int(width), height: C.int(height), fps: C.int(fps + 0.5),
		kbps: C.int(enc.kbps), threads: C.int(threads(width, height, runtime.NumCPU())),
		cpu_used: C.int(cpuUsed(width, height)), max_intra_pct: C.int(maxIntraPct(fps))}
	if ts != nil {
		p.ts_layers = 3
		for i, k := range ts {
			p.ts_kbps[i] = C.uint(k)
		}
		enc.layers = &temporal{}
		p.max_intra_pct = temporalIntraPct
	}
	enc.e = (*C.strata_vp8)(C.calloc(1, C.size_t(unsafe.Sizeof(C.strata_vp8{}))))
	if enc.e == nil {
		return nil, errors.New("vp8enc: out of memory")
	}
	if err := C.strata_vp8_open(enc.e, p); err != C.VPX_CODEC_OK {
		C.free(unsafe.Pointer(enc.e))
		return nil, fmt.Errorf("vp8enc: opening the encoder: %s", C.GoString(C.vpx_codec_err_to_string(err)))
	}
	enc.out = make([]byte, 0, width*height/4)
	return enc, nil
}

// kbps is libvpx's target unit; libwebrtc truncates, and a target under 1 kbit/s is 1.
func kbps(bps float64) uint { return uint(max(1, min(bps/1000, 1e6))) }

// cpuUsed is libwebrtc's speed for a desktop camera stream: -6, but -4 below CIF, where the
// encoder can afford more effort.
func cpuUsed(width, height int) int {
	if width*height < 352*288 {
		return -4
	}
	return -6
}

// threads is libwebrtc's thread count for the frame size and the machine's cores (desktop).
func threads(width, height, cpus int) int {
	px := width * height
	switch {
	case px >= 1920*1080 && cpus > 8:
		return 8
	case px > 640*480 && cpus >= 6:
		return 3
	case px > 640*480 && cpus >= 3:
		return 2
	}
	return 1
}

// maxIntraPct caps a keyframe at half the optimal buffer (600 ms) of the target rate, as a
// percentage of a frame's share, and at no less than three frames' worth (libwebrtc's rule).
func maxIntraPct(fps float64) int { return max(300, int(600*0.5*float64(int(fps+0.5))/10)) }

// SetBitrate changes the target; it applies from the next frame.
func (enc *Encoder) SetBitrate(bps float64) error {
	if enc.e == nil {
		return ErrClosed
	}
	if !(bps > 0) {
		return fmt.Errorf("vp8enc: bitrate %v must be positive", bps)
	}
	if enc.layers != nil {
		return errLayered
	}
	k := kbps(bps)
	if k == enc.kbps {
		return nil
	}
	if err := C.strata_vp8_set_rate(enc.e, C.uint(k)); err != C.VPX_CODEC_OK {
		return enc.fail("setting the bitrate", err)
	}
	enc.kbps = k
	return nil
}

// Resize makes the encoder take width × height frames from the next one on, as libwebrtc does when
// its video adapter changes the resolution: it releases the encoder and initialises a new one for
// the new size (LibvpxVp8Encoder::InitEncode starts with Release), so the rate control starts
// afresh, the speed and thread count follow the size, and the next frame is a keyframe. The
// current target carries over.
func (enc *Encoder) Resize(width, height int) error {
	if enc.e == nil {
		return ErrClosed
	}
	if width == enc.width && height == enc.height {
		return nil
	}
	if enc.layers != nil {
		return errLayered
	}
	next, err := New(width, height, enc.fps, float64(enc.kbps)*1000)
	if err != nil {
		return err
	}
	enc.Close()
	*enc = *next
	return nil
}

// Size is the frame size the encoder takes.
func (enc *Encoder) Size() (width, height int) { return enc.width, enc.height }

// LastQP is the quantiser of the last encoded frame on VP8's 0–127 scale (VP8E_GET_LAST_QUANTIZER,
// what libwebrtc reports as the frame's QP), or -1 before the first frame or after Close.
func (enc *Encoder) LastQP() int {
	if enc.e == nil {
		return -1
	}
	return int(C.strata_vp8_last_qp(enc.e))
}

// ForceKeyframe makes the next frame a keyframe.
func (enc *Encoder) ForceKeyframe() { enc.forceKey = true }

// Encode encodes one I420 frame (Y, then U, then V, without padding: width×height×3/2 bytes)
// with presentation time pts in 90 kHz ticks. It returns the encoded frame, or nil when the
// rate control dropped it; the slice is the encoder's own and is overwritten by the next call.
func (enc *Encoder) Encode(frame []byte, pts int64) (data []byte, keyframe bool, err error) {
	if enc.e == nil {
		return nil, false, ErrClosed
	}
	if want := enc.width * enc.height * 3 / 2; len(frame) != want {
		return nil, false, fmt.Errorf("vp8enc: frame of %d bytes, want %d for %dx%d I420", len(frame), want, enc.width, enc.height)
	}
	duration := C.ulong(90000/enc.fps + 0.5) // libwebrtc's nominal frame duration
	force := C.int(0)
	if enc.forceKey {
		force = 1
	}
	flags, layer := C.long(0), C.int(-1)
	if enc.layers != nil {
		f, l := enc.layers.next(enc.forceKey)
		flags, layer = C.long(f), C.int(l)
	}
	if err := C.strata_vp8_encode(enc.e, (*C.uchar)(unsafe.Pointer(&frame[0])), C.vpx_codec_pts_t(pts), duration, force, flags, layer); err != C.VPX_CODEC_OK {
		return nil, false, enc.fail("encoding", err)
	}
	enc.forceKey = false
	n := C.strata_vp8_collect(enc.e, enc.outPtr(), C.long(cap(enc.out)))
	if n < 0 {
		enc.out = make([]byte, 0, 2*int(-n))
		n = C.strata_vp8_collect(enc.e, enc.outPtr(), C.long(cap(enc.out)))
	}
	if n == 0 {
		return nil, false, nil
	}
	if enc.layers != nil && enc.e.last_key != 0 {
		enc.layers.keyframe()
	}
	return enc.out[:n], enc.e.last_key != 0, nil
}

func (enc *Encoder) outPtr() *C.uchar {
	return (*C.uchar)(unsafe.Pointer(unsafe.SliceData(enc.out[:1])))
}

func (enc *Encoder) fail(what string, err C.vpx_codec_err_t) error {
	msg := C.GoString(C.vpx_codec_err_to_string(err))
	if detail := C.vpx_codec_error_detail(&enc.e.ctx); detail != nil {
		msg += ": " + C.GoString(detail)
	}
	return fmt.Errorf("vp8enc: %s: %s", what, msg)
}

// Close frees the encoder's C memory; it is safe to call more than once.
func (enc *Encoder) Close() error {
	if enc.e == nil {
		return nil
	}
	C.vpx_codec_destroy(&enc.e.ctx)
	C.free(unsafe.Pointer(enc.e))
	enc.e = nil
	return nil
}
