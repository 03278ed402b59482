// Package stats holds the small, allocation-free measurement helpers the congestion controllers
// share: a bucketed sliding-window rate meter, a running minimum over the last N samples, and a
// bucketed long-term minimum (base-delay history). All take time as an argument.
package stats
