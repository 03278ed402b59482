package dc

// A transfer reads its source or writes its sink on a goroutine of its own, so that a slow or
// blocked reader or writer never stalls the protocol's clock: buffers go round between the
// transfer's loop and that goroutine.
const (
	chunkSize   = 64 << 10 // the size of a buffer
	pumpBuffers = 2        // buffers per transfer
)

type chunk struct {
	b   []byte
	err error
}

// buffers returns the free-buffer channel of a transfer, filled.
func buffers() chan []byte {
	free := make(chan []byte, pumpBuffers)
	for range pumpBuffers {
		free <- make([]byte, chunkSize)
	}
	return free
}

// pump applies op (a Read into the buffer or a Write of it) to each buffer from in and hands the
// result on to out, until op fails or stop closes.
func pump(in <-chan []byte, out chan<- chunk, stop <-chan struct{}, op func([]byte) ([]byte, error)) {
	for {
		var b []byte
		select {
		case b = <-in:
		case <-stop:
			return
		}
		b, err := op(b)
		select {
		case out <- chunk{b, err}:
		case <-stop:
			return
		}
		if err != nil {
			return
		}
	}
}
