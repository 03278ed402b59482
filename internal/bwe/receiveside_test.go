package bwe

import (
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc/gcc"
)

func TestReceiveSideSendsREMBFromAbsSendTime(t *testing.T) {
	var rs *ReceiveSide
	factory := FactoryFunc(func(string) (interceptor.Interceptor, error) {
		rs = NewReceiveSide(gcc.NewReceiver())
		return rs, nil
	})
	sender, err := newAPI(t, noopFactory{}, sdp.ABSSendTimeURI).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	receiver, err := newAPI(t, factory, sdp.ABSSendTimeURI).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close()
	if rs == nil {
		t.Fatal("no receive-side interceptor was built")
	}

	track, _ := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8}, "v", "s")
	rtpSender, err := sender.AddTrack(track)
	if err != nil {
		t.Fatal(err)
	}
	remb := make(chan float32, 64)
	go func() {
		for {
			pkts, _, err := rtpSender.ReadRTCP()
			if err != nil {
				return
			}
			for _, p := range pkts {
				if r, ok := p.(*rtcp.ReceiverEstimatedMaximumBitrate); ok {
					select {
					case remb <- r.Bitrate:
					default:
					}
				}
			}
		}
	}()
	receiver.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
		}
	})
	connect(t, sender, receiver)
	var absID uint8
	for _, e := range rtpSender.GetParameters().HeaderExtensions {
		if e.URI == sdp.ABSSendTimeURI {
			absID = uint8(e.ID)
		}
	}
	if absID == 0 {
		t.Fatal("abs-send-time was not negotiated")
	}

	start := time.Now()
	payload := make([]byte, 1000)
	deadline := time.After(10 * time.Second)
	for seq := uint16(0); ; seq++ {
		p := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: uint32(seq) * 3000}, Payload: payload}
		ext, _ := rtp.NewAbsSendTimeExtension(time.Unix(0, 0).Add(time.Since(start))).Marshal()
		_ = p.Header.SetExtension(absID, ext)
		_ = track.WriteRTP(p)
		select {
		case v := <-remb:
			if v <= 0 {
				t.Fatalf("REMB of %v bit/s", v)
			}
			if rs.REMBCount() == 0 {
				t.Fatal("REMB arrived but the interceptor did not count it")
			}
			return
		case <-deadline:
			t.Fatalf("no REMB after %d packets; estimator state %+v", seq, rs.State())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

type noopFactory struct{}

func (noopFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &interceptor.NoOp{}, nil
}
