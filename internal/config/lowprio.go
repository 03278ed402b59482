package config

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// LowPrio configures the low-priority (LEDBAT) transfers every PeerConnection serves on its data
// channels (internal/lowprio/service, docs/LOWPRIO.md).
type LowPrio struct {
	Enabled bool `yaml:"enabled"`
	// Dir is where `get` finds files; empty: only generated streams (gen:<bytes>).
	Dir string `yaml:"dir"`
	// UploadDir is where `put` stores uploads; empty: uploads are counted and discarded.
	UploadDir string `yaml:"upload_dir"`
	// MaxUpload bounds one upload, in bytes.
	MaxUpload int64 `yaml:"max_upload"`
	// MaxTransfers bounds the transfers running at once on one PeerConnection.
	MaxTransfers int `yaml:"max_transfers"`
	// Variant is the sender's controller: ledbat or ledbat++.
	Variant string `yaml:"variant"`
	// TargetDelay is LEDBAT's target queuing delay; 0: the variant's own.
	TargetDelay time.Duration `yaml:"target_delay"`
	// Share is how a download shares a PeerConnection carrying media: headroom or none.
	Share string `yaml:"share"`
}

// LowPrioVariants and LowPrioShares are the accepted values of lowprio.variant and lowprio.share.
var (
	LowPrioVariants = []string{"ledbat", "ledbat++"}
	LowPrioShares   = []string{"headroom", "none"}
)

func (l LowPrio) validate() []error {
	var errs []error
	if !slices.Contains(LowPrioVariants, l.Variant) {
		errs = append(errs, fmt.Errorf("lowprio.variant: %q is not one of %v", l.Variant, LowPrioVariants))
	}
	if !slices.Contains(LowPrioShares, l.Share) {
		errs = append(errs, fmt.Errorf("lowprio.share: %q is not one of %v", l.Share, LowPrioShares))
	}
	if l.TargetDelay < 0 || l.TargetDelay > 10*time.Second {
		errs = append(errs, fmt.Errorf("lowprio.target_delay: %v is not between 0s and 10s", l.TargetDelay))
	}
	if l.MaxUpload <= 0 || l.MaxTransfers <= 0 {
		errs = append(errs, errors.New("lowprio: max_upload and max_transfers must be positive"))
	}
	return errs
}
