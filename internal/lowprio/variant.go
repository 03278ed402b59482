package lowprio

import (
	"fmt"
	"time"

	"github.com/strata-rtc/strata/cc/ledbat"
)

// Variants of the sender's controller, as configurations and the browsers' options spell them.
const (
	VariantLEDBAT     = "ledbat"   // RFC 6817, 100 ms target
	VariantLEDBATPlus = "ledbat++" // LEDBAT++ (slowdowns, multiplicative decrease), 60 ms target
)

// CheckVariant reports an unknown variant ("" is VariantLEDBAT).
func CheckVariant(v string) error {
	switch v {
	case "", VariantLEDBAT, VariantLEDBATPlus:
		return nil
	}
	return fmt.Errorf("lowprio: unknown variant %q (want %q or %q)", v, VariantLEDBAT, VariantLEDBATPlus)
}

// NewController builds a sender's controller: the variant, its target queuing delay (0: the
// variant's own) and the message size as MSS.
func NewController(variant string, target time.Duration, maxMessage int) (*ledbat.Controller, error) {
	if err := CheckVariant(variant); err != nil {
		return nil, err
	}
	opts := []ledbat.Option{ledbat.WithMSS(maxMessage)}
	if variant == VariantLEDBATPlus {
		opts = append(opts, ledbat.WithPlusPlus())
	}
	if target > 0 {
		opts = append(opts, ledbat.WithTarget(target))
	}
	return ledbat.New(opts...), nil
}
