package rtpbridge

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/pion/srtp/v3"

	"github.com/strata-rtc/strata/internal/media"
)

// newKey makes a fresh SDES master key and salt for strata's side.
func newKey(tag int, suite string) *media.SDESCrypto {
	k := &media.SDESCrypto{Tag: tag, Suite: suite, Key: make([]byte, 30)}
	_, _ = rand.Read(k.Key)
	return k
}

// srtpContext builds the SRTP context of one SDES key.
func srtpContext(c *media.SDESCrypto) (*srtp.Context, error) {
	profile := srtp.ProtectionProfileAes128CmHmacSha1_80
	if c.Suite == media.SuiteAES32 {
		profile = srtp.ProtectionProfileAes128CmHmacSha1_32
	}
	keyLen, _ := profile.KeyLen()
	saltLen, _ := profile.SaltLen()
	if len(c.Key) != keyLen+saltLen {
		return nil, fmt.Errorf("%w: key of %d bytes", ErrBadCrypto, len(c.Key))
	}
	ctx, err := srtp.CreateContext(c.Key[:keyLen], c.Key[keyLen:], profile)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCrypto, err)
	}
	return ctx, nil
}

// randomSSRC is a random 32-bit value (SSRCs, initial sequence numbers and timestamps).
func randomSSRC() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}
