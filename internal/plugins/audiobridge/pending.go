package audiobridge

// Until the file source and the WAV recorder land: play_file answers as a Janus built without
// libogg does, and recording the mix is refused.

type announcement struct{}

func (*announcement) next() ([]int16, bool) { return nil, false }
func (*announcement) close()                {}

type mixRecording struct{}

func (*mixRecording) write([]int16) {}
func (*mixRecording) close()        {}

func (r *room) startRecordingLocked(_, _ *string) *Error {
	return errorf(ErrUnknown, "Recording unsupported in this instance")
}

func (p *Plugin) playFile(*PlayFile) (any, *Error) {
	return nil, errorf(ErrInvalidReq, "Playing files unsupported in this instance")
}

func (p *Plugin) fileCheck(*FileCheck) (any, *Error) {
	return nil, errorf(ErrInvalidReq, "Playing files unsupported in this instance")
}

func (p *Plugin) enableRecording(*EnableRecording) (any, *Error) {
	return nil, errorf(ErrUnknown, "Recording unsupported in this instance")
}
