package cc

// NewConfig is how every controller package builds its configuration from functional options:
// the defaults, then the options in order, then sanitise, which repairs the values that would break
// the controller's arithmetic (zero windows, inverted bounds) from the defaults d, so that no
// option can make a controller panic or divide by zero.
func NewConfig[C any, O ~func(*C)](defaults func() C, opts []O, sanitise func(c *C, d C)) C {
	c := defaults()
	for _, o := range opts {
		o(&c)
	}
	sanitise(&c, defaults())
	return c
}
